"""When a note or document was written, and where that date came from. Pure: values in, values out.

A note's date is, in this order: the date in its file name when it is a daily or periodic note
(`2026-11-30.md`, `20261130`, `2026-W48`, `2026-11`, `2026-Q4`: the names Obsidian's daily and
periodic notes plugins produce; the file name says which day the note is *about*, a template's
`created:` only when it was made), its frontmatter (`date`, then `created`, then `updated` /
`modified` and their common spellings), a document's own metadata (PDF CreationDate/ModDate,
Office core properties), and else the file's modification time. Dates are ISO strings: a day
(`2026-11-30`) or, where the source says the time, a local date-time (`2026-11-30T14:05:00`);
a period note gets the first day of its period. Date filters compare the first ten characters.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Literal

__all__ = [
    "DateSource",
    "NoteDate",
    "document_date",
    "filename_date",
    "frontmatter_date",
    "mtime_date",
    "note_date",
    "parse_date_value",
]

DateSource = Literal["frontmatter", "filename", "document", "mtime"]

# Frontmatter keys in order of preference, after folding case and dropping '_', '-' and spaces.
_FRONTMATTER_KEYS: tuple[tuple[str, ...], ...] = (
    ("date", "day", "journaldate", "noteDate".lower()),
    (
        "created",
        "createdat",
        "createdon",
        "creationdate",
        "datecreated",
        "createddate",
        "creation",
        "erstellt",
        "erstelltam",
        "datum",
    ),
    ("published", "publishdate", "publisheddate", "pubdate"),
    (
        "updated",
        "updatedat",
        "updatedon",
        "modified",
        "modifiedat",
        "modifiedon",
        "datemodified",
        "lastmodified",
        "lastmod",
        "lastupdated",
        "modificationdate",
        "geandert",
        "geändert",
        "aktualisiert",
    ),
)
_KEY_FOLD = re.compile(r"[\s_\-]+")
_MIN_YEAR, _MAX_YEAR = 1900, 2100

# 2026-11-30, 2026/11/30, 2026.11.30, 2026_11_30, 20261130, with an optional time after it.
_ISO = re.compile(
    r"(?P<y>\d{4})(?P<sep>[-/._]?)(?P<m>\d{1,2})(?P=sep)(?P<d>\d{1,2})"
    r"(?:[T ](?P<H>\d{1,2}):(?P<M>\d{2})(?::(?P<S>\d{2}))?)?"
)
_GERMAN = re.compile(r"(?P<d>\d{1,2})\.(?P<m>\d{1,2})\.(?P<y>\d{4})")
_WIKILINK = re.compile(r"^\[\[([^\]|#]+)(?:[#|][^\]]*)?\]\]$")

# File names: the date must start the stem (`2026-11-30`, `2026-11-30 Monday`, `2026-11-30-1405
# standup`), or be all of it for the coarser periods, so `Release 2026-11 plan` stays undated.
_NAME_DAY = re.compile(
    r"^(?P<y>(?:19|20)\d\d)(?P<sep>[-_.]?)(?P<m>[01]\d)(?P=sep)(?P<d>[0-3]\d)(?:$|[^0-9])"
)
_NAME_DAY_GERMAN = re.compile(r"^(?P<d>[0-3]\d)\.(?P<m>[01]\d)\.(?P<y>(?:19|20)\d\d)(?:$|[^0-9])")
_NAME_WEEK = re.compile(r"^(?P<y>(?:19|20)\d\d)-?\[?W\]?(?P<w>[0-5]\d)$", re.IGNORECASE)
_NAME_MONTH = re.compile(r"^(?P<y>(?:19|20)\d\d)[-_.](?P<m>[01]\d)$")
_NAME_QUARTER = re.compile(r"^(?P<y>(?:19|20)\d\d)-?Q(?P<q>[1-4])$", re.IGNORECASE)
# PDF dates: D:YYYYMMDDHHmmSS with optional parts and offset.
_PDF = re.compile(
    r"^(?:D:)?(?P<y>\d{4})(?P<m>\d{2})?(?P<d>\d{2})?(?P<H>\d{2})?(?P<M>\d{2})?(?P<S>\d{2})?"
)
_DOCUMENT_KEYS = ("creationdate", "created", "moddate", "modified")


@dataclass(frozen=True)
class NoteDate:
    """A note's date (ISO day or local date-time) and where it came from."""

    value: str
    source: DateSource


def _day(year: int, month: int, day: int) -> date | None:
    if not _MIN_YEAR <= year <= _MAX_YEAR:
        return None
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _stamp(found: date, hour: str | None, minute: str | None, second: str | None) -> str | None:
    if hour is None:
        return found.isoformat()
    h, m, s = int(hour), int(minute or 0), int(second or 0)
    if h > 23 or m > 59 or s > 59:
        return found.isoformat()
    return datetime(found.year, found.month, found.day, h, m, s).isoformat()


