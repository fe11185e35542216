"""A PostgreSQL index's connection: connecting, migrations, collections, transactions and meta.

Locking model, the SQLite backend's in PostgreSQL terms:

- Readers never block and are never blocked: a search runs in one `REPEATABLE READ READ ONLY`
  transaction (`snapshot()`), which MVCC serves without taking any lock a writer waits for.
- Every write is one transaction (`write()`) that first takes a transaction-level advisory lock
  on its collection, so writes of one collection take turns as they do on one SQLite file, and a
  writer that waits longer than the busy timeout gets the same IndexLockedError. Indexers of
  different collections take different locks and run in parallel (their rows never overlap: every
  table is keyed by collection). A whole update run also holds a session-level lock
  (update_lock.py), so two runs of one collection do not interleave; that one needs a direct
  connection or session pooling, where `write()`'s works through transaction pooling too.
- A killed indexer's open transaction is rolled back by the server when its connection drops;
  everything committed before is whole files, so the next run finishes the job.

One connection per storage, held for its life and opened again when it breaks: a storage is used
by one thread (like an SQLite connection), and the long-lived adapters already keep one open index
per worker (web, daemon, MCP), so psycopg_pool would hold the same connections with a thread of its
own in every one-shot process; a server-side pooler (PgBouncer, docs/scale.md) is what a team adds.

Credentials come from the URL, `PGPASSFILE` (~/.pgpass) or the PG* environment, all read by
libpq; noteseek stores none of them (not in meta, not in the daemon's files) and shows the URL
only through `redact_url`. TLS settings (`sslmode`, `sslrootcert`, ...) in the URL go to libpq.
"""

from __future__ import annotations

import json
import os
import struct
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from typing import Any

import psycopg
from psycopg import errors as pg_errors
from psycopg import sql
from psycopg.pq import TransactionStatus

from ...core.locator import DatabaseUrl, connect_url
from ...errors import (
    IndexLockedError,
    IndexNotFoundError,
    IndexReadOnlyError,
    SchemaVersionError,
)
from .. import meta
from .collections import Collections, parse_selection, resolve
from .errors import connection_error
from .failures import Failures
from .schema import MIGRATIONS, SCHEMA_VERSION
from .terms import Tokenizer

# COPY's binary format: the signature, flags and header extension length; -1 fields ends it.
_COPY_HEADER = b"PGCOPY\n\xff\r\n\x00" + struct.pack("!ii", 0, 0)
_COPY_TRAILER = struct.pack("!h", -1)
_COPY_BLOCK = 1 << 20  # bytes sent to the server at a time

__all__ = ["BUSY_TIMEOUT_S", "LOCK_SPACE", "PostgresConnection"]

BUSY_TIMEOUT_S = 10  # as the SQLite backend's busy timeout: then IndexLockedError
CONNECT_TIMEOUT_S = 10
# First key of noteseek's advisory locks (the second is the collection id; 0 = schema changes):
# any constant other software is unlikely to use. "ns" in ASCII.
LOCK_SPACE = 0x6E73
# The meta values every search reads, read with each read transaction's BEGIN beside the
# selected collections' rows (counts, version), in its round trip rather than in four statements
# of their own (bench/results/pg_query_latency.txt).
SNAPSHOT_META = (meta.VECTOR_DIM, meta.MULTILINGUAL_MODEL, meta.MULTILINGUAL_BUILT)
_TABLES = ("noteseek_schema", "collections", "meta", "files", "note_names", "note_tags",
           "chunks", "chunk_vectors", "term_stats", "postings", "note_terms", "chunks_e5")  # fmt: skip


