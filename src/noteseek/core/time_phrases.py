"""Time phrases in a plain query ("… in the last 7 days", "gestern", "im Oktober") and the
`--since/--until` values, read as a range of days. Pure: the query and today's date in, values out.

Precision over coverage. A phrase becomes a filter only when it has one of a few shapes that
cannot be anything but a time in a search box (docs/time.md lists them): a day word (`yesterday`,
`gestern`), a rolling span (`in the last 7 days`, `in den letzten 2 Wochen`), a calendar period
(`last week`, `letzten Monat`, `this year`), `N days ago` / `vor 3 Tagen`, and a month, day or
year only behind a preposition or beside a year (`from March 2026`, `im Oktober`, `since 2025`,
`March 2026`). So "march in step", "may I change the font", "in 2 minutes", "next week" and a note
called "Sunday" stay words: no weekdays, nothing shorter than a day, nothing in the future.

The shapes are matched here with regular expressions; dateparser (a kept library that knows month
names, numerals and relative dates in English, German and many more languages) resolves the date
expression inside a matched phrase to an anchor day and its period (day, week, month, year). It is
imported only when a query has a phrase; a query without a time word (`time_words.py`: a word
split and a few set lookups) never loads this module either.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from .time_range import TimeRange, back_from, month_end, period_around, unit_of
from .time_words import MONTHS as _MONTHS
from .time_words import may_hold_time_phrase

__all__ = ["TimeQuery", "TimeRange", "WhenError", "parse_when", "read_time_phrase"]


class WhenError(ValueError):
    """A `--since/--until` value that is not a date, a span or a time phrase."""


@dataclass(frozen=True)
class TimeQuery:
    """A query with its time phrase taken out, and the range the phrase means (None: no phrase)."""

    text: str
    range: TimeRange | None


# -- vocabulary ----------------------------------------------------------------------------------

_NUMBER = (
    r"\d{1,3}|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
    r"ein|eine|einem|einen|einer|zwei|drei|vier|fünf|fuenf|sechs|sieben|acht|neun|zehn|elf|zwölf"
)
_UNIT_EN = r"days?|weeks?|months?|years?"
_UNIT_DE = r"tage?n?|wochen?|monate?n?|jahre?n?"
_YEAR = r"(?:19|20)\d\d"
_ISO_DAY = r"(?:19|20)\d\d-[01]\d-[0-3]\d"

_PRE_EN = r"in|from|during|since|of|on|before|after|until|till|through"
_PRE_DE = r"im|in|vom|von|aus|seit|ab|bis|vor|nach|am|anfang|ende"
_PRONOUN = r"i|we|you|he|she|it|they|be|not|have|also"  # "may I …", "in may be"

_SHAPES: tuple[tuple[str, str], ...] = (
    # in the last 7 days · over the past 2 weeks · last 3 months
    (
        "rolling",
        r"(?:(?:in|within|over|during|for|from)\s+)?(?:the\s+)?(?:last|past|previous)\s+"
        rf"(?P<n>{_NUMBER})\s+(?P<unit>{_UNIT_EN})",
    ),
    # in den letzten 7 Tagen · in den vergangenen zwei Wochen · seit 3 Tagen
    (
        "rolling",
        r"(?:(?:in|innerhalb)\s+(?:den|der)\s+)?(?:letzten|vergangenen)\s+"
        rf"(?P<n>{_NUMBER})\s+(?P<unit>{_UNIT_DE})",
    ),
    ("rolling", rf"seit\s+(?P<n>{_NUMBER})\s+(?P<unit>{_UNIT_DE})"),
    # in the past week · over the last month (one unit, rolling)
    (
        "rolling1",
        r"(?:in|within|over|during)\s+the\s+(?:last|past)\s+(?P<unit>day|week|month|year)",
    ),
    ("rolling1", r"(?:the\s+)?past\s+(?P<unit>week|month|year)"),
    # 3 days ago · vor 2 Wochen
    ("ago", rf"(?P<n>{_NUMBER})\s+(?P<unit>{_UNIT_EN})\s+ago"),
    ("ago", rf"vor\s+(?P<n>{_NUMBER})\s+(?P<unit>{_UNIT_DE})"),
    # (since) last week · this month · letzte Woche · letzten Monat · dieses Jahr
    (
        "calendar",
        rf"(?:(?P<pre>{_PRE_EN}|seit|ab|in\s+der|im)\s+)?(?:the\s+)?"
        r"(?P<expr>(?:last|previous|this)\s+(?:week|month|year)|"
        r"(?:letzte[nmrs]?|vergangene[nmrs]?|vorige[nmrs]?|diese[nmrs]?)\s+(?:woche|monat|jahr))",
    ),
    # (since) yesterday · gestern · vorgestern · the day before yesterday; not a bare "today" /
    # "heute": prompts say it of the task at hand ("today I want to …"), not of the notes
    # ("since today" still reads)
    (
        "day",
        r"(?:(?P<pre>since|seit|ab|from|von)\s+)?"
        r"(?P<expr>(?:the\s+)?day\s+before\s+yesterday|yesterday|vorgestern|gestern)",
    ),
    # on 2026-03-14 · since 2026-03-01
    # (a bare ISO day is a title's, "2022-03-19 Weekly update", or a word searched for)
    ("iso", rf"(?P<pre>{_PRE_EN}|{_PRE_DE})\s+(?:dem\s+)?(?P<expr>{_ISO_DAY})"),
    # (on) March 14(, 2026) · (am) 14. März (2026)
    (
        "date",
        rf"(?:(?P<pre>{_PRE_EN}|{_PRE_DE})\s+(?:the\s+|dem\s+)?)?"
        rf"(?P<expr>(?:{_MONTHS})\.?\s+[0-3]?\d(?:st|nd|rd|th)?(?:,?\s+{_YEAR})?|"
        rf"[0-3]?\d(?:\.|st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTHS})\.?(?:\s+{_YEAR})?)"
        r"(?!,?\s+\d)",  # "March 14, 1879": a year too old to be a note's is no date
    ),
    # from March 2026 · during May · im Oktober 2025 · seit März · in March (no year: "in
    # December 2024" is how a text dates a fact). No bare years and no bare "March 2026": a
    # question about a year ("population in 1901", "until 2000") asks about its content.
    (
        "month",
        rf"(?:(?P<pre>from|since|during|im|vom|seit|aus|ab)\s+(?:the\s+month\s+of\s+|dem\s+)?)"
        rf"(?P<expr>(?:{_MONTHS})\.?(?:\s+{_YEAR})?)(?!\s+(?:{_PRONOUN})\b)",
    ),
    ("month", rf"(?P<pre>in)\s+(?P<expr>(?:{_MONTHS})\.?)(?!\s+(?:{_PRONOUN}|{_YEAR})\b)"),
)


# A phrase stands on its own: not glued to a word by a hyphen, slash or dot ("heute-show",
# "v2/2026-03-14", "Date.today").
_START = r"(?<![\w\-/.])"
_END = r"(?![\w\-/'’])"  # nor a possessive ("Yesterday's note")


@functools.lru_cache(maxsize=1)
def _patterns() -> tuple[re.Pattern[str], tuple[re.Pattern[str], ...]]:
    """One pattern that finds the first phrase (each shape's own groups renamed away: names
    repeat across shapes), and each shape's pattern, which reads its parts."""
    finder = re.compile(
        "|".join(
            f"(?P<k{i}>{_START}{re.sub(r'[(][?]P<[a-z]+>', '(?:', shape)}{_END})"
            for i, (_, shape) in enumerate(_SHAPES)
        ),
        re.IGNORECASE,
    )
    shapes = tuple(re.compile(f"{_START}{shape}{_END}", re.IGNORECASE) for _, shape in _SHAPES)
    return finder, shapes


_NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "ein": 1, "eine": 1, "einem": 1,
    "einen": 1, "einer": 1, "zwei": 2, "drei": 3, "vier": 4, "fünf": 5, "fuenf": 5, "sechs": 6,
    "sieben": 7, "acht": 8, "neun": 9, "zehn": 10, "elf": 11, "zwölf": 12,
}  # fmt: skip
_OPEN_START = ("since", "seit", "ab", "after", "nach")  # "from March": that month
_OPEN_END = ("before", "until", "till", "bis", "vor")
_OLDEST = 1990
# A phrase right after one of these describes something in the text, not the notes wanted:
# a comparison ("more than 7 days ago", "older than a week") or a file's own time ("files
# modified in the last 7 days", "nicht geändert seit 3 Tagen": what a shell how-to is about).
_CONTENT_BEFORE = re.compile(
    r"(?:\b(?:more|less|fewer|older|newer|later|earlier|mehr|weniger|älter|neuer)\s+(?:than|als)"
    r"|\b(?:at\s+least|at\s+most|exactly|between|mindestens|höchstens|genau|zwischen)"
    r"|\b(?:modified|modification|changed|accessed|access|created|creation|touched|"
    r"[amc]time|geändert|verändert|erstellt|zugegriffen|angelegt)(?:\s+\S+){0,2})\s*$",
    re.IGNORECASE,
)
_SPAN = re.compile(r"^\s*(\d{1,4})\s*([dwmy])\s*$", re.IGNORECASE)
_ISO_WHEN = re.compile(r"^\s*((?:19|20)\d\d)(?:-([01]\d)(?:-([0-3]\d))?)?\s*$")
_LEFTOVER = re.compile(r"\s{2,}")
_DANGLING = re.compile(r"(?:^|\s)(?:from|in|im|von|aus|of|on|am)\s*$", re.IGNORECASE)


