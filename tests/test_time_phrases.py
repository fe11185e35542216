"""Note dates and time phrases as pure rules: values in, values out, against a fixed today."""

from __future__ import annotations

from datetime import date, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from noteseek import InvalidDateError, SearchRequest
from noteseek.core.note_dates import (
    document_date,
    filename_date,
    frontmatter_date,
    note_date,
    parse_date_value,
)
from noteseek.core.time_phrases import WhenError, parse_when, read_time_phrase
from noteseek.core.time_range import TimeRange
from noteseek.core.time_words import may_hold_time_phrase

TODAY = date(2026, 12, 1)  # a Tuesday


# -- note dates ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("stem", "expected"),
    [
        ("2026-11-30", "2026-11-30"),
        ("20261130", "2026-11-30"),
        ("2026_11_30", "2026-11-30"),
        ("2026.11.30", "2026-11-30"),
        ("2026-11-30 Monday", "2026-11-30"),
        ("2026-11-30-1405 standup", "2026-11-30"),
        ("30.11.2026", "2026-11-30"),
        ("2026-W48", "2026-11-23"),
        ("2026-w48", "2026-11-23"),
        ("2026W48", "2026-11-23"),
        ("2026-[W]48", "2026-11-23"),
        ("2026-11", "2026-11-01"),
        ("2026-Q4", "2026-10-01"),
        ("2026-02-30", None),
        ("Release 2026-11 plan", None),
        ("2026", None),  # a bare year is too often a title ("1984")
        ("202611301", None),
        ("Sunday", None),
        ("meeting notes", None),
    ],
)
def test_filename_dates(stem: str, expected: str | None) -> None:
    assert filename_date(stem) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (date(2026, 11, 30), "2026-11-30"),
        (datetime(2026, 11, 30, 14, 5), "2026-11-30T14:05:00"),
        ("2026-11-30", "2026-11-30"),
        ("2026-11-30 14:05", "2026-11-30T14:05:00"),
        ("2026-11-30T14:05:09+01:00", "2026-11-30T14:05:09"),
        ("2026/11/30", "2026-11-30"),
        ("30.11.2026", "2026-11-30"),
        ("[[2026-11-30]]", "2026-11-30"),
        ("[[journal/2026-11-30|Monday]]", "2026-11-30"),
        (20261130, "2026-11-30"),
        (["not a date", "2026-11-30", "2020-01-01"], "2026-11-30"),
        ("soon", None),
        (2026, None),
        (True, None),
        ("1066-10-14", None),
        (None, None),
    ],
)
def test_frontmatter_values(value: object, expected: str | None) -> None:
    assert parse_date_value(value) == expected


def test_frontmatter_keys_in_order_and_spellings() -> None:
    assert frontmatter_date({"updated": "2026-01-02", "created": "2025-01-01"}) == "2025-01-01"
    assert frontmatter_date({"Created": "2025-01-01", "date": "2024-01-01"}) == "2024-01-01"
    assert frontmatter_date({"date-created": "2025-03-04"}) == "2025-03-04"
    assert frontmatter_date({"Last Modified": "2025-03-05"}) == "2025-03-05"
    assert frontmatter_date({"created_at": "garbage", "modified": "2025-03-06"}) == "2025-03-06"
    assert frontmatter_date({"title": "2025-03-04"}) is None
    assert frontmatter_date({}) is None


def test_document_dates() -> None:
    assert document_date([("CreationDate", "D:20261130143000+01'00'")]) == "2026-11-30T14:30:00"
    assert document_date([("ModDate", "D:20240102")]) == "2024-01-02"
    assert document_date([("created", "2025-05-06T07:08:09+00:00")]) == "2025-05-06T07:08:09"
    assert document_date([("Producer", "LaTeX"), ("CreationDate", "garbage")]) is None


def test_note_date_order() -> None:
    fm = {"created": "2021-06-16T08:00"}
    assert note_date("2021-06-15", frontmatter=fm, mtime_ns=0).source == "filename"
    assert note_date("notes", frontmatter=fm, mtime_ns=0).value == "2021-06-16T08:00:00"
    doc = [("CreationDate", "D:20200101")]
    assert note_date("report", document=doc, mtime_ns=0).source == "document"
    fallback = note_date("report", mtime_ns=1_700_000_000 * 10**9)
    assert fallback.source == "mtime" and fallback.value.startswith("2023-11-1")


