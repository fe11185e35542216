"""Ranges of days and the calendar arithmetic behind them. Pure: dates in, dates out.

A `TimeRange` is what a search keeps: inclusive days, open on a side that is None. It is what
`SearchRequest.time_filter()` returns, what `--json` prints as `time_range`, and what a time
phrase (`time_phrases.py`) or a `--since/--until` value becomes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

__all__ = ["TimeRange", "back_from", "month_end", "months_back", "period_around", "unit_of"]


@dataclass(frozen=True)
class TimeRange:
    """Inclusive days; None on a side means open. `phrase` is the text it was read from."""

    since: date | None
    until: date | None
    phrase: str = ""

    def to_json(self) -> dict[str, Any]:
        """`{"since": "2026-11-23", "until": "2026-11-29", "phrase": "last week"}`."""
        return {
            "since": self.since.isoformat() if self.since else None,
            "until": self.until.isoformat() if self.until else None,
            "phrase": self.phrase,
        }

    def intersect(self, other: TimeRange | None) -> TimeRange:
        """Both ranges at once (the later start, the earlier end); phrases joined."""
        if other is None:
            return self
        since = max((d for d in (self.since, other.since) if d), default=None)
        until = min((d for d in (self.until, other.until) if d), default=None)
        phrase = " · ".join(p for p in (self.phrase, other.phrase) if p)
        return TimeRange(since, until, phrase)

    @property
    def empty(self) -> bool:
        """True when no day can be inside it."""
        return self.since is not None and self.until is not None and self.since > self.until


def months_back(day: date, months: int) -> date:
    total = day.year * 12 + day.month - 1 - months
    year, month = divmod(total, 12)
    month += 1
    last = month_end(date(year, month, 1)).day
    return date(year, month, min(day.day, last))


def month_end(day: date) -> date:
    """The last day of `day`'s month."""
    first_next = date(day.year + (day.month == 12), day.month % 12 + 1, 1)
    return first_next - timedelta(days=1)


def period_around(anchor: date, period: str) -> tuple[date, date]:
    """The day, ISO week (Monday first), month or year around `anchor`."""
    if period == "week":
        start = anchor - timedelta(days=anchor.weekday())
        return start, start + timedelta(days=6)
    if period == "month":
        start = anchor.replace(day=1)
        return start, month_end(start)
    if period == "year":
        return date(anchor.year, 1, 1), date(anchor.year, 12, 31)
    return anchor, anchor


def unit_of(word: str) -> str:
    """day, week, month or year for an English or German unit word (`Wochen` -> week)."""
    word = word.lower()
    for unit, prefixes in (("day", ("day", "tag")), ("week", ("week", "woche")),
                           ("month", ("month", "monat")), ("year", ("year", "jahr"))):  # fmt: skip
        if word.startswith(prefixes):
            return unit
    raise ValueError(word)


def back_from(today: date, n: int, unit: str) -> date:
    """The day `n` units before `today`."""
    if unit == "day":
        return today - timedelta(days=n)
    if unit == "week":
        return today - timedelta(weeks=n)
    return months_back(today, n * (12 if unit == "year" else 1))
