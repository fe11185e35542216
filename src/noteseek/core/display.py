"""How text from notes, file names and requests is shown to people: control characters made
visible, and echoed input cut to a bounded prefix.

A file name or a note's text may hold anything: `ESC[2J` clears a terminal, `ESC]0;…BEL` sets
its title, OSC 52 (`ESC]52;c;…BEL`) writes the clipboard, BS and CR overwrite what was printed,
a newline in a name forges a line of `status --files`, and the bidi overrides (U+202A–U+202E,
U+2066–U+2069) reorder what a line appears to say. `printable` turns each such character into a
visible escape (`\\x1b`, `\\n`, `\\u202e`); every human-readable output of the CLI passes through it,
so no raw control sequence reaches a terminal. JSON needs none of this: the encoder escapes
controls itself, and its consumers want the exact text.

`bounded` is for error messages that echo what was asked for (a section, a folder, a path): a
1 MB argument must not come back as a 1 MB error.
"""

from __future__ import annotations

import re

__all__ = ["bounded", "bounded_repr", "one_line", "printable"]

# C0 and DEL, C1 (U+0080–U+009F: 8-bit CSI and OSC among them), the bidi embeddings, overrides
# and isolates, and the Unicode line and paragraph separators (a line break to some viewers).
_OTHERS = "\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029"
_ANY_CONTROL = re.compile(f"[\x00-\x1f{_OTHERS}]")
# Tab and newline are a text's own layout; CR is not (it returns over what the line said).
_CONTROL_BUT_LAYOUT = re.compile(f"[\x00-\x08\x0b-\x1f{_OTHERS}]")
_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def printable(text: str, *, layout: bool = True) -> str:
    """`text` with every control character escaped; with `layout`, newlines and tabs stay (the
    text's own lines), without it they are escaped too (`one_line`)."""
    pattern = _CONTROL_BUT_LAYOUT if layout else _ANY_CONTROL
    return pattern.sub(_escape, text)


def one_line(text: str) -> str:
    """`text` as one line with every control character escaped, newlines and tabs included: a
    name or a value inside a line of output cannot start another."""
    return _ANY_CONTROL.sub(_escape, text)


def bounded(text: str, limit: int = 200) -> str:
    """`text` cut to `limit` characters, saying how long it was."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text):,} characters)"


def bounded_repr(value: str, limit: int = 200) -> str:
    """A quoted, bounded echo of an argument for an error message: `'abc'`, `'aaaa…' (60,000
    characters)`."""
    if len(value) <= limit:
        return repr(value)
    return f"{value[:limit]!r}… ({len(value):,} characters)"
