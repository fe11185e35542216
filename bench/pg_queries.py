"""The two candidate lists of a search, answered by PostgreSQL (for bench/pg_bm25.py).

`PgLists.installed(searcher)` swaps a SQLite `Searcher`'s `_bm25` and `_knn` for PostgreSQL
queries over the copied collection (ids mapped back to the SQLite ones), so the rest of
`Index.search` — grouping, convex fusion, exact names, best section, budget — runs unchanged.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from typing import Any

import _internals
import pg_load
from noteseek import Index
from noteseek.engine.search.vectors import VectorMatch
from noteseek.storage.postgres.bm25 import (
    COMMON_TERMS_SQL,
    Bm25Query,
    bm25_params,
    bm25_sql,
    prepare_query,
)
from noteseek.storage.postgres.schema import hnsw_index_name, hnsw_index_sql
from noteseek.storage.postgres.terms import Tokenizer

# The same BM25 over per-stem posting arrays: one row per stem, unnested.
ARRAYS_SQL = """
WITH q(phrase, term) AS (SELECT * FROM unnest(%(phrases)s::int[], %(terms)s::text[])),
stats AS (SELECT chunk_count::float8 AS n, token_count::float8 / greatest(chunk_count, 1) AS avgdl
          FROM collections WHERE id = %(collection)s),
idf AS (SELECT q.phrase, q.term, greatest(ln((stats.n - a.df + 0.5) / (a.df + 0.5)), 1e-6) AS idf
        FROM q JOIN term_arrays a ON a.collection_id = %(collection)s AND a.term = q.term, stats)
SELECT u.chunk_id, sum(idf.idf * u.f * (%(k1)s + 1)
                       / (u.f + %(k1)s * (1 - %(b)s + %(b)s * u.doc_len / stats.avgdl))) AS score
FROM idf JOIN term_arrays a ON a.collection_id = %(collection)s AND a.term = idf.term
CROSS JOIN LATERAL (
    SELECT c AS chunk_id, l AS doc_len,
           t1 * %(w_text)s::float8 + t2 * %(w_section)s::float8 + t3 * %(w_title)s::float8
           + t4 * %(w_tags)s::float8 AS f
    FROM unnest(a.chunk_ids, a.doc_lens, a.tf_text, a.tf_section, a.tf_title, a.tf_tags)
         AS x(c, l, t1, t2, t3, t4)) u
CROSS JOIN stats
GROUP BY u.chunk_id ORDER BY score DESC, u.chunk_id LIMIT %(limit)s
"""

# The same BM25 from a tsvector per chunk (labels A-D = title, section, tags, text): GIN finds
# the chunks, unnest() reads each one's positions and labels; df from term_stats.
TSVECTOR_SQL = """
WITH q(phrase, term) AS (SELECT * FROM unnest(%(phrases)s::int[], %(terms)s::text[])),
stats AS (SELECT chunk_count::float8 AS n, token_count::float8 / greatest(chunk_count, 1) AS avgdl
          FROM collections WHERE id = %(collection)s),
idf AS (SELECT q.phrase, q.term, greatest(ln((stats.n - t.df + 0.5) / (t.df + 0.5)), 1e-6) AS idf
        FROM q JOIN term_stats t ON t.collection_id = %(collection)s AND t.term = q.term, stats),
cand AS (SELECT chunk_id, doc_len, tsv FROM chunk_tsv
         WHERE collection_id = %(collection)s AND tsv @@ %(tsquery)s::tsquery)
SELECT cand.chunk_id, sum(idf.idf * s.f * (%(k1)s + 1)
                          / (s.f + %(k1)s * (1 - %(b)s + %(b)s * cand.doc_len / stats.avgdl)))
       AS score
FROM cand CROSS JOIN LATERAL unnest(cand.tsv) AS u(lexeme, positions, weights)
JOIN idf ON idf.term = u.lexeme
CROSS JOIN LATERAL (
    SELECT sum(CASE w WHEN 'A' THEN %(w_title)s::float8 WHEN 'B' THEN %(w_section)s::float8
                      WHEN 'C' THEN %(w_tags)s::float8 ELSE %(w_text)s::float8 END) AS f
    FROM unnest(u.weights) AS w) s