class PostgresConnection:
    """One connection to a noteseek database, for one collection selection. Not thread-safe."""

    def __init__(self, url: DatabaseUrl, *, create: bool = True) -> None:
        self.url = url
        self.selection = parse_selection(url.collection)
        self._where = str(url.with_collection(None))
        self.failures = Failures(self)
        self.db = self._connect()
        self.chunks_deleted = 0
        # chunk id -> file id of the chunks whose vectors the engine holds in memory, read with
        # them (vector_table.py) in the state `collections_state` had then: `file_ids` answers
        # the in-memory matrix's hits from here, without a statement, while the state is that.
        self.chunk_files: tuple[Hashable, dict[int, int]] = ((), {})
        self.vector_error: str | None = None
        # Values read once per transaction (it sees one state of them): cleared at each BEGIN.
        self.per_transaction: dict[str, Any] = {}
        # What a write leaves for its end (files.py's statistics totals): run in order just
        # before COMMIT, by name so each runs once; a rollback drops them with the transaction.
        self.before_commit: dict[str, Callable[[], None]] = {}
        try:
            self._migrate(create=create)
            self.pgvector = self._pgvector_version()
            self.collections = self._collections(create=create)
            self.tokenizer = Tokenizer(german_queries=self.get_meta(meta.GERMAN_NOTES) == "1")
            self._check_models()
        except BaseException:
            self.db.close()
            raise

    # -- connecting -------------------------------------------------------------------------

    def _connect(self) -> psycopg.Connection[Any]:
        target = connect_url(self.url.url)
        try:
            return psycopg.connect(
                target,
                autocommit=True,  # transactions are explicit: write() and snapshot()
                connect_timeout=CONNECT_TIMEOUT_S,
                application_name="noteseek",
            )
        except psycopg.Error as exc:
            raise connection_error(exc, target, env=os.environ) from None

    def _reconnect_if_broken(self) -> None:
        # A long-lived process (daemon, web) outlives server restarts: the failed request got a
        # DatabaseConnectionError, the next one gets a fresh connection.
        if self.db.closed or self.db.broken:
            self.db = self._connect()

    @property
    def location(self) -> str:
        """The database URL (password shown as ***) with its collection selection."""
        if not hasattr(self, "collections"):
            return str(self.url)
        return str(self.url.with_collection(self.collections.label()))

    @property
    def schema_version(self) -> int:
        """The schema version the database has been migrated to on opening."""
        return SCHEMA_VERSION

    def identity(self) -> tuple[Hashable, ...]:
        """The selected collections' ids: another set means they were dropped and made again
        (or, for all collections, that one was added)."""
        self._reconnect_if_broken()
        if self.selection.names:
            rows = self.rows(
                "SELECT id FROM collections WHERE name = ANY(%s) ORDER BY id",
                (list(self.selection.names),),
            )
        else:
            rows = self.rows("SELECT id FROM collections ORDER BY id")
        return tuple(int(r[0]) for r in rows)

    def size_bytes(self) -> int:
        """Space noteseek's tables take in this database (all collections: they share them)."""
        names = [f"{self._schema()}.{t}" for t in _TABLES]
        return int(
            self.scalar(
                "SELECT coalesce(sum(pg_total_relation_size(to_regclass(n))), 0) FROM unnest(%s::text[]) n",
                (names,),
            )
        )

    def _schema(self) -> str:
        return str(
            self.scalar(
                "SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON "
                "n.oid = c.relnamespace WHERE c.oid = to_regclass('collections')"
            )
        )

    @property
    def vectors_available(self) -> bool:
        """Whether the selected collections' vectors can be searched together."""
        return self.vector_error is None

    def close(self) -> None:
        self.db.close()

    # -- statements -------------------------------------------------------------------------

    def rows(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[tuple[Any, ...]]:
        """Every row of a statement (failures translated: failures.py)."""
        if not self.in_transaction():
            self._reconnect_if_broken()
        with self.failures.translated():
            return self.db.execute(sql, params).fetchall()

    def run(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> int:
        """Run a statement; the number of rows it changed."""
        if not self.in_transaction():
            self._reconnect_if_broken()
        with self.failures.translated():
            return self.db.execute(sql, params).rowcount

    def scalar(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Any:
        """First column of the first row, or None."""
        found = self.rows(sql, params)
        return found[0][0] if found else None

    def copy_rows(self, sql: str, rows: Iterable[bytes]) -> None:
        """Load rows with `COPY ... FROM STDIN (FORMAT binary)` (`sql`), each row given in COPY's
        binary row format (field count, then each field's length and binary value): the server
        parses no text and no arrays, which an `INSERT ... SELECT FROM unnest(...)` of the same
        rows spent most of its time on (bench/results/pg_build_hub.txt). The caller packs the
        rows (one `struct` call each): psycopg's `write_row` dumps value by value in Python,
        0.99 CPU-s for the hub's 978,649 postings against 0.56 packed."""
        with self.failures.translated(), self.db.cursor() as cursor, cursor.copy(sql) as copy:
            buffer = bytearray(_COPY_HEADER)
            for row in rows:
                buffer += row
                if len(buffer) >= _COPY_BLOCK:
                    copy.write(buffer)
                    buffer.clear()
            buffer += _COPY_TRAILER
            copy.write(buffer)

    def copy_out(self, sql: str) -> bytes:
        """The whole output of a `COPY ... TO STDOUT (FORMAT binary)` (`sql`), as one buffer:
        the caller parses fixed-size rows in one pass instead of building a Python object per
        value (vector_table.py's `vector_rows`)."""
        if not self.in_transaction():
            self._reconnect_if_broken()
        out = bytearray()
        with self.failures.translated(), self.db.cursor() as cursor, cursor.copy(sql) as copy:
            for block in copy:
                out += block
        return bytes(out)

    @contextmanager
    def pipelined(self) -> Iterator[None]:
        """Statements sent without waiting for each one's reply (libpq's pipeline mode): a
        file's dozen statements cost one wait for the server, not one each. A statement whose
        rows are read waits for everything sent before it; a failure is raised there or when
        the block ends (inside a write(), which then rolls back). No COPY inside."""
        with self.failures.translated(), self.db.pipeline():
            yield

    def in_transaction(self) -> bool:
        """Whether a write() or snapshot() is open on this connection (not on a lost one)."""
        return self.db.info.transaction_status in (
            TransactionStatus.INTRANS,
            TransactionStatus.INERROR,
            TransactionStatus.ACTIVE,
        )

    # -- schema and collections ---------------------------------------------------------------

    def _applied_version(self) -> int | None:
        # pg_class itself, not to_regclass(): a transaction that waited for the migration lock
        # may hold a cached "no such table" from before, which to_regclass() would believe.
        exists = self.scalar(
            "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n "
            "ON n.oid = c.relnamespace WHERE c.relname = 'noteseek_schema' "
            "AND n.nspname = current_schema())"
        )
        if not exists:
            return None
        return int(self.scalar("SELECT coalesce(max(version), 0) FROM noteseek_schema"))

    def _migrate(self, *, create: bool) -> None:
        version = self._applied_version()
        if version == SCHEMA_VERSION:
            return  # the usual case: no lock taken
        if version is None and not create:
            raise IndexNotFoundError.at(self._where)
        self._refuse_newer(version or 0)
        try:
            self._apply_migrations()
        except IndexReadOnlyError:
            if version is None:
                raise
            raise SchemaVersionError(
                f"{self._where} has noteseek schema version {version}, this noteseek needs "
                f"{SCHEMA_VERSION} and cannot upgrade it from here (a standby or a reader "
                "role): run 'noteseek index' once as the writer, against the primary"
            ) from None

    def _apply_migrations(self) -> None:
        while True:
            with self._transaction(lock=0):
                # Again under the lock: another process may have migrated since we looked.
                version = self._applied_version() or 0
                self._refuse_newer(version)
                if version >= SCHEMA_VERSION:
                    return
                if version == 0:
                    self._ensure_pgvector()
                step = MIGRATIONS[version]
                # One migration and its row per transaction: a crash leaves a real version.
                self.run(step.sql)
                self.run(
                    "INSERT INTO noteseek_schema(version, name) VALUES (%s, %s)",
                    (step.version, step.name),
                )

    def _refuse_newer(self, version: int) -> None:
        if version > SCHEMA_VERSION:
            raise SchemaVersionError.newer(self._where, version, SCHEMA_VERSION, extra="postgres")

    def _ensure_pgvector(self) -> None:
        if self.scalar("SELECT 1 FROM pg_extension WHERE extname = 'vector'"):
            return
        try:
            self.db.execute("CREATE EXTENSION IF NOT EXISTS vector")
        except (pg_errors.InsufficientPrivilege, pg_errors.ReadOnlySqlTransaction):
            database = self.scalar("SELECT current_database()")
            raise SchemaVersionError(
                f"the pgvector extension is not installed in database {database!r} and this "
                "role may not install it: ask a superuser to run 'CREATE EXTENSION vector' in "
                "that database once (pgvector >= 0.7)"
            ) from None

    def _pgvector_version(self) -> tuple[int, ...]:
        text = str(self.scalar("SELECT extversion FROM pg_extension WHERE extname = 'vector'"))
        version = tuple(int(p) for p in text.split(".") if p.isdigit())
        if version < (0, 7):
            raise SchemaVersionError(
                f"pgvector {text} in {self._where} is too old: noteseek needs 0.7 or later "
                "(halfvec; 0.8 or later for long filtered vector searches): ALTER EXTENSION "
                "vector UPDATE"
            )
        return version

    def _collections(self, *, create: bool) -> Collections:
        name = self.selection.explicit_one
        if create and name is not None:
            self._create_collection(name)
        found = [(int(r[0]), str(r[1])) for r in self.rows("SELECT id, name FROM collections")]
        return resolve(found, self.selection, where=self._where)

    def _create_collection(self, name: str) -> None:
        if self.scalar("SELECT 1 FROM collections WHERE name = %s", (name,)):
            return  # exists: no write, so a reader role or a standby opens it fine
        self.failures.check_writable()
        self.run("INSERT INTO collections(name) VALUES (%s) ON CONFLICT (name) DO NOTHING", (name,))

    def _check_models(self) -> None:
        """Several collections are searched with one query vector: their models must agree."""
        if not self.collections.multi:
            return
        found = self.rows(
            "SELECT c.name, m.value FROM meta m JOIN collections c ON c.id = m.collection_id "
            "WHERE m.collection_id = ANY(%s) AND m.key = %s ORDER BY c.name",
            (self.collections.ids, meta.MODEL_FINGERPRINT),
        )
        models = {str(value) for _, value in found}
        if len(models) > 1:
            names = ", ".join(f"{n} ({v})" for n, v in found)
            self.vector_error = (
                f"the collections were embedded by different models ({names}), so their "
                "vectors cannot be compared: search them one at a time for vector search"
            )

    # -- transactions -------------------------------------------------------------------------

    @contextmanager
    def _transaction(
        self, *, lock: int, read_only: bool = False, settings: Mapping[str, str] | None = None
    ) -> Iterator[None]:
        self._reconnect_if_broken()
        self.per_transaction.clear()
        self.before_commit.clear()
        with self.failures.translated():
            begin: str | sql.Composed = (
                "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" if read_only else "BEGIN"
            )
            if settings:
                # The SET LOCALs in the BEGIN's round trip: one simple query of several
                # statements (prepare=False: a prepared statement holds only one).
                begin = sql.SQL("; ").join(
                    [sql.SQL(str(begin))]
                    + [
                        sql.SQL("SET LOCAL {} = {}").format(sql.SQL(name), sql.Literal(value))
                        for name, value in settings.items()
                    ]
                )
            state = read_only and hasattr(self, "collections")
            if state:
                begin = sql.SQL("; ").join(
                    [sql.SQL(begin) if isinstance(begin, str) else begin, self._state_sql()]
                )
            cursor = self.db.execute(begin, prepare=False)
            try:
                if state:
                    while cursor.nextset():
                        pass  # to the state's rows, the last statement's
                    self._keep_state(cursor.fetchall())
                if not read_only:
                    self._lock(lock)
                yield
                while self.before_commit:
                    self.before_commit.pop(next(iter(self.before_commit)))()
            except BaseException:
                self.before_commit.clear()
                if not (self.db.closed or self.db.broken):
                    with suppress(psycopg.Error):
                        self.db.execute("ROLLBACK")
                raise
            else:
                self.db.execute("COMMIT")
            finally:
                # What the transaction read is not the next statement's state.
                self.per_transaction.clear()

    def _state_sql(self) -> sql.Composed:
        # Literals, not parameters: several statements go in one simple query. The ids are
        # integers from the database, the keys this package's constants.
        ids = sql.Literal(list(self.collections.ids))
        return sql.SQL(
            "SELECT 'c', id, version, chunk_count, token_count, NULL, NULL FROM collections "
            "WHERE id = ANY({ids}) UNION ALL SELECT 'm', collection_id, NULL, NULL, NULL, key, "
            "value FROM meta WHERE collection_id = ANY({ids}) AND key = ANY({keys})"
        ).format(ids=ids, keys=sql.Literal(list(SNAPSHOT_META)))

    def _keep_state(self, rows: Sequence[tuple[Any, ...]]) -> None:
        self.per_transaction["collections"] = sorted(
            (int(r[1]), int(r[2]), int(r[3]), int(r[4])) for r in rows if r[0] == "c"
        )
        self.per_transaction["meta"] = [(str(r[5]), r[6]) for r in rows if r[0] == "m"]

    def collection_counts(self) -> list[tuple[int, int, int, int]]:
        """(id, version, chunk count, token count) of each selected collection, by id: in a
        read transaction as its BEGIN read them, else read now (a write changes them)."""
        found = self.per_transaction.get("collections")
        if found is not None:
            return list(found)
        rows = self.rows(
            "SELECT id, version, chunk_count, token_count FROM collections WHERE id = ANY(%s) "
            "ORDER BY id",
            (self.collections.ids,),
        )
        return [(int(r[0]), int(r[1]), int(r[2]), int(r[3])) for r in rows]

    def collections_state(self) -> tuple[tuple[int, int], ...]:
        """(id, version) of each selected collection: moves with every commit that changes
        what they hold (files, vectors)."""
        return tuple((r[0], r[1]) for r in self.collection_counts())

    def move_version(self) -> None:
        """Move the collection's version once before this write commits (inside `write()`):
        readers' in-memory vectors (the engine's matrix, the deep lane's) are read again when
        it moves, and a write of vectors alone (a backfill, a model reset) moves nothing else."""
        cid = self.collections.only

        def bump() -> None:
            self.run("UPDATE collections SET version = version + 1 WHERE id = %s", (cid,))

        self.before_commit.setdefault("version", bump)

    def _lock(self, key: int) -> None:
        # One round trip: the lock wait's limit, then the lock. synchronous_commit off: a commit
        # does not wait for its WAL flush (as the SQLite backend's synchronous=NORMAL, a crash of
        # the server may lose the last commits, never half of one; the next run redoes them).
        try:
            self.db.execute(
                "SELECT set_config('lock_timeout', %s, true), "
                "set_config('synchronous_commit', 'off', true), pg_advisory_xact_lock(%s, %s)",
                (f"{BUSY_TIMEOUT_S}s", LOCK_SPACE, key),
            )
        except pg_errors.LockNotAvailable as exc:
            raise IndexLockedError(
                f"{self.location} has been locked by another writer for over "
                f"{BUSY_TIMEOUT_S:g} s (another 'noteseek index' running?); "
                "try again when it finishes"
            ) from exc

    @contextmanager
    def write(self) -> Iterator[None]:
        """One write transaction holding the collection's writer lock (IndexLockedError after
        the busy timeout); refused at once where this storage may not write."""
        self.failures.check_writable()
        with self._transaction(lock=self.collections.only):
            yield

    def rows_with(
        self,
        settings: Mapping[str, str],
        statement: str,
        params: Sequence[Any] | dict[str, Any] = (),
    ) -> list[tuple[Any, ...]]:
        """`rows()` under server settings for its read transaction only (SET LOCAL), in the
        statement's own round trip: sent with the BEGIN when no transaction is open, else
        with the SET LOCALs in one simple query (a search's knn runs inside the search's
        snapshot), its parameters bound on this side (a query of several statements cannot
        have the server's): a pipeline of the two took two round trips, its flush and sync."""
        if not self.in_transaction():
            with self.snapshot(settings):
                return self.rows(statement, params)
        if not settings:
            return self.rows(statement, params)
        query = sql.SQL("; ").join(
            [
                sql.SQL("SET LOCAL {} = {}").format(sql.SQL(name), sql.Literal(value))
                for name, value in settings.items()
            ]
            + [sql.SQL(statement)]
        )
        with self.failures.translated(), psycopg.ClientCursor(self.db) as cursor:
            cursor.execute(query, params, prepare=False)
            while cursor.nextset():
                pass  # to the statement's rows, the last result
            return cursor.fetchall()

    @contextmanager
    def snapshot(self, settings: Mapping[str, str] | None = None) -> Iterator[None]:
        """Several reads against one consistent state; nested use joins the outer one.
        `settings`: server settings for this transaction only (SET LOCAL), named by this
        package's code, never by user text."""
        if self.in_transaction():
            if settings:
                self.run(
                    "SELECT " + ", ".join("set_config(%s, %s, true)" for _ in settings),
                    [v for pair in settings.items() for v in pair],
                )
            yield
            return
        with self._transaction(lock=0, read_only=True, settings=settings):
            yield

    # -- meta ---------------------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        """A meta value; for several collections the value they share (GERMAN_NOTES: any)."""
        return self.get_metas((key,))[key]

    def get_metas(self, keys: Sequence[str]) -> dict[str, str | None]:
        """Several `get_meta` values in one statement (a search asks for some of them)."""
        cached = self.per_transaction.get("meta")
        if cached is not None and all(key in SNAPSHOT_META for key in keys):
            found = [(k, v) for k, v in cached if k in keys]  # read with the BEGIN
        else:
            found = self.rows(
                "SELECT key, value FROM meta WHERE collection_id = ANY(%s) AND key = ANY(%s)",
                (self.collections.ids, list(keys)),
            )
        out: dict[str, str | None] = {}
        for key in keys:
            values = [str(v) for k, v in found if k == key]
            if key == meta.GERMAN_NOTES and len(set(values)) > 1:
                out[key] = "1"
            elif len(values) == len(self.collections.ids) and len(set(values)) == 1:
                out[key] = values[0]
            else:
                out[key] = None
        return out

    def set_meta(self, key: str, value: str) -> None:
        """Set a meta value of the collection (inside `write()`)."""
        self.run(
            "INSERT INTO meta(collection_id, key, value) VALUES (%s, %s, %s) "
            "ON CONFLICT (collection_id, key) DO UPDATE SET value = excluded.value",
            (self.collections.only, key, value),
        )

    def get_json(self, key: str) -> Any:
        raw = self.get_meta(key)
        return None if raw is None else json.loads(raw)