def _number(text: str) -> int | None:
    text = text.lower()
    value = int(text) if text.isdigit() else _NUMBER_WORDS.get(text)
    return value if value and value <= 500 else None


# -- dateparser ----------------------------------------------------------------------------------

_PARSERS: dict[date, Any] = {}


def _resolve(expr: str, today: date) -> tuple[date, str] | None:
    """dateparser's anchor day and period for a matched date expression, past preferred."""
    parser = _PARSERS.get(today)
    if parser is None:
        from dateparser.date import DateDataParser  # ~190 ms to import: only for a phrase

        base = datetime(today.year, today.month, today.day, 12)
        settings = {
            "PREFER_DATES_FROM": "past",
            "RELATIVE_BASE": base,
            "PREFER_DAY_OF_MONTH": "first",
        }
        parser = DateDataParser(languages=["en", "de"], settings=settings)
        _PARSERS.clear()  # one day's parser: the base moves at midnight
        _PARSERS[today] = parser
    try:
        data = parser.get_date_data(expr)
    except Exception:  # dateparser raises assorted errors on odd input; a query never fails
        return None
    if data is None or data.date_obj is None:
        return None
    period = data.period if data.period in ("day", "week", "month", "year") else "day"
    return data.date_obj.date(), period


# -- phrases -------------------------------------------------------------------------------------


def _range(kind: str, match: re.Match[str], today: date) -> tuple[date | None, date | None] | None:
    groups = {k: v for k, v in match.groupdict().items() if v is not None}
    if kind in ("rolling", "rolling1", "ago"):
        n = _number(groups["n"]) if "n" in groups else 1
        if n is None:
            return None
        unit = unit_of(groups["unit"])
        start = back_from(today, n, unit)
        if kind == "ago":
            return period_around(start, "day" if unit == "day" else unit)
        return start, today
    expr = groups.get("expr", "")
    pre = (groups.get("pre") or "").lower().split()[0] if groups.get("pre") else ""
    if kind == "iso":
        resolved: tuple[date, str] | None = (date.fromisoformat(expr), "day")
    elif kind == "day":
        back = 2 if expr.lower() == "vorgestern" or "before" in expr.lower() else 1
        resolved = (today - timedelta(days=back), "day")
    elif kind == "calendar":
        resolved = _calendar(expr, today)
    else:
        resolved = _resolve(_clean_expr(expr), today)
    if resolved is None:
        return None
    anchor, period = resolved
    if kind == "month":
        period = "month"
    elif kind == "date":
        period = "day"
    start, end = period_around(anchor, period)
    if start > today or start.year < _OLDEST:
        # A future date is content ("plans for March"); so is one before any vault was kept
        # ("on March 14, 1879").
        return None
    if pre in _OPEN_START:
        return (start if pre not in ("after", "nach") else end + timedelta(days=1)), today
    if pre in _OPEN_END:
        return None, start - timedelta(days=1)
    if pre == "bis":
        return None, end
    if pre in ("until", "till", "through"):
        return None, end
    return start, end


