"""A file's rows written in its transaction: files, names, tags, chunks with their vectors, and the
BM25 statistics that hang on the chunks (postings, document frequencies, collection counts).

Everything a file changes is written inside the caller's `write()`, so a reader sees the file
and its statistics entirely old or entirely new, and a killed indexer leaves neither half. Each
step is one statement over arrays (`unnest`): about ten round trips per file whatever its size.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .links import LinkTable
from .multilingual_table import MultilingualTable
from .note_terms import NoteTermsTable
from .terms import ChunkTerms, chunk_terms
from .text_index import TextIndex
from .vector_table import VectorTable

if TYPE_CHECKING:  # numpy costs ~65 ms to import; a search never needs it
    import numpy as np
    import numpy.typing as npt

    from ..records import ChunkRecord, FileRecord

__all__ = ["FileWrites"]

_SMALLINT = 32767  # postings' term frequencies are smallint: a chunk is far shorter than this


class FileWrites(TextIndex, VectorTable, NoteTermsTable, MultilingualTable, LinkTable):
    """replace_file, delete_file and touch_file of one collection (inside `write()`)."""

    def _file_id(self, path: str) -> int | None:
        value = self.scalar(
            "SELECT id FROM files WHERE collection_id = %s AND path = %s",
            (self.collections.only, path),
        )
        return None if value is None else int(value)

    def touch_file(self, path: str, mtime_ns: int, size: int) -> None:
        """Record a new mtime for a file whose content did not change (and the date it gives a
        file dated by its mtime)."""
        from ...core.note_dates import mtime_date  # not on a search's import path

        self.run(
            "UPDATE files SET mtime_ns = %s, size = %s, note_date = CASE WHEN date_source = "
            "'mtime' THEN %s ELSE note_date END WHERE collection_id = %s AND path = %s",
            (mtime_ns, size, mtime_date(mtime_ns), self.collections.only, path),
        )

    def delete_file(self, path: str) -> None:
        """Remove a file with its chunks, postings, names and tags (inside `write()`)."""
        file_id = self._file_id(path)
        if file_id is None:
            return
        chunks, tokens = self._delete_chunks(file_id)
        # Names and tags go by their foreign keys' cascade.
        self.run("DELETE FROM files WHERE id = %s", (file_id,))
        self._bump(-chunks, -tokens)

    def _delete_chunks(self, file_id: int) -> tuple[int, int]:
        """Delete a file's chunks and their statistics; (chunks, tokens) removed."""
        cid = self.collections.only
        # The chunks' postings, and their stems' document counts down by one per chunk (each
        # posting is one chunk holding the stem); a stem no chunk holds any more loses its row.
        emptied = self.rows(
            "WITH gone AS (DELETE FROM postings WHERE chunk_id IN "
            "(SELECT id FROM chunks WHERE file_id = %s) RETURNING term), "
            "t AS (SELECT term, count(*) AS n FROM gone GROUP BY term) "
            "UPDATE term_stats s SET df = s.df - t.n FROM t "
            "WHERE s.collection_id = %s AND s.term = t.term RETURNING s.term, s.df",
            (file_id, cid),
        )
        zero = [str(term) for term, df in emptied if int(df) == 0]
        if zero:
            self.run(
                "DELETE FROM term_stats WHERE collection_id = %s AND term = ANY(%s) AND df = 0",
                (cid, zero),
            )
        gone = self.rows("DELETE FROM chunks WHERE file_id = %s RETURNING doc_len", (file_id,))
        self.chunks_deleted += len(gone)
        return len(gone), sum(int(r[0]) for r in gone)

    def _bump(self, chunks: int, tokens: int) -> None:
        """The collection's BM25 counts, and its version (every write moves it)."""
        self.run(
            "UPDATE collections SET chunk_count = chunk_count + %s, "
            "token_count = token_count + %s, version = version + 1 WHERE id = %s",
            (chunks, tokens, self.collections.only),
        )

    def replace_file(
        self,
        record: FileRecord,
        chunks: Sequence[ChunkRecord],
        vectors: npt.NDArray[np.int8] | None,
    ) -> None:
        """Replace a file's rows with new ones (inside `write()`); vectors are int8 rows."""
        cid = self.collections.only
        file_id = self._file_id(record.path)
        removed = (0, 0) if file_id is None else self._delete_chunks(file_id)
        now = time.time()
        file_id = int(
            self.scalar(
                "INSERT INTO files(collection_id, path, mtime_ns, size, content_hash, title, "
                "status, problem, chunk_count, indexed_at, skipped_sections, secrets_scrubbed, "
                "kind, outcome, engine, note_date, date_source, title_field, tags_field, heading_context) "
                "VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s) "
                "ON CONFLICT (collection_id, path) DO UPDATE SET mtime_ns = excluded.mtime_ns, "
                "size = excluded.size, content_hash = excluded.content_hash, "
                "title = excluded.title, status = excluded.status, problem = excluded.problem, "
                "chunk_count = excluded.chunk_count, indexed_at = excluded.indexed_at, "
                "skipped_sections = excluded.skipped_sections, "
                "secrets_scrubbed = excluded.secrets_scrubbed, kind = excluded.kind, "
                "outcome = excluded.outcome, engine = excluded.engine, "
                "note_date = excluded.note_date, date_source = excluded.date_source, "
                "title_field = excluded.title_field, tags_field = excluded.tags_field, "
                "heading_context = excluded.heading_context RETURNING id",
                (cid, record.path, record.mtime_ns, record.size, record.content_hash,
                 record.title, record.status, record.problem, len(chunks), now,
                 record.skipped_sections, record.secrets_scrubbed, record.kind,
                 record.outcome, record.engine, record.date, record.date_source,
                 record.title_field, record.tags_field, record.heading_context),
            )
        )  # fmt: skip
        self._replace_keys("note_names", "name", file_id, record.names)
        self._replace_keys("note_tags", "tag", file_id, record.tags)
        self._write_links(file_id, record.links, record.aliases)
        if chunks:
            sections = (chunk.section for chunk in chunks)
            self._write_note_terms(
                file_id, record.title_field, record.tags_field, sections, record.lang
            )
        else:
            self._delete_note_terms(file_id)
        terms = [
            chunk_terms(
                self.tokenizer,
                text=c.text,
                section=c.section,
                title=record.title_field,
                tags=record.tags_field,
                lang=record.lang,
            )
            for c in chunks
        ]
        if chunks:
            with_vectors = vectors is not None and self.has_vector_table()
            ids = self._insert_chunks(
                record, file_id, chunks, terms, vectors if with_vectors else None, now
            )
            self._insert_postings(ids, terms)
        self._bump(len(chunks) - removed[0], sum(t.doc_len for t in terms) - removed[1])

    def _replace_keys(self, table: str, column: str, file_id: int, keys: Sequence[str]) -> None:
        # `table` and `column` are this module's constants, never user text.
        self.run(f"DELETE FROM {table} WHERE file_id = %s", (file_id,))
        if keys:
            self.run(
                f"INSERT INTO {table}(collection_id, {column}, file_id) "
                "SELECT %s, k, %s FROM unnest(%s::text[]) AS k",
                (self.collections.only, file_id, sorted(set(keys))),
            )

    def _insert_chunks(
        self,
        record: FileRecord,
        file_id: int,
        chunks: Sequence[ChunkRecord],
        terms: Sequence[ChunkTerms],
        vectors: npt.NDArray[np.int8] | None,
        now: float,
    ) -> list[int]:
        """Insert the chunks in order (so ids ascend as on SQLite: ties rank the same); ids."""
        embeddings = [None] * len(chunks) if vectors is None else self.halfvecs(vectors)
        rows = self.rows(
            "INSERT INTO chunks(collection_id, file_id, seq, section, chunk_text, "
            "lang, mtime_ns, content_hash, doc_len, embedding, embedded_at, page, "
            "page_label, slide, sheet, row_first, row_last, overlap) "
            "SELECT %(cid)s, %(fid)s, u.seq, u.section, u.body, "
            "%(lang)s, %(mtime)s, u.hash, u.len, u.vec, "
            "CASE WHEN u.vec IS NULL THEN NULL ELSE %(now)s::float8 END, "
            "u.page, u.label, u.slide, u.sheet, u.row_first, u.row_last, u.overlap "
            "FROM unnest(%(seq)s::int[], %(section)s::text[], %(body)s::text[], "
            "%(hash)s::bigint[], %(len)s::int[], %(vec)s::halfvec[], "
            "%(page)s::int[], %(label)s::text[], %(slide)s::int[], %(sheet)s::text[], "
            "%(row_first)s::int[], %(row_last)s::int[], %(overlap)s::int[]) "
            "WITH ORDINALITY AS u(seq, section, body, hash, len, vec, page, label, "
            "slide, sheet, row_first, row_last, overlap, n) "
            "ORDER BY u.n RETURNING id, seq",
            {
                "cid": self.collections.only,
                "fid": file_id,
                "lang": record.lang,
                "mtime": record.mtime_ns,
                "now": now,
                "seq": [c.seq for c in chunks],
                "section": [c.section for c in chunks],
                "body": [c.text for c in chunks],
                "hash": [c.content_hash for c in chunks],
                "len": [t.doc_len for t in terms],
                "vec": embeddings,
                "page": [c.page for c in chunks],
                "label": [c.page_label for c in chunks],
                "slide": [c.slide for c in chunks],
                "sheet": [c.sheet for c in chunks],
                "row_first": [c.row_first for c in chunks],
                "row_last": [c.row_last for c in chunks],
                "overlap": [c.overlap for c in chunks],
            },
        )
        by_seq = {int(seq): int(chunk_id) for chunk_id, seq in rows}
        return [by_seq[c.seq] for c in chunks]

    def _insert_postings(self, ids: Sequence[int], terms: Sequence[ChunkTerms]) -> None:
        """The chunks' postings, and their stems' document counts up by one per chunk."""
        stems: list[str] = []
        chunk_ids: list[int] = []
        lengths: list[int] = []
        tf: tuple[list[int], list[int], list[int], list[int]] = ([], [], [], [])
        for chunk_id, chunk in zip(ids, terms):
            for stem, counts in chunk.tf.items():
                stems.append(stem)
                chunk_ids.append(chunk_id)
                lengths.append(chunk.doc_len)
                for column, count in zip(tf, counts):
                    column.append(min(count, _SMALLINT))
        if not stems:
            return
        cid = self.collections.only
        self.run(
            "INSERT INTO postings(collection_id, term, chunk_id, doc_len, tf_text, tf_section, "
            "tf_title, tf_tags) SELECT %s, * FROM unnest(%s::text[], %s::bigint[], %s::int[], "
            "%s::smallint[], %s::smallint[], %s::smallint[], %s::smallint[])",
            (cid, stems, chunk_ids, lengths, *tf),
        )
        self.run(
            "INSERT INTO term_stats(collection_id, term, df) SELECT %s, t, count(*) "
            "FROM unnest(%s::text[]) AS t GROUP BY t ON CONFLICT (collection_id, term) "
            "DO UPDATE SET df = term_stats.df + excluded.df",
            (cid, stems),
        )