CROSS JOIN stats
GROUP BY cand.chunk_id ORDER BY score DESC, cand.chunk_id LIMIT %(limit)s
"""


def _tsquery(query: Bm25Query) -> str:
    terms = {t for alts in query.phrases for t in alts}
    return " | ".join("'" + t.replace("\\", "\\\\").replace("'", "''") + "'" for t in sorted(terms))


class PgLists:
    """BM25 and KNN candidate lists of one collection, from PostgreSQL."""

    def __init__(self, conn: Any, cid: int, tokenizer: Tokenizer, idx: Index) -> None:
        self.conn = conn
        self.cid = cid
        self.base = pg_load.offset(cid)
        self.tokenizer = tokenizer
        self.settings = _internals.searcher(idx).settings
        self.dim = int(_internals.storage(idx).get_meta("vector_dim") or 256)
        self.idx = idx
        self._common: dict[float, frozenset[str]] = {}
        self.split_words = 0
        self.vectors = "exact"
        self.ef_search = 100

    # --- BM25 --------------------------------------------------------------------------------

    def _drop(self, share: float) -> Any:
        if share not in self._common:
            rows = self.conn.execute(COMMON_TERMS_SQL, {"collection": self.cid, "share": share})
            self._common[share] = frozenset(r[0] for r in rows)
        common = self._common[share]
        if not common:
            return None

        def is_common(term: str) -> bool:  # as Store.common_terms: every Porter token common
            tokens = self.tokenizer.query(term)
            return bool(tokens) and all(t[0] in common for t in tokens)

        return is_common

    def bm25(
        self,
        text: str,
        limit: int,
        allowed: set[int] | None = None,
        term_share: float | None = None,
        *,
        store: str = "postings",
    ) -> list[tuple[int, float, int]]:
        """(SQLite chunk id, score, SQLite file id), best first, like the engine's own BM25 list."""
        if allowed is not None:
            raise NotImplementedError("filters are not part of this benchmark")
        share = self.settings.max_term_share if term_share is None else term_share
        query = prepare_query(text, self.tokenizer, drop=self._drop(share))
        if query is None or limit <= 0:
            return []
        self.split_words += query.split_words
        params = bm25_params(
            query, collection=self.cid, weights=self.settings.column_weights, limit=limit
        )
        if store == "postings":
            rows = self.conn.execute(bm25_sql(query), params).fetchall()
            return [(r[0] - self.base, float(r[1]), r[2] - self.base) for r in rows]
        if store == "arrays":
            rows = self.conn.execute(ARRAYS_SQL, params).fetchall()
        else:
            rows = self.conn.execute(TSVECTOR_SQL, {**params, "tsquery": _tsquery(query)})
        return [(r[0] - self.base, float(r[1]), -1) for r in rows]

    # --- vectors -----------------------------------------------------------------------------

    def knn(self, text: str, limit: int, allowed: set[int] | None = None) -> list[VectorMatch]:
        if allowed is not None:
            raise NotImplementedError("filters are not part of this benchmark")
        vector = _internals.query_vector(self.idx, text)
        if vector is None:
            return []
        literal = "[" + ",".join(str(v) for v in memoryview(vector).cast("b")) + "]"
        # A constant collection id, so the planner can use the collection's partial index.
        sql = (
            f"SELECT c.id, c.file_id, 1 - (v.embedding::halfvec({self.dim}) <=> "
            f"%(q)s::halfvec({self.dim})) FROM chunk_vectors v JOIN chunks c ON c.id = v.chunk_id "
            f"WHERE v.collection_id = {int(self.cid)} "
            f"ORDER BY v.embedding::halfvec({self.dim}) <=> %(q)s::halfvec({self.dim}), c.id "
            "LIMIT %(limit)s"
        )
        with self.conn.transaction():
            if self.vectors == "exact":
                self.conn.execute("SET LOCAL enable_indexscan = off")
            else:
                self.conn.execute(f"SET LOCAL hnsw.ef_search = {int(self.ef_search)}")
            rows = self.conn.execute(sql, {"q": literal, "limit": limit}).fetchall()
        return [VectorMatch(r[0] - self.base, float(r[2]), r[1] - self.base) for r in rows]

    def ensure_hnsw(self) -> None:
        self.conn.execute(hnsw_index_sql(self.cid, self.dim))

    @contextlib.contextmanager
    def installed(self, idx: Index, *, vectors: str, ef_search: int = 100) -> Iterator[None]:
        """The index's candidate lists come from PostgreSQL inside the block."""
        self.vectors, self.ef_search = vectors, ef_search
        with _internals.candidate_lists_from(idx, self.bm25, self.knn):
            yield

    # --- checks and facts --------------------------------------------------------------------

    def compare_scores(self, idx: Index, texts: list[str]) -> dict[str, Any]:
        """FTS5 bm25() vs the SQL score, chunk by chunk, over each query's top 100."""
        worst = 0.0
        same_ids = 0
        compared = 0
        for text in texts:
            fts = _internals.keyword_list(idx, text, 100)
            sql = self.bm25(text, 100)
            same_ids += [r[0] for r in fts] == [r[0] for r in sql]
            ours = {r[0]: r[1] for r in sql}
            for chunk, score, _ in fts:
                if chunk in ours:
                    compared += 1
                    worst = max(worst, abs(ours[chunk] - score) / max(abs(score), 1e-12))
        return {
            "queries": len(texts),
            "identical_top100_ids": same_ids,
            "chunk_scores_compared": compared,
            "max_relative_score_difference": float(f"{worst:.3g}")
            if not math.isnan(worst)
            else None,
        }

    def sizes(self) -> dict[str, float]:
        names = {
            "chunks (heap+toast, all collections)": "pg_table_size('chunks')",
            "postings heap (all)": "pg_table_size('postings')",
            "postings covering pkey (all)": "pg_relation_size('postings_pkey')",
            "postings_by_chunk (all)": "pg_relation_size('postings_by_chunk')",
            "term_stats + pkey (all)": "pg_total_relation_size('term_stats')",
            "term_arrays + pkey (mdn)": "pg_total_relation_size('term_arrays')",
            "chunk_tsv heap+toast (mdn)": "pg_table_size('chunk_tsv')",
            "chunk_tsv GIN (mdn)": "pg_relation_size('chunk_tsv_gin')",
            f"{hnsw_index_name(self.cid)} (mdn)": f"pg_relation_size('{hnsw_index_name(self.cid)}')",
        }
        out = {}
        for label, expr in names.items():
            value = self.conn.execute(f"SELECT {expr}").fetchone()[0]
            out[label] = round(value / 1e6, 1)
        return out

    def explain(self, text: str) -> str:
        query = prepare_query(text, self.tokenizer, drop=self._drop(self.settings.max_term_share))
        assert query is not None
        params = bm25_params(
            query, collection=self.cid, weights=self.settings.column_weights, limit=100
        )
        rows = self.conn.execute("EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) " + bm25_sql(query), params)
        return "\n".join(r[0] for r in rows)
