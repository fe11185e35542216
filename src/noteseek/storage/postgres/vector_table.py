"""Vectors in pgvector: a `halfvec` per chunk, an HNSW index per collection for large ones.

The vectors have a table of their own (`chunk_vectors`, schema migration 8), not a column of
`chunks`: an exact scan reads the vectors alone, not the text beside them (on the hub's 24k
chunks the exact top 100 in about half the time: bench/results/pg_query_latency.txt).

noteseek's int8 vectors are exact in float16, so `halfvec` holds them at half the space of
`vector` with the same recall (bench/results/pg_vectors.md). A selection whose chunks sum to
less than `EXACT_KNN_MAX_CHUNKS` is handed out whole, as on SQLite (`vector_rows`: one binary
COPY, ~6 MB of int8 for the hub's 24k chunks): the engine searches it in memory, exactly, and
reads it again for a state several searches saw after a commit moved a collection's version
(`data_version`, `vectors_load_after_searches`). The server's exact scan of the same rows cost
~13 ms of a ~17 ms search (bench/results/pg_query_latency.txt).
Above the limit `vector_rows` is None: a shared database may hold millions of chunks, so the
engine asks `knn`, which pgvector answers from the collection's partial HNSW index.

The index is built at the end of the first run that finds a collection embedded and holding at
least `EXACT_KNN_MAX_CHUNKS` chunks (`checkpoint`, with `CREATE INDEX CONCURRENTLY`, so no other
collection's indexer or reader waits for it): one bulk build is faster than growing the graph row
by row, and a smaller collection searched alone is scanned exactly anyway. Until it exists `knn`
scans the collection exactly (in a search of several collections too). A run killed before that builds it next time; an invalid index left by a
killed build is dropped and built again.

A collection smaller than `EXACT_KNN_MAX_CHUNKS` is searched exactly even when its index exists
(the SQLite backend is exact, and HNSW's misses cost vector-only nDCG on small vaults; see the
constant); larger ones go through HNSW, where
`hnsw.ef_search` is set per query to at least the number of rows asked for (an HNSW scan returns
at most ef_search rows; pgvector's default of 40 would cut the 100-chunk candidate list to 40),
with iterative scans for longer lists (filtered searches ask for up to 4,096).

Vectors are written and read back through pgvector's own psycopg adapters (binary halfvec):
measured against text literals (`[1,-3,…]`) for 5,000 × 256 vectors, building them took 39–93 ms
instead of 222–443 ms and inserting them 163–167 ms instead of 260–367 ms. The search side sends
its one query vector as a text literal, so a search never imports numpy for pgvector's types.
"""

from __future__ import annotations

import time
from array import array
from collections.abc import Hashable, Iterable, Sequence
from contextlib import suppress
from typing import TYPE_CHECKING

import psycopg

from .. import meta
from ..rows import VectorRows
from .connection import PostgresConnection
from .schema import hnsw_index_name, hnsw_index_sql

if TYPE_CHECKING:  # numpy costs ~65 ms to import; a search never needs it
    import numpy as np
    import numpy.typing as npt

__all__ = ["EF_SEARCH_MIN", "EXACT_KNN_MAX_CHUNKS", "VectorTable", "halfvec_literal", "int8_bytes"]

# Measured on MDN (bench/results/pg_vectors.md): recall@30 0.958 at 100, 0.982 at 200, 0.992 at
# 400, p50 1.8 / 2.3 / 10.9 ms; hybrid nDCG@10 within 0.002 of exact from 200 on.
EF_SEARCH_MIN = 400  # measured: bench/results/pg_parity.md, pg_vectors.md
EF_SEARCH_MAX = 1000  # pgvector's limit; iterative scans go further
# Below this many chunks (summed over the collections searched exactly) KNN is an exact scan, as
# on SQLite, not HNSW: on the hub (24k chunks) HNSW found only 0.91 of the exact top 100 even at
# ef_search 400 (its queries' vectors lie away from its chunks'), costing vector-only nDCG@10 0.033
# against SQLite. Exact top-100 vs HNSW p50 / p95 in ms, measured (bench/pg_exact_knn.py, MDN rows;
# bench/results/pg_vectors.md): 25k chunks 14.0 / 33.1 vs 6.8 / 17.4; 60k 61.2 / 87.5 vs 7.2 / 14.0;
# 200k 107.8 / 141.9 vs 2.9 / 3.8. At 40k an exact scan costs ~30 ms; above it HNSW (MDN, 59k:
# recall@100 0.99, vector nDCG@10 within 0.003 of SQLite) is both good enough and far cheaper.
EXACT_KNN_MAX_CHUNKS = 40_000


