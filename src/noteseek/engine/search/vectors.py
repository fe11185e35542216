"""Nearest-neighbour search over the stored vectors, held in memory.

Vectors are stored as int8 (see embedding/quantize.py). sqlite-vec's brute-force KNN costs ~35 ms
per query at 60,000 × 256 int8 on this class of machine, more than our whole latency budget. So
the vectors stay in the index (the single source of truth), and a searcher reads them once into
memory (`Storage.vector_rows`; for SQLite straight from vec0's chunk storage, validated against
the table itself) and again only when the index changed (`Storage.data_version`). When the
storage cannot hand them out whole, its own KNN answers (`Storage.knn`); for a storage whose read
costs several of its KNN searches (PostgreSQL's), KNN also answers the first searches at each new
state (`Storage.vectors_load_after_searches`), and the next one at that same state reads the
vectors: readers of an index being written do not read it again after every commit.

Scoring is one call of simsimd's int8 cosine kernel (SIMD, ~1 ms for 60,000 rows) with an int8
query, and neither it nor the load needs numpy: a one-shot hook process never pays numpy's ~65 ms
import. Choosing the best k of the scores is exact, by (distance, chunk id), whichever way it is
done — numpy's argpartition in a process that already has numpy or has searched before, pure
Python otherwise — so every process returns the same hits with the same cosines, bit for bit.
"""

from __future__ import annotations

import heapq
import sys
from array import array
from dataclasses import dataclass
from itertools import compress
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Hashable

    from ...storage.protocol import Storage

try:
    import simsimd
except ImportError:  # pragma: no cover - a core dependency; without it vec0's KNN answers
    simsimd = None  # type: ignore[assignment]

__all__ = ["VectorIndex", "VectorMatch", "VectorMatrix"]


@dataclass(frozen=True)
class VectorMatch:
    """A chunk id and its cosine similarity to the query."""

    chunk_id: int
    cosine: float
    file_id: int | None = None


class VectorIndex:
    """KNN over a Store's vectors, cached in memory and refreshed when the file changes."""

    def __init__(self, store: Storage) -> None:
        self._store = store
        self._matrix: VectorMatrix | None = None
        self._version: Hashable = None
        # The state the last search saw, and how many searches in a row asked knn at it
        # (Storage.vectors_load_after_searches).
        self._seen: Hashable = None
        self._asked = 0
        self.uses_matrix = simsimd is not None
        self._searches = 0

    def invalidate(self) -> None:
        """Forget the cached matrix (after this process wrote to the index)."""
        self._matrix = None
        self._version = None

    def _load_matrix(self) -> VectorMatrix | None:
        """Every vector from the storage; None if it cannot hand them out whole."""
        rows = self._store.vector_rows()
        return None if rows is None else VectorMatrix(rows.ids, rows.rows, rows.dim)

    def search(
        self, query: bytes, limit: int, *, allowed: set[int] | None = None
    ) -> list[VectorMatch]:
        """The `limit` chunks closest to an int8 query vector, best first; only chunks of the
        files in `allowed` when given."""
        if limit <= 0:
            return []
        matrix = self.prepare(settled_only=True)
        self._searches += 1
        if matrix is not None:
            keep = None if allowed is None else self._store.chunks_of_files(allowed)
            # A process that searches a second time is a long-lived one: numpy's import then pays
            # for itself (faster selection, same result). A one-shot search never imports it.
            use_numpy = "numpy" in sys.modules or self._searches > 1
            return matrix.search(query, limit, keep=keep, use_numpy=use_numpy)
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

    def prepare(self, *, settled_only: bool = False) -> VectorMatrix | None:
        """The in-memory vectors, re-read if the index changed; None when only the storage's
        KNN works. `settled_only` (a search): None too while fewer searches than the storage asks
        for (`Storage.vectors_load_after_searches`) asked its KNN at this state."""
        if not self.uses_matrix:
            return None
        if not self._store.vectors_available or not self._store.has_vector_table():
            return None
        # State and matrix are read in one snapshot, so a commit in between cannot leave a
        # matrix that is older than the state it is filed under (or fail the layout checks).
        with self._store.snapshot():
            state = self._store.data_version()
            if self._matrix is None or state != self._version:
                self._asked = self._asked if state == self._seen else 0
                self._seen = state
                if settled_only and self._asked < self._store.vectors_load_after_searches:
                    self._asked += 1
                    return None  # knn answers this one, exactly and from the current state
                self._matrix = self._load_matrix()
                self.uses_matrix = self._matrix is not None
                self._version = state
        return self._matrix

    def _vec0_search(self, query: bytes, limit: int) -> list[VectorMatch]:
        return [VectorMatch(cid, cosine) for cid, cosine in self._store.knn(query, limit)]


