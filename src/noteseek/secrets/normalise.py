"""The text the scrubber's rules read: NFKC, invisible characters removed, offsets kept. Pure.

Rules are written for ASCII keywords and token alphabets, so ``ｇｈｐ＿…`` (fullwidth), ``gh\u200bp_…``
(a zero-width space inside a token) or a soft hyphen in ``pass\u00adword`` would defeat them. The
rules therefore run on a *view* of the text: each character NFKC-normalised on its own, default
ignorable code points (zero-width space and joiners, soft hyphen, BOM, bidi controls, variation
selectors) dropped. A span found in the view maps back to the original characters that produced it,
and the original is redacted: the stored text keeps its own characters everywhere else.

Per character rather than over the whole string: NFKC's composition step joins a base letter and a
combining mark, which would make one view character stand for two originals. No rule looks for a
non-ASCII letter, so composing them gains nothing; mapping stays exact.

`join_points` finds where a token was wrapped at a line end (``ghp_Scv057EnOpIKZhEr`` + newline +
the rest); the scrubber looks at each such place once more with the line break taken out.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from bisect import bisect_right
from dataclasses import dataclass

__all__ = ["JoinPoint", "TextView", "join_points", "text_view"]

#: Bump when what the view changes (characters dropped, the join heuristic).
NORMALISE_REVISION = 1

# Default_Ignorable_Code_Point (Unicode DerivedCoreProperties) minus nothing worth keeping for
# matching: invisible, so a reader of the note sees the token whole while a rule sees it split.
_IGNORABLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e0fff]"
)


@functools.lru_cache(maxsize=4096)
def _replacement(ch: str) -> str | None:
    """What the view puts for a non-ASCII character, or None when it keeps it."""
    if _IGNORABLE.match(ch):
        return ""
    new = unicodedata.normalize("NFKC", ch)
    if new == ch:
        return None
    # NFKC can yield characters that are themselves ignorable (rare): drop those too.
    return _IGNORABLE.sub("", new)


@dataclass(frozen=True)
class TextView:
    """A normalised copy of a text and the way back to the original's offsets."""

    text: str
    # One entry per original character that did not map to itself, in order: where its
    # replacement starts in the view, where the character is in the original, and how long the
    # replacement is (0: dropped). Empty when the view is the original.
    _view_at: tuple[int, ...] = ()
    _orig_at: tuple[int, ...] = ()
    _length: tuple[int, ...] = ()

    @property
    def identical(self) -> bool:
        """True when the view is the original text (ASCII, or nothing to change)."""
        return not self._view_at

    def original_span(self, start: int, end: int) -> tuple[int, int]:
        """The original characters that produced ``view[start:end]`` (``start < end``)."""
        if not self._view_at:
            return start, end
        return self._start(start), self._end(end - 1)

    def _start(self, pos: int) -> int:
        i = bisect_right(self._view_at, pos) - 1
        if i < 0:
            return pos
        at, orig, length = self._view_at[i], self._orig_at[i], self._length[i]
        if pos < at + length:
            return orig  # inside one character's expansion ("ﬁ" -> "fi"): the whole character
        return orig + 1 + (pos - at - length)

    def _end(self, last: int) -> int:
        i = bisect_right(self._view_at, last) - 1
        if i < 0:
            return last + 1
        at, orig, length = self._view_at[i], self._orig_at[i], self._length[i]
        if last < at + length:
            return orig + 1
        return orig + 1 + (last - at - length) + 1


def text_view(text: str) -> TextView:
    """The view the rules read (see the module docstring); the text itself when it is ASCII."""
    if text.isascii():
        return TextView(text)
    # The distinct characters first (a C loop), then where the few that change occur: a
    # regex over a class of every changing character runs at a few MB/s.
    changing = {
        ch: new for ch in set(text) if ord(ch) > 127 and (new := _replacement(ch)) is not None
    }
    if not changing:
        return TextView(text)
    positions: list[int] = []
    for ch in changing:
        at = text.find(ch)
        while at >= 0:
            positions.append(at)
            at = text.find(ch, at + 1)
    positions.sort()
    pieces: list[str] = []
    view_at: list[int] = []
    orig_at: list[int] = []
    length: list[int] = []
    previous = 0
    shift = 0  # len(view so far) - len(original so far)
    for at in positions:
        new = changing[text[at]]
        pieces.append(text[previous:at])
        view_at.append(at + shift)
        orig_at.append(at)
        length.append(len(new))
        pieces.append(new)
        shift += len(new) - 1
        previous = at + 1
    if not view_at:
        return TextView(text)
    pieces.append(text[previous:])
    return TextView("".join(pieces), tuple(view_at), tuple(orig_at), tuple(length))


@dataclass(frozen=True)
class JoinPoint:
    """A line break inside what may be one wrapped token: ``text[tail:brk]`` + ``text[head:end]``."""

    tail: int  # where the token's first part starts
    brk: int  # where the line break (and the next line's indentation) starts
    head: int  # where the token's second part starts
    end: int  # where it ends


_TOKEN = "A-Za-z0-9_+/=-"
# "\n" first, so the scan is a literal search; the lookbehinds then ask for six token characters
# before it (optionally "\r"), and the next line must start (after indentation or a quote marker)
# with four more.
_BREAK = re.compile(rf"\n(?:(?<=[{_TOKEN}]{{6}}\n)|(?<=[{_TOKEN}]{{6}}\r\n))[ \t>]*[{_TOKEN}]{{4}}")
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_+/=-")
_HEAD = re.compile(rf"[{_TOKEN}]+")
_NEXT_KEY = re.compile(r"[ \t]*:")
_TOKENISH = re.compile(r"[0-9_+/=]|[a-z][A-Z]")


def join_points(text: str) -> list[JoinPoint]:
    """Line breaks that may split a token: a run of 6+ token characters ends one line, a run of
    4+ starts the next, and both look machine-made (a digit, ``_+/=`` or an inner capital), so
    hard-wrapped prose ("some\\nwords") is not joined."""
    found: list[JoinPoint] = []
    for m in _BREAK.finditer(text):
        brk = m.start()
        if brk > 0 and text[brk - 1] == "\r":
            brk -= 1
        tail = brk - 6  # the lookbehind saw six token characters
        floor = max(0, brk - 400)
        while tail > floor and text[tail - 1] in _TOKEN_CHARS:
            tail -= 1
        head_start = m.end() - 4
        head = _HEAD.match(text, head_start)
        assert head is not None
        if _TOKENISH.search(text, tail, brk) is None or _TOKENISH.search(head.group(0)) is None:
            continue
        if _NEXT_KEY.match(text, head.end()) or "=" in head.group(0).rstrip("="):
            continue  # the next line is an assignment of its own ("auth_key_length: 160")
        found.append(JoinPoint(tail, brk, head_start, head.end()))
    return found
