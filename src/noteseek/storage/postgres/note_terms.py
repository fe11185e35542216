"""Term statistics for one query and the token sets of each note, for the ranking, on
PostgreSQL: the same facts the SQLite backend's `note_terms.py` gives, from the same tokenizer.

- `query_term_counts`: every query word's index forms (noteseek's FTS5 tokenizer in query mode,
  terms.py: the Porter stem, plus the German stem in a collection with German notes) and the
  number of chunks holding the most frequent of them: `term_stats.df`, which every file write
  keeps exact (summed over the selected collections, as BM25's statistics are).
- `note_terms`: per note the distinct index tokens of its title field, tags field and headings,
  written by `replace_file` in the file's transaction (`note_terms` table, schema migration 4),
  plus its chunk count and size.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ..rows import NoteTerms, note_terms_of
from .connection import PostgresConnection

if TYPE_CHECKING:
    from ..records import FileWrite

__all__ = ["NoteTermsTable"]


class NoteTermsTable:
    """Reads and writes of `note_terms`, and the document counts of query words."""

    def __init__(self, conn: PostgresConnection) -> None:
        self.conn = conn

    def query_term_counts(self, words: Sequence[str]) -> list[tuple[tuple[str, ...], int]]:
        forms_of: list[tuple[str, ...]] = []
        for word in words:
            forms: list[str] = []
            for token in self.conn.tokenizer.query(word):
                forms.extend(f for f in token if f not in forms)
            forms_of.append(tuple(forms))
        wanted = sorted({f for forms in forms_of for f in forms})
        counts: dict[str, int] = {}
        if wanted:
            rows = self.conn.rows(
                "SELECT term, sum(df) FROM term_stats WHERE collection_id = ANY(%s) "
                "AND term = ANY(%s) GROUP BY term",
                (self.conn.collections.ids, wanted),
            )
            counts = {str(term): int(n) for term, n in rows}
        return [(forms, max((counts.get(f, 0) for f in forms), default=0)) for forms in forms_of]

    def write_note_terms(self, file_ids: Sequence[int], files: Sequence[FileWrite]) -> None:
        """Each (file id, file)'s token sets, as its chunks were tokenized, in two statements;
        none for a file without chunks (inside `write()`)."""
        from ..note_terms import note_term_row  # deferred: a search never writes a note

        tokenizer = self.conn.tokenizer

        def tokens_in(lang: str | None) -> Callable[[str], list[str]]:
            return lambda text: tokenizer.document(text, lang)

        rows = [
            (fid, note_term_row(f, tokens_in(f.record.lang))) for fid, f in zip(file_ids, files)
        ]
        empty = [fid for fid, row in rows if row is None]
        if empty:
            self.conn.run("DELETE FROM note_terms WHERE file_id = ANY(%s)", (empty,))
        kept = [(fid, row) for fid, row in rows if row is not None]
        if kept:
            self.conn.run(
                "INSERT INTO note_terms(file_id, collection_id, title, tags, headings) "
                "SELECT f, %s, t, g, h FROM unnest(%b::bigint[], %b::text[], %b::text[], "
                "%b::text[]) AS u(f, t, g, h) ON CONFLICT (file_id) DO UPDATE SET "
                "title = excluded.title, tags = excluded.tags, headings = excluded.headings",
                (
                    self.conn.collections.only,
                    [fid for fid, _ in kept],
                    [row.title for _, row in kept],
                    [row.tags for _, row in kept],
                    [row.headings for _, row in kept],
                ),
            )

    def delete_note_terms(self, file_id: int) -> None:
        """Drop the note's token sets (inside `write()`)."""
        self.conn.run("DELETE FROM note_terms WHERE file_id = %s", (file_id,))

    def note_terms(self, file_ids: Sequence[int]) -> dict[int, NoteTerms]:
        """file id -> (title tokens, tag tokens, heading tokens, chunk count, size in bytes);
        notes written before migration 4 have empty token sets until they are re-processed."""
        if not file_ids:
            return {}
        rows = self.conn.rows(
            "SELECT f.id, t.title, t.tags, t.headings, f.chunk_count, f.size FROM files f "
            "LEFT JOIN note_terms t ON t.file_id = f.id "
            "WHERE f.id = ANY(%s) AND f.collection_id = ANY(%s)",
            (sorted({int(i) for i in file_ids}), self.conn.collections.ids),
        )
        return note_terms_of(rows)
