"""The relevance gate of the prompt hook: inject notes only when they are about the prompt. Pure.

A search always returns *something* (the nearest vectors exist for any text), so the hook needs
its own judgement of whether the best hits are relevant at all. The gate looks at what the
ranking already computed and is comparable across vaults and queries: the cosine between the
prompt and the hit's best section (a property of the model, not of the vault, unlike raw BM25
scores or min-max normalised fusion scores), whether both lists found the note, and exact names.
The thresholds were set from the cosine distribution of prompts that have nothing to do with a
vault (bench/gate_eval.py, docs/hooks.md), not fitted to the judged queries.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from .query import STOPWORDS, query_terms

__all__ = ["GateDecision", "GateSettings", "content_terms", "judge"]


class _Ranked(Protocol):
    @property
    def bm25_rank(self) -> int | None: ...
    @property
    def vec_rank(self) -> int | None: ...
    @property
    def cosine(self) -> float | None: ...


@dataclass(frozen=True)
class GateSettings:
    """When a hit counts as relevant to a prompt."""

    # A prompt needs this many content words (not stop words, at least 2 characters) to be a
    # question for the notes at all: greetings and one-word replies ("ok", "thanks") are not.
    min_terms: int = 2
    # A hit that both lists rank within `agree_rank` needs this cosine to the prompt ...
    agree_rank: int = 5
    agree_cosine: float = 0.45
    # ... another hit that shares words with the prompt (found by BM25) needs this much. Prompts
    # unrelated to a vault reach a top-hit cosine of 0.40 at the median and 0.48 at the 75th
    # percentile (bench/gate_eval.py); relevant top hits 0.61 at the median.
    alone_cosine: float = 0.55
    # A hit that shares no word with the prompt (vector list only) needs more: short prompts have
    # noisy vectors ("passt so" is 0.61 from a page about `pass otp`).
    vector_only_cosine: float = 0.65


@dataclass(frozen=True)
class GateDecision:
    """Which hits passed (indices into the input, best first) and why the others did not."""

    kept: tuple[int, ...]
    reason: str


def content_terms(prompt: str) -> list[str]:
    """The words of a prompt that can carry meaning for a search."""
    return [t for t in query_terms(prompt) if t not in STOPWORDS and len(t) >= 2]


def _passes(hit: _Ranked, exact: bool, s: GateSettings) -> bool:
    if exact:
        return True
    cosine = hit.cosine
    if cosine is None:
        return False
    if hit.bm25_rank is None:
        return cosine >= s.vector_only_cosine
    both = hit.vec_rank is not None and max(hit.bm25_rank, hit.vec_rank) <= s.agree_rank
    return cosine >= (s.agree_cosine if both else s.alone_cosine)


def judge(
    prompt: str,
    hits: Sequence[_Ranked],
    *,
    exact: Sequence[bool] | None = None,
    settings: GateSettings | None = None,
) -> GateDecision:
    """Keep the hits that are relevant to `prompt`; `exact[i]` marks an exact note-name match."""
    s = settings or GateSettings()
    flags = list(exact) if exact is not None else [False] * len(hits)
    if not hits:
        return GateDecision((), "no hits")
    # Even an exact note name does not make a one-word prompt a question: "continue", "stop" and
    # "yes" are replies to the agent, and also page titles in developer documentation.
    if len(content_terms(prompt)) < s.min_terms:
        return GateDecision((), f"prompt has fewer than {s.min_terms} content words")
    kept = tuple(i for i, hit in enumerate(hits) if _passes(hit, flags[i], s))
    if not kept:
        best = max((h.cosine for h in hits if h.cosine is not None), default=None)
        shown = "none" if best is None else f"{best:.2f}"
        return GateDecision((), f"no hit is close enough to the prompt (best cosine {shown})")
    return GateDecision(kept, f"{len(kept)} of {len(hits)} hits relevant")
