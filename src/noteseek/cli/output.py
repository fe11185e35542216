"""What the commands print for people: every control character made visible on the way out.

File names, headings and note text reach these lines, and any of them may hold terminal
escapes or line breaks (core/display.py says which and why). Two ways out, both through
`core.display`:

- `echo_line`: one record per line (a search hit's heading, a `status --files` row, a problem):
  newlines and tabs are escaped too, so a value cannot start a line of its own.
- `echo_block`: a text with lines of its own (the context block, the eval table, a diff): its
  newlines and tabs stay, every other control character is escaped.

JSON output does not come here: `json.dumps` escapes controls itself and keeps the exact text.
"""

from __future__ import annotations

import codecs
import logging
import sys

import click

from ..core.display import one_line, printable

__all__ = ["PrintableLogFormatter", "echo_block", "echo_line", "tolerate_narrow_terminals"]

# The error handler for JSON on a stream that cannot encode every character: `\\uXXXX` escapes
# (surrogate pairs past the BMP), which JSON reads back as the same text. Outside strings JSON
# is ASCII, so the document stays valid.
_JSON_ESCAPES = "noteseek-json-escape"


def _json_escape(error: UnicodeError) -> tuple[str, int]:
    assert isinstance(error, UnicodeEncodeError)
    text = error.object[error.start : error.end]
    units = text.encode("utf-16-be")
    escaped = "".join(
        f"\\u{int.from_bytes(units[i : i + 2], 'big'):04x}" for i in range(0, len(units), 2)
    )
    return escaped, error.end


def tolerate_narrow_terminals(*, json_out: bool) -> None:
    """Let stdout and stderr print any text when their encoding is not UTF-8 (a Latin-1 or
    cp1252 terminal, PYTHONIOENCODING=ascii): a character they cannot show becomes `?`, in JSON
    on stdout a `\\u` escape, instead of a UnicodeEncodeError traceback halfway through."""
    for stream, escapes in ((sys.stdout, json_out), (sys.stderr, False)):
        encoding = (getattr(stream, "encoding", None) or "utf-8").lower().replace("-", "")
        reconfigure = getattr(stream, "reconfigure", None)
        if encoding in ("utf8", "utf_8") or reconfigure is None:
            continue
        if escapes:
            try:
                codecs.lookup_error(_JSON_ESCAPES)
            except LookupError:
                codecs.register_error(_JSON_ESCAPES, _json_escape)
        reconfigure(errors=_JSON_ESCAPES if escapes else "replace")


def echo_line(text: str, *, err: bool = False, bold: str = "") -> None:
    """Print `text` as one line (stdout, or stderr with `err`); `bold` comes first, in bold on a
    terminal."""
    lead = click.style(one_line(bold), bold=True) if bold else ""
    click.echo(lead + one_line(text), err=err)


def echo_block(text: str, *, err: bool = False, nl: bool = True) -> None:
    """Print a multi-line `text`, keeping its newlines and tabs."""
    click.echo(printable(text), err=err, nl=nl)


class PrintableLogFormatter(logging.Formatter):
    """Log lines (`--verbose`, to stderr) with control characters escaped; a traceback keeps its
    lines."""

    def format(self, record: logging.LogRecord) -> str:
        return printable(super().format(record))
