"""Credential scrubber: every chunk passes through ``scrub`` before it is stored or embedded.

Pure module: no I/O, no logging, no module state that changes after import.  Values
in, values out.  The rules themselves live in ``noteseek.secrets.rules``, the
allow-list in ``noteseek.secrets.allowlist``.

Algorithm, per pass:

1. Read a normalised view of the text (``noteseek.secrets.normalise``: NFKC per character,
   zero-width and other invisible characters dropped, offsets mapped back), and lowercase it
   once (offsets preserved) for keyword lookups and for the case-insensitive rules.
2. For each rule in priority order, skip it unless a keyword occurs; otherwise
   collect candidate secret spans, drop any that overlap a span already claimed
   (by an earlier rule, or an existing ``[REDACTED:...]`` marker), and let the
   rule's validator veto placeholders and code.
3. Tables (``noteseek.secrets.tables``): values under a ``Password`` / ``PIN`` / ``API key``
   header, or after such a first cell.
4. Run the keyword-free detectors of ``noteseek.secrets.entropy`` (bare vendor shapes, random
   base64 / hex runs) on every text, last, so a keyword rule names a span first.
5. Where a line ends and the next begins with what may be one wrapped token, look again
   with the line break taken out; a finding across the break takes both parts.
6. Every value found, and every value the caller already knows from the same file
   (``known``), is then removed wherever else it occurs in the text: a password redacted
   after its key must not survive two lines below in a sentence.  Values shorter than 12
   characters count only as a whole word there ("admin" in "administrator" stays).
7. Replace the surviving spans (mapped back to the original text) with ``[REDACTED:<name>]``.

Replacing a secret changes the text around later matches, so ``scrub`` repeats
the pass until nothing more is found.  That makes it idempotent by construction:
the result of ``scrub`` is a fixed point, so scrubbing it again changes nothing.

An ``Allowlist`` keeps known false positives: a candidate whose value fully matches
one of its regexes, or whose SHA-256 starts with one of its fingerprints, is left
in place.  An allowed span is not claimed, so a later rule that matches a different
value around it still redacts; allowing a value never hides a neighbouring secret.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from .allowlist import Allowlist, AllowlistError, secret_fingerprint
from .entropy import BARE_DETECTORS, BARE_REVISION
from .matching import Claims, aligned_lower, detect
from .normalise import NORMALISE_REVISION, join_points, text_view
from .rules import PATTERNS, RULES_REVISION, SecretPattern
from .tables import TABLE_DETECTOR, TABLES_REVISION

__all__ = [
    "PATTERN_NAMES",
    "RULES_FINGERPRINT",
    "Allowlist",
    "AllowlistError",
    "Finding",
    "KnownSecrets",
    "ScrubResult",
    "find_secrets",
    "scrub",
    "secret_fingerprint",
]

_MARKER_LOWER_RE = re.compile(r"\[redacted:[a-z0-9-]+\]")
# Each pass turns at least one character of non-marker text into a marker, so the
# loop always ends; in practice a second pass finds nothing.  The cap only bounds
# adversarial input.
_MAX_PASSES = 8
_NO_COUNTS: Mapping[str, int] = MappingProxyType({})

_Span = tuple[int, int, str]


@dataclass(frozen=True)
class Finding:
    """One value ``scrub`` would replace: its rule, 1-based line, and SHA-256 (never the value)."""

    pattern: str
    line: int
    fingerprint: str


@dataclass(frozen=True, repr=False)
class KnownSecrets:
    """Values found in one file, to be removed from its other fields (title, aliases, tags,
    metadata, other units) as well.  Opaque on purpose: its repr is a count, so passing it
    around cannot put a value in a log."""

    _values: Mapping[str, str] = field(default_factory=lambda: _NO_VALUES)

    def __repr__(self) -> str:
        return f"KnownSecrets({len(self._values)} value(s))"

    def __len__(self) -> int:
        return len(self._values)

    def __or__(self, other: KnownSecrets) -> KnownSecrets:
        if not other._values:
            return self
        if not self._values:
            return other
        return KnownSecrets(MappingProxyType({**other._values, **self._values}))


_NO_VALUES: Mapping[str, str] = MappingProxyType({})
NO_SECRETS = KnownSecrets()


@dataclass(frozen=True)
class ScrubResult:
    """Scrubbed text, and how many values each pattern replaced (never the values)."""

    text: str
    # hash=False: the result stays hashable (by text) although the mapping is not.
    counts: Mapping[str, int] = field(default_factory=lambda: _NO_COUNTS, hash=False)
    # Every value removed (and every value passed in as ``known``), for the file's other fields.
    found: KnownSecrets = field(default=NO_SECRETS, compare=False, hash=False)


def scrub(
    text: str, *, allow: Allowlist | None = None, known: KnownSecrets | None = None
) -> ScrubResult:
    """Return ``text`` with every detected secret replaced by ``[REDACTED:<pattern-name>]``;
    values in ``known`` (found elsewhere in the same file) are removed too."""
    values = dict(known._values) if known else {}
    current, spans_per_pass = _scrub_passes(text, allow or None, values)
    found = KnownSecrets(MappingProxyType(values)) if values else NO_SECRETS
    if not spans_per_pass:
        return ScrubResult(text, _NO_COUNTS, found)
    counts: dict[str, int] = {}
    for spans in spans_per_pass:
        for _start, _end, name in spans:
            counts[name] = counts.get(name, 0) + 1
    return ScrubResult(current, MappingProxyType(dict(sorted(counts.items()))), found)


def find_secrets(
    text: str, *, allow: Allowlist | None = None, known: KnownSecrets | None = None
) -> tuple[Finding, ...]:
    """What ``scrub`` would replace, in text order: rule, line and fingerprint of each value."""
    findings: list[tuple[int, Finding]] = []
    current = text
    values = dict(known._values) if known else {}
    # Offsets of a later pass refer to the text after the earlier passes' redactions;
    # ``history`` maps them back to the original text for the line number.
    history: list[list[tuple[int, int, int]]] = []
    for _ in range(_MAX_PASSES):
        spans = _pass(current, allow or None, values)
        if not spans:
            break
        for start, end, name in spans:
            origin = _original_offset(start, history)
            digest = secret_fingerprint(current[start:end])
            findings.append((origin, Finding(name, text.count("\n", 0, origin) + 1, digest)))
        history.append([(s, e, len(_marker(n))) for s, e, n in spans])
        current = _redact(current, spans)
    findings.sort(key=lambda item: item[0])
    return tuple(finding for _, finding in findings)


def _scrub_passes(
    text: str, allow: Allowlist | None, values: dict[str, str]
) -> tuple[str, list[list[_Span]]]:
    """Run passes to the fixed point; returns the final text and each pass's spans.  ``values``
    (lowercased view value -> rule) starts with the known ones and gains every value found."""
    current = text
    passes: list[list[_Span]] = []
    for _ in range(_MAX_PASSES):
        spans = _pass(current, allow, values)
        if not spans:
            break
        current = _redact(current, spans)
        passes.append(spans)
    return current, passes


def _original_offset(pos: int, history: list[list[tuple[int, int, int]]]) -> int:
    """Map an offset in a later pass's text back to the original text."""
    for spans in reversed(history):
        shift = 0  # how far this pass moved ``pos`` to the right
        for start, end, marker_len in spans:
            if pos < start + shift:
                break
            if pos < start + shift + marker_len:
                shift = pos - start  # inside a marker: where the redacted value began
                break
            shift += marker_len - (end - start)
        pos -= shift
    return pos