def parse_date_value(value: Any) -> str | None:
    """An ISO date or date-time from a frontmatter value: a YAML date, an ISO-like or German
    (`30.11.2026`) string, an Obsidian link to a daily note (`[[2026-11-30]]`), an 8-digit
    number; a list gives its first usable item. None when nothing in it is a date."""
    if isinstance(value, (list, tuple)):
        for item in value:
            first = parse_date_value(item)
            if first:
                return first
        return None
    if isinstance(value, datetime):
        if not _MIN_YEAR <= value.year <= _MAX_YEAR:
            return None
        # Wall-clock time as written: the day the author saw is the note's day.
        return value.replace(tzinfo=None, microsecond=0).isoformat()
    if isinstance(value, date):
        return value.isoformat() if _MIN_YEAR <= value.year <= _MAX_YEAR else None
    if isinstance(value, bool) or value is None:
        return None
    text = str(value).strip().strip("\"'")
    link = _WIKILINK.match(text)
    if link:
        text = link.group(1).rsplit("/", 1)[-1].strip()
    iso = _ISO.match(text)
    if iso:
        found = _day(int(iso["y"]), int(iso["m"]), int(iso["d"]))
        if found is not None:
            return _stamp(found, iso["H"], iso["M"], iso["S"])
    german = _GERMAN.match(text)
    if german:
        found = _day(int(german["y"]), int(german["m"]), int(german["d"]))
        if found is not None:
            return found.isoformat()
    return None


def _fold(key: str) -> str:
    return _KEY_FOLD.sub("", key).lower()


def frontmatter_date(raw: Mapping[str, Any]) -> str | None:
    """The date a note's frontmatter gives, by key preference (see the module docstring)."""
    if not raw:
        return None
    folded: dict[str, Any] = {}
    for key, value in raw.items():
        if isinstance(key, str):
            folded.setdefault(_fold(key), value)
    for keys in _FRONTMATTER_KEYS:
        for key in keys:
            if key in folded:
                found = parse_date_value(folded[key])
                if found:
                    return found
    return None


def filename_date(stem: str) -> str | None:
    """The date a daily or periodic note's file name (without suffix) stands for, or None."""
    stem = stem.strip()
    for pattern in (_NAME_DAY, _NAME_DAY_GERMAN):
        match = pattern.match(stem)
        if match:
            found = _day(int(match["y"]), int(match["m"]), int(match["d"]))
            return found.isoformat() if found else None
    week = _NAME_WEEK.match(stem)
    if week:
        try:
            return date.fromisocalendar(int(week["y"]), int(week["w"]), 1).isoformat()
        except ValueError:
            return None
    month = _NAME_MONTH.match(stem)
    if month:
        found = _day(int(month["y"]), int(month["m"]), 1)
        return found.isoformat() if found else None
    quarter = _NAME_QUARTER.match(stem)
    if quarter:
        found = _day(int(quarter["y"]), 3 * int(quarter["q"]) - 2, 1)
        return found.isoformat() if found else None
    return None


def _pdf_or_iso(text: str) -> str | None:
    found = parse_date_value(text)
    if found:
        return found
    pdf = _PDF.match(text.strip())
    if pdf and pdf["m"] and pdf["d"]:
        day = _day(int(pdf["y"]), int(pdf["m"]), int(pdf["d"]))
        if day is not None:
            return _stamp(day, pdf["H"], pdf["M"], pdf["S"])
    return None


def document_date(fields: Iterable[tuple[str, str]]) -> str | None:
    """A document's creation date (else modification date) from its metadata fields: PDF
    `CreationDate`/`ModDate` (`D:20261130143000+01'00'`), Office `created`/`modified` (ISO)."""
    values = {_fold(k): v for k, v in fields}
    for key in _DOCUMENT_KEYS:
        if key in values:
            found = _pdf_or_iso(values[key])
            if found:
                return found
    return None


def mtime_date(mtime_ns: int) -> str:
    """A file's modification time as a local ISO date-time (seconds)."""
    stamp = datetime.fromtimestamp(mtime_ns / 1e9).replace(microsecond=0)
    return stamp.isoformat()


def note_date(
    stem: str,
    *,
    frontmatter: Mapping[str, Any] | None = None,
    document: Iterable[tuple[str, str]] = (),
    mtime_ns: int,
) -> NoteDate:
    """The date of a note or document and its source, by the order in the module docstring."""
    named = filename_date(stem)
    if named:
        return NoteDate(named, "filename")
    given = frontmatter_date(frontmatter or {})
    if given:
        return NoteDate(given, "frontmatter")
    written = document_date(document)
    if written:
        return NoteDate(written, "document")
    return NoteDate(mtime_date(mtime_ns), "mtime")
