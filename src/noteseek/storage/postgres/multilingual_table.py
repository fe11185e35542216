"""The multilingual lane's vectors on PostgreSQL (`chunks_e5`, schema migration 4): int8 rows
keyed by (collection, content hash), as the SQLite backend keys them by content hash.

Keyed by content, not chunk id, for the SQLite backend's reason: a re-processed note keeps its e5
vectors (~0.3 CPU-s per chunk to make). Stored as `bytea` (the engine reads every row into its
in-memory matrix, `multilingual_rows`, and searches there; the server never compares them, so a
pgvector column and an HNSW index would buy nothing). The lane's model and "built" flag are per
collection meta; several collections report the state they share.
"""

from __future__ import annotations

from collections.abc import Sequence

from .. import meta
from ..rows import VectorRows, vector_rows_of
from .connection import PostgresConnection

__all__ = ["MultilingualTable"]


class MultilingualTable:
    """Reads and writes of `chunks_e5`."""

    def __init__(self, conn: PostgresConnection) -> None:
        self.conn = conn

    def multilingual_state(self) -> tuple[str | None, bool]:
        # One statement: every search asks (searcher.py's lane choice).
        found = self.conn.get_metas((meta.MULTILINGUAL_MODEL, meta.MULTILINGUAL_BUILT))
        return found[meta.MULTILINGUAL_MODEL], found[meta.MULTILINGUAL_BUILT] == "1"

    def reset_multilingual(self, fingerprint: str) -> None:
        """Drop the collection's lane vectors and record the model the next ones come from
        (inside `write()`)."""
        cid = self.conn.collections.only
        self.conn.run("DELETE FROM chunks_e5 WHERE collection_id = %s", (cid,))
        self.conn.set_meta(meta.MULTILINGUAL_MODEL, fingerprint)
        self.conn.run(
            "DELETE FROM meta WHERE collection_id = %s AND key = %s", (cid, meta.MULTILINGUAL_BUILT)
        )
        self.conn.move_version()

    def mark_multilingual_built(self) -> None:
        self.conn.set_meta(meta.MULTILINGUAL_BUILT, "1")

    def prune_multilingual(self) -> int:
        """Drop lane vectors no chunk of the collection has any more (inside `write()`)."""
        gone = self.conn.rows(
            "DELETE FROM chunks_e5 e WHERE e.collection_id = %s AND NOT EXISTS (SELECT 1 FROM "
            "chunks c WHERE c.collection_id = e.collection_id AND c.content_hash = e.content_hash) "
            "RETURNING 1",
            (self.conn.collections.only,),
        )
        if gone:
            self.conn.move_version()
        return len(gone)

    def multilingual_missing(self, limit: int) -> list[tuple[int, str, str, str]]:
        """(content hash, title, section, text) of up to `limit` distinct chunk contents of the
        collection without a lane vector, in the order most likely asked first, as on SQLite:
        non-English notes' chunks (queries across languages gain the most), then the newest
        notes, then the shortest, then by first chunk id."""
        rows = self.conn.rows(
            "WITH m AS (SELECT c.content_hash, bool_or(c.lang IS NOT NULL) AS other, "
            "max(f.mtime_ns) AS newest, min(f.size) AS shortest, min(c.id) AS first "
            "FROM chunks c JOIN files f ON f.id = c.file_id "
            "WHERE c.collection_id = %s AND NOT EXISTS "
            "(SELECT 1 FROM chunks_e5 e WHERE e.collection_id = c.collection_id "
            "AND e.content_hash = c.content_hash) GROUP BY c.content_hash "
            "ORDER BY other DESC, newest DESC, shortest, first LIMIT %s) "
            "SELECT m.content_hash, coalesce(f.title, ''), c.section, c.chunk_text FROM m "
            "JOIN chunks c ON c.id = m.first JOIN files f ON f.id = c.file_id "
            "ORDER BY m.other DESC, m.newest DESC, m.shortest, m.first",
            (self.conn.collections.only, int(limit)),
        )
        return [(int(r[0]), str(r[1]), str(r[2]), str(r[3])) for r in rows]

    def set_multilingual_vectors(self, hashes: Sequence[int], rows: Sequence[bytes]) -> None:
        if not hashes:
            return
        self.conn.run(
            "INSERT INTO chunks_e5(collection_id, content_hash, vector) "
            "SELECT %s, h, v FROM unnest(%s::bigint[], %s::bytea[]) AS u(h, v) "
            "ON CONFLICT (collection_id, content_hash) DO UPDATE SET vector = excluded.vector",
            (self.conn.collections.only, [int(h) for h in hashes], [bytes(r) for r in rows]),
        )
        self.conn.move_version()  # the deep lane's readers read them again (data_version)

    def multilingual_progress(self) -> tuple[int, int]:
        row = self.conn.rows(
            "SELECT count(DISTINCT (c.collection_id, c.content_hash)) FILTER (WHERE EXISTS ("
            "SELECT 1 FROM chunks_e5 e WHERE e.collection_id = c.collection_id "
            "AND e.content_hash = c.content_hash)), count(DISTINCT (c.collection_id, "
            "c.content_hash)) FROM chunks c WHERE c.collection_id = ANY(%s)",
            (self.conn.collections.ids,),
        )[0]
        return int(row[0] or 0), int(row[1] or 0)

    def multilingual_rows(self) -> VectorRows | None:
        """Every selected chunk that has a lane vector, with it (row-major int8), by chunk id;
        None when there is none."""
        return vector_rows_of(
            self.conn.rows(
                "SELECT c.id, e.vector FROM chunks c JOIN chunks_e5 e ON e.collection_id = "
                "c.collection_id AND e.content_hash = c.content_hash "
                "WHERE c.collection_id = ANY(%s) ORDER BY c.id",
                (self.conn.collections.ids,),
            )
        )
