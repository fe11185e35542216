"""The multilingual lane's vectors (`chunks_e5`, schema m007): int8 rows keyed by content hash.

Keyed by the chunk's content hash, not its id: a re-processed note (pipeline bump, an edit in
another section) keeps its e5 vectors, which cost ~0.3 CPU-s per chunk to make. Rows no chunk
has any more are dropped by `prune_multilingual` (each lane build starts with it). The lane is
"built" once a build run finished (meta `MULTILINGUAL_BUILT`); search uses whatever is there
(engine/search/deep_lane.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from .. import meta
from ..rows import VectorRows, vector_rows_of
from .connection import SqliteConnection

__all__ = ["MultilingualTable"]


class MultilingualTable:
    """Reads and writes of `chunks_e5`."""

    def __init__(self, conn: SqliteConnection) -> None:
        self.conn = conn
        self.db = conn.db

    def multilingual_state(self) -> tuple[str | None, bool]:
        return self.conn.get_meta(meta.MULTILINGUAL_MODEL), self.conn.get_meta(
            meta.MULTILINGUAL_BUILT
        ) == "1"

    def reset_multilingual(self, fingerprint: str) -> None:
        self.db.execute("DELETE FROM chunks_e5")
        self.conn.set_meta(meta.MULTILINGUAL_MODEL, fingerprint)
        self.db.execute("DELETE FROM meta WHERE key = ?", (meta.MULTILINGUAL_BUILT,))

    def mark_multilingual_built(self) -> None:
        self.conn.set_meta(meta.MULTILINGUAL_BUILT, "1")

    def prune_multilingual(self) -> int:
        self.db.execute(
            "DELETE FROM chunks_e5 WHERE content_hash NOT IN (SELECT content_hash FROM chunks)"
        )
        return int(self.db.changes())

    def multilingual_missing(self, limit: int) -> list[tuple[int, str, str, str]]:
        rows = self.db.execute(
            "SELECT c.content_hash, COALESCE(f.title, ''), c.section, c.chunk_text "
            "FROM chunks c JOIN files f ON f.id = c.file_id "
            "WHERE NOT EXISTS (SELECT 1 FROM chunks_e5 e WHERE e.content_hash = c.content_hash) "
            "GROUP BY c.content_hash ORDER BY max(f.lang IS NOT NULL) DESC, max(f.mtime_ns) DESC, "
            "min(f.size), min(c.id) LIMIT ?",
            (limit,),
        )
        return [(int(r[0]), str(r[1]), str(r[2]), str(r[3])) for r in rows]

    def set_multilingual_vectors(self, hashes: Sequence[int], rows: Sequence[bytes]) -> None:
        self.db.executemany(
            "INSERT OR REPLACE INTO chunks_e5(content_hash, vector) VALUES (?, ?)",
            list(zip(hashes, rows)),
        )

    def multilingual_progress(self) -> tuple[int, int]:
        done = self.conn.scalar(
            "SELECT count(DISTINCT c.content_hash) FROM chunks c "
            "JOIN chunks_e5 e ON e.content_hash = c.content_hash"
        )
        total = self.conn.scalar("SELECT count(DISTINCT content_hash) FROM chunks")
        return int(done or 0), int(total or 0)

    def multilingual_rows(self) -> VectorRows | None:
        return vector_rows_of(
            self.db.execute(
                "SELECT c.id, e.vector FROM chunks c JOIN chunks_e5 e "
                "ON e.content_hash = c.content_hash ORDER BY c.id"
            )
        )
