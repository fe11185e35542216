"""The relevance gate of the prompt hook: inject notes only when they are about the prompt. Pure.

A search always returns *something* (the nearest vectors exist for any text), so the hook needs
its own judgement of whether the best hits are relevant at all. Every hit carries a calibrated
probability of relevance (`Hit.score`, core/calibration.py), comparable across vaults and
queries; the hook asks for more than a search shows (`min_score` above the search's default),
because an agent given wrong context on a coding prompt learns to ignore the hook. The threshold
was chosen on development prompts and off-topic ones (bench/relevance_eval.py, docs/agents.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from .query import STOPWORDS, query_terms

__all__ = ["HOOK_MIN_SCORE", "GateDecision", "GateSettings", "content_terms", "judge"]

# The probability a section needs to be injected: on the development sets, the hook stays silent
# for nearly every off-topic prompt at this level and still injects for most real questions
# (bench/relevance_eval.py; the search's own threshold is noteseek.DEFAULT_MIN_SCORE).
HOOK_MIN_SCORE = 0.2


class _Scored(Protocol):
    @property
    def score(self) -> float: ...


@dataclass(frozen=True)
class GateSettings:
    """When a hit counts as relevant to a prompt."""

    # A prompt needs this many content words (not stop words, at least 2 characters) to be a
    # question for the notes at all: greetings and one-word replies ("ok", "thanks") are not.
    min_terms: int = 2
    # A hit needs this calibrated probability of relevance.
    min_score: float = HOOK_MIN_SCORE


@dataclass(frozen=True)
class GateDecision:
    """Which hits passed (indices into the input, best first) and why the others did not."""

    kept: tuple[int, ...]
    reason: str


def content_terms(prompt: str) -> list[str]:
    """The words of a prompt that can carry meaning for a search."""
    return [t for t in query_terms(prompt) if t not in STOPWORDS and len(t) >= 2]


def judge(
    prompt: str, hits: Sequence[_Scored], *, settings: GateSettings | None = None
) -> GateDecision:
    """Keep the hits that are relevant enough to `prompt`, and say why when none is."""
    s = settings or GateSettings()
    if not hits:
        return GateDecision((), "no hits")
    # Even an exact note name does not make a one-word prompt a question: "continue", "stop" and
    # "yes" are replies to the agent, and also page titles in developer documentation.
    if len(content_terms(prompt)) < s.min_terms:
        return GateDecision((), f"prompt has fewer than {s.min_terms} content words")
    kept = tuple(i for i, hit in enumerate(hits) if hit.score >= s.min_score)
    if not kept:
        best = max(h.score for h in hits)
        return GateDecision(
            (), f"no hit is likely relevant (best score {best:.2f}, the hook needs {s.min_score:.2f})"
        )
    return GateDecision(kept, f"{len(kept)} of {len(hits)} hits scored {s.min_score:.2f} or more")
