"""The vec0 table: int8 vectors, one per chunk, and reading them all for the in-memory index.

Vectors are stored as int8 (see embedding/quantize.py) in sqlite-vec's vec0 table, so the one file
stays the single source of truth. sqlite-vec's brute-force KNN costs ~35 ms per query at 60,000 ×
256 int8, more than the whole latency budget, so the engine keeps the vectors in memory
(engine/search/vectors.py) and reads them here, straight from vec0's chunk storage; `knn` is the fallback
when that read is not possible.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import apsw

from .. import meta
from ..rows import VectorRows
from .connection import SqliteConnection

if TYPE_CHECKING:  # numpy costs ~65 ms to import; a one-shot search never needs it
    import numpy as np
    import numpy.typing as npt

__all__ = ["VEC_TABLE", "VectorTable"]

VEC_TABLE = "chunks_vec"
VEC_BLOCK = 1984  # vectors per vec0 block (`chunk_size`, a multiple of 8)


class VectorTable:
    """Writes and reads of the vec0 table."""

    # Reading vec0's storage costs a few ms and vec0's own KNN ~35 ms: read again at once.
    vectors_load_after_searches = 0

    def __init__(self, conn: SqliteConnection) -> None:
        self.conn = conn
        self.db = conn.db

    def has_vector_table(self) -> bool:
        """Whether the vec0 table exists (it is created once the model's dimension is known)."""
        return bool(
            self.conn.scalar(
                "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (VEC_TABLE,)
            )
        )

    def reset_vectors(self, dim: int, fingerprint: str) -> None:
        self.db.execute(f"DROP TABLE IF EXISTS {VEC_TABLE}")
        # vec0 keeps a block's rowids (8 bytes each) in one row of `_chunks`: 1,984 per block
        # fill a 16 KB page (connection.py), where its default 1,024 left half of each empty.
        self.db.execute(
            f"CREATE VIRTUAL TABLE {VEC_TABLE} USING vec0("
            f"embedding int8[{int(dim)}] distance_metric=cosine, chunk_size={VEC_BLOCK})"
        )
        self.db.execute("UPDATE chunks SET embedded = 0 WHERE embedded")
        self.conn.set_meta(meta.MODEL_FINGERPRINT, fingerprint)
        self.conn.set_meta(meta.VECTOR_DIM, str(int(dim)))

    def vectors_by_hash(self, hashes: Iterable[int]) -> dict[int, bytes]:
        if not self.conn.vectors_available or not self.has_vector_table():
            return {}
        found: dict[int, bytes] = {}
        wanted = sorted(set(hashes))
        for start in range(0, len(wanted), 500):
            batch = wanted[start : start + 500]
            marks = ",".join("?" * len(batch))
            rows = self.db.execute(
                f"SELECT c.content_hash, v.embedding FROM chunks c JOIN {VEC_TABLE} v "
                f"ON v.rowid = c.id WHERE c.content_hash IN ({marks}) AND c.embedded",
                batch,
            )
            for content_hash, blob in rows:
                found.setdefault(content_hash, bytes(blob))
        return found

    def chunks_missing_vectors(self, limit: int) -> list[tuple[int, str, str, str]]:
        rows = self.db.execute(
            "SELECT c.id, COALESCE(f.title, ''), c.section, c.chunk_text FROM chunks c "
            "JOIN files f ON f.id = c.file_id WHERE NOT c.embedded ORDER BY c.id LIMIT ?",
            (limit,),
        )
        return [(r[0], r[1], r[2], r[3]) for r in rows]

    def set_vectors(self, ids: Sequence[int], vectors: npt.NDArray[np.int8]) -> None:
        for chunk_id, vector in zip(ids, vectors):
            # The ids were read before embedding, outside this transaction; another indexer may
            # have replaced the chunk since. A vector for a missing chunk would never be deleted.
            self.db.execute("UPDATE chunks SET embedded = 1 WHERE id = ?", (chunk_id,))
            if not self.db.changes():
                continue
            self.db.execute(f"DELETE FROM {VEC_TABLE} WHERE rowid = ?", (chunk_id,))
            self.db.execute(
                f"INSERT INTO {VEC_TABLE}(rowid, embedding) VALUES (?, vec_int8(?))",
                (chunk_id, vector.tobytes()),
            )

    # -- reads for the engine's in-memory vector index ---------------------------------------

    def data_version(self) -> tuple[int, int]:
        """Changes when any connection commits: data_version for others, total_changes for us."""
        return int(self.conn.scalar("PRAGMA data_version")), int(self.db.total_changes())

    def vector_rows(self) -> VectorRows | None:
        """Every vector, read from vec0's chunk storage; None if the layout is not as expected.

        The read relies on sqlite-vec 0.1's storage layout, so it is validated against the
        table's own row count and a sample vector; the engine falls back to `knn` when it fails.
        """
        try:
            dim = int(self.conn.get_meta(meta.VECTOR_DIM) or 0)
            major = self.conn.scalar(
                f"SELECT value FROM {VEC_TABLE}_info WHERE key='CREATE_VERSION_MAJOR'"
            )
            minor = self.conn.scalar(
                f"SELECT value FROM {VEC_TABLE}_info WHERE key='CREATE_VERSION_MINOR'"
            )
            if dim <= 0 or (major, minor) != (0, 1):
                return None
            return self._read_vec0(dim)
        except (apsw.Error, ValueError, TypeError):
            return None

    def _read_vec0(self, dim: int) -> VectorRows | None:
        """Chunk ids and their int8 rows, in storage order."""
        db = self.db
        expected = int(self.conn.scalar(f"SELECT count(*) FROM {VEC_TABLE}_rowids"))
        rows = bytearray(expected * dim)
        ids = array("q")
        scratch = bytearray()
        pos = 0
        blocks: list[Any] = db.execute(
            f"SELECT chunk_id, size, validity, rowids FROM {VEC_TABLE}_chunks ORDER BY chunk_id"
        ).fetchall()
        for chunk_id, size, validity, rowids in blocks:
            bits = int.from_bytes(validity, "little")
            full = (1 << size) - 1
            dense = bits & full == full  # the common case: no deleted rows in this block
            count = size if dense else (bits & full).bit_count()
            if pos + count > expected:
                return None
            # Incremental blob I/O reads the vectors straight into the matrix (or, for a block
            # with holes, a reused buffer); a SELECT of the blobs joined to their chunks was ~8x
            # slower (SQLite sorts the joined rows, blobs included, and copies each into a new
            # bytes object).
            blob = db.blob_open("main", f"{VEC_TABLE}_vector_chunks00", "vectors", chunk_id, False)
            try:
                if blob.length() % dim or blob.length() // dim < size:
                    return None
                if dense:
                    blob.read_into(rows, pos * dim, size * dim)
                else:
                    if len(scratch) != size * dim:
                        scratch = bytearray(size * dim)
                    blob.read_into(scratch, 0, size * dim)
            finally:
                blob.close()
            block_ids = array("q")
            block_ids.frombytes(rowids[: size * 8])
            if dense:
                ids.extend(block_ids)
            else:
                valid = [j for j in range(size) if bits >> j & 1]
                for n, j in enumerate(valid, start=pos):
                    rows[n * dim : (n + 1) * dim] = scratch[j * dim : (j + 1) * dim]
                ids.extend(block_ids[j] for j in valid)
            pos += count
        if pos != expected:
            return None
        if expected:
            # The layout is sqlite-vec's private format: check one row against vec0 itself.
            middle = expected // 2
            stored = self.conn.scalar(
                f"SELECT embedding FROM {VEC_TABLE} WHERE rowid = ?", (ids[middle],)
            )
            if bytes(stored) != bytes(rows[middle * dim : (middle + 1) * dim]):
                return None
        return VectorRows(ids, rows, dim)

    def knn(self, query: bytes, limit: int) -> list[tuple[int, float]]:
        rows = self.db.execute(
            f"SELECT rowid, distance FROM {VEC_TABLE} WHERE embedding MATCH vec_int8(?) AND k = ? "
            "ORDER BY distance",
            (query, int(limit)),
        )
        return [(int(r[0]), 1.0 - float(r[1])) for r in rows]
