"""The SQLite file: connection set-up, migrations, and every read and write of index rows.

Locking model: WAL journal (readers never block the writer or each other), a busy timeout so a
second writer waits instead of failing at once, and every file's rows are written in one
`BEGIN IMMEDIATE` transaction, so a reader or a crash sees a file entirely old or entirely new.
Two indexers on one file interleave file by file (each waits for the other's transaction); that is
safe because every write re-reads the rows it replaces inside its own transaction. Reads that must
agree with each other (row counts, integrity checks) run in one `snapshot()`.
"""

from __future__ import annotations

import importlib.util
import json
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import apsw

from .errors import IndexLockedError, IndexNotFoundError, SchemaVersionError
from .schema import MIGRATIONS, SCHEMA_VERSION
from .stemming import StemOptions
from .stemming import register as register_tokenizer

if TYPE_CHECKING:  # numpy costs ~65 ms to import; a one-shot search never needs it
    import numpy as np
    import numpy.typing as npt

__all__ = ["ChunkRecord", "ChunkRow", "FileRecord", "FileState", "Store"]

BUSY_TIMEOUT_MS = 10_000
CHECKPOINT_WAIT_MS = 500
VEC_TABLE = "chunks_vec"
# The common-term document counts, and where they move while the chunks no longer match them (see
# _chunks_changed). The meta keys keep their first names, so older index files are read as they are.
_COMMON_TERMS = "ubiquitous_terms"
_COMMON_TERMS_STALE = "ubiquitous_terms_stale"
# "1" when some chunk is German: queries then also look words up under their German stems.
_GERMAN_NOTES = "german_notes"
# Stems in more than this share of chunks get their document count recorded (common_terms).
COMMON_TERM_FLOOR = 0.01


@dataclass(frozen=True)
class FileState:
    """What the index remembers about a file, to decide whether it changed."""

    mtime_ns: int
    size: int
    content_hash: str | None
    status: str


@dataclass(frozen=True)
class FileRecord:
    """A file's row, as the indexer writes it, with the note-level fields every chunk carries."""

    path: str
    mtime_ns: int
    size: int
    content_hash: str | None
    title: str | None
    status: str
    problem: str | None
    title_field: str = ""  # title, aliases and file name: a BM25 field of every chunk
    tags_field: str = ""  # type and tags: a BM25 field of every chunk
    names: tuple[str, ...] = ()  # name_key()s for exact-name matches
    tags: tuple[str, ...] = ()  # tag_key()s for tag filters
    lang: str | None = None  # language.note_language(): the stemmer its chunks get
    skipped_sections: int = 0  # link-list sections left out of search (chunker skip list)
    secrets_scrubbed: int = 0  # values the scrubber replaced


@dataclass(frozen=True)
class ChunkRecord:
    """A chunk ready to be stored: scrubbed text plus its content address."""

    seq: int
    section: str
    text: str
    heading_context: str
    content_hash: int


@dataclass(frozen=True)
class ChunkRow:
    """A stored chunk, as search reads it back."""

    id: int
    path: str
    section: str
    text: str
    heading_context: str


def sqlite_vec_path() -> str:
    """The sqlite-vec loadable extension that the `sqlite-vec` package ships.

    Found without importing the package: its __init__ imports numpy.typing and sqlite3 (~80 ms),
    which a one-shot search would pay for one file name. `sqlite_vec.loadable_path()` is this
    same path (the package folder + "vec0"; SQLite adds the platform's suffix).
    """
    spec = importlib.util.find_spec("sqlite_vec")
    folders = list(spec.submodule_search_locations or []) if spec else []
    if not folders:
        raise ImportError("the sqlite-vec package is not installed: pip install sqlite-vec")
    return os.path.join(folders[0], "vec0")


def _load_sqlite_vec(db: apsw.Connection) -> str | None:
    """Load sqlite-vec into the connection; return why not, or None on success."""
    try:
        path = sqlite_vec_path()
        db.enable_load_extension(True)
        try:
            db.load_extension(path)
        finally:
            db.enable_load_extension(False)
        return None
    except Exception as exc:  # any failure means: degrade to BM25, never crash
        return f"{type(exc).__name__}: {exc}"


