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

import apsw
import numpy as np
import numpy.typing as npt

from .quantize import dequantize, quantize
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
        db = self._store.db
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
            id_parts: list[npt.NDArray[np.int64]] = []
            vec_parts: list[npt.NDArray[np.int8]] = []
            rows = db.execute(
                f"SELECT c.size, c.validity, c.rowids, v.vectors FROM {VEC_TABLE}_chunks c "
                f"JOIN {VEC_TABLE}_vector_chunks00 v ON v.rowid = c.chunk_id ORDER BY c.chunk_id"
            )
            for size, validity, rowids, vectors in rows:
                valid = np.unpackbits(np.frombuffer(validity, dtype=np.uint8), bitorder="little")
                valid = valid[:size].astype(bool)
                ids = np.frombuffer(rowids, dtype=np.int64)[:size]
                matrix = np.frombuffer(vectors, dtype=np.int8).reshape(-1, dim)[:size]
                id_parts.append(ids[valid])
                vec_parts.append(matrix[valid])
            ids_all = np.concatenate(id_parts) if id_parts else np.zeros(0, dtype=np.int64)
            matrix_int8 = (
                np.concatenate(vec_parts) if vec_parts else np.zeros((0, dim), dtype=np.int8)
            )
            expected = int(self._store.scalar(f"SELECT count(*) FROM {VEC_TABLE}_rowids"))
            if len(ids_all) != expected:
                return False
            if len(ids_all):
                probe = int(ids_all[len(ids_all) // 2])
                blob = self._store.scalar(
                    f"SELECT embedding FROM {VEC_TABLE} WHERE rowid = ?", (probe,)
                )
                stored = np.frombuffer(blob, dtype=np.int8)
                if not np.array_equal(stored, matrix_int8[len(ids_all) // 2]):
                    return False
        except (apsw.Error, ValueError, TypeError):
            return False
        # The note of every vector, so search needs no extra query to group hits by note.
        pairs = np.array(
            db.execute("SELECT id, file_id FROM chunks ORDER BY id").fetchall(), dtype=np.int64
        )
        pairs = pairs.reshape(-1, 2)
        files = np.full(len(ids_all), -1, dtype=np.int64)
        if len(pairs):
            where = np.minimum(np.searchsorted(pairs[:, 0], ids_all), len(pairs) - 1)
            found = pairs[where, 0] == ids_all
            files[found] = pairs[where[found], 1]
        self._ids, self._matrix, self._files = ids_all, dequantize(matrix_int8), files
        return True

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
