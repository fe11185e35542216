"""One search, as every adapter asks for it, and what comes back.

`SearchRequest` spells the query options once: the library (`Index.search` builds one), the CLI,
the daemon, the web API and the MCP server all fill it in, and `Index.run_search` answers it with
a `SearchResult` that also says why vectors were not used, so no adapter works that out itself.

The request is also where a search is bounded: `SEARCH_LIMITS` is the one table of limits (hits,
query length, filter values and their length, the token budget) that every adapter is held to.
The web API and the MCP server declare the same numbers in their schemas so clients see them;
whatever reaches the constructor past them is refused with a `SearchRequestError` naming the
option, which each adapter turns into its own reply (CLI exit 2, HTTP 422, an MCP error text).

A query without a time word imports neither `datetime` nor the time-phrase reader: each costs
a hook milliseconds, so they are imported inside the methods that read dates.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, get_args

from ...core.budget import fit_to_budget
from ...errors import InvalidDateError, SearchRequestError
from ...settings import ENV_MIN_ANSWER, ENV_MIN_SCORE
from .hits import Hit

if TYPE_CHECKING:
    # Not imported at run time unless a request has dates: `datetime` costs a hook ~3 ms.
    from datetime import date

    from ...core.time_range import TimeRange

__all__ = [
    "DEFAULT_MIN_ANSWER",
    "DEFAULT_MIN_SCORE",
    "MODES",
    "SEARCH_LIMITS",
    "SORTS",
    "Mode",
    "SearchLimits",
    "SearchRequest",
    "SearchResult",
    "Sort",
]

# What a search shows by default (docs/relevance.md; bench/relevance_gate.py measured both,
# leave-one-corpus-out on the development sets with off-topic queries). A list is shown only when
# P(its first ten notes hold a relevant one) reaches DEFAULT_MIN_ANSWER, and then every hit whose
# calibrated score reaches DEFAULT_MIN_SCORE. A per-hit threshold alone cannot keep the relevant
# note of 97 % of on-topic queries (one ranked sixth scores a few per cent) while hiding the lists
# of off-topic ones; the query-level one can. Hidden hits are counted in `SearchResult.hidden`.
DEFAULT_MIN_ANSWER = 0.16
DEFAULT_MIN_SCORE = 0.0


def _from_env(name: str, default: float) -> float:
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    try:
        return float(value)
    except ValueError:
        raise SearchRequestError(
            f"{name} must be a number between 0 and 1, got {value!r}", option=name
        ) from None


def default_min_score() -> float:
    """`$NOTESEEK_MIN_SCORE` when it is set to a number, else `DEFAULT_MIN_SCORE`."""
    return _from_env(ENV_MIN_SCORE, DEFAULT_MIN_SCORE)


def default_min_answer() -> float:
    """`$NOTESEEK_MIN_ANSWER` when it is set to a number, else `DEFAULT_MIN_ANSWER`."""
    return _from_env(ENV_MIN_ANSWER, DEFAULT_MIN_ANSWER)

# Which lists a search runs: both fused, or one of them alone.
Mode = Literal["hybrid", "bm25", "vector"]
MODES: tuple[str, ...] = get_args(Mode)
Sort = Literal["relevance", "date"]
SORTS: tuple[str, ...] = ("relevance", "date")


@dataclass(frozen=True)
class SearchLimits:
    """The most a search may ask for. Past these a request is refused, not trimmed: a filter
    list cut short would search notes the caller did not ask for."""

    limit: int = 1_000  # hits
    query_chars: int = 10_000
    # Values per filter list. The storage queries take each list as one parameter (a JSON or
    # array value), so the statement does not grow with it; what a value costs does: a file is
    # one lookup in the path index, a folder or tag a prefix test.
    folders: int = 1_000
    tags: int = 1_000
    files: int = 10_000
    filter_chars: int = 4_096  # one folder, tag or path (PATH_MAX)
    max_tokens: int = 1_000_000


SEARCH_LIMITS = SearchLimits()


@dataclass(frozen=True)
class SearchRequest:
    """A query and its options; invalid values are refused when the request is made.

    `folders` (vault-relative), `tags` and `files` narrow the notes searched: a note must be under
    one of the folders, carry every tag (nested tags count: `project` matches `project/alpha`) and
    be one of the files (vault-relative paths as hits show them; `.md` may be left out). All three
    are applied before the candidate lists are cut; None or an empty tuple means no filter.
    `max_term_share` overrides the settings' share above which query words are left out of BM25.
    `explain` fills `Hit.explanation`; `max_tokens` keeps whole hits, best first, within a budget.
    `multilingual=False` keeps the query off the deep lane (engine/search/deep_lane.py) where one
    exists (the prompt hook: its relevance gate's cosine thresholds are the bundled model's).

    Dates (docs/time.md): `since` and `until` keep notes whose date falls within them, both days
    inclusive; each is a `date` or a string (`2026-11-30`, `2026-11`, `7d`, `2w`, `3m`, `1y`,
    `yesterday`, `last week`, `gestern`), read against `today` (None: the local date) when the
    request is made. Like the folder filter they apply before the candidate lists are cut.
    `time_parse` reads a time phrase out of the query ("… in the last 7 days", "gestern", "from
    March 2026"): the phrase is not searched, and its range applies beside since/until.
    `sort="date"` puts the hits newest first; a query that is only a time phrase (or empty, with
    a range) lists the period's notes newest first.

    Every option is checked against `SEARCH_LIMITS` here, and the filters normalised; a value out
    of range raises `SearchRequestError` (a ValueError) naming the option.

    `min_answer` hides the whole list when P(the vault answers the query: its first ten notes
    hold a relevant one) is below it (default `DEFAULT_MIN_ANSWER`); `min_score` hides hits whose
    calibrated score (P(relevant)) is below it (default `DEFAULT_MIN_SCORE`, or
    `$NOTESEEK_MIN_SCORE`; `$NOTESEEK_MIN_ANSWER` for `min_answer`); `limit` stays the most hits shown. `min_answer=0, min_score=0` shows
    every hit, as `--all` does.
    """

    query: str
    limit: int = 10
    mode: Mode = "hybrid"
    max_tokens: int | None = None
    explain: bool = False
    # Any sequence of strings may be passed (a list from JSON, click's tuple); the request keeps
    # a tuple without repeats, or None for no filter.
    folders: Sequence[str] | None = None
    tags: Sequence[str] | None = None
    files: Sequence[str] | None = None
    max_term_share: float | None = None
    multilingual: bool = True
    since: date | str | None = None
    until: date | str | None = None
    time_parse: bool = True
    sort: Sort = "relevance"
    today: date | None = None
    min_score: float | None = None  # None: the default, read when the request is made
    min_answer: float | None = None  # None: the default, read when the request is made

    def __post_init__(self) -> None:
        limits = SEARCH_LIMITS
        if not isinstance(self.query, str):
            raise SearchRequestError("query must be a string", option="query")
        if len(self.query) > limits.query_chars:
            raise SearchRequestError(
                f"the query has {len(self.query):,} characters; at most "
                f"{limits.query_chars:,} are searched: shorten it",
                option="query",
            )
        if self.mode not in MODES:
            raise SearchRequestError(
                f"mode must be one of {', '.join(MODES)}, got {self.mode!r}", option="mode"
            )
        _check_int("limit", self.limit, limits.limit)
        if self.max_tokens is not None:
            _check_int("max_tokens", self.max_tokens, limits.max_tokens)
        # Any iterable of strings (a list from JSON, click's tuple), in order, without repeats;
        # an empty one is no filter, like None (an adapter's unset repeatable option).
        for name in ("folders", "tags", "files"):
            object.__setattr__(self, name, _filter(name, getattr(self, name), limits))
        if self.min_score is None:
            object.__setattr__(self, "min_score", default_min_score())
        if (
            not isinstance(self.min_score, int | float)
            or isinstance(self.min_score, bool)
            or not 0.0 <= self.min_score <= 1.0
        ):
            raise SearchRequestError(
                f"min_score must be a number between 0 and 1, got {self.min_score!r}",
                option="min_score",
            )
        if self.min_answer is None:
            object.__setattr__(self, "min_answer", default_min_answer())
        if (
            not isinstance(self.min_answer, int | float)
            or isinstance(self.min_answer, bool)
            or not 0.0 <= self.min_answer <= 1.0
        ):
            raise SearchRequestError(
                f"min_answer must be a number between 0 and 1, got {self.min_answer!r}",
                option="min_answer",
            )
        if self.sort not in SORTS:
            raise SearchRequestError(f"sort must be one of {', '.join(SORTS)}, got {self.sort!r}", option="sort")
        # Strings become dates now, so a bad value is refused here and a relative one ("7d")
        # means the same for the whole search.
        for name, end in (("since", False), ("until", True)):
            value = getattr(self, name)
            if value is None:
                continue
            # deferred: datetime, for a dated search only (the per-prompt hook does without)
            from datetime import date, datetime

            if isinstance(value, str):
                object.__setattr__(self, name, _when(value, self._today(), end=end, name=name))
            elif isinstance(value, datetime):  # a day, as every range end is
                object.__setattr__(self, name, value.date())
            elif not isinstance(value, date):
                raise TypeError(f"{name} must be a date or a string, got {type(value).__name__}")
        since, until = self.since, self.until
        if since is not None and until is not None:
            assert not isinstance(since, str) and not isinstance(until, str)  # dates by now
            if since > until:
                # No note can be dated in an empty range: say so, rather than "no matches".
                raise InvalidDateError(
                    f"since ({since}) is after until ({until}): no date is in between; swap them"
                )

    def _today(self) -> date:
        from datetime import date  # deferred: as above, for a dated search only

        return self.today or date.today()

    def time_filter(self) -> tuple[str, TimeRange | None]:
        """The text to search and the range of days to keep: since/until, and the range of a
        time phrase taken out of the query (when `time_parse`), both at once. A query without a
        time word costs a word split (core/time_words.py); only one with a phrase loads the
        phrase reader and dateparser."""
        text, found = self.query, None
        if self.time_parse:
            # deferred: loaded by a search; a process that imports the engine only to embed or
            # read (the post-tool hook, status, links) does without
            from ...core.time_words import may_hold_time_phrase

            if may_hold_time_phrase(self.query):
                # deferred: the phrase reader and dateparser, for a query with a time word only
                from ...core.time_phrases import read_time_phrase

                read = read_time_phrase(self.query, today=self._today())
                text, found = read.text, read.range
        if self.since is None and self.until is None:
            return text, found
        from ...core.time_range import TimeRange  # deferred: for since/until only

        given = TimeRange(self.since, self.until)  # type: ignore[arg-type]  # dates by now
        return text, given.intersect(found)


def _check_int(name: str, value: object, most: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise SearchRequestError(f"{name} must be a whole number, got {value!r}", option=name)
    if not 1 <= value <= most:
        raise SearchRequestError(
            f"{name} must be between 1 and {most:,}, got {value:,}", option=name
        )


def _filter(name: str, values: Iterable[str] | None, limits: SearchLimits) -> tuple[str, ...] | None:
    if values is None:
        return None
    if isinstance(values, str):  # one value where a list was meant: never its characters
        values = (values,)
    if not isinstance(values, Iterable) or isinstance(values, dict):
        raise SearchRequestError(f"{name} must be a list of strings", option=name)
    kept: dict[str, None] = {}
    for value in values:
        if not isinstance(value, str):
            raise SearchRequestError(
                f"{name} must be strings, got {type(value).__name__}", option=name
            )
        if len(value) > limits.filter_chars:
            raise SearchRequestError(
                f"a value of {name} has {len(value):,} characters; the most is "
                f"{limits.filter_chars:,}",
                option=name,
            )
        kept[value] = None
        most: int = getattr(limits, name)
        if len(kept) > most:
            raise SearchRequestError(
                f"at most {most:,} {name} per search: use fewer (a parent folder covers its "
                "subfolders, a tag its nested tags)",
                option=name,
            )
    return tuple(kept) or None


@dataclass(frozen=True)
class SearchResult:
    """The hits for a request, best first, why vectors were not used (None if they were, or if
    the request did not ask for them: mode bm25), and how many hits within the limit were hidden
    for scoring below `min_score`."""

    hits: tuple[Hit, ...]
    degraded: str | None
    # The days kept (since/until and a time phrase read out of the query), and the text that was
    # searched when a phrase was taken out of it; None when there was neither.
    time_range: TimeRange | None = None
    searched: str | None = None
    hidden: int = 0
    # P(the first ten notes hold a relevant one): the query-level model's answer to "does the
    # vault answer this at all" (1.0 where it does not judge: a period listed by date, a mode
    # without that model).
    answered: float = 1.0

    @classmethod
    def of(
        cls,
        ranked: list[Hit],
        request: SearchRequest,
        degraded: str | None,
        *,
        time_range: TimeRange | None = None,
        searched: str | None = None,
        cut: bool = True,
        answered: float = 1.0,
    ) -> SearchResult:
        """The ranked hits cut at the request's threshold (unless not `cut`: a period's notes
        listed by date have no score), then fitted to its token budget."""
        least = request.min_score or 0.0  # a number by now (__post_init__)
        # A period (since/until or a time phrase) already narrowed the notes to the ones asked
        # for: the query-level model, trained on whole vaults, does not judge those lists.
        if cut and time_range is None and answered < (request.min_answer or 0.0):
            shown: list[Hit] = []
        else:
            shown = [hit for hit in ranked if not cut or hit.score >= least]
        hidden = len(ranked) - len(shown)
        if request.max_tokens is not None:
            shown = fit_to_budget(shown, request.max_tokens)
        return cls(
            tuple(shown), degraded, time_range=time_range, searched=searched, hidden=hidden,
            answered=answered,
        )

    def hits_json(self) -> list[dict[str, Any]]:
        """Every hit as `noteseek search --json` prints it."""
        return [hit.to_json() for hit in self.hits]


def _when(value: str, today: date, *, end: bool, name: str) -> date:
    # deferred: the phrase reader and dateparser, for since/until given as words only
    from ...core.time_phrases import WhenError, parse_when

    try:
        return parse_when(value, today=today, end=end)
    except WhenError as exc:
        raise InvalidDateError(f"{name}: {exc}") from None