class Store:
    """One index file. Not thread-safe: use one Store per thread."""

    def __init__(self, path: str | os.PathLike[str], *, create: bool = True) -> None:
        self.path = Path(path)
        if not create and not self.path.exists():
            raise IndexNotFoundError(f"no index at {self.path}")
        if create:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        flags = apsw.SQLITE_OPEN_READWRITE | (apsw.SQLITE_OPEN_CREATE if create else 0)
        self.db = apsw.Connection(str(self.path), flags=flags)
        self.db.set_busy_timeout(BUSY_TIMEOUT_MS)
        # Refuse a newer file before any PRAGMA below could change it (journal mode is stored in
        # the file header).
        try:
            self._refuse_newer(self.scalar("PRAGMA user_version") or 0)
        except SchemaVersionError:
            self.db.close()
            raise
        self.vector_error = _load_sqlite_vec(self.db)
        # Before any statement touches the chunks: their triggers feed the FTS5 table, which
        # tokenizes with it (stemming.py).
        self.stem_options = StemOptions()
        register_tokenizer(self.db, self.stem_options)
        self._tokenizer: Any = None
        # Chunks this connection deleted (or replaced), for the indexer's decision to merge FTS5.
        self.chunks_deleted = 0
        self._common_raw: str | None = None
        self._common_shares: dict[str, float] = {}
        self._common_key: tuple[str | None, float] | None = None
        self._common: frozenset[str] = frozenset()
        # Chunk rows are 0.5-2.5 KB; 4 KB pages leave ~15% of the chunks table empty, 8 KB ~5%.
        # Only takes effect on a new, empty file.
        self.db.execute("PRAGMA page_size=8192")
        self._switch_to_wal()
        # NORMAL is durable across application crashes in WAL mode; only power loss can drop the
        # last commits, and never corrupts the file.
        self.db.execute("PRAGMA synchronous=NORMAL")
        # Deleted rows and freed pages are zeroed, so text replaced by a re-scrub (a new rule, a
        # pipeline version bump) does not linger in free pages of the file (issue 13).
        self.db.execute("PRAGMA secure_delete=ON")
        self._migrate()
        self.stem_options.german_queries = self.get_meta(_GERMAN_NOTES) == "1"

    def _switch_to_wal(self) -> None:
        """Set WAL mode, retrying while another connection holds the lock it needs.

        Switching needs an exclusive lock; when a second process creates the same new file at the
        same moment, SQLite can answer SQLITE_BUSY at once instead of calling the busy handler
        (it would deadlock otherwise). So wait here, up to the same timeout as every other write.
        """
        deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
        pause = 0.005
        while True:
            try:
                self.db.execute("PRAGMA journal_mode=WAL")
                return
            except apsw.BusyError:
                if time.monotonic() + pause > deadline:
                    raise
                time.sleep(pause)
                pause = min(pause * 2, 0.1)

    @property
    def vectors_available(self) -> bool:
        """Whether sqlite-vec is loaded in this connection."""
        return self.vector_error is None

    def checkpoint(self) -> None:
        """Copy the WAL into the main file and truncate it, unless readers hold it (best effort)."""
        # TRUNCATE waits, through the busy handler, until no reader uses the WAL: with the full
        # busy timeout one searcher holding a read transaction would stall the end of every run
        # by 10 s. Whatever cannot be copied now is copied by a later checkpoint.
        self.db.set_busy_timeout(CHECKPOINT_WAIT_MS)
        try:
            with suppress(apsw.BusyError):
                self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            self.db.set_busy_timeout(BUSY_TIMEOUT_MS)

    def close(self) -> None:
        """Close the connection (checkpointing the WAL when this is the last one)."""
        self.db.close()

    # -- schema -----------------------------------------------------------------------------

    def _refuse_newer(self, version: int) -> None:
        if version > SCHEMA_VERSION:
            raise SchemaVersionError(
                f"{self.path} has schema version {version}, this noteseek knows up to "
                f"{SCHEMA_VERSION}: upgrade noteseek (pip install -U noteseek)"
            )

    def _migrate(self) -> None:
        if (self.scalar("PRAGMA user_version") or 0) == SCHEMA_VERSION:
            return  # the usual case: no write lock taken, so readers never wait here
        while True:
            with self.write():
                # Read the version again under the write lock: another process (a second
                # indexer, or a searcher, since every Store migrates) may have migrated the file
                # since we looked, and running a migration twice fails ("table already exists").
                version = self.scalar("PRAGMA user_version") or 0
                self._refuse_newer(version)
                if version >= SCHEMA_VERSION:
                    return
                # One migration and its version number per transaction: a crash leaves the file
                # at a version it really has.
                MIGRATIONS[version](self.db)
                self.db.execute(f"PRAGMA user_version={version + 1}")

    # -- helpers ----------------------------------------------------------------------------

    def scalar(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """First column of the first row, or None."""
        row = self.db.execute(sql, params).fetchone()
        return None if row is None else row[0]

    def _begin_immediate(self) -> None:
        # IMMEDIATE, not the default DEFERRED: a deferred transaction that reads first and
        # then writes fails at once with SQLITE_BUSY (the busy handler cannot help, its snapshot
        # is stale) whenever another process committed in between.
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except apsw.BusyError as exc:
            raise IndexLockedError(
                f"{self.path} has been locked by another writer for over "
                f"{BUSY_TIMEOUT_MS / 1000:g} s (another 'noteseek index' running?); "
                "try again when it finishes"
            ) from exc

    @contextmanager
    def write(self) -> Iterator[None]:
        """One write transaction that takes the write lock up front (no deadlock on upgrade).

        Waits up to the busy timeout for another writer, then raises IndexLockedError.
        """
        self._begin_immediate()
        try:
            yield
        except BaseException:
            # SQLite rolls back by itself after some errors (disk full, I/O); a second ROLLBACK
            # would then raise and hide the original error.
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            raise
        else:
            self.db.execute("COMMIT")

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Run several reads against one consistent state of the file.

        Outside a transaction every statement sees the latest commit, so two counts taken while an
        indexer runs can disagree although the file is fine. In WAL mode a read transaction never
        blocks the writer and is never blocked by it. Nested use joins the outer transaction.
        """
        if self.db.in_transaction:
            yield
            return
        self.db.execute("BEGIN DEFERRED")
        try:
            # A deferred transaction takes its snapshot at the first read, so read now.
            self.db.execute("SELECT count(*) FROM sqlite_master").fetchall()
            yield
        finally:
            if self.db.in_transaction:
                self.db.execute("COMMIT")  # nothing written: ends the read transaction

    def get_meta(self, key: str) -> str | None:
        """A value from the meta table."""
        value = self.scalar("SELECT value FROM meta WHERE key = ?", (key,))
        return None if value is None else str(value)

    def set_meta(self, key: str, value: str) -> None:
        """Set a meta value (call inside `write()`)."""
        self.db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    def get_json(self, key: str) -> Any:
        """A JSON value from the meta table."""
        raw = self.get_meta(key)
        return None if raw is None else json.loads(raw)

    # -- vectors table ----------------------------------------------------------------------

    def has_vector_table(self) -> bool:
        """Whether the vec0 table exists (it is created once the model's dimension is known)."""
        return bool(
            self.scalar("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (VEC_TABLE,))
        )

    def reset_vectors(self, dim: int, fingerprint: str) -> None:
        """(Re)create the vec0 table for a model; every chunk then needs a new vector."""
        self.db.execute(f"DROP TABLE IF EXISTS {VEC_TABLE}")
        self.db.execute(
            f"CREATE VIRTUAL TABLE {VEC_TABLE} USING vec0("
            f"embedding int8[{int(dim)}] distance_metric=cosine)"
        )
        self.db.execute("UPDATE chunks SET embedded_at = NULL")
        self.set_meta("model_fingerprint", fingerprint)
        self.set_meta("vector_dim", str(int(dim)))

    # -- files and chunks -------------------------------------------------------------------

    def file_states(self) -> dict[str, FileState]:
        """Every known file with the data needed for change detection."""
        rows = self.db.execute("SELECT path, mtime_ns, size, content_hash, status FROM files")
        return {r[0]: FileState(r[1], r[2], r[3], r[4]) for r in rows}

    def touch_file(self, path: str, mtime_ns: int, size: int) -> None:
        """Record a new mtime for a file whose content did not change."""
        self.db.execute(
            "UPDATE files SET mtime_ns = ?, size = ? WHERE path = ?", (mtime_ns, size, path)
        )

    def vectors_by_hash(self, hashes: Iterable[int]) -> dict[int, bytes]:
        """Stored int8 vectors of chunks with these content hashes (content-addressed reuse)."""
        if not self.vectors_available or not self.has_vector_table():
            return {}
        found: dict[int, bytes] = {}
        wanted = sorted(set(hashes))
        for start in range(0, len(wanted), 500):
            batch = wanted[start : start + 500]
            marks = ",".join("?" * len(batch))
            rows = self.db.execute(
                f"SELECT c.content_hash, v.embedding FROM chunks c JOIN {VEC_TABLE} v "
                f"ON v.rowid = c.id WHERE c.content_hash IN ({marks}) AND c.embedded_at IS NOT NULL",
                batch,
            )
            for content_hash, blob in rows:
                found.setdefault(content_hash, bytes(blob))
        return found

    def _chunks_changed(self) -> None:
        # The ubiquitous-term list describes the chunks as they were at the end of the last
        # complete run. A run killed after writing files but before recomputing the list would
        # leave it describing the old text, and the next run, finding nothing to do, would never
        # recompute it. So the first chunk write moves the list aside: the indexer recomputes a
        # missing list at the end of every run, and search keeps using the moved list meanwhile.
        self.db.execute(
            "UPDATE OR REPLACE meta SET key = ? WHERE key = ?", (_COMMON_TERMS_STALE, _COMMON_TERMS)
        )

    def delete_file(self, path: str) -> None:
        """Remove a file and its chunks from all three tables (call inside `write()`)."""
        file_id = self.scalar("SELECT id FROM files WHERE path = ?", (path,))
        if file_id is not None:
            self._delete_chunks(int(file_id))
            self.db.execute("DELETE FROM note_names WHERE file_id = ?", (file_id,))
            self.db.execute("DELETE FROM note_tags WHERE file_id = ?", (file_id,))
            self.db.execute("DELETE FROM files WHERE id = ?", (file_id,))

    def _delete_chunks(self, file_id: int) -> None:
        ids = [r[0] for r in self.db.execute("SELECT id FROM chunks WHERE file_id = ?", (file_id,))]
        if not ids:
            return
        self._chunks_changed()
        if self.vectors_available and self.has_vector_table():
            # One rowid at a time: vec0 answers `rowid IN (subquery)` with a full scan.
            for chunk_id in ids:
                self.db.execute(f"DELETE FROM {VEC_TABLE} WHERE rowid = ?", (chunk_id,))
        self.db.execute("DELETE FROM chunks WHERE file_id = ?", (file_id,))
        self.chunks_deleted += len(ids)

    def replace_file(
        self,
        record: FileRecord,
        chunks: Sequence[ChunkRecord],
        vectors: npt.NDArray[np.int8] | None,
    ) -> None:
        """Replace a file's rows with new ones (call inside `write()`); vectors are int8 rows."""
        file_id = self.scalar("SELECT id FROM files WHERE path = ?", (record.path,))
        if file_id is not None:
            self._delete_chunks(int(file_id))
        now = time.time()
        self.db.execute(
            "INSERT INTO files(id, path, mtime_ns, size, content_hash, title, status, problem, "
            "chunk_count, indexed_at, skipped_sections, secrets_scrubbed) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(id) DO UPDATE SET "
            "mtime_ns=excluded.mtime_ns, size=excluded.size, content_hash=excluded.content_hash, "
            "title=excluded.title, status=excluded.status, problem=excluded.problem, "
            "chunk_count=excluded.chunk_count, indexed_at=excluded.indexed_at, "
            "skipped_sections=excluded.skipped_sections, "
            "secrets_scrubbed=excluded.secrets_scrubbed",
            (
                file_id,
                record.path,
                record.mtime_ns,
                record.size,
                record.content_hash,
                record.title,
                record.status,
                record.problem,
                len(chunks),
                now,
                record.skipped_sections,
                record.secrets_scrubbed,
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
        store_vectors = vectors is not None and self.vectors_available and self.has_vector_table()
        if chunks:
            self._chunks_changed()
        for i, chunk in enumerate(chunks):
            self.db.execute(
                "INSERT INTO chunks(file_id, seq, section, chunk_text, heading_context, title, tags, "
                "mtime_ns, content_hash, embedded_at, lang) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (
                    file_id,
                    chunk.seq,
                    chunk.section,
                    chunk.text,
                    chunk.heading_context,
                    record.title_field,
                    record.tags_field,
                    record.mtime_ns,
                    chunk.content_hash,
                    now if store_vectors else None,
                    record.lang,
                ),
            )
            if store_vectors:
                assert vectors is not None
                self.db.execute(
                    f"INSERT INTO {VEC_TABLE}(rowid, embedding) VALUES (?, vec_int8(?))",
                    (self.db.last_insert_rowid(), vectors[i].tobytes()),
                )

    def chunks_missing_vectors(self, limit: int) -> list[tuple[int, str, str, str]]:
        """(id, title, section, text) of chunks without a vector, for backfilling."""
        rows = self.db.execute(
            "SELECT c.id, COALESCE(f.title, ''), c.section, c.chunk_text FROM chunks c "
            "JOIN files f ON f.id = c.file_id WHERE c.embedded_at IS NULL ORDER BY c.id LIMIT ?",
            (limit,),
        )
        return [(r[0], r[1], r[2], r[3]) for r in rows]

    def set_vectors(self, ids: Sequence[int], vectors: npt.NDArray[np.int8]) -> None:
        """Store vectors for existing chunks (call inside `write()`)."""
        now = time.time()
        for chunk_id, vector in zip(ids, vectors):
            # The ids were read before embedding, outside this transaction; another indexer may
            # have replaced the chunk since. A vector for a missing chunk would never be deleted.
            self.db.execute("UPDATE chunks SET embedded_at = ? WHERE id = ?", (now, chunk_id))
            if not self.db.changes():
                continue
            self.db.execute(f"DELETE FROM {VEC_TABLE} WHERE rowid = ?", (chunk_id,))
            self.db.execute(
                f"INSERT INTO {VEC_TABLE}(rowid, embedding) VALUES (?, vec_int8(?))",
                (chunk_id, vector.tobytes()),
            )

    def clear(self) -> None:
        """Remove every file and chunk (call inside `write()`); used by a full rebuild."""
        self._chunks_changed()
        self.chunks_deleted += int(self.scalar("SELECT count(*) FROM chunks"))
        if self.vectors_available and self.has_vector_table():
            self.db.execute(f"DELETE FROM {VEC_TABLE}")
        self.db.execute("DELETE FROM chunks")
        self.db.execute("DELETE FROM note_names")
        self.db.execute("DELETE FROM note_tags")
        self.db.execute("DELETE FROM files")

    # -- reads for search and status --------------------------------------------------------

    def chunk_rows(self, ids: Sequence[int]) -> dict[int, ChunkRow]:
        """Stored chunks by id."""
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        rows = self.db.execute(
            f"SELECT c.id, f.path, c.section, c.chunk_text, c.heading_context FROM chunks c "
            f"JOIN files f ON f.id = c.file_id WHERE c.id IN ({marks})",
            list(ids),
        )
        return {r[0]: ChunkRow(r[0], r[1], r[2], r[3], r[4]) for r in rows}

    def file_ids(self, chunk_ids: Sequence[int]) -> dict[int, int]:
        """chunk id -> file id."""
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
        """The ids of every chunk of these files."""
        rows = self.db.execute(
            "SELECT id FROM chunks WHERE file_id IN (SELECT value FROM json_each(?))",
            (json.dumps(sorted(set(file_ids))),),
        )
        return {int(r[0]) for r in rows}

    def first_chunk(self, file_id: int) -> int | None:
        """The id of a file's first chunk."""
        value = self.scalar(
            "SELECT id FROM chunks WHERE file_id = ? ORDER BY seq LIMIT 1", (file_id,)
        )
        return None if value is None else int(value)

    def _term_shares(self) -> dict[str, float]:
        """Share of chunks containing each recorded stem (only stems above COMMON_TERM_FLOOR)."""
        raw = self.get_meta(_COMMON_TERMS) or self.get_meta(_COMMON_TERMS_STALE)
        # Parsed once per stored value, not once per query: this runs on every search.
        if raw != self._common_raw:
            self._common_raw = raw
            data = json.loads(raw) if raw else {}
            if isinstance(data, list):  # written before 0.2: only the stems in > 50 % of chunks
                self._common_shares = dict.fromkeys(data, 1.0)
            else:
                total = max(int(data.get("chunks", 0)), 1)
                self._common_shares = {t: d / total for t, d in data.get("terms", {}).items()}
        return self._common_shares

    def common_terms(self, max_share: float) -> Callable[[str], bool] | None:
        """A test for query words whose stem is in more than `max_share` of all chunks, or None.

        Such a word has a low IDF, so it moves a BM25 ranking little (above half of all chunks,
        FTS5 clamps its IDF to ~0 and it moves it not at all), yet its posting list is the longest
        and costs the most in an OR query. The document counts are computed at the end of each
        update and stored in meta.
        """
        shares = self._term_shares()
        if self._common_key != (self._common_raw, max_share):
            self._common_key = (self._common_raw, max_share)
            self._common = frozenset(t for t, share in shares.items() if share > max_share)
        common = self._common
        if not common:
            return None
        if self._tokenizer is None:
            self._tokenizer = self.db.fts5_tokenizer(
                "porter", ["unicode61", "remove_diacritics", "2"]
            )
        tokenizer = self._tokenizer

        def is_common(term: str) -> bool:
            tokens = tokenizer(term.encode("utf-8"), apsw.FTS5_TOKENIZE_QUERY, None)
            return bool(tokens) and all(token[2] in common for token in tokens)

        return is_common

    def common_terms_outdated(self) -> bool:
        """True when the stored term counts are missing or in the pre-0.2 format."""
        raw = self.get_meta(_COMMON_TERMS)
        return raw is None or not raw.startswith("{")

    def optimize_text_index(self) -> None:
        """Merge the FTS5 index into one segment, dropping deleted rows' terms (inside `write()`)."""
        self.db.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('optimize')")

    def refresh_common_terms(self) -> None:
        """Recompute the document counts of stems in more than COMMON_TERM_FLOOR of all chunks
        (call inside `write()`)."""
        total = int(self.scalar("SELECT count(*) FROM chunks"))
        self.db.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.chunks_vocab "
            "USING fts5vocab(main, chunks_fts, 'row')"
        )
        rows = self.db.execute(
            "SELECT term, doc FROM temp.chunks_vocab WHERE doc > ?",
            (int(total * COMMON_TERM_FLOOR),),
        )
        terms = {str(term): int(doc) for term, doc in rows}
        self.set_meta(_COMMON_TERMS, json.dumps({"chunks": total, "terms": terms}, sort_keys=True))
        self.db.execute("DELETE FROM meta WHERE key = ?", (_COMMON_TERMS_STALE,))

    def refresh_languages(self) -> None:
        """Record whether any chunk is German, for the query tokenizer (call inside `write()`)."""
        german = self.scalar("SELECT EXISTS(SELECT 1 FROM chunks WHERE lang = 'de')")
        self.set_meta(_GERMAN_NOTES, "1" if german else "0")
        self.stem_options.german_queries = bool(german)

    def files_named(self, name: str) -> list[int]:
        """Files whose title, alias or file name has this name_key()."""
        rows = self.db.execute(
            "SELECT file_id FROM note_names WHERE name = ? ORDER BY file_id", (name,)
        )
        return [int(r[0]) for r in rows]

    def files_matching(
        self, *, folders: Sequence[str] | None, tags: Sequence[str] | None
    ) -> set[int]:
        """Ids of files under any of `folders` (vault-relative prefixes, already normalised)
        that carry every tag in `tags` (tag_key()s; a tag also matches its nested tags)."""
        clauses: list[str] = []
        params: list[object] = []
        if folders is not None:
            if "" in folders:  # the vault root contains everything
                folders = None
            else:
                clauses.append("(" + " OR ".join("substr(path, 1, ?) = ?" for _ in folders) + ")")
                for folder in folders:
                    params += [len(folder) + 1, folder + "/"]
        for tag in tags or ():
            clauses.append(
                "id IN (SELECT file_id FROM note_tags WHERE tag = ? OR substr(tag, 1, ?) = ?)"
            )
            params += [tag, len(tag) + 1, tag + "/"]
        where = " AND ".join(clauses) or "1"
        return {int(r[0]) for r in self.db.execute(f"SELECT id FROM files WHERE {where}", params)}

    def counts(self) -> dict[str, int]:
        """Row counts that must agree: chunks, FTS rows, vectors and chunks marked embedded."""
        with self.snapshot():
            return self._counts()

    def _counts(self) -> dict[str, int]:
        result = {
            "files": int(self.scalar("SELECT count(*) FROM files")),
            "chunks": int(self.scalar("SELECT count(*) FROM chunks")),
            "fts": int(self.scalar("SELECT count(*) FROM chunks_fts_docsize")),
            "embedded": int(
                self.scalar("SELECT count(*) FROM chunks WHERE embedded_at IS NOT NULL")
            ),
        }
        if self.has_vector_table():
            result["vectors"] = int(self.scalar(f"SELECT count(*) FROM {VEC_TABLE}_rowids"))
        return result

    def integrity_problems(self) -> list[str]:
        """Empty when SQLite's and FTS5's integrity checks pass and the row counts agree.

        Takes the write lock for the duration of the check, so it waits for a running indexer's
        current file (and the indexer waits for it).
        """
        # Why under the write lock: PRAGMA integrity_check also runs FTS5's own check, and FTS5
        # checks against the segment structure it cached in this connection. If another process
        # has merged segments since, it reports "corruption found reading blob" for a healthy
        # file (seen with SQLite 3.54, 1 in 3 checks while an indexer runs). The FTS5
        # 'integrity-check' command reloads that structure, and holding the write lock from it to
        # the end keeps it current and makes the counts agree with what was checked.
        problems: list[str] = []
        self._begin_immediate()
        try:
            try:
                self.db.execute(
                    "INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('integrity-check', 1)"
                )
            except apsw.Error as exc:
                problems.append(f"FTS5 integrity-check: {exc}")
            problems += [r[0] for r in self.db.execute("PRAGMA integrity_check") if r[0] != "ok"]
            counts = self._counts()
        finally:
            if self.db.in_transaction:  # nothing was written; SQLite may have ended it on error
                self.db.execute("ROLLBACK")
        if counts["fts"] != counts["chunks"]:
            problems.append(f"FTS rows {counts['fts']} != chunks {counts['chunks']}")
        if "vectors" in counts and counts["vectors"] != counts["embedded"]:
            problems.append(f"vectors {counts['vectors']} != embedded chunks {counts['embedded']}")
        return problems

    def left_out(self) -> list[tuple[str, int, int]]:
        """(path, skipped link sections, scrubbed secrets) of every file that left text out."""
        rows = self.db.execute(
            "SELECT path, skipped_sections, secrets_scrubbed FROM files "
            "WHERE skipped_sections > 0 OR secrets_scrubbed > 0 ORDER BY path"
        )
        return [(r[0], int(r[1]), int(r[2])) for r in rows]

    def file_problems(self) -> list[tuple[str, str, str]]:
        """(path, status, problem) of every file that was skipped or had a warning."""
        rows = self.db.execute(
            "SELECT path, status, problem FROM files WHERE status != 'ok' ORDER BY path"
        )
        return [(r[0], r[1], r[2] or "") for r in rows]
