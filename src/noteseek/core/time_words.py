"""Whether a query may hold a time phrase: the cheap gate in front of `time_phrases.py`.

Kept apart so that a search whose query has no time word (nearly all of them) imports neither
the phrase shapes (their regular expressions cost ~60 ms to compile) nor dateparser: one word
split and a few set lookups, no dataclass, nothing compiled but one small pattern.
"""

from __future__ import annotations

import re

__all__ = ["MONTHS", "may_hold_time_phrase"]

# English and German month names and abbreviations, as one regex alternation (longest first
# where one is the start of another: `sept` before `sep`).
MONTHS = (
    "january|february|march|april|may|june|july|august|september|october|november|december|"
    "jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec|"
    "januar|jänner|jaenner|februar|märz|maerz|mai|juni|juli|oktober|dezember|okt|dez|mär"
)

_WORDS = re.compile(r"[^\W_]+")
# Words only a time phrase needs (a rolling span, a calendar period, a day word).
_STRONG = frozenset(
    [
        "yesterday",
        "today",
        "ago",
        "day",
        "days",
        "week",
        "weeks",
        "month",
        "months",
        "year",
        "years",
        "gestern",
        "vorgestern",
        "heute",
        "tage",
        "tagen",
        "woche",
        "wochen",
        "monat",
        "monate",
        "monaten",
        "jahr",
        "jahre",
        "jahren",
    ]
)
_MONTH_WORDS = frozenset(MONTHS.split("|"))
# A month name or a year counts only beside one of these, or beside a number.
_BESIDE = frozenset(
    [
        "in",
        "from",
        "during",
        "since",
        "of",
        "on",
        "before",
        "after",
        "until",
        "till",
        "through",
        "the",
        "im",
        "vom",
        "von",
        "aus",
        "seit",
        "ab",
        "bis",
        "vor",
        "nach",
        "am",
        "anfang",
        "ende",
        "dem",
    ]
)


def _is_year(word: str) -> bool:
    return len(word) == 4 and word.isdigit() and word[:2] in ("19", "20")


def may_hold_time_phrase(query: str) -> bool:
    """True when `query` has a word a time phrase needs, or a month name or year beside a
    preposition or a number; False means `time_phrases.read_time_phrase` would find nothing."""
    words = _WORDS.findall(query.lower())
    for i, word in enumerate(words):
        if word in _STRONG:
            return True
        if word in _MONTH_WORDS or _is_year(word):
            before = words[i - 1] if i else ""
            after = words[i + 1] if i + 1 < len(words) else ""
            if before in _BESIDE or before.isdigit() or after.isdigit():
                return True
    return False
