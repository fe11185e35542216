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

__all__ = ["HOOK_MIN_ANSWER", "HOOK_MIN_SCORE", "GateDecision", "GateSettings", "content_terms", "judge"]

# What a block needs (bench/relevance_eval.py through the real hook, and bench/relevance_gate.py
# leave-one-corpus-out on the search lists; the search's own thresholds are
# noteseek.DEFAULT_MIN_ANSWER and DEFAULT_MIN_SCORE): P(the vault answers the prompt) of at least
# HOOK_MIN_ANSWER, far stricter than a search's, since an agent given wrong context learns to
# ignore the hook; then the sections scored HOOK_MIN_SCORE or more. Through the real hook, 0.45
# stayed silent for 91.3 % of off-topic prompts and named a relevant note for 80 % of the Help
# vault's questions; 0.4 was silent for 89.8 %, 0.5 for 92.1 % with as many Help questions named
# and fewer of the sample vault's (bench/results/relevance_eval.md).
# The per-section floor only decides what may fill a block the list-level test let through (the
# first three sections share its budget).
HOOK_MIN_ANSWER = 0.45
HOOK_MIN_SCORE = 0.01


class _Scored(Protocol):
    @property
    def score(self) -> float: ...


@dataclass(frozen=True)
class GateSettings:
    """When a hit counts as relevant to a prompt."""

    # A prompt needs this many content words (not stop words, at least 2 characters) to be a
    # question for the notes at all: greetings and one-word replies ("ok", "thanks") are not.
    min_terms: int = 2
    # The list needs this P(the vault answers the prompt), and a hit this calibrated
    # probability of relevance.
    min_answer: float = HOOK_MIN_ANSWER
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
    prompt: str,
    hits: Sequence[_Scored],
    *,
    settings: GateSettings | None = None,
    answered: float = 1.0,
) -> GateDecision:
    """Keep the hits that are relevant enough to `prompt`, and say why when none is; `answered`
    is the search's P(the vault answers the query) (`SearchResult.answered`)."""
    s = settings or GateSettings()
    if not hits:
        return GateDecision((), "no hits")
    # Even an exact note name does not make a one-word prompt a question: "continue", "stop" and
    # "yes" are replies to the agent, and also page titles in developer documentation.
    if len(content_terms(prompt)) < s.min_terms:
        return GateDecision((), f"prompt has fewer than {s.min_terms} content words")
    if answered < s.min_answer:
        return GateDecision(
            (),
            f"the notes likely do not answer this (P {answered:.2f}, the hook needs "
            f"{s.min_answer:.2f})",
        )
    kept = tuple(i for i, hit in enumerate(hits) if hit.score >= s.min_score)
    if not kept:
        best = max(h.score for h in hits)
        return GateDecision(
            (), f"no hit is likely relevant (best score {best:.2f}, the hook needs {s.min_score:.2f})"
        )
    return GateDecision(kept, f"{len(kept)} of {len(hits)} hits scored {s.min_score:.2f} or more")
