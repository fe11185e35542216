"""Rows of the files and chunks tables, and what hangs on a file: its note names and tags.

Methods that return `records` values import that module on first use: a one-shot search
defines no records dataclass (storage/rows.py).
"""

from __future__ import annotations

# Deferred imports: the record types are made by the update and the status calls only; a
# one-shot search imports this module and reads none of them.
import json
import time
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ...core.file_kinds import DOCUMENT_SUFFIXES
from .. import meta
from ..rows import ChunkRow, strings_by_file
from .connection import SqliteConnection
from .links import LinkTable
from .note_terms import NoteTermsTable
from .text_index import TextIndex
from .vector_table import VEC_TABLE, VectorTable

if TYPE_CHECKING:
    # Imported where they are made: a one-shot search never creates these dataclasses.
    from .. import records
    from ..queries import FileFilter

__all__ = ["FileRows"]


def _hash_blob(value: str | None) -> bytes | str | None:
    """A file's SHA-256 as its 32 bytes rather than 64 hex digits (schema m011); anything that is
    not hex is kept as it is."""
    if value is None:
        return None
    try:
        raw = bytes.fromhex(value)
    except ValueError:
        return value
    return raw if raw.hex() == value else value  # read back exactly as it came


_STATE_COLUMNS = "path, mtime_ns, size, content_hash, status, kind, engine"
# Document suffixes, matched as the plan does (`str.lower().endswith`): LIKE folds ASCII case
# only, and the one other character Python lowers to ASCII (the Kelvin sign, to "k") is in none.
_SUFFIX_PATTERNS = tuple(f"%{suffix}" for suffix in DOCUMENT_SUFFIXES)
# The files a targeted update looks at (`FilePart.file_states(near=...)`): at or below a target
# (a path sorts between `target/` and `target0`, '0' following '/'), sharing a stat or a content
# hash with one of those, or not a plain note.
_NEAR_SQL = (
    "WITH target(p) AS (SELECT value FROM json_each(?)), "
    "named AS (SELECT f.path, f.mtime_ns, f.size, f.content_hash FROM target "
    "JOIN files f ON f.path = target.p OR (f.path >= (target.p || '/') "
    "AND f.path < (target.p || '0'))) "
    f"SELECT {_STATE_COLUMNS} FROM files WHERE path IN (SELECT path FROM named) "
    "OR (kind IS NOT NULL AND kind != 'note') OR engine IS NOT NULL "
    "OR (mtime_ns != 0 AND (mtime_ns, size) IN "
    "(SELECT mtime_ns, size FROM named WHERE mtime_ns != 0)) "
    "OR content_hash IN (SELECT content_hash FROM named WHERE content_hash IS NOT NULL)"
    + "".join(" OR path LIKE ?" for _ in _SUFFIX_PATTERNS)
)