# -- time phrases --------------------------------------------------------------------------------


def span(query: str) -> tuple[str, str | None, str | None, str] | None:
    read = read_time_phrase(query, today=TODAY)
    if read.range is None:
        assert read.text == query
        return None
    r = read.range
    return (
        read.text,
        r.since.isoformat() if r.since else None,
        r.until.isoformat() if r.until else None,
        r.phrase,
    )


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("boiler in the last 7 days", ("boiler", "2026-11-24", "2026-12-01", "in the last 7 days")),
        ("boiler over the past two weeks", ("boiler", "2026-11-17", "2026-12-01", None)),
        (
            "what did I write about the boiler last week",
            ("what did I write about the boiler", "2026-11-23", "2026-11-29", "last week"),
        ),
        ("boiler yesterday", ("boiler", "2026-11-30", "2026-11-30", "yesterday")),
        ("notes from March 2026", ("notes", "2026-03-01", "2026-03-31", "from March 2026")),
        ("Rechnungen im Oktober", ("Rechnungen", "2026-10-01", "2026-10-31", "im Oktober")),
        (
            "was habe ich gestern über den Boiler geschrieben",
            ("was habe ich über den Boiler geschrieben", "2026-11-30", "2026-11-30", "gestern"),
        ),
        ("letzte Woche Heizung", ("Heizung", "2026-11-23", "2026-11-29", "letzte Woche")),
        ("in den letzten 3 Tagen", ("", "2026-11-28", "2026-12-01", None)),
        ("vor 2 Wochen", ("", "2026-11-16", "2026-11-22", None)),
        ("3 days ago standup", ("standup", "2026-11-28", "2026-11-28", None)),
        ("this month budget", ("budget", "2026-12-01", "2026-12-31", None)),
        ("last month", ("", "2026-11-01", "2026-11-30", None)),
        ("letzten Monat", ("", "2026-11-01", "2026-11-30", None)),
        ("dieses Jahr", ("", "2026-01-01", "2026-12-31", None)),
        ("seit letzter Woche", ("", "2026-11-23", "2026-12-01", None)),
        ("copy files since yesterday", ("copy files", "2026-11-30", "2026-12-01", None)),
        ("notes in March", ("notes", "2026-03-01", "2026-03-31", "in March")),
        ("seit Mai", ("", "2026-05-01", "2026-12-01", None)),
        ("am 14. März 2026", ("", "2026-03-14", "2026-03-14", None)),
        ("on March 14", ("", "2026-03-14", "2026-03-14", None)),
        ("on 2026-03-14 deploy", ("deploy", "2026-03-14", "2026-03-14", None)),
        ("trip from April 2025", ("trip", "2025-04-01", "2025-04-30", None)),
        ("vorgestern", ("", "2026-11-29", "2026-11-29", None)),
        ("the day before yesterday", ("", "2026-11-29", "2026-11-29", None)),
        ("notes from day before yesterday", ("notes", "2026-11-29", "2026-11-29", None)),
    ],
)
def test_phrases(query: str, expected: tuple[str, str | None, str | None, str | None]) -> None:
    got = span(query)
    assert got is not None, query
    text, since, until, phrase = expected
    assert got[:3] == (text, since, until)
    if phrase is not None:
        assert got[3] == phrase


@pytest.mark.parametrize(
    "query",
    [
        "march in step",
        "may I change the font",
        "you may want to rebase",
        "in may I ask",
        "remind me in 2 minutes",
        "in 3 hours",
        "Sunday",
        "Sunday brunch recipes",
        "plans for next week",
        "tomorrow",
        "in 3 days",
        "March",
        "past tense verbs",
        "this keyword in javascript",
        "last element of an array",
        "Array.prototype.at last",
        "Date.prototype.getMonth",
        "Python 3.11 release",
        "1984 Orwell",
        "week numbers in ISO 8601",
        "the year 2038 problem",
        "since when is this deprecated",
        "heute-show",
        "a day in the life",
        "days of the week in German",
        "plans for March 2027",
        "since 2025 python",
        "im Jahr 2025",
        "What was Warsaw's population in 1901?",
        "merged the Curriculum into the learning area in December 2024",
        "Whose former headquarters was the WSE located in until 2000?",
        "Yesterday's note",
        "born on March 14, 1879",
        "find files modified in the last 7 days",
        "delete files older than 30 days ago",
        "files accessed more than 30 days ago",
        "April 2025 release notes",
    ],
)
def test_not_time_phrases(query: str) -> None:
    assert span(query) is None


