"""Nearest-neighbour search over the vectors stored in sqlite-vec's vec0 table.

Vectors are stored as int8 (see quantize.py). sqlite-vec's brute-force KNN costs ~18 ms per query at 60,000 × 256 floats on this class of
machine, more than our whole latency budget. A numpy matrix product over the same vectors takes
~3 ms. So the vectors live in vec0 (the one file stays the single source of truth), and a
searcher reads them once into memory, straight from vec0's chunk storage, which takes about as long
as one vec0 query. The read relies on sqlite-vec 0.1's storage layout, so it is validated against
the table's own row count and a sample vector; if anything disagrees we fall back to vec0's KNN.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import apsw
import numpy as np
import numpy.typing as npt

from .quantize import normalise_int8_rows, quantize
from .store import VEC_TABLE, Store

__all__ = ["VectorIndex", "VectorMatch"]


@dataclass(frozen=True)
class VectorMatch:
    """A chunk id and its cosine similarity to the query."""

    chunk_id: int
    cosine: float
    file_id: int | None = None  # known when answered from the in-memory matrix


class VectorIndex:
    """KNN over a Store's vectors, cached in memory and refreshed when the file changes."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._ids: npt.NDArray[np.int64] | None = None
        self._matrix: npt.NDArray[np.float32] | None = None
        self._version: tuple[int, int] | None = None
        self._files: npt.NDArray[np.int64] | None = None
        self.uses_matrix = True

    def invalidate(self) -> None:
        """Forget the cached matrix (after this process wrote to the index)."""
        self._matrix = None
        self._ids = None
        self._version = None

    def _state(self) -> tuple[int, int]:
        # data_version changes when another connection commits; total_changes when we do.
        return (
            int(self._store.scalar("PRAGMA data_version")),
            int(self._store.db.total_changes()),
        )

    def _load_matrix(self) -> bool:
        """Read all vectors from vec0's chunk storage; False if the layout is not as expected."""
        try:
            dim = int(self._store.get_meta("vector_dim") or 0)
            major = self._store.scalar(
                f"SELECT value FROM {VEC_TABLE}_info WHERE key='CREATE_VERSION_MAJOR'"
            )
            minor = self._store.scalar(
                f"SELECT value FROM {VEC_TABLE}_info WHERE key='CREATE_VERSION_MINOR'"
            )
            if dim <= 0 or (major, minor) != (0, 1):
                return False
            loaded = self._read_vec0(dim)
        except (apsw.Error, ValueError, TypeError):
            return False
        if loaded is None:
            return False
        ids, rows = loaded
        normalise_int8_rows(rows)  # in place: the same bits as quantize.dequantize
        self._ids, self._matrix, self._files = ids, rows, self._file_of(ids)
        return True

    def _read_vec0(self, dim: int) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]] | None:
        """Chunk ids and their int8 rows (as float32, not yet normalised), in storage order."""
        db = self._store.db
        expected = int(self._store.scalar(f"SELECT count(*) FROM {VEC_TABLE}_rowids"))
        # The float32 matrix is allocated once and filled block by block: no int8 copy of all
        # vectors and no concatenation, each a matrix-sized temporary in the old code.
        rows = np.empty((expected, dim), dtype=np.float32)
        ids = np.empty(expected, dtype=np.int64)
        scratch: npt.NDArray[np.int8] | None = None
        pos = 0
        meta: list[Any] = db.execute(
            f"SELECT chunk_id, size, validity, rowids FROM {VEC_TABLE}_chunks ORDER BY chunk_id"
        ).fetchall()
        for chunk_id, size, validity, rowids in meta:
            valid = np.unpackbits(np.frombuffer(validity, dtype=np.uint8), bitorder="little")
            valid = valid[:size].astype(bool)
            count = int(valid.sum())
            if pos + count > expected:
                return None
            # Incremental blob I/O reads the vectors straight into a reused buffer; a SELECT of
            # the blobs joined to their chunks was ~8x slower (SQLite sorts the joined rows,
            # blobs included, and copies each into a new bytes object).
            blob = db.blob_open("main", f"{VEC_TABLE}_vector_chunks00", "vectors", chunk_id, False)
            try:
                length = blob.length()
                if length % dim or length // dim < size:
                    return None
                if scratch is None or len(scratch) != length:
                    scratch = np.empty(length, dtype=np.int8)
                blob.read_into(scratch.data)  # the array's own buffer: no copy
            finally:
                blob.close()
            block = scratch.reshape(-1, dim)[:size]
            # int8 -> float32 is exact, so casting here equals dequantize's astype.
            rows[pos : pos + count] = block if count == size else block[valid]
            ids[pos : pos + count] = np.frombuffer(rowids, dtype=np.int64)[:size][valid]
            pos += count
        if pos != expected:
            return None
        if expected:
            # The layout is sqlite-vec's private format: check one row against vec0 itself.
            middle = expected // 2
            blob = self._store.scalar(
                f"SELECT embedding FROM {VEC_TABLE} WHERE rowid = ?", (int(ids[middle]),)
            )
            stored = np.frombuffer(blob, dtype=np.int8)
            if not np.array_equal(stored.astype(np.float32), rows[middle]):
                return None
        return ids, rows

    def _file_of(self, ids: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """The note (file id) of every vector, so search needs no query to group hits by note."""
        # Two group_concat strings parsed by numpy instead of 60,000 Python tuples: ~6x faster.
        # Both aggregates see the rows in the same order (one scan of the covering index
        # chunks_by_file), so the i-th id and the i-th file id belong together.
        row: Any = self._store.db.execute(
            "SELECT group_concat(id), group_concat(file_id), count(*) FROM chunks"
        ).fetchone()
        id_text, file_text, count = row
        files = np.full(len(ids), -1, dtype=np.int64)
        if not count:
            return files
        chunk_ids = np.fromstring(id_text, dtype=np.int64, sep=",")
        file_ids = np.fromstring(file_text, dtype=np.int64, sep=",")
        if len(chunk_ids) != count or len(file_ids) != count:  # never expected; be exact anyway
            pairs = self._store.db.execute("SELECT id, file_id FROM chunks").fetchall()
            chunk_ids = np.array([p[0] for p in pairs], dtype=np.int64)
            file_ids = np.array([p[1] for p in pairs], dtype=np.int64)
        order = np.argsort(chunk_ids, kind="stable")
        chunk_ids, file_ids = chunk_ids[order], file_ids[order]
        where = np.minimum(np.searchsorted(chunk_ids, ids), len(chunk_ids) - 1)
        found = chunk_ids[where] == ids
        files[found] = file_ids[where[found]]
        return files

    def search(
        self, query: npt.NDArray[np.float32], limit: int, *, allowed: set[int] | None = None
    ) -> list[VectorMatch]:
        """The `limit` chunks closest to a unit-length query vector, best first; only chunks of
        the files in `allowed` when given."""
        if limit <= 0:
            return []
        matrix = self.prepare()
        if matrix is not None:
            return matrix.search(query, limit, allowed=allowed)
        if not self._store.vectors_available or not self._store.has_vector_table():
            return []
        if allowed is None:
            return self._vec0_search(query, limit)
        # vec0 cannot filter by note: ask for more and keep the allowed ones. A narrow filter
        # may then get fewer than `limit` (only on this fallback path).
        found = self._vec0_search(query, min(limit * 20, 4096))
        files = self._store.file_ids([m.chunk_id for m in found])
        kept = [
            VectorMatch(m.chunk_id, m.cosine, files[m.chunk_id])
            for m in found
            if files.get(m.chunk_id) in allowed
        ]
        return kept[:limit]

    def prepare(self) -> _Matrix | None:
        """The in-memory vectors, re-read if the index changed; None when only vec0 KNN works.

        Uses the database, so call it on the thread that owns the connection; the returned
        matrix can then be searched on any thread (numpy releases the GIL).
        """
        if not self.uses_matrix:
            return None
        if not self._store.vectors_available or not self._store.has_vector_table():
            return None
        # State and matrix are read in one snapshot, so a commit in between cannot leave a
        # matrix that is older than the state it is filed under (or fail the layout checks).
        with self._store.snapshot():
            state = self._state()
            if self._matrix is None or state != self._version:
                self.uses_matrix = self._load_matrix()
                self._version = state
        if not self.uses_matrix or self._matrix is None or self._ids is None or self._files is None:
            return None
        return _Matrix(self._ids, self._matrix, self._files)

    def _vec0_search(self, query: npt.NDArray[np.float32], limit: int) -> list[VectorMatch]:
        rows = self._store.db.execute(
            f"SELECT rowid, distance FROM {VEC_TABLE} WHERE embedding MATCH vec_int8(?) AND k = ? "
            "ORDER BY distance",
            (quantize(query.reshape(1, -1))[0].tobytes(), int(limit)),
        )
        return [VectorMatch(int(r[0]), 1.0 - float(r[1])) for r in rows]


@dataclass(frozen=True)
class _Matrix:
    """A snapshot of the vectors: chunk ids and their unit rows. Immutable, so thread-safe."""

    ids: npt.NDArray[np.int64]
    rows: npt.NDArray[np.float32]
    files: npt.NDArray[np.int64]  # file id of each row, -1 if unknown

    def search(
        self, query: npt.NDArray[np.float32], limit: int, *, allowed: set[int] | None = None
    ) -> list[VectorMatch]:
        """Exact cosine top-`limit` by one matrix-vector product (rows of `allowed` files only)."""
        if not len(self.ids) or limit <= 0:
            return []
        scores = self.rows @ query.astype(np.float32)
        if allowed is not None:
            keep = np.isin(self.files, np.fromiter(allowed, dtype=np.int64, count=len(allowed)))
            scores = np.where(keep, scores, -np.inf)
            limit = min(limit, int(keep.sum()))
            if limit <= 0:
                return []
        k = min(limit, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        # Ties broken by chunk id so equal scores rank the same way every time.
        order = top[np.lexsort((self.ids[top], -scores[top]))]
        return [
            VectorMatch(
                int(self.ids[i]),
                float(scores[i]),
                int(self.files[i]) if self.files[i] >= 0 else None,
            )
            for i in order
        ]