def _find_secrets(text: str, allow: Allowlist | None = None) -> list[_Span]:
    """Return the non-overlapping secret spans of one pass, sorted by position."""
    return _pass(text, allow, {})


# A value shorter than this is removed elsewhere only as a whole word; longer ones anywhere.
_WORD_BOUND_BELOW = 12
# Shorter values are only redacted where a rule found them (a one-character URL password).
_MIN_SPREAD = 4
_CONTEXT = 240  # characters before a wrapped token that its rules may need (a key, a command)
# Up to this many (values x characters), every other occurrence is looked for with one `find` per
# value; past it, with one scan of the text. One `find` per value grows with the square of a note
# full of values (bench/results/scrub_many_values.md).
_FIND_EACH_UP_TO = 20_000_000


def _pass(text: str, allow: Allowlist | None, values: dict[str, str]) -> list[_Span]:
    """One pass over ``text`` (steps 1-7 of the module docstring): spans in the original text,
    sorted and disjoint.  New values are added to ``values``."""
    if not text:
        return []
    view = text_view(text)
    seen = view.text
    lowered = aligned_lower(seen)
    spans = detect(seen, lowered, allow)
    new: dict[str, str] = {}
    for start, end, name in spans:
        new.setdefault(lowered[start:end], name)
    for start, end, name, value in _across_breaks(seen, spans, allow):
        spans.append((start, end, name))
        new.setdefault(value, name)
    for value, name in new.items():
        values.setdefault(value, name)
    spans += _elsewhere(lowered, values, spans)
    merged = _merge(spans)
    if view.identical:
        return merged
    return _merge([(*view.original_span(start, end), name) for start, end, name in merged])


def _across_breaks(
    text: str, spans: list[_Span], allow: Allowlist | None
) -> list[tuple[int, int, str, str]]:
    """Secrets wrapped over a line end: (start, end, rule, value without the break)."""
    points = join_points(text)
    if not points:
        return []
    taken = Claims()
    for start, end, _name in sorted(spans):
        taken.add(start, end)
    found: list[tuple[int, int, str, str]] = []
    for point in points:
        if taken.overlaps(point.brk - 1, point.brk):
            continue  # the first line's token was found alone, to its end (or a key's body)
        # The rest of the line and the next one: the blob test of the keyword-free layer asks
        # whether the neighbouring lines are base64 too (a certificate, an image).
        line_end = text.find("\n", point.end)
        if line_end >= 0:
            line_end = text.find("\n", line_end + 1)
        after = min(len(text) if line_end < 0 else line_end, point.end + 400)
        before = max(0, point.tail - _CONTEXT)
        window = text[before : point.brk] + text[point.head : after]
        cut = point.brk - before
        for start, end, name in detect(window, aligned_lower(window), allow):
            if start < cut < end:
                span = (before + start, point.head + (end - cut))
                found.append((*span, name, window[start:end].lower()))
                break
    return found