class FileRows:
    """Writes of a file's rows (inside `write()`: the indexer writes a batch of whole files per
    transaction), file-level reads and chunk lookups. A file's write reaches the parts whose rows
    hang on it: the text index's term counts, the vectors, the note terms and the links."""

    def __init__(
        self,
        conn: SqliteConnection,
        *,
        text: TextIndex,
        vectors: VectorTable,
        terms: NoteTermsTable,
        links: LinkTable,
    ) -> None:
        self.conn = conn
        self.db = conn.db
        self.text = text
        self.vectors = vectors
        self.terms = terms
        self.links = links

    def file_states(self, near: Sequence[str] | None = None) -> dict[str, records.FileState]:
        from ..records import FileState as state

        if near is None:
            rows = self.db.execute(f"SELECT {_STATE_COLUMNS} FROM files")
        else:
            # One statement instead of every row to Python: on MDN's 13,000 files the whole
            # table and the plan's tests over it were 0.1 s of a watcher's one-note update.
            rows = self.db.execute(_NEAR_SQL, (json.dumps(list(near)), *_SUFFIX_PATTERNS))
        # The columns are INTEGER and TEXT/BLOB, as written: FileState straight from the row
        # (file_state_of's conversions were a tenth of a no-op run over MDN's 13,000 files).
        return {
            r[0]: state(r[1], r[2], r[3].hex() if isinstance(r[3], bytes) else r[3], *r[4:])
            for r in rows
        }

    def file_paths(self) -> dict[int, str]:
        return {int(r[0]): str(r[1]) for r in self.db.execute("SELECT id, path FROM files")}

    def touch_file(self, path: str, mtime_ns: int, size: int) -> None:
        from ...core.note_dates import mtime_date  # deferred: not on a search's import path

        self.db.execute(
            "UPDATE files SET mtime_ns = ?, size = ?, note_date = CASE WHEN date_source = 'mtime' "
            "THEN ? ELSE note_date END WHERE path = ?",
            (mtime_ns, size, mtime_date(mtime_ns), path),
        )

    def delete_file(self, path: str) -> None:
        file_id = self.conn.scalar("SELECT id FROM files WHERE path = ?", (path,))
        if file_id is not None:
            self._delete_chunks(int(file_id))
            self.db.execute("DELETE FROM note_names WHERE file_id = ?", (file_id,))
            self.db.execute("DELETE FROM note_tags WHERE file_id = ?", (file_id,))
            self.terms.delete_note_terms(int(file_id))
            self.links.delete_links(int(file_id))
            self.db.execute("DELETE FROM files WHERE id = ?", (file_id,))

    def _delete_chunks(self, file_id: int) -> None:
        ids = [r[0] for r in self.db.execute("SELECT id FROM chunks WHERE file_id = ?", (file_id,))]
        if not ids:
            return
        self.text.chunks_changed()
        self.text.deleting(ids)
        if self.conn.vectors_available and self.vectors.has_vector_table():
            # One rowid at a time: vec0 answers `rowid IN (subquery)` with a full scan.
            for chunk_id in ids:
                self.db.execute(f"DELETE FROM {VEC_TABLE} WHERE rowid = ?", (chunk_id,))
        self.db.execute("DELETE FROM chunks WHERE file_id = ?", (file_id,))
        self.conn.chunks_deleted += len(ids)

    def replace_files(self, files: Sequence[records.FileWrite]) -> None:
        # One file after another: each is a few statements in-process, no round trip to save.
        for file in files:
            self.replace_file(file)

    def replace_file(self, file: records.FileWrite) -> None:
        record, chunks, vectors = file.record, file.chunks, file.vectors
        file_id = self.conn.scalar("SELECT id FROM files WHERE path = ?", (record.path,))
        if file_id is not None:
            # Before the file row changes: the FTS5 'delete' of each chunk reads the title and
            # tags fields and the language it was indexed with from that row (schema m010, m011).
            self._delete_chunks(int(file_id))
        now = time.time()
        self.db.execute(
            "INSERT INTO files(id, path, mtime_ns, size, content_hash, title, status, problem, "
            "chunk_count, indexed_at, skipped_sections, secrets_scrubbed, kind, outcome, engine, "
            "note_date, date_source, title_field, tags_field, heading_context, lang) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(id) DO UPDATE SET "
            "mtime_ns=excluded.mtime_ns, size=excluded.size, content_hash=excluded.content_hash, "
            "title=excluded.title, status=excluded.status, problem=excluded.problem, "
            "chunk_count=excluded.chunk_count, indexed_at=excluded.indexed_at, "
            "skipped_sections=excluded.skipped_sections, "
            "secrets_scrubbed=excluded.secrets_scrubbed, "
            "kind=excluded.kind, outcome=excluded.outcome, engine=excluded.engine, "
            "note_date=excluded.note_date, date_source=excluded.date_source, "
            "title_field=excluded.title_field, tags_field=excluded.tags_field, "
            "heading_context=excluded.heading_context, lang=excluded.lang",
            (
                file_id,
                record.path,
                record.mtime_ns,
                record.size,
                _hash_blob(record.content_hash),
                record.title,
                record.status,
                record.problem,
                len(chunks),
                now,
                record.skipped_sections,
                record.secrets_scrubbed,
                record.kind,
                record.outcome,
                record.engine,
                record.date,
                record.date_source,
                record.title_field,
                record.tags_field,
                record.heading_context,
                record.lang,
            ),
        )
        if file_id is None:
            file_id = self.db.last_insert_rowid()
        self.db.execute("DELETE FROM note_names WHERE file_id = ?", (file_id,))
        for name in sorted(set(record.names)):
            self.db.execute("INSERT INTO note_names(name, file_id) VALUES (?, ?)", (name, file_id))
        self.db.execute("DELETE FROM note_tags WHERE file_id = ?", (file_id,))
        for tag in sorted(set(record.tags)):
            self.db.execute("INSERT INTO note_tags(tag, file_id) VALUES (?, ?)", (tag, file_id))
        self.links.write_links(
            int(file_id), record.links, record.aliases, [(c.seq, c.text) for c in chunks]
        )
        self.terms.write_note_terms(int(file_id), file)
        store_vectors = (
            vectors is not None and self.conn.vectors_available and self.vectors.has_vector_table()
        )
        if chunks:
            self.text.chunks_changed()
        for i, chunk in enumerate(chunks):
            self.db.execute(
                "INSERT INTO chunks(file_id, seq, section, chunk_text, content_hash, embedded, "
                "page, page_label, slide, sheet, row_first, row_last, overlap) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    file_id,
                    chunk.seq,
                    chunk.section,
                    chunk.text,
                    chunk.content_hash,
                    int(store_vectors),
                    chunk.page,
                    chunk.page_label,
                    chunk.slide,
                    chunk.sheet,
                    chunk.row_first,
                    chunk.row_last,
                    chunk.overlap,
                ),
            )
            chunk_id = self.db.last_insert_rowid()
            # The chunk's FTS5 row, as the view chunks_fts_content gives it (schema m013: no
            # trigger, so FTS5 keeps the batch's terms in memory until the commit).
            self.db.execute(
                "INSERT INTO chunks_fts(rowid, chunk_text, section, title, tags) VALUES "
                "(?1, fts5_locale(?2, ?3), fts5_locale(?2, ?4), fts5_locale(?2, ?5), "
                "fts5_locale(?2, ?6))",
                (
                    chunk_id,
                    record.lang,
                    chunk.text,
                    chunk.section,
                    record.title_field,
                    record.tags_field,
                ),
            )
            self.text.written(chunk_id)
            if store_vectors:
                assert vectors is not None
                self.db.execute(
                    f"INSERT INTO {VEC_TABLE}(rowid, embedding) VALUES (?, vec_int8(?))",
                    (chunk_id, vectors[i].tobytes()),
                )

    # -- reads ------------------------------------------------------------------------------

    def left_out(self) -> list[tuple[str, int, int]]:
        rows = self.db.execute(
            "SELECT path, skipped_sections, secrets_scrubbed FROM files "
            "WHERE skipped_sections > 0 OR secrets_scrubbed > 0 ORDER BY path"
        )
        return [(r[0], int(r[1]), int(r[2])) for r in rows]

    def file_problems(self) -> list[tuple[str, str, str]]:
        rows = self.db.execute(
            "SELECT path, status, problem FROM files WHERE status != 'ok' ORDER BY path"
        )
        return [(r[0], r[1], r[2] or "") for r in rows]

    def file_entries(self) -> list[records.FileEntry]:
        from ..records import file_entry_of

        rows = self.db.execute(
            "SELECT path, status, problem, mtime_ns, size, chunk_count, indexed_at FROM files "
            "ORDER BY path"
        )
        return [file_entry_of(r[0], r[1:]) for r in rows]

    def indexed_file(self, path: str) -> records.IndexedFile | None:
        from ..records import indexed_file_of

        row = self.db.execute(
            "SELECT status, problem, mtime_ns, size, title, kind FROM files WHERE path = ?", (path,)
        ).fetchone()
        return None if row is None else indexed_file_of(row)

    def document_outcomes(self) -> list[records.KindOutcomes]:
        from ..records import kind_outcomes_of

        rows = self.db.execute(
            "SELECT kind, outcome, count(*), CASE WHEN engine LIKE 'missing:%' "
            "THEN substr(engine, 9) END AS missing FROM files WHERE kind IS NOT NULL "
            "GROUP BY kind, outcome, missing ORDER BY kind, outcome, missing"
        )
        return kind_outcomes_of(rows)

    def vault_location(self, path: str) -> tuple[str, str] | None:
        """(the vault folder of the last update, `path`); None before the first update."""
        root = self.conn.get_meta(meta.VAULT_ROOT)
        return None if root is None else (root, path)

    def similar_paths(self, file_name: str, limit: int) -> list[str]:
        # A suffix comparison, not `LIKE '%/name'`: SQLite refuses LIKE patterns over 50,000
        # bytes ("pattern too complex"), and the name comes from whoever asked for the note.
        rows = self.db.execute(
            "SELECT path FROM files WHERE status != 'skipped' AND (lower(path) = ?1 OR "
            "substr(lower(path), -length(?1) - 1) = '/' || ?1) ORDER BY path LIMIT ?2",
            (file_name, limit),
        )
        return [r[0] for r in rows]

    def files_named(self, name: str) -> list[int]:
        rows = self.db.execute(
            "SELECT file_id FROM note_names WHERE name = ? ORDER BY file_id", (name,)
        )
        return [int(r[0]) for r in rows]

    def files_matching(self, filters: FileFilter) -> set[int]:
        # Each list is one JSON parameter, so the statement is the same size for 1 value or
        # 1,500 (a clause per value overflowed SQLite's expression depth at ~1,000). Prefixes
        # are ranges of the path and tag indexes: under BINARY collation the strings starting
        # with 'x/' are exactly those from 'x/' up to 'x0' ('0' follows '/').
        clauses: list[str] = []
        params: list[object] = []
        for op, day in filters.day_bounds():
            clauses.append(f"substr(note_date, 1, 10) {op} ?")
            params.append(day)
        folders = filters.folder_prefixes()
        if folders is not None:
            clauses.append(
                "id IN (SELECT f.id FROM json_each(?) q JOIN files f "
                "ON f.path >= q.value || '/' AND f.path < q.value || '0')"
            )
            params.append(json.dumps(folders))
        wanted = filters.all_tags()
        if wanted:
            # A note must carry every tag: count the distinct filter tags each note matches.
            clauses.append(
                "id IN (SELECT file_id FROM ("
                "SELECT t.file_id, q.value AS wanted FROM json_each(?) q "
                "JOIN note_tags t ON t.tag = q.value "
                "UNION ALL SELECT t.file_id, q.value FROM json_each(?) q "
                "JOIN note_tags t ON t.tag >= q.value || '/' AND t.tag < q.value || '0'"
                ") GROUP BY file_id HAVING count(DISTINCT wanted) = ?)"
            )
            params += [json.dumps(wanted), json.dumps(wanted), len(wanted)]
        if filters.files:
            # The IN list still looks each path up in the unique path index.
            clauses.append("path IN (SELECT value FROM json_each(?))")
            params.append(json.dumps(list(filters.files)))
        where = " AND ".join(clauses) or "1"
        return {int(r[0]) for r in self.db.execute(f"SELECT id FROM files WHERE {where}", params)}

    def files_by_date(self, allowed: set[int] | None, limit: int) -> list[int]:
        if allowed is not None and not allowed:
            return []
        where = "status != 'skipped' AND chunk_count > 0 AND note_date IS NOT NULL"
        params: list[object] = []
        if allowed is not None:
            where += " AND id IN (SELECT value FROM json_each(?))"
            params.append(json.dumps(sorted(allowed)))
        rows = self.db.execute(
            f"SELECT id FROM files WHERE {where} ORDER BY note_date DESC, path LIMIT ?",
            [*params, limit],
        )
        return [int(r[0]) for r in rows]

    def note_tags(self, file_ids: Sequence[int] | None = None) -> dict[int, tuple[str, ...]]:
        where, params = "f.status != 'skipped'", []
        if file_ids is not None:
            where += " AND t.file_id IN (SELECT value FROM json_each(?))"
            params.append(json.dumps(list(file_ids)))
        rows = self.db.execute(
            "SELECT t.file_id, t.tag FROM note_tags t JOIN files f ON f.id = t.file_id "
            f"WHERE {where} ORDER BY t.file_id, t.tag",
            params,
        )
        return strings_by_file(rows)

    # -- chunks -----------------------------------------------------------------------------

    def chunk_count(self) -> int:
        return int(self.conn.scalar("SELECT count(*) FROM chunks"))

    def chunk_rows(self, ids: Sequence[int]) -> dict[int, ChunkRow]:
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        rows = self.db.execute(
            f"SELECT c.id, f.path, c.section, c.chunk_text, f.heading_context, c.page, "
            f"c.page_label, c.slide, c.sheet, c.row_first, c.row_last, f.note_date, "
            f"f.date_source FROM chunks c "
            f"JOIN files f ON f.id = c.file_id WHERE c.id IN ({marks})",
            list(ids),
        )
        return {r[0]: ChunkRow(*r) for r in rows}

    def chunk_texts(self, path: str) -> list[str]:
        rows = self.db.execute(
            "SELECT c.chunk_text FROM chunks c JOIN files f ON f.id = c.file_id "
            "WHERE f.path = ? ORDER BY c.seq",
            (path,),
        ).fetchall()
        return [str(r[0]) for r in rows]

    def file_chunks(self, path: str) -> list[records.StoredChunk]:
        from ..records import StoredChunk

        rows: list[Any] = self.db.execute(
            "SELECT c.seq, c.section, c.chunk_text, c.page, c.page_label, c.slide, c.sheet, "
            "c.row_first, c.row_last, c.overlap FROM chunks c JOIN files f ON f.id = c.file_id "
            "WHERE f.path = ? ORDER BY c.seq",
            (path,),
        ).fetchall()
        return [StoredChunk(*r) for r in rows]

    def file_ids(self, chunk_ids: Sequence[int]) -> dict[int, int]:
        wanted = sorted(set(chunk_ids))
        out: dict[int, int] = {}
        for start in range(0, len(wanted), 500):
            batch = wanted[start : start + 500]
            marks = ",".join("?" * len(batch))
            for chunk_id, file_id in self.db.execute(
                f"SELECT id, file_id FROM chunks WHERE id IN ({marks})", batch
            ):
                out[int(chunk_id)] = int(file_id)
        return out

    def chunks_of_files(self, file_ids: Iterable[int]) -> set[int]:
        rows = self.db.execute(
            "SELECT id FROM chunks WHERE file_id IN (SELECT value FROM json_each(?))",
            (json.dumps(sorted(set(file_ids))),),
        )
        return {int(r[0]) for r in rows}

    def first_chunk(self, file_id: int) -> int | None:
        value = self.conn.scalar(
            "SELECT id FROM chunks WHERE file_id = ? ORDER BY seq LIMIT 1", (file_id,)
        )
        return None if value is None else int(value)
