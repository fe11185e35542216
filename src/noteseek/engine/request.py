"""One search, as every adapter asks for it, and what comes back.

`SearchRequest` spells the query options once: the library (`Index.search` builds one), the CLI,
the daemon and the MCP server all fill it in, and `Index.run_search` answers it with a
`SearchResult` that also says why vectors were not used, so no adapter works that out itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .search import MODES, Hit, Mode

__all__ = ["SearchRequest", "SearchResult"]


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

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, got {self.mode!r}")
        if self.limit < 1:
            raise ValueError(f"limit must be at least 1, got {self.limit}")
        if not isinstance(self.query, str):
            raise TypeError("query must be a string")


@dataclass(frozen=True)
class SearchResult:
    """The hits for a request, best first, and why vectors were not used (None if they were, or
    if the request did not ask for them: mode bm25)."""

    hits: tuple[Hit, ...]
    degraded: str | None

    def hits_json(self) -> list[dict[str, Any]]:
        """Every hit as `noteseek search --json` prints it."""
        return [hit.to_json() for hit in self.hits]