def test_the_gate_lets_through_every_phrase_it_must() -> None:
    assert not may_hold_time_phrase("march in step")
    assert not may_hold_time_phrase("may I change the font")
    assert not may_hold_time_phrase("how do I undo a rebase")
    assert may_hold_time_phrase("notes from May")
    assert may_hold_time_phrase("2026-03-14")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80))
def test_any_text_reads_without_error_and_keeps_its_words(text: str) -> None:
    read = read_time_phrase(text, today=TODAY)
    if read.range is None:
        assert read.text == text
    else:
        assert len(read.text) < len(text)
        assert read.range.phrase and read.range.phrase in text


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "in",
                "the",
                "last",
                "past",
                "7",
                "two",
                "days",
                "weeks",
                "months",
                "ago",
                "gestern",
                "vor",
                "seit",
                "im",
                "from",
                "since",
                "March",
                "Mai",
                "Oktober",
                "2025",
                "2026",
                "letzte",
                "Woche",
                "Monat",
                "yesterday",
                "this",
                "year",
                "on",
                "before",
                "am",
                "14.",
            ]
        ),
        max_size=7,
    )
)
def test_time_words_in_any_order_read_without_error(words: list[str]) -> None:
    read = read_time_phrase(" ".join(words), today=TODAY)
    if read.range is not None and read.range.since and read.range.until:
        assert read.range.since <= read.range.until


# -- --since / --until ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "since", "until"),
    [
        ("2026-11-30", "2026-11-30", "2026-11-30"),
        ("2026-11", "2026-11-01", "2026-11-30"),
        ("2025", "2025-01-01", "2025-12-31"),
        ("7d", "2026-11-24", "2026-12-01"),
        ("2w", "2026-11-17", "2026-12-01"),
        ("3m", "2026-09-01", "2026-12-01"),
        ("1y", "2025-12-01", "2026-12-01"),
        ("yesterday", "2026-11-30", "2026-11-30"),
        ("gestern", "2026-11-30", "2026-11-30"),
        ("last week", "2026-11-23", "2026-11-29"),
        ("March 2026", "2026-03-01", "2026-03-31"),
    ],
)
def test_when_values(value: str, since: str, until: str) -> None:
    assert parse_when(value, today=TODAY).isoformat() == since
    assert parse_when(value, today=TODAY, end=True).isoformat() == until


@pytest.mark.parametrize("value", ["soonish", "2026-13-01", "next week", "boiler last week", ""])
def test_bad_when_values(value: str) -> None:
    with pytest.raises(WhenError):
        parse_when(value, today=TODAY)


def test_request_reads_since_until_once_and_refuses_bad_ones() -> None:
    request = SearchRequest("boiler", since="7d", until="yesterday", today=TODAY)
    assert request.since == date(2026, 11, 24) and request.until == date(2026, 11, 30)
    with pytest.raises(InvalidDateError, match="since: 'later' is not a date"):
        SearchRequest("boiler", since="later")
    with pytest.raises(ValueError, match="sort must be one of"):
        SearchRequest("boiler", sort="oldest")  # type: ignore[arg-type]


def test_request_time_filter_joins_options_and_phrase() -> None:
    request = SearchRequest("boiler last week", since="2026-11-25", today=TODAY)
    text, window = request.time_filter()
    assert text == "boiler"
    assert window == TimeRange(date(2026, 11, 25), date(2026, 11, 29), "last week")
    off = SearchRequest("boiler last week", time_parse=False, today=TODAY)
    assert off.time_filter() == ("boiler last week", None)
    empty = SearchRequest("x yesterday", since="2026-12-01", today=TODAY).time_filter()[1]
    assert empty is not None and empty.empty
