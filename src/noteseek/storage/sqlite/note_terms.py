"""Term statistics for one query and the token sets of each note, for the ranking.

- `query_term_counts`: every query word's index forms (the `noteseek` tokenizer in query mode:
  Porter stem, plus the German stem in a vault with German notes) and the number of chunks
  holding it (fts5vocab). The known-words gate asks it whether anything knows a word; the
  reranker weights term coverage by it.
- `note_terms`: per note, the distinct index tokens of its title field (title, aliases, file
  name), its tags field and its headings, written at index time (schema m007) so a search never
  runs the tokenizer over candidate notes (~1.4 ms per query otherwise, bench/results/ranking.md),
  plus its chunk count and size.

Tokens come from the same tokenizer and locale as the FTS5 rows, so "a note's title covers a query
term" means exactly "FTS5 would match that term in the title column".
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import apsw

from ..rows import NoteTerms, note_terms_of
from ..tokenizer import TOKENIZER_NAME
from .connection import SqliteConnection

if TYPE_CHECKING:
    from ..records import FileWrite

__all__ = ["NoteTermsTable"]

_VOCAB = "temp.noteseek_vocab"


class NoteTermsTable:
    """Reads and writes of `note_terms`, and FTS5 document counts of query words."""

    def __init__(self, conn: SqliteConnection) -> None:
        self.conn = conn
        self.db = conn.db
        self._query_tokenizer: Any = None
        self._vocab_ready = False

    def _tokens(self, text: str, locale: str | None, flags: int) -> list[tuple[str, ...]]:
        if self._query_tokenizer is None:
            self._query_tokenizer = self.db.fts5_tokenizer(TOKENIZER_NAME, [])
        if not text:
            return []
        raw = self._query_tokenizer(text.encode("utf-8"), flags, locale)
        return [tuple(str(f) for f in t[2:]) for t in raw]

    def query_term_counts(self, words: Sequence[str]) -> list[tuple[tuple[str, ...], int]]:
        if not self._vocab_ready:
            self.db.execute(
                f"CREATE VIRTUAL TABLE IF NOT EXISTS {_VOCAB} USING fts5vocab(main, chunks_fts, 'row')"
            )
            self._vocab_ready = True
        per_word: list[tuple[str, ...]] = []
        for word in words:
            forms: list[str] = []
            for token in self._tokens(word, None, apsw.FTS5_TOKENIZE_QUERY):
                forms.extend(f for f in token if f not in forms)
            per_word.append(tuple(forms))
        wanted = sorted({f for forms in per_word for f in forms})
        docs: dict[str, int] = {}
        if wanted:
            # One statement for every form (fts5vocab looks each term up by its key): a statement
            # per form cost a search ~0.1 ms each.
            marks = ",".join("?" * len(wanted))
            sql = f"SELECT term, doc FROM {_VOCAB} WHERE term IN ({marks})"
            docs = {str(term): int(doc) for term, doc in self.db.execute(sql, wanted)}
        return [(forms, max((docs.get(f, 0) for f in forms), default=0)) for forms in per_word]

    def write_note_terms(self, file_id: int, file: FileWrite) -> None:
        """The note's token sets, as its chunks were tokenized; none without chunks (inside
        `write()`)."""
        from ..note_terms import note_term_row  # deferred: a search never writes a note

        flags, lang = apsw.FTS5_TOKENIZE_DOCUMENT, file.record.lang
        row = note_term_row(file, lambda text: (t[0] for t in self._tokens(text, lang, flags) if t))
        if row is None:
            self.delete_note_terms(file_id)
            return
        self.db.execute(
            "INSERT OR REPLACE INTO note_terms(file_id, title, tags, headings) VALUES (?,?,?,?)",
            (file_id, row.title, row.tags, row.headings),
        )

    def delete_note_terms(self, file_id: int) -> None:
        """Drop the note's token sets (inside `write()`)."""
        self.db.execute("DELETE FROM note_terms WHERE file_id = ?", (file_id,))

    def note_terms(self, file_ids: Sequence[int]) -> dict[int, NoteTerms]:
        """file id -> (title tokens, tag tokens, heading tokens, chunk count, size in bytes);
        notes indexed before m007 have empty token sets until they are re-processed."""
        if not file_ids:
            return {}
        rows = self.db.execute(
            "SELECT f.id, t.title, t.tags, t.headings, f.chunk_count, f.size FROM files f "
            "LEFT JOIN note_terms t ON t.file_id = f.id "
            "WHERE f.id IN (SELECT value FROM json_each(?))",
            (json.dumps(list(file_ids)),),
        )
        return note_terms_of(rows)