def halfvec_literal(vector: bytes | Sequence[int]) -> str:
    """An int8 vector as pgvector's text form, e.g. `[1,-3,127]`."""
    values = memoryview(vector).cast("b") if isinstance(vector, bytes) else vector
    return "[" + ",".join(map(str, values)) + "]"


def int8_bytes(text: str) -> bytes:
    """pgvector's text form of an int8-valued halfvec, back to the int8 bytes."""
    return array("b", (int(float(v)) for v in text.strip("[]").split(",") if v)).tobytes()


class VectorTable:
    """Writes and reads of the chunks' vectors, and the collections' HNSW indexes."""

    # A read of the hub's 24k vectors costs ~90 ms (~50 ms of this process's CPU); each search
    # that asks knn instead costs ~12 ms more than one in memory. So, as in renting skis before
    # buying them, a reader asks knn until that has cost about a read, then reads: at most about
    # twice the cheaper choice's cost, whether the next commit comes soon or not. A reader of a
    # collection being written does not read it after every commit, and a one-shot search
    # never reads it (bench/results/pg_concurrency_hub.json: 16 readers and a writer).
    vectors_load_after_searches = 6

    def __init__(self, conn: PostgresConnection) -> None:
        self.conn = conn
        self._adapted: object = None
        self._counts: list[tuple[int, int]] | None = None  # data_version's, for knn
        self._next_dim: int | None = None  # has_vector_table's, for knn

    def halfvecs(self, vectors: npt.NDArray[np.int8]) -> list[object]:
        """int8 rows as pgvector `HalfVector`s, sent in binary (see the module docstring)."""
        # numpy and pgvector (the postgres extra) on first use.
        import numpy as np
        from pgvector import HalfVector
        from pgvector.psycopg import register_vector

        if self._adapted is not self.conn.db:  # once per connection (a new one after a reconnect)
            register_vector(self.conn.db)
            self._adapted = self.conn.db
        return [HalfVector(row) for row in np.asarray(vectors, dtype=np.float16)]

    def _dim(self) -> int:
        # Once per transaction: a file write and a search each ask several times.
        if self.conn.in_transaction() and "dim" in self.conn.per_transaction:
            return int(self.conn.per_transaction["dim"])
        dim = int(self.conn.get_meta(meta.VECTOR_DIM) or 0)
        if self.conn.in_transaction():
            self.conn.per_transaction["dim"] = dim
        return dim

    def has_vector_table(self) -> bool:
        """Whether the collections have vectors set up (a model's dimension is recorded)."""
        dim = self._dim()
        if not self.conn.in_transaction():
            # The engine asks this right before `knn`, which takes the dimension from here
            # once instead of reading it again. A model changed in between makes the query's
            # length differ from it: that knn finds nothing, the next reads the new one.
            self._next_dim = dim
        return dim > 0

    def reset_vectors(self, dim: int, fingerprint: str) -> None:
        """Forget the collection's vectors for a new model (inside `write()`); a new dimension
        drops the old HNSW index (checkpoint builds the new one)."""
        cid = self.conn.collections.only
        if self._dim() != int(dim):
            # Its expression casts to the old dimension: new vectors could not be inserted.
            self.conn.run(f"DROP INDEX IF EXISTS {hnsw_index_name(cid)}")
        self.conn.run("DELETE FROM chunk_vectors WHERE collection_id = %s", (cid,))
        self.conn.run(
            "UPDATE chunks SET embedded_at = NULL WHERE collection_id = %s "
            "AND embedded_at IS NOT NULL",
            (cid,),
        )
        self.conn.set_meta(meta.MODEL_FINGERPRINT, fingerprint)
        self.conn.set_meta(meta.VECTOR_DIM, str(int(dim)))
        self.conn.per_transaction.pop("dim", None)
        self._next_dim = None
        self.conn.move_version()

    def vectors_by_hash(self, hashes: Iterable[int]) -> dict[int, bytes]:
        """Stored int8 vectors of the collection's chunks with these content hashes."""
        wanted = sorted(set(hashes))
        if not wanted or not self.has_vector_table():
            return {}
        # numpy and pgvector (the postgres extra) on first use.
        import numpy as np

        self.halfvecs(np.zeros((0, 1), dtype=np.int8))  # the binary loader for the reply
        found: dict[int, bytes] = {}
        for content_hash, vector in self.conn.rows(
            "SELECT c.content_hash, v.embedding FROM chunks c "
            "JOIN chunk_vectors v ON v.chunk_id = c.id WHERE c.collection_id = %s "
            "AND c.content_hash = ANY(%s) AND c.embedded_at IS NOT NULL",
            (self.conn.collections.only, wanted),
        ):
            if int(content_hash) not in found:
                found[int(content_hash)] = vector.to_numpy().astype(np.int8).tobytes()
        return found

    def chunks_missing_vectors(self, limit: int) -> list[tuple[int, str, str, str]]:
        """(id, title, section, text) of the collection's chunks without a vector."""
        rows = self.conn.rows(
            "SELECT c.id, COALESCE(f.title, ''), c.section, c.chunk_text FROM chunks c "
            "JOIN files f ON f.id = c.file_id WHERE c.collection_id = %s "
            "AND c.embedded_at IS NULL ORDER BY c.id LIMIT %s",
            (self.conn.collections.only, int(limit)),
        )
        return [(int(r[0]), str(r[1]), str(r[2]), str(r[3])) for r in rows]

    def set_vectors(self, ids: Sequence[int], vectors: npt.NDArray[np.int8]) -> None:
        """Store vectors of existing chunks; chunks replaced meanwhile are skipped (their ids
        are gone), as on SQLite (inside `write()`)."""
        if not len(ids):
            return
        self.conn.run(
            "WITH v AS (SELECT * FROM unnest(%(ids)b::bigint[], %(vecs)b::halfvec[]) AS v(id, e)), "
            "c AS (UPDATE chunks c SET embedded_at = %(now)s FROM v "
            "WHERE c.id = v.id AND c.collection_id = %(cid)s RETURNING c.id) "
            "INSERT INTO chunk_vectors(chunk_id, collection_id, embedding) "
            "SELECT v.id, %(cid)s, v.e FROM v JOIN c ON c.id = v.id "
            "ON CONFLICT (chunk_id) DO UPDATE SET embedding = excluded.embedding",
            {
                "now": time.time(),
                "ids": [int(i) for i in ids],
                "vecs": self.halfvecs(vectors),
                "cid": self.conn.collections.only,
            },
        )
        self.conn.move_version()

    # -- search -----------------------------------------------------------------------------

    def vector_rows(self) -> VectorRows | None:
        """The selected collections' vectors, for the engine's in-memory exact search, when
        their chunks sum to less than EXACT_KNN_MAX_CHUNKS (the collections `knn` would scan
        exactly); None above that, or if the reply is not laid out as expected: `knn` then
        searches on the server (module docstring)."""
        counts = [(r[0], r[2]) for r in self.conn.collection_counts()]
        ids = self.conn.collections.ids
        dim = self._dim()
        if dim <= 0 or self.exact_collections(counts) != set(ids):
            return None
        state = self.conn.collections_state()
        # One binary COPY of fixed-size rows, parsed in one pass: a row per chunk as Python
        # objects (pgvector's HalfVector) costs far more than the scan it replaces. The ids are
        # integers from the database (COPY takes no parameters).
        collections = ",".join(str(int(cid)) for cid in ids)
        data = self.conn.copy_out(
            "COPY (SELECT v.chunk_id, c.file_id, v.embedding FROM chunk_vectors v "
            f"JOIN chunks c ON c.id = v.chunk_id WHERE v.collection_id IN ({collections}) "
            "ORDER BY v.chunk_id) TO STDOUT (FORMAT binary)"
        )
        parsed = _parse_vector_copy(data, dim)
        if parsed is None:
            return None
        rows, files = parsed
        self.conn.chunk_files = (state, dict(zip(rows.ids.tolist(), files, strict=True)))
        return rows

    def data_version(self) -> Hashable:
        """Changes with every commit that writes files or vectors to the selected collections
        (each moves its collection's version: files.py, `move_version`)."""
        rows = self.conn.collection_counts()
        # The chunk counts come along for the next `knn` outside a read transaction (inside one
        # it has the transaction's): they pick its exact collections without a statement of
        # their own. Used once, so at most one search old; a stale count only moves a
        # collection between exact and HNSW, both right answers.
        self._counts = [(r[0], r[2]) for r in rows]
        return tuple((r[0], r[1]) for r in rows)

    def knn(self, query: bytes, limit: int) -> list[tuple[int, float]]:
        """(chunk id, cosine) of the `limit` nearest chunks to an int8 query, best first: exact
        for small collections (`EXACT_KNN_MAX_CHUNKS`), else from each selected collection's
        HNSW index (an exact scan until it is built)."""
        dim = self._dim() if self._next_dim is None else self._next_dim
        self._next_dim = None
        if limit <= 0 or dim <= 0 or len(query) != dim:
            return []
        literal = halfvec_literal(query)
        ef = max(EF_SEARCH_MIN, min(int(limit), EF_SEARCH_MAX))
        # HNSW serves only its index's expression, the cast to the collection's dimension; an
        # exact scan computes the plain distance, without casting each row (every vector of the
        # collections searched together has the query's dimension: reset_vectors, the
        # connection's model check). Measured on the hub's 24k vectors: 14 ms with the cast,
        # 7 to 12 ms without it.
        distance = f"embedding::halfvec({dim}) <=> %(q)s::halfvec({dim})"
        plain = "embedding <=> %(q)s::halfvec"
        counts, self._counts = self._counts, None
        if self.conn.in_transaction():  # a search's snapshot: the counts its BEGIN read
            counts = [(r[0], r[2]) for r in self.conn.collection_counts()]
        exact = self.exact_collections(counts)
        # Server settings for this read transaction only, in the query's round trip.
        # Every scan reads its collection's rows through an index: HNSW, or for an exact scan
        # (and a collection whose HNSW index is not built) chunk_vectors_by_collection, which
        # the planner passes over for a scan of the whole table when other collections share
        # it (the hub beside two more collections of its size: 19.5 ms against 9.5 ms).
        settings = {"enable_seqscan": "off"}
        if len(exact) < len(self.conn.collections.ids):
            settings["hnsw.ef_search"] = str(ef)
            if self.conn.pgvector >= (0, 8):  # iterative scans: lists longer than ef_search
                settings["hnsw.iterative_scan"] = "strict_order"
        # The collection id is a constant in the text (an integer from the database, not
        # user input): the planner uses a partial index only for a constant it can match.
        # An exact collection's distances come from a subquery the planner may not flatten
        # (OFFSET 0), so its ORDER BY is a column the HNSW index cannot serve: the rows are
        # scanned and sorted, exact top-k, with one distance per row (ordering by
        # `distance + 0` computes it twice per row, the sort key beside the output column:
        # bench/results/pg_query_latency.txt).
        parts = [
            f"(SELECT id, d FROM (SELECT chunk_id AS id, {plain} AS d FROM chunk_vectors "
            f"WHERE collection_id = {int(cid)} OFFSET 0) e ORDER BY d, id LIMIT %(n)s)"
            if cid in exact
            else f"(SELECT chunk_id AS id, {distance} AS d FROM chunk_vectors "
            f"WHERE collection_id = {int(cid)} ORDER BY {distance} LIMIT %(n)s)"
            for cid in self.conn.collections.ids
        ]
        # The winners' file ids come along: the engine asks `file_ids` for them next, which
        # the transaction then answers without a statement (files.py).
        sql = (
            f"SELECT u.id, u.d, c.file_id FROM (SELECT id, d FROM ({' UNION ALL '.join(parts)}) "
            "a ORDER BY d, id LIMIT %(n)s) u LEFT JOIN chunks c ON c.id = u.id ORDER BY u.d, u.id"
        )
        rows = self.conn.rows_with(settings, sql, {"q": literal, "n": int(limit)})
        if self.conn.in_transaction():
            self.conn.per_transaction.setdefault("file_of", {}).update(
                (int(r[0]), int(r[2])) for r in rows if r[2] is not None
            )
        return [(int(r[0]), 1.0 - float(r[1])) for r in rows]

    def exact_collections(self, counts: Sequence[tuple[int, int]] | None = None) -> set[int]:
        """The selected collections searched exactly: smallest first while their chunks sum to
        less than EXACT_KNN_MAX_CHUNKS (an exact scan costs time in proportion to its rows).
        `counts`: (id, chunks) of each selected collection, read here when not given."""
        if counts is None:
            counts = [
                (int(r[0]), int(r[1]))
                for r in self.conn.rows(
                    "SELECT id, chunk_count FROM collections WHERE id = ANY(%s)",
                    (self.conn.collections.ids,),
                )
            ]
        exact: set[int] = set()
        total = 0
        for cid, count in sorted(counts, key=lambda c: (c[1], c[0])):
            total += int(count)
            if total >= EXACT_KNN_MAX_CHUNKS:
                break
            exact.add(int(cid))
        return exact

    # -- the HNSW index -----------------------------------------------------------------------

    def build_index(self) -> None:
        """Build the collection's HNSW index if it has vectors, at least EXACT_KNN_MAX_CHUNKS
        chunks and no valid index (best effort: a failure leaves exact KNN, and the next run
        tries again)."""
        if (
            self.conn.collections.multi
            or self.conn.selection.explicit_one is None
            or self.conn.in_transaction()
        ):
            return
        dim = self._dim()
        if dim <= 0:
            return
        cid = self.conn.collections.only
        chunks = self.conn.scalar("SELECT chunk_count FROM collections WHERE id = %s", (cid,))
        if int(chunks or 0) < EXACT_KNN_MAX_CHUNKS:
            # Searched alone, such a collection is scanned exactly and never reads the index,
            # which costs every later write a graph insert, and its build the hub's first
            # build 5.9 s in a cProfile of 90; the end of a run (that build, mostly) was 13 to
            # 15 s of 35 to 40 once the writes got faster (bench/results/pg_build_hub.txt).
            # The run that takes the collection past the limit builds it.
            return
        name = hnsw_index_name(cid)
        valid = self.conn.scalar(
            "SELECT i.indisvalid FROM pg_index i WHERE i.indexrelid = to_regclass(%s)", (name,)
        )
        if valid:
            return
        with suppress(psycopg.Error):
            if valid is not None:  # left invalid by a build that was killed
                self.conn.db.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")
            self.conn.db.execute(hnsw_index_sql(cid, dim, concurrently=True))