def _elsewhere(lowered: str, values: Mapping[str, str], spans: list[_Span]) -> list[_Span]:
    """Every other occurrence of a found or known value (step 6 of the module docstring)."""
    if not values:
        return []
    taken = Claims()
    for start, end, _name in _merge(spans):
        taken.add(start, end)
    if "[redacted:" in lowered:
        for marker in _MARKER_LOWER_RE.finditer(lowered):
            if not taken.overlaps(*marker.span()):
                taken.add(*marker.span())
    found: list[_Span] = []
    for value, at in _occurrences(lowered, [v for v in values if len(v) >= _MIN_SPREAD]):
        end = at + len(value)
        if not taken.overlaps(at, end) and (
            len(value) >= _WORD_BOUND_BELOW or _bounded(lowered, at, end, value)
        ):
            taken.add(at, end)
            found.append((at, end, values[value]))
    return found


def _occurrences(lowered: str, values: list[str]) -> Iterator[tuple[str, int]]:
    """Every occurrence of each value in ``lowered`` (overlapping ones too): value by value, or,
    for many values in a long text, in the order of the text (`_FIND_EACH_UP_TO`). The order
    only decides which of two overlapping occurrences of different values is claimed."""
    if not values:
        return
    if len(values) * len(lowered) <= _FIND_EACH_UP_TO:
        for value in values:
            at = lowered.find(value)
            while at >= 0:
                yield value, at
                at = lowered.find(value, at + 1)
        return
    # One scan: a position whose first `width` characters begin some value is looked up in the
    # values of that beginning, one set per length.
    width = min(len(v) for v in values)
    starts: dict[str, dict[int, set[str]]] = {}
    for value in values:
        starts.setdefault(value[:width], {}).setdefault(len(value), set()).add(value)
    for at in range(len(lowered) - width + 1):
        lengths = starts.get(lowered[at : at + width])
        if lengths is not None:
            for length, same_length in lengths.items():
                if lowered[at : at + length] in same_length:
                    yield lowered[at : at + length], at


def _bounded(lowered: str, start: int, end: int, value: str) -> bool:
    """Not part of a longer word: "admin" in "admin:" or "(admin)", not in "administrator"."""
    if value[0].isalnum() and start > 0 and lowered[start - 1].isalnum():
        return False
    return not (value[-1].isalnum() and end < len(lowered) and lowered[end].isalnum())


def _merge(spans: list[_Span]) -> list[_Span]:
    """Sorted, disjoint spans: overlapping ones become one, named by the first."""
    if len(spans) < 2:
        return sorted(spans)
    out: list[_Span] = []
    for start, end, name in sorted(spans):
        if out and start < out[-1][1]:
            if end > out[-1][1]:
                out[-1] = (out[-1][0], end, out[-1][2])
            continue
        out.append((start, end, name))
    return out


def _redact(text: str, spans: list[_Span]) -> str:
    """Replace each span with its marker; spans are sorted and disjoint."""
    parts: list[str] = []
    previous = 0
    for start, end, name in spans:
        parts.append(text[previous:start])
        parts.append(_marker(name))
        previous = end
    parts.append(text[previous:])
    return "".join(parts)


def _marker(name: str) -> str:
    return f"[REDACTED:{name}]"


def _fingerprint(patterns: tuple[SecretPattern, ...]) -> str:
    """Short digest of everything that decides what gets redacted."""
    payload = [
        RULES_REVISION,
        BARE_REVISION,
        TABLES_REVISION,
        NORMALISE_REVISION,
        [
            [
                p.name,
                p.regex.pattern,
                p.regex.flags,
                list(p.keywords),
                list(p.secret_groups),
                p.anchored,
                p.ignore_case,
                list(p.gate),
                getattr(p.validator, "__qualname__", None),
            ]
            for p in patterns
        ],
    ]
    digest = hashlib.sha256(json.dumps(payload, separators=(",", ":")).encode("utf-8"))
    return digest.hexdigest()[:16]


#: Every name a ``[REDACTED:<name>]`` marker can carry: the rules, then the keyword-free detectors.
PATTERN_NAMES: tuple[str, ...] = tuple(
    dict.fromkeys([*(p.name for p in PATTERNS), TABLE_DETECTOR, *BARE_DETECTORS])
)
RULES_FINGERPRINT: str = _fingerprint(PATTERNS)

if len({p.name for p in PATTERNS}) != len(PATTERNS):  # pragma: no cover - table invariant
    raise RuntimeError("secret pattern names must be unique")