class VectorMatrix:
    """A snapshot of the vectors: chunk ids and their int8 rows. Immutable.

    A plain class, not a dataclass: every one-shot search defines it, and a dataclass costs a
    process ~0.5 ms to create.
    """

    __slots__ = ("dim", "ids", "rows")

    def __init__(self, ids: array[int], rows: bytearray, dim: int) -> None:
        self.ids = ids
        self.rows = rows  # len(ids) × dim int8 values, row-major; never written after the load
        self.dim = dim

    def search(
        self, query: bytes, limit: int, *, keep: set[int] | None = None, use_numpy: bool = False
    ) -> list[VectorMatch]:
        """Cosine top-`limit` by one SIMD pass (rows of chunks in `keep` only, when given)."""
        if not self.ids or limit <= 0 or len(query) != self.dim or simsimd is None:
            return []
        n = len(self.ids)
        table = memoryview(self.rows).cast("b", (n, self.dim))
        probe = memoryview(query).cast("b", (1, self.dim))
        distances: Any = simsimd.cdist(probe, table, metric="cosine", dtype="int8")
        flat: Any = memoryview(distances).cast("B").cast("d")  # float64 distances, one per row
        positions = (
            None if keep is None else list(compress(range(n), map(keep.__contains__, self.ids)))
        )
        if use_numpy:
            best = _best_numpy(flat, self.ids, limit, positions)
        else:
            best = _best_python(flat.tolist(), self.ids, limit, positions)
        return [VectorMatch(self.ids[i], 1.0 - flat[i]) for i in best]


def _best_python(
    values: list[float], ids: array[int], k: int, positions: list[int] | None
) -> list[int]:
    """Positions of the k smallest values, ordered by (value, id): exact, ties included."""
    if positions is None:
        if k >= len(values):
            positions = list(range(len(values)))
        else:
            # Every position at or below the k-th smallest value, then the exact order among them.
            cut = heapq.nsmallest(k, values)[-1]
            positions = list(compress(range(len(values)), map(cut.__ge__, values)))
    positions.sort(key=lambda i: (values[i], ids[i]))
    return positions[:k]


def _best_numpy(
    values: memoryview, ids: array[int], k: int, positions: list[int] | None
) -> list[int]:
    """The same positions as _best_python, by numpy."""
    # numpy on first use: a one-shot hook never imports it (tests/test_daemon.py).
    import numpy as np

    scores = np.frombuffer(values, dtype=np.float64)
    chunk_ids = np.frombuffer(ids, dtype=np.int64)
    if positions is None:
        if k < len(scores):
            # Every row at or below the k-th value, so ties are broken by id, not by partition.
            cut = scores[np.argpartition(scores, k - 1)[:k]].max()
            where = np.flatnonzero(scores <= cut)
        else:
            where = np.arange(len(scores))
    else:
        where = np.array(positions, dtype=np.int64)
        if k < len(where):
            cut = scores[where[np.argpartition(scores[where], k - 1)[:k]]].max()
            where = where[scores[where] <= cut]
    order = np.lexsort((chunk_ids[where], scores[where]))
    return [int(i) for i in where[order][:k]]
