"""One pass of the scrubber's rules over a text: which spans are secrets, and by which rule.

The keyword index (one substring search per distinct keyword, gated keywords only where their gate
occurs), rules tried at keyword offsets or over the whole text, the table detector, then the
keyword-free detectors; earlier claims win, ``[REDACTED:...]`` markers are claimed first.  Pure:
text in, spans out.  ``noteseek.secrets.scrubber`` runs this on the normalised view, spreads the
values it finds and repeats to a fixed point.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Mapping
from types import MappingProxyType

from .allowlist import Allowlist
from .entropy import find_bare_secrets
from .rules import PATTERNS, SecretPattern
from .tables import TABLE_KEYWORDS, find_table_secrets

__all__ = ["MARKER_RE", "Claims", "Span", "aligned_lower", "detect"]

MARKER_RE = re.compile(r"\[REDACTED:[a-z0-9-]+\]")

Span = tuple[int, int, str]


def detect(text: str, lowered: str, allow: Allowlist | None) -> list[Span]:
    """The rules, the table detector and the keyword-free detectors over one (view) text."""
    # One substring test per distinct keyword; most keywords are absent from most
    # texts, so nearly every rule is then skipped by a set operation.
    present = {keyword for keyword in _ALL_KEYWORDS if keyword in lowered}
    for gate, gated in _GATED_KEYWORDS:
        if any(g in lowered for g in gate):
            present.update(keyword for keyword in gated if keyword in lowered)
    # Rule indices in priority order, only for rules with at least one keyword present.
    active = sorted({index for keyword in present for index in _RULES_BY_KEYWORD[keyword]})
    claims = Claims()
    markers: Claims | None = None
    if "[REDACTED:" in text:
        markers = Claims()
        # Earlier redactions are claimed up front so no rule can match inside them, and no
        # match may start inside one: a marker's name ("password-assignment") is not a key, or
        # each pass would redact the value after the previous pass's marker (found by fuzzing).
        for marker in MARKER_RE.finditer(text):
            claims.add(*marker.span())
            markers.add(*marker.span())
    positions_cache: dict[str, list[int]] = {}
    found: list[Span] = []
    allowed: list[tuple[int, int]] = []
    for index in active:
        pattern = PATTERNS[index]
        haystack = lowered if pattern.ignore_case else text
        if pattern.anchored:
            keywords = [k for k in pattern.keywords if k in present]
            positions = _keyword_positions(lowered, keywords, positions_cache)
            matches: Iterable[re.Match[str]] = _anchored_matches(pattern, haystack, positions)
        else:
            matches = pattern.regex.finditer(haystack)
        for match in matches:
            span = _secret_span(match, pattern.secret_groups)
            if span is None or claims.overlaps(*span):
                continue
            if markers is not None and markers.overlaps(match.start(), match.start() + 1):
                continue
            start, end = span
            if pattern.validator is not None and not pattern.validator(text, match, start, end):
                continue
            if allow is not None and allow.allows(text[start:end]):
                allowed.append((start, end))
                continue  # a known false positive; not claimed (see module docstring)
            claims.add(start, end)
            found.append((start, end, pattern.name))
    # Tables: the header or the first cell is the context ("| Password | x |").
    for start, end, name in find_table_secrets(text, lowered, present):
        if claims.overlaps(start, end):
            continue
        if allow is not None and allow.allows(text[start:end]):
            allowed.append((start, end))
            continue
        claims.add(start, end)
        found.append((start, end, name))
    # Keyword-free detectors last: a bare token in prose or a table cell has no keyword.
    for start, end, name in find_bare_secrets(text):
        if claims.overlaps(start, end) or any(a <= start and end <= b for a, b in allowed):
            continue  # part of an allowed value (a JWT's signature) stays with it
        if allow is not None and allow.allows(text[start:end]):
            continue
        claims.add(start, end)
        found.append((start, end, name))
    found.sort()
    return found


def aligned_lower(text: str) -> str:
    """Lowercase ``text`` keeping every character at its offset."""
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    # A few characters lowercase to two (U+0130 -> "i" + combining dot); keep those
    # unchanged so spans found in the lowered copy index the original text.
    return "".join(low if len(low := ch.lower()) == 1 else ch for ch in text)


def _keyword_positions(lowered: str, keywords: list[str], cache: dict[str, list[int]]) -> list[int]:
    """Sorted offsets where any keyword starts; shared keywords are searched once per pass."""
    lists: list[list[int]] = []
    for keyword in keywords:
        hits = cache.get(keyword)
        if hits is None:
            hits = []
            i = lowered.find(keyword)
            while i >= 0:
                hits.append(i)
                i = lowered.find(keyword, i + 1)
            cache[keyword] = hits
        lists.append(hits)
    if len(lists) == 1:
        return lists[0]
    return sorted({pos for hits in lists for pos in hits})


def _anchored_matches(
    pattern: SecretPattern, haystack: str, positions: list[int]
) -> Iterator[re.Match[str]]:
    """Try the rule's regex at each keyword offset, like ``finditer`` but only where it can start."""
    end = -1
    for pos in positions:
        if pos < end:
            continue  # inside the previous match, as finditer would skip it
        match = pattern.regex.match(haystack, pos)
        if match is not None:
            end = match.end()
            yield match


def _secret_span(match: re.Match[str], groups: tuple[int | str, ...]) -> tuple[int, int] | None:
    """Span of the first listed group that took part in the match, or None if empty."""
    for group in groups:
        start, end = match.span(group)
        if start >= 0:
            return (start, end) if end > start else None
    return None


class Claims:
    """Sorted, non-overlapping spans already taken in this pass (local to one call)."""

    __slots__ = ("_ends", "_starts")

    def __init__(self) -> None:
        self._starts: list[int] = []
        self._ends: list[int] = []

    def overlaps(self, start: int, end: int) -> bool:
        """True if ``[start, end)`` intersects a claimed span."""
        i = bisect_right(self._starts, start)
        if i and self._ends[i - 1] > start:
            return True
        return i < len(self._starts) and self._starts[i] < end

    def covers(self, start: int, end: int) -> bool:
        """True if one claimed span holds all of ``[start, end)``."""
        i = bisect_right(self._starts, start) - 1
        return i >= 0 and self._ends[i] >= end

    def add(self, start: int, end: int) -> None:
        """Claim ``[start, end)``; callers check ``overlaps`` first."""
        i = bisect_right(self._starts, start)
        self._starts.insert(i, start)
        self._ends.insert(i, end)


_ALL_KEYWORDS: tuple[str, ...] = tuple(
    dict.fromkeys(k for p in PATTERNS if not p.gate for k in p.keywords)
)
# Keywords of gated rules that no ungated rule shares, searched only where the gate occurs.
_GATED_KEYWORDS: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = tuple(
    (p.gate, tuple(k for k in p.keywords if k not in _ALL_KEYWORDS)) for p in PATTERNS if p.gate
)
_RULES_BY_KEYWORD: Mapping[str, tuple[int, ...]] = MappingProxyType(
    {
        k: tuple(i for i, p in enumerate(PATTERNS) if k in p.keywords)
        for p in PATTERNS
        for k in p.keywords
    }
)

if not set(TABLE_KEYWORDS) <= set(_ALL_KEYWORDS):  # pragma: no cover - the tables reuse `present`
    raise RuntimeError("every table keyword must be an ungated rule keyword")
