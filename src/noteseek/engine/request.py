"""One search, as every adapter asks for it, and what comes back.

`SearchRequest` spells the query options once: the library (`Index.search` builds one), the CLI,
the daemon and the MCP server all fill it in, and `Index.run_search` answers it with a
`SearchResult` that also says why vectors were not used, so no adapter works that out itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ..errors import InvalidDateError
from .search import MODES, Hit, Mode

if TYPE_CHECKING:
    # Not imported at run time unless a request has dates: `datetime` costs a hook ~3 ms.
    from datetime import date

    from ..core.time_range import TimeRange

__all__ = ["SORTS", "SearchRequest", "SearchResult", "Sort"]

Sort = Literal["relevance", "date"]
SORTS: tuple[str, ...] = ("relevance", "date")


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

    Dates (docs/time.md): `since` and `until` keep notes whose date falls within them, both days
    inclusive; each is a `date` or a string (`2026-11-30`, `2026-11`, `7d`, `2w`, `3m`, `1y`,
    `yesterday`, `last week`, `gestern`), read against `today` (None: the local date) when the
    request is made. Like the folder filter they apply before the candidate lists are cut.
    `time_parse` reads a time phrase out of the query ("… in the last 7 days", "gestern", "from
    March 2026"): the phrase is not searched, and its range applies beside since/until.
    `sort="date"` puts the hits newest first; a query that is only a time phrase (or empty, with
    a range) lists the period's notes newest first.
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
    since: date | str | None = None
    until: date | str | None = None
    time_parse: bool = True
    sort: Sort = "relevance"
    today: date | None = None

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, got {self.mode!r}")
        if self.limit < 1:
            raise ValueError(f"limit must be at least 1, got {self.limit}")
        if not isinstance(self.query, str):
            raise TypeError("query must be a string")
        if self.sort not in SORTS:
            raise ValueError(f"sort must be one of {', '.join(SORTS)}, got {self.sort!r}")
        # Strings become dates now, so a bad value is refused here and a relative one ("7d")
        # means the same for the whole search.
        for name, end in (("since", False), ("until", True)):
            value = getattr(self, name)
            if value is None:
                continue
            from datetime import date, datetime

            if isinstance(value, str):
                object.__setattr__(self, name, _when(value, self._today(), end=end, name=name))
            elif isinstance(value, datetime):  # a day, as every range end is
                object.__setattr__(self, name, value.date())
            elif not isinstance(value, date):
                raise TypeError(f"{name} must be a date or a string, got {type(value).__name__}")

    def _today(self) -> date:
        from datetime import date

        return self.today or date.today()

    def time_filter(self) -> tuple[str, TimeRange | None]:
        """The text to search and the range of days to keep: since/until, and the range of a
        time phrase taken out of the query (when `time_parse`), both at once. A query without a
        time word costs a word split (core/time_words.py); only one with a phrase loads the
        phrase reader and dateparser."""
        text, found = self.query, None
        if self.time_parse:
            from ..core.time_words import may_hold_time_phrase

            if may_hold_time_phrase(self.query):
                from ..core.time_phrases import read_time_phrase

                read = read_time_phrase(self.query, today=self._today())
                text, found = read.text, read.range
        if self.since is None and self.until is None:
            return text, found
        from ..core.time_range import TimeRange

        given = TimeRange(self.since, self.until)  # type: ignore[arg-type]  # dates by now
        return text, given.intersect(found)


@dataclass(frozen=True)
class SearchResult:
    """The hits for a request, best first, and why vectors were not used (None if they were, or
    if the request did not ask for them: mode bm25)."""

    hits: tuple[Hit, ...]
    degraded: str | None
    # The days kept (since/until and a time phrase read out of the query), and the text that was
    # searched when a phrase was taken out of it; None when there was neither.
    time_range: TimeRange | None = None
    searched: str | None = None

    def hits_json(self) -> list[dict[str, Any]]:
        """Every hit as `noteseek search --json` prints it."""
        return [hit.to_json() for hit in self.hits]


def _when(value: str, today: date, *, end: bool, name: str) -> date:
    from ..core.time_phrases import WhenError, parse_when

    try:
        return parse_when(value, today=today, end=end)
    except WhenError as exc:
        raise InvalidDateError(f"{name}: {exc}") from None
