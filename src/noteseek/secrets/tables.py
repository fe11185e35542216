"""Secrets that tables name: a column headed ``Password`` (``Passwort``, ``PIN``, ``API key`` …) and a
row whose first cell says ``password``. Pure: text in, spans out.

A table row is a line that starts with ``|`` (Markdown) or holds `` | `` (documents); the alternatives
of ``type=text|password|search`` are not cells.  CSV pasted into a note (``site,user,password``, or
``;`` / tab separated) counts too: a header line naming a secret column, and the unquoted rows under
it with as many cells.

A value under such a header is a password however short or plain it is; the header is the context.
Markdown tables (``| a | b |`` with a ``|---|`` row) and the rows documents give for sheets, CSV,
Word and PowerPoint tables and HTML (cells joined by `` | ``, the header first) read alike: a block of
consecutive lines holding ``|``, its first line the header.

Documents leave empty cells out of a row (a sheet shows a run of empty cells as one), so a row
with fewer cells than its header no longer says which cell is under the column: every cell that
could be is judged, the one at the column's index and those up to the missing count before it.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from .rules import password_value_ok, pin_value_ok, token_value_ok

__all__ = ["TABLES_REVISION", "TABLE_DETECTOR", "TABLE_KEYWORDS", "find_table_secrets"]

#: Bump when a header word or a value test changes: part of the scrubber's fingerprint.
TABLES_REVISION = 1
#: The name a table finding carries in its ``[REDACTED:<name>]`` marker.
TABLE_DETECTOR = "table-password"

_Span = tuple[int, int, str]

# A cell that names a secret, after emphasis, code marks and a trailing colon are taken off; up
# to two words before the key ("Root password", "WLAN-Passwort", "db_password").
_KEY_CELL = re.compile(
    r"""(?:[a-z0-9\u00e4\u00f6\u00fc\u00df.]{1,24}[ _./-]){0,2}
        (?:(?P<password>pass(?:word|wort|wd|phrase|code)|kennwort|pwd)(?:s|e?n)?
          |(?P<weak>pass|pw)
          |(?P<pin>pin(?:[ -]?code|[ -]?nummer|[ -]?number)?|puk)
          |(?P<token>(?:api|access|secret|private|auth|client|bot)?[ _-]?(?:key|token|secret)
             |secret|token))
        (?:[ ]?\([^()]{0,24}\))?""",
    re.VERBOSE,
)
# Words after "password" that make the column about passwords, not the password ("Password hint").
_META = (
    "hint", "policy", "length", "reset", "hash", "expir", "change", "manager", "field", "public",
)  # fmt: skip
TABLE_KEYWORDS = ("pass", "kennwort", "pwd", "pw", "pin", "puk", "key", "token", "secret")
# A table row: a Markdown one starts with "|"; a document's cells are joined by " | ".  Not
# "type=text|password|search" (an attribute's alternatives) or "a||b" (code).
_TABLE_LINE = re.compile(r"^(?:[ \t]*\||[^\n]*? \| )[^\n]*$", re.MULTILINE)
_PIPE = re.compile(r"(?<!\\)\|")
_DELIMITER = re.compile(r"[ \t]*\|?(?:[ \t]*:?-{2,}:?[ \t]*\|?)+[ \t]*\r?")
_WRAP = "`\"'*_"


def find_table_secrets(
    text: str, lowered: str, present: Collection[str] | None = None
) -> list[_Span]:
    """Spans of values under secret-naming headers and after secret-naming first cells.

    ``lowered`` is ``text`` lowercased with the same offsets; ``present``, the keywords the
    scrubber already found in it (``TABLE_KEYWORDS`` are among the rules' keywords).
    """
    if present is None:
        present = {k for k in TABLE_KEYWORDS if k in lowered}
    if not any(k in present for k in TABLE_KEYWORDS):
        return []
    found = _delimited_secrets(text, lowered) if "," in text or ";" in text or "\t" in text else []
    if "|" not in text:
        return found
    block: list[tuple[int, int]] = []
    for m in _TABLE_LINE.finditer(text):
        if block and m.start() != block[-1][1] + 1:
            found += _block_secrets(text, lowered, block)
            block = []
        block.append(m.span())
    if block:
        found += _block_secrets(text, lowered, block)
    return found


# A delimited block pasted as text (CSV, TSV, "a;b;c"): the header names a secret column and the
# rows under it have as many cells.  Quoted cells are left to the document extractor.
_DELIMITED_HEADER = re.compile(r"^[^\n\"']*[,;\t][^\n\"']*$", re.MULTILINE)


def _delimited_secrets(text: str, lowered: str) -> list[_Span]:
    found: list[_Span] = []
    for m in _DELIMITED_HEADER.finditer(lowered):
        line = m.group(0)
        if not any(k in line for k in TABLE_KEYWORDS):
            continue
        for sep in (",", ";", "\t"):
            if sep not in line:
                continue
            header = line.rstrip("\r").split(sep)
            if len(header) < 2 or not all(cell.strip() for cell in header):
                continue  # "  password," in a code listing is an argument list, not a header
            columns = [(i, k) for i, cell in enumerate(header) if (k := _key_text(cell))]
            if not columns:
                continue
            at = m.end() + 1
            while at < len(text):
                end = text.find("\n", at)
                end = len(text) if end < 0 else end
                row = text[at:end].rstrip("\r")
                if '"' in row or "'" in row or row.count(sep) != len(header) - 1:
                    break
                if sum(1 for cell in row.split(sep) if cell.strip()) < 2:
                    break
                offsets = [at]
                for i, ch in enumerate(row):
                    if ch == sep:
                        offsets.append(at + i + 1)
                for column, kind in columns:
                    cell_end = (
                        offsets[column + 1] - 1 if column + 1 < len(offsets) else at + len(row)
                    )
                    span = _value(text, (offsets[column], cell_end), kind, spaces=True)
                    if span is not None:
                        found.append(span)
                at = end + 1
            break
    return found


def _block_secrets(text: str, lowered: str, block: list[tuple[int, int]]) -> list[_Span]:
    start, end = block[0][0], block[-1][1]
    if not any(k in lowered[start:end] for k in TABLE_KEYWORDS):
        return []
    rows = [_cells(text, a, b) for a, b in block if not _DELIMITER.fullmatch(text, a, b)]
    if not rows:
        return []
    found: list[_Span] = []
    header = rows[0]
    has_delimiter = len(block) > 1 and _DELIMITER.fullmatch(text, *block[1]) is not None
    columns = [(i, kind) for i, cell in enumerate(header) if (kind := _key_kind(text, cell))]
    for row in rows[1:] if columns else ():
        missing = max(0, len(header) - len(row))
        for column, kind in columns:
            for i in range(max(0, column - missing), min(column, len(row) - 1) + 1):
                span = _value(text, row[i], kind, spaces=True)
                if span is not None:
                    found.append(span)
    for number, row in enumerate(rows):
        # A row whose first cell names a secret: the next cell is its value ("| password | x |").
        # A header row's second cell is another header ("| Password | Notes |"): only a value
        # that is clearly not a word counts there.
        strict = number == 0 and has_delimiter
        kind = _key_kind(text, row[0]) if len(row) > 1 else None
        if kind and _plural(text, row[0]):
            kind = None  # "| Passwords | Button |": a category of settings, not a field
        if kind:
            span = _value(text, row[1], "weak" if strict else kind, spaces=False)
            if span is not None:
                found.append(span)
    return sorted(set(found))


def _cells(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The cells of one table line, as spans; a Markdown line's outer pipes make no cells."""
    cells: list[tuple[int, int]] = []
    at = start
    for pipe in _PIPE.finditer(text, start, end):
        cells.append((at, pipe.start()))
        at = pipe.end()
    cells.append((at, end))
    if cells and not text[cells[0][0] : cells[0][1]].strip():
        cells = cells[1:]
    if cells and not text[cells[-1][0] : cells[-1][1]].strip():
        cells = cells[:-1]
    return cells


def _plural(text: str, cell: tuple[int, int]) -> bool:
    word = text[cell[0] : cell[1]].strip().strip(_WRAP).rstrip(":").strip().lower()
    return word.endswith(("words", "worte", "wörter", "phrases", "codes", "keys", "tokens", "pins"))


def _key_kind(text: str, cell: tuple[int, int]) -> str | None:
    """Which kind of secret a header or first cell names, or None."""
    return _key_text(text[cell[0] : cell[1]])


def _key_text(cell: str) -> str | None:
    raw = cell.strip().strip(_WRAP).rstrip(":").strip().strip(_WRAP).lower()
    if not raw or len(raw) > 48:
        return None
    m = _KEY_CELL.fullmatch(raw)
    if m is None or any(word in raw for word in _META):
        return None
    return m.lastgroup


def _value(text: str, cell: tuple[int, int], kind: str, *, spaces: bool) -> _Span | None:
    """The cell's value if it is a secret of that kind (without the cell's padding and quotes)."""
    start, end = cell
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    quoted = False
    while end - start >= 2 and text[start] in _WRAP and text[end - 1] == text[start]:
        start, end, quoted = start + 1, end - 1, True
    value = text[start:end]
    if not value or "[REDACTED:" in value:
        return None
    if any(c.isspace() for c in value) and not (quoted or (spaces and _phrase(value))):
        return None
    if kind == "password":
        ok = password_value_ok(value)
    elif kind == "weak":
        ok = password_value_ok(value, strict=True)
    elif kind == "pin":
        ok = pin_value_ok(value)
    else:
        ok = token_value_ok(value)
    return (start, end, TABLE_DETECTOR) if ok else None


def _phrase(value: str) -> bool:
    # A passphrase in a password column ("correct horse battery staple"), not a sentence
    # describing the field ("Min. 8 characters, one digit.").
    words = value.split()
    return len(words) <= 5 and not value.endswith((".", ":")) and "," not in value
