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


class MultilingualTable(SqliteConnection):
    """Reads and writes of `chunks_e5`."""

    def multilingual_state(self) -> tuple[str | None, bool]:
        """(fingerprint of the model the lane's vectors came from, whether a build finished)."""
        return self.get_meta(meta.MULTILINGUAL_MODEL), self.get_meta(meta.MULTILINGUAL_BUILT) == "1"

    def reset_multilingual(self, fingerprint: str) -> None:
        """Drop every lane vector and record the model the next ones come from (inside `write()`)."""
        self.db.execute("DELETE FROM chunks_e5")
        self.set_meta(meta.MULTILINGUAL_MODEL, fingerprint)
        self.db.execute("DELETE FROM meta WHERE key = ?", (meta.MULTILINGUAL_BUILT,))

    def mark_multilingual_built(self) -> None:
        """Record that a lane build finished (inside `write()`)."""
        self.set_meta(meta.MULTILINGUAL_BUILT, "1")

    def prune_multilingual(self) -> int:
        """Drop lane vectors no chunk has any more (inside `write()`); how many."""
        self.db.execute(
            "DELETE FROM chunks_e5 WHERE content_hash NOT IN (SELECT content_hash FROM chunks)"
        )
        return int(self.db.changes())

    def multilingual_missing(self, limit: int) -> list[tuple[int, str, str, str]]:
        """(content hash, title, section, text) of up to `limit` distinct chunk contents without
        a lane vector, in the order most likely asked first: non-English notes' chunks (queries
        across languages gain the most), then the newest notes, then the shortest."""
        rows = self.db.execute(
            "SELECT c.content_hash, COALESCE(f.title, ''), c.section, c.chunk_text "
            "FROM chunks c JOIN files f ON f.id = c.file_id "
            "WHERE NOT EXISTS (SELECT 1 FROM chunks_e5 e WHERE e.content_hash = c.content_hash) "
            "GROUP BY c.content_hash ORDER BY max(c.lang IS NOT NULL) DESC, max(f.mtime_ns) DESC, "
            "min(f.size), min(c.id) LIMIT ?",
            (limit,),
        )
        return [(int(r[0]), str(r[1]), str(r[2]), str(r[3])) for r in rows]

    def set_multilingual_vectors(self, hashes: Sequence[int], rows: Sequence[bytes]) -> None:
        """Store lane vectors by content hash (inside `write()`)."""
        self.db.executemany(
            "INSERT OR REPLACE INTO chunks_e5(content_hash, vector) VALUES (?, ?)",
            list(zip(hashes, rows)),
        )

    def multilingual_progress(self) -> tuple[int, int]:
        """(distinct chunk contents with a lane vector, distinct chunk contents)."""
        done = self.scalar(
            "SELECT count(DISTINCT c.content_hash) FROM chunks c "
            "JOIN chunks_e5 e ON e.content_hash = c.content_hash"
        )
        total = self.scalar("SELECT count(DISTINCT content_hash) FROM chunks")
        return int(done or 0), int(total or 0)

    def multilingual_rows(self) -> VectorRows | None:
        """Every chunk that has a lane vector, with it (row-major int8); None when there is none."""
        return vector_rows_of(
            self.db.execute(
                "SELECT c.id, e.vector FROM chunks c JOIN chunks_e5 e "
                "ON e.content_hash = c.content_hash ORDER BY c.id"
            )
        )