# A binary COPY: its signature, flags and header extension length, then per row a field count
# and each field's length before its bytes, then -1 (PostgreSQL's COPY documentation).
_COPY_SIGNATURE = b"PGCOPY\n\xff\r\n\x00"
_COPY_HEADER = len(_COPY_SIGNATURE) + 8
_COPY_TRAILER = b"\xff\xff"


def _parse_vector_copy(data: bytes, dim: int) -> tuple[VectorRows, list[int]] | None:
    """(chunk ids with their int8 rows, their file ids) from a binary COPY of (chunk id, file
    id, halfvec) rows; None when any row is not that with `dim` values (a NULL, another
    dimension), so the caller falls back to the server's KNN."""
    # deferred: numpy costs ~65 ms to import; only a process that searches in memory needs it.
    import numpy as np

    layout = np.dtype(
        [("fields", ">i2"), ("id_len", ">i4"), ("id", ">i8"), ("file_len", ">i4"),
         ("file", ">i8"), ("vec_len", ">i4"), ("dim", ">i2"), ("unused", ">i2"),
         ("vec", ">f2", (dim,))]
    )  # fmt: skip
    body = len(data) - _COPY_HEADER - len(_COPY_TRAILER)
    if (
        not data.startswith(_COPY_SIGNATURE)
        or int.from_bytes(data[len(_COPY_SIGNATURE) + 4 : _COPY_HEADER], "big") != 0
        or not data.endswith(_COPY_TRAILER)
        or body < 0
        or body % layout.itemsize
    ):
        return None
    table = np.frombuffer(data, dtype=layout, count=body // layout.itemsize, offset=_COPY_HEADER)
    if not (
        np.all(table["fields"] == 3)
        and np.all(table["id_len"] == 8)
        and np.all(table["file_len"] == 8)
        and np.all(table["vec_len"] == 4 + 2 * dim)
        and np.all(table["dim"] == dim)
    ):
        return None
    # noteseek's int8 values are exact in float16 (module docstring): the cast loses nothing.
    ids: array[int] = array("q")
    ids.frombytes(table["id"].astype(np.int64).tobytes())
    rows = bytearray(table["vec"].astype(np.int8).tobytes())
    return VectorRows(ids, rows, dim), table["file"].astype(np.int64).tolist()
