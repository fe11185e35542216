"""One search, as every adapter asks for it, and what comes back.

`SearchRequest` spells the query options once: the library (`Index.search` builds one), the CLI,
the daemon and the MCP server all fill it in, and `Index.run_search` answers it with a
`SearchResult` that also says why vectors were not used, so no adapter works that out itself.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from ..core.budget import fit_to_budget
from ..settings import ENV_MIN_SCORE
from .search import MODES, Hit, Mode

__all__ = ["DEFAULT_MIN_SCORE", "SearchRequest", "SearchResult"]

# Hits scored below this are hidden by default (counted in `SearchResult.hidden`). Chosen on the
# development sets with off-topic queries (bench/relevance_eval.py, docs/ranking.md "Calibrated
# relevance"): what it costs on-topic recall is written there.
DEFAULT_MIN_SCORE = 0.1


def default_min_score() -> float:
    """`$NOTESEEK_MIN_SCORE` when it is set to a number, else `DEFAULT_MIN_SCORE`."""
    value = os.environ.get(ENV_MIN_SCORE, "").strip()
    if not value:
        return DEFAULT_MIN_SCORE
    try:
        return float(value)
    except ValueError:
        raise ValueError(f"{ENV_MIN_SCORE} must be a number between 0 and 1, got {value!r}") from None


@dataclass(frozen=True)
class SearchRequest:
    """A query and its options; invalid values are refused when the request is made.

    `folders` (vault-relative), `tags` and `files` narrow the notes searched: a note must be under
    one of the folders, carry every tag (nested tags count: `project` matches `project/alpha`) and
    be one of the files (vault-relative paths as hits show them; `.md` may be left out). All three
    are applied before the candidate lists are cut; None or an empty tuple means no filter.
    `max_term_share` overrides the settings' share above which query words are left out of BM25.
    `explain` fills `Hit.explanation`; `max_tokens` keeps whole hits, best first, within a budget.
    `multilingual=False` keeps the query off the multilingual lane (engine/multilingual.py) even
    where it would be routed there (the prompt hook: its relevance gate's cosine thresholds are
    the bundled model's).
    `min_score` hides hits whose calibrated score (P(relevant)) is below it (default
    `DEFAULT_MIN_SCORE`, or `$NOTESEEK_MIN_SCORE`); `limit` stays the most hits shown.
    `min_score=0` shows every hit, as `--all` does.
    """

    query: str
    limit: int = 10
    mode: Mode = "hybrid"
    max_tokens: int | None = None
    explain: bool = False
    folders: tuple[str, ...] | None = None
    tags: tuple[str, ...] | None = None
    files: tuple[str, ...] | None = None
    max_term_share: float | None = None
    multilingual: bool = True
    min_score: float = field(default_factory=default_min_score)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, got {self.mode!r}")
        if self.limit < 1:
            raise ValueError(f"limit must be at least 1, got {self.limit}")
        if not isinstance(self.query, str):
            raise TypeError("query must be a string")
        if not 0.0 <= self.min_score <= 1.0:
            raise ValueError(f"min_score must be between 0 and 1, got {self.min_score}")


@dataclass(frozen=True)
class SearchResult:
    """The hits for a request, best first, why vectors were not used (None if they were, or if
    the request did not ask for them: mode bm25), and how many hits within the limit were hidden
    for scoring below `min_score`."""

    hits: tuple[Hit, ...]
    degraded: str | None
    hidden: int = 0

    @classmethod
    def of(cls, ranked: list[Hit], request: SearchRequest, degraded: str | None) -> SearchResult:
        """The ranked hits cut at the request's threshold, then fitted to its token budget."""
        # Scores never rise down the list, so the hits kept are a prefix.
        shown = [hit for hit in ranked if hit.score >= request.min_score]
        hidden = len(ranked) - len(shown)
        if request.max_tokens is not None:
            shown = fit_to_budget(shown, request.max_tokens)
        return cls(tuple(shown), degraded, hidden)

    def hits_json(self) -> list[dict[str, Any]]:
        """Every hit as `noteseek search --json` prints it."""
        return [hit.to_json() for hit in self.hits]
