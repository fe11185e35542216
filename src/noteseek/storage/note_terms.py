"""The `note_terms` row of a file being written, as both backends store it: the distinct index
tokens of its title field, tags field and section headings. Each backend tokenizes with its own
call into the same tokenizer (the way its chunks were tokenized); what is kept of the tokens,
and how they are joined, is decided here once. `rows.note_terms_of` reads the row back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .records import FileWrite

__all__ = ["NoteTermRow", "note_term_row"]


@dataclass(frozen=True)
class NoteTermRow:
    """A note's token sets, each its distinct tokens sorted and space separated."""

    title: str
    tags: str
    headings: str


def note_term_row(file: FileWrite, tokens: Callable[[str], Iterable[str]]) -> NoteTermRow | None:
    """The row of `file` from `tokens(text)` (a text's index tokens, one form each, in the
    file's language); None when the file has no chunks, so it has no row."""
    if not file.chunks:
        return None

    def field(text: str) -> str:
        return " ".join(sorted(set(tokens(text))))

    headings = " \n".join(dict.fromkeys(c.section for c in file.chunks if c.section))
    return NoteTermRow(
        field(file.record.title_field), field(file.record.tags_field), field(headings)
    )
