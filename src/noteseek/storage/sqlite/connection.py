"""An SQLite index file's connection: set-up, schema migrations, transactions and the meta table.

Locking model: WAL journal (readers never block the writer or each other), a busy timeout so a
second writer waits instead of failing at once, and every file's rows are written in one
`BEGIN IMMEDIATE` transaction, so a reader or a crash sees a file entirely old or entirely new.
Two update runs on one file do not overlap (update_lock.py: the second waits for the first's whole
run); writes outside a run (a migration, the model's name) wait for a transaction at most, and even
interleaved writes would be safe because each re-reads the rows it replaces in its own transaction. Reads that must
agree with each other (row counts, integrity checks) run in one `snapshot()`.

The other modules of this package each hold one job as a part object that takes this connection
(files, the text index, the vector table, integrity, ...); `store.SqliteStore` puts them together.
"""

from __future__ import annotations

import importlib.util
import json
import os
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import apsw

from ...errors import IndexLockedError, IndexNotFoundError, NotAnIndexError, SchemaVersionError
from .. import meta
from ..tokenizer import StemOptions
from ..tokenizer import register as register_tokenizer
from .schema import MIGRATIONS, SCHEMA_VERSION

__all__ = ["BUSY_TIMEOUT_MS", "SqliteConnection", "sqlite_vec_path"]

BUSY_TIMEOUT_MS = 10_000
CHECKPOINT_WAIT_MS = 500


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
        return f"sqlite-vec could not be loaded ({type(exc).__name__}: {exc})"


class SqliteConnection:
    """One connection to an index file. Not thread-safe: use one per thread."""

    def __init__(self, path: str | os.PathLike[str], *, create: bool = True) -> None:
        self.path = Path(path)
        if not create and not self.path.exists():
            raise IndexNotFoundError.at(self.path)
        if create:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        flags = apsw.SQLITE_OPEN_READWRITE | (apsw.SQLITE_OPEN_CREATE if create else 0)
        self.db = apsw.Connection(str(self.path), flags=flags)
        self.db.set_busy_timeout(BUSY_TIMEOUT_MS)
        # Refuse a newer file, or one that is not an index, before any PRAGMA below could change
        # it (journal mode is stored in the file header).
        try:
            empty = self._refuse_foreign()
            version = self.scalar("PRAGMA user_version") or 0
            self._refuse_newer(version)
            if empty and not version and not create:
                # A 0-byte (or table-less) file opened only to read: `status --db x.db` on one
                # must leave it as it was, not write a whole empty index into it.
                raise IndexNotFoundError.empty(self.path)
        except (SchemaVersionError, NotAnIndexError, IndexNotFoundError):
            self.db.close()
            raise
        self.vector_error = _load_sqlite_vec(self.db)
        # Before any statement touches the chunks: their triggers feed the FTS5 table, which
        # tokenizes with it (storage/tokenizer.py).
        self.stem_options = StemOptions()
        register_tokenizer(self.db, self.stem_options)
        # Chunks this connection deleted (or replaced), for the indexer's decision to merge FTS5.
        self.chunks_deleted = 0
        # Called when a write transaction rolls back: what a part keeps in memory about the rows
        # it wrote (text_index.py's counts of written chunks) is then no longer true.
        self.on_rollback: list[Callable[[], None]] = []
        # Chunk rows are 0.5-2.5 KB, and a page keeps empty what the next row does not fit in:
        # 4 KB pages left ~15% of the chunks table empty, 8 KB ~8%, 16 KB ~4% (MDN; search CPU
        # the same). Free pages are given back at the end of each run (`release_free_pages`).
        # Both only take effect on a new, empty file, and are set only there: on an existing one
        # `auto_vacuum` asks for a lock, and another process's write would make opening it fail.
        if empty:
            self.db.execute("PRAGMA page_size=16384")
            self.db.execute("PRAGMA auto_vacuum=INCREMENTAL")
        self._switch_to_wal()
        # NORMAL is durable across application crashes in WAL mode; only power loss can drop the
        # last commits, and never corrupts the file.
        self.db.execute("PRAGMA synchronous=NORMAL")
        # Deleted rows and freed pages are zeroed, so text replaced by a re-scrub (a new rule, a
        # pipeline version bump) does not linger in free pages of the file.
        self.db.execute("PRAGMA secure_delete=ON")
        self._migrate()
        self.stem_options.german_queries = self.get_meta(meta.GERMAN_NOTES) == "1"

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
    def schema_version(self) -> int:
        """The schema version this file has been migrated to on opening."""
        return SCHEMA_VERSION

    @property
    def location(self) -> str:
        """The index file's path, as status shows it."""
        return str(self.path)

    def identity(self) -> tuple[int, int]:
        """The file's device and inode: another pair means the file was replaced."""
        info = os.stat(self.path)
        return info.st_dev, info.st_ino

    def size_bytes(self) -> int:
        """The file and its write-ahead log, in bytes."""
        return sum(p.stat().st_size for p in (self.path, Path(f"{self.path}-wal")) if p.exists())

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

    def release_free_pages(self) -> None:
        """Give the file's free pages back to the file system (files created with
        auto_vacuum=INCREMENTAL; others keep theirs for later writes, as before).

        Merging FTS5 segments frees pages as an update writes; what the last merges freed would
        otherwise stay in the file (1.6 MB after a first build of MDN)."""
        if self.scalar("PRAGMA auto_vacuum") != 2 or not self.scalar("PRAGMA freelist_count"):
            return
        with suppress(IndexLockedError), self.write():  # best effort, like the checkpoint
            self.db.execute("PRAGMA incremental_vacuum").fetchall()

    def close(self) -> None:
        """Close the connection (checkpointing the WAL when this is the last one)."""
        self.db.close()

    # -- schema -----------------------------------------------------------------------------

    def _refuse_foreign(self) -> bool:
        """NotAnIndexError for a file SQLite cannot read, or a database of another program (tables,
        none of them noteseek's `meta`): an index is written only into its own file. True when
        the file holds no table at all (new, or 0 bytes)."""
        try:
            tables = {
                str(r[0])
                for r in self.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            }
        except (apsw.NotADBError, apsw.CorruptError):
            raise NotAnIndexError.at(self.path, "not an SQLite database") from None
        if tables and "meta" not in tables:
            raise NotAnIndexError.at(self.path, "an SQLite database of another program")
        return not tables

    def _refuse_newer(self, version: int) -> None:
        if version > SCHEMA_VERSION:
            raise SchemaVersionError.newer(self.path, version, SCHEMA_VERSION)

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

    def begin_immediate(self) -> None:
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
        self.begin_immediate()
        try:
            yield
        except BaseException:
            # SQLite rolls back by itself after some errors (disk full, I/O); a second ROLLBACK
            # would then raise and hide the original error.
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            for forget in self.on_rollback:
                forget()
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
        value = self.scalar("SELECT value FROM meta WHERE key = ?", (key,))
        return None if value is None else str(value)

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    def get_json(self, key: str) -> Any:
        raw = self.get_meta(key)
        return None if raw is None else json.loads(raw)
