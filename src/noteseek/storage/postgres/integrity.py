"""Integrity of the selected collections: the counts that must agree, read in one snapshot.

PostgreSQL checks its own pages (checksums, amcheck for the indexes are the DBA's tools); what
noteseek can get wrong is its own bookkeeping, so that is what is checked: the BM25 statistics
(collection counts, document frequencies, copied lengths) against the rows they summarise, each
file's chunk count, and vectors against the chunks marked embedded.
"""

from __future__ import annotations

from .connection import PostgresConnection
from .vector_table import VectorTable

__all__ = ["Integrity"]


class Integrity:
    """Counts and checks, each against one consistent state."""

    def __init__(self, conn: PostgresConnection, vectors: VectorTable) -> None:
        self.conn = conn
        self.vectors = vectors

    def counts(self) -> dict[str, int]:
        """Files, chunks, chunks marked embedded and chunks with a vector."""
        with self.conn.snapshot():
            row = self.conn.rows(
                "SELECT (SELECT count(*) FROM files WHERE collection_id = ANY(%(ids)s)), "
                "(SELECT count(*) FROM chunks WHERE collection_id = ANY(%(ids)s)), "
                "(SELECT count(*) FROM chunks WHERE collection_id = ANY(%(ids)s) "
                "AND embedded_at IS NOT NULL), "
                "(SELECT count(*) FROM chunk_vectors WHERE collection_id = ANY(%(ids)s))",
                {"ids": self.conn.collections.ids},
            )[0]
        result = {"files": int(row[0]), "chunks": int(row[1]), "embedded": int(row[2])}
        if self.vectors.has_vector_table():
            result["vectors"] = int(row[3])
        return result

    def integrity_problems(self) -> list[str]:
        """Empty when noteseek's statistics agree with the rows they count."""
        ids = {"ids": self.conn.collections.ids}
        checks = (
            (
                "collection chunk or token counts differ from the chunks",
                "SELECT c.name FROM collections c LEFT JOIN (SELECT collection_id, count(*) AS n, "
                "sum(doc_len) AS t FROM chunks GROUP BY collection_id) k ON k.collection_id = c.id "
                "WHERE c.id = ANY(%(ids)s) AND (c.chunk_count != coalesce(k.n, 0) "
                "OR c.token_count != coalesce(k.t, 0))",
            ),
            (
                "document frequencies differ from the postings",
                "SELECT coalesce(s.term, p.term) FROM (SELECT collection_id, term, df FROM term_stats "
                "WHERE collection_id = ANY(%(ids)s) AND df > 0) s FULL JOIN (SELECT collection_id, "
                "term, count(*) AS n FROM postings WHERE collection_id = ANY(%(ids)s) "
                "GROUP BY collection_id, term) p ON p.collection_id = s.collection_id "
                "AND p.term = s.term WHERE s.df IS DISTINCT FROM p.n "
                "LIMIT 5",
            ),
            (
                "postings whose length differs from their chunk's",
                "SELECT p.term FROM postings p JOIN chunks c ON c.id = p.chunk_id "
                "WHERE p.collection_id = ANY(%(ids)s) AND p.doc_len != c.doc_len LIMIT 5",
            ),
            (
                "postings of chunks that do not exist",
                "SELECT p.term FROM postings p LEFT JOIN chunks c ON c.id = p.chunk_id "
                "WHERE p.collection_id = ANY(%(ids)s) AND c.id IS NULL LIMIT 5",
            ),
            (
                "files whose chunk count differs from their chunks",
                "SELECT f.path FROM files f LEFT JOIN (SELECT file_id, count(*) AS n FROM chunks "
                "GROUP BY file_id) k ON k.file_id = f.id WHERE f.collection_id = ANY(%(ids)s) "
                "AND f.chunk_count != coalesce(k.n, 0) LIMIT 5",
            ),
            (
                "chunks marked embedded without a vector, or with one but not marked",
                "SELECT c.id::text FROM chunks c LEFT JOIN chunk_vectors v ON v.chunk_id = c.id "
                "WHERE c.collection_id = ANY(%(ids)s) AND "
                "(c.embedded_at IS NULL) != (v.chunk_id IS NULL) LIMIT 5",
            ),
        )
        problems: list[str] = []
        with self.conn.snapshot():
            for what, sql in checks:
                found = [str(r[0]) for r in self.conn.rows(sql, ids)]
                if found:
                    problems.append(f"{what}: {', '.join(found)}")
        return problems