def _calendar(expr: str, today: date) -> tuple[date, str]:
    """`last week`, `letzten Monat`, `this year`: a day inside that period, and the period."""
    first, unit_word = expr.lower().split()
    unit = unit_of(unit_word)
    if first.startswith(("this", "dies")):
        return today, unit
    return back_from(today, 1, unit), unit


def _clean_expr(expr: str) -> str:
    """What dateparser reads: ordinals and a German day's dot dropped, English words kept."""
    expr = re.sub(r"(\d)(st|nd|rd|th)\b", r"\1", expr, flags=re.IGNORECASE)
    expr = re.sub(r"(\d)\.\s", r"\1 ", expr)
    expr = re.sub(r"\s+of\s+", " ", expr, flags=re.IGNORECASE)
    expr = re.sub(r"^the\s+day\s+before\s+yesterday$", "2 days ago", expr, flags=re.IGNORECASE)
    return expr.strip().rstrip(".")


def read_time_phrase(query: str, *, today: date) -> TimeQuery:
    """The query without its first time phrase, and the range that phrase means.

    A query without a phrase comes back unchanged with `range` None."""
    if not may_hold_time_phrase(query):
        return TimeQuery(query, None)
    finder, shapes = _patterns()
    for match in finder.finditer(query):
        group = match.lastgroup
        if group is None:
            continue
        shape = int(group[1:])
        kind = _SHAPES[shape][0]
        inner = shapes[shape].fullmatch(match.group(0))
        if inner is None:
            continue
        if _CONTENT_BEFORE.search(query[max(0, match.start() - 40) : match.start()]):
            continue
        span = _range(kind, inner, today)
        if span is None:
            continue
        rest = (query[: match.start()] + " " + query[match.end() :]).strip()
        rest = _DANGLING.sub("", _LEFTOVER.sub(" ", rest)).strip(" ,;")
        return TimeQuery(rest, TimeRange(span[0], span[1], match.group(0).strip()))
    return TimeQuery(query, None)


def parse_when(text: str, *, today: date, end: bool = False) -> date:
    """A `--since` (`end=False`: the first day) or `--until` (`end=True`: the last day) value:
    an ISO date, month or year (`2026-11-30`, `2026-11`, `2026`), a span back from today (`7d`,
    `2w`, `3m`, `1y`) or a time phrase (`yesterday`, `last week`, `gestern`, `March 2026`)."""
    value = text.strip()
    iso = _ISO_WHEN.match(value)
    if iso:
        year, month, day = int(iso[1]), iso[2], iso[3]
        try:
            if day:
                return date(year, int(month), int(day))
            if month:
                first = date(year, int(month), 1)
                return month_end(first) if end else first
        except ValueError:
            raise WhenError(f"'{text}' is not a calendar date") from None
        return date(year, 12, 31) if end else date(year, 1, 1)
    span = _SPAN.match(value)
    if span:
        n, unit = (
            int(span[1]),
            {"d": "day", "w": "week", "m": "month", "y": "year"}[span[2].lower()],
        )
        return today if end else back_from(today, n, unit)
    found = read_time_phrase(value, today=today)
    if found.range is None:  # an option's value is a date already: "March 2026" alone will do
        found = read_time_phrase(f"from {value}", today=today)
    if found.range is not None and not found.text.strip():
        side = found.range.until if end else found.range.since
        if side is None:  # "before March": only an end; as a start it means nothing
            side = found.range.since if end else found.range.until
        if side is not None:
            return side
    raise WhenError(
        f"'{text}' is not a date: use an ISO date (2026-11-30, 2026-11, 2026), a span back from "
        "today (7d, 2w, 3m, 1y) or words (yesterday, last week, gestern, March 2026)"
    )
