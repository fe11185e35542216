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

import logging

import click

from ..core.display import one_line, printable

__all__ = ["PrintableLogFormatter", "echo_block", "echo_line"]


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
