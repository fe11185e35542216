"""Credential scrubber: every chunk passes through ``scrub`` before it is stored or embedded.

Pure module: no I/O, no logging, no module state that changes after import.  Values
in, values out.  The rules themselves live in ``noteseek.secret_patterns``.

Algorithm, per pass:

1. Lowercase the text once (offsets preserved) for keyword lookups and for the
   case-insensitive rules.
2. For each rule in priority order, skip it unless a keyword occurs; otherwise
   collect candidate secret spans, drop any that overlap a span already claimed
   (by an earlier rule, or an existing ``[REDACTED:...]`` marker), and let the
   rule's validator veto placeholders and code.
3. Replace the surviving spans with ``[REDACTED:<name>]``.

Replacing a secret changes the text around later matches, so ``scrub`` repeats
the pass until nothing more is found.  That makes it idempotent by construction:
the result of ``scrub`` is a fixed point, so scrubbing it again changes nothing.
"""

from __future__ import annotations

import hashlib
import json
import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from .secret_patterns import PATTERNS, RULES_REVISION, SecretPattern

__all__ = ["PATTERN_NAMES", "RULES_FINGERPRINT", "ScrubResult", "scrub"]

_MARKER_RE = re.compile(r"\[REDACTED:[a-z0-9-]+\]")
# Each pass turns at least one character of non-marker text into a marker, so the
# loop always ends; in practice a second pass finds nothing.  The cap only bounds
# adversarial input.
_MAX_PASSES = 8
_NO_COUNTS: Mapping[str, int] = MappingProxyType({})

_Span = tuple[int, int, str]


@dataclass(frozen=True)
class ScrubResult:
    """Scrubbed text, and how many values each pattern replaced (never the values)."""

    text: str
    # hash=False: the result stays hashable (by text) although the mapping is not.
    counts: Mapping[str, int] = field(default_factory=lambda: _NO_COUNTS, hash=False)


def scrub(text: str) -> ScrubResult:
    """Return ``text`` with every detected secret replaced by ``[REDACTED:<pattern-name>]``."""
    counts: dict[str, int] = {}
    current = text
    for _ in range(_MAX_PASSES):
        spans = _find_secrets(current)
        if not spans:
            break
        current = _redact(current, spans)
        for _start, _end, name in spans:
            counts[name] = counts.get(name, 0) + 1
    if not counts:
        return ScrubResult(text, _NO_COUNTS)
    return ScrubResult(current, MappingProxyType(dict(sorted(counts.items()))))


def _find_secrets(text: str) -> list[_Span]:
    """Return the non-overlapping secret spans of one pass, sorted by position."""
    if not text:
        return []
    lowered = _aligned_lower(text)
    # One substring test per distinct keyword; most keywords are absent from most
    # texts, so nearly every rule is then skipped by a set operation.
    present = {keyword for keyword in _ALL_KEYWORDS if keyword in lowered}
    if not present:
        return []
    # Rule indices in priority order, only for rules with at least one keyword present.
    active = sorted({index for keyword in present for index in _RULES_BY_KEYWORD[keyword]})
    claims = _Claims()
    if "[REDACTED:" in text:
        # Earlier redactions are claimed up front so no rule can match inside them.
        for marker in _MARKER_RE.finditer(text):
            claims.add(*marker.span())
    positions_cache: dict[str, list[int]] = {}
    found: list[_Span] = []
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
            start, end = span
            if pattern.validator is not None and not pattern.validator(text, match, start, end):
                continue
            claims.add(start, end)
            found.append((start, end, pattern.name))
    found.sort()
    return found


def _aligned_lower(text: str) -> str:
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


class _Claims:
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

    def add(self, start: int, end: int) -> None:
        """Claim ``[start, end)``; callers check ``overlaps`` first."""
        i = bisect_right(self._starts, start)
        self._starts.insert(i, start)
        self._ends.insert(i, end)


def _redact(text: str, spans: list[_Span]) -> str:
    """Replace each span with its marker; spans are sorted and disjoint."""
    parts: list[str] = []
    previous = 0
    for start, end, name in spans:
        parts.append(text[previous:start])
        parts.append(f"[REDACTED:{name}]")
        previous = end
    parts.append(text[previous:])
    return "".join(parts)


def _fingerprint(patterns: tuple[SecretPattern, ...]) -> str:
    """Short digest of everything that decides what gets redacted."""
    payload = [
        RULES_REVISION,
        [
            [
                p.name,
                p.regex.pattern,
                p.regex.flags,
                list(p.keywords),
                list(p.secret_groups),
                p.anchored,
                p.ignore_case,
                getattr(p.validator, "__qualname__", None),
            ]
            for p in patterns
        ],
    ]
    digest = hashlib.sha256(json.dumps(payload, separators=(",", ":")).encode("utf-8"))
    return digest.hexdigest()[:16]


PATTERN_NAMES: tuple[str, ...] = tuple(p.name for p in PATTERNS)
_ALL_KEYWORDS: tuple[str, ...] = tuple(dict.fromkeys(k for p in PATTERNS for k in p.keywords))
_RULES_BY_KEYWORD: Mapping[str, tuple[int, ...]] = MappingProxyType(
    {k: tuple(i for i, p in enumerate(PATTERNS) if k in p.keywords) for k in _ALL_KEYWORDS}
)
RULES_FINGERPRINT: str = _fingerprint(PATTERNS)

if len(set(PATTERN_NAMES)) != len(PATTERN_NAMES):  # pragma: no cover - table invariant
    raise RuntimeError("secret pattern names must be unique")
