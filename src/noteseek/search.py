"""Answer a query: BM25 over FTS5, KNN over vectors, fused with Reciprocal Rank Fusion."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Literal, get_args

import apsw

from .budget import fit_to_budget
from .embedder import Embedder
from .errors import ModelLoadError
from .fusion import DEFAULT_RRF_K, reciprocal_rank_fusion
from .query import fts_query
from .store import ChunkRow, Store
from .vectors import VectorIndex

__all__ = ["Hit", "Mode", "SearchSettings", "Searcher"]

log = logging.getLogger("noteseek.search")

Mode = Literal["hybrid", "bm25", "vector"]
MODES: tuple[str, ...] = get_args(Mode)


@dataclass(frozen=True)
class SearchSettings:
    """Ranking parameters; the defaults are the reference design's."""

    candidates: int = 30
    rrf_k: float = DEFAULT_RRF_K
    bm25_weight: float = 1.0
    vector_weight: float = 1.0
    # FTS5 bm25() column weights: chunk text, section heading, heading context.
    column_weights: tuple[float, float, float] = (1.0, 0.5, 0.3)


@dataclass(frozen=True)
class Hit:
    """One matching section of a note."""

    path: str
    section: str
    heading_context: str
    text: str
    score: float
    bm25_rank: int | None
    vec_rank: int | None
    bm25_score: float | None
    cosine: float | None
    chunk_id: int


class Searcher:
    """Runs queries against one Store; keeps the vector matrix warm between queries."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder | None,
        settings: SearchSettings | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.settings = settings or SearchSettings()
        self.vectors = VectorIndex(store)
        self.vector_problem: str | None = None
        if not store.vectors_available:
            self.vector_problem = f"sqlite-vec could not be loaded ({store.vector_error})"
        elif embedder is None:
            self.vector_problem = "no embedding model"
        self._warned = False

    def _degrade(self, why: str) -> None:
        self.vector_problem = why
        if not self._warned:
            log.warning("vector search unavailable, using BM25 only: %s", why)
            self._warned = True

    def bm25(self, query: str, limit: int) -> list[tuple[int, float]]:
        """(chunk id, BM25 score, higher is better) for the best `limit` chunks."""
        match = fts_query(query)
        if match is None or limit <= 0:
            return []
        w = self.settings.column_weights
        try:
            rows = self.store.db.execute(
                "SELECT rowid, bm25(chunks_fts, ?, ?, ?) AS s FROM chunks_fts "
                "WHERE chunks_fts MATCH ? ORDER BY s, rowid LIMIT ?",
                (w[0], w[1], w[2], match, limit),
            )
            return [(int(r[0]), -float(r[1])) for r in rows]
        except apsw.Error as exc:  # defensive: the sanitiser should make this unreachable
            log.warning("keyword search failed for a query, returning no keyword hits: %s", exc)
            return []

    def knn(self, query: str, limit: int) -> list[tuple[int, float]]:
        """(chunk id, cosine) of the nearest `limit` chunks; empty when vectors are unavailable."""
        if self.vector_problem or self.embedder is None or not query.strip():
            if self.vector_problem:
                self._degrade(self.vector_problem)
            return []
        try:
            vector = self.embedder.embed([query])[0]
        except ModelLoadError as exc:
            self._degrade(str(exc))
            return []
        return [(m.chunk_id, m.cosine) for m in self.vectors.search(vector, limit)]

    def search(
        self,
        query: str,
        *,
        limit: int = 10,
        mode: Mode = "hybrid",
        max_tokens: int | None = None,
    ) -> list[Hit]:
        """The best `limit` sections for a query; never raises on the query text."""
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        if not isinstance(query, str):
            raise TypeError("query must be a string")
        depth = max(self.settings.candidates, limit)
        keyword = self.bm25(query, depth) if mode in ("hybrid", "bm25") else []
        semantic = self.knn(query, depth) if mode in ("hybrid", "vector") else []
        if mode == "vector" and self.vector_problem:
            keyword = self.bm25(query, depth)  # degrade to BM25 rather than answer nothing
        fused = reciprocal_rank_fusion(
            [[cid for cid, _ in keyword], [cid for cid, _ in semantic]],
            weights=[self.settings.bm25_weight, self.settings.vector_weight],
            k=self.settings.rrf_k,
        )[:limit]
        bm25_scores = dict(keyword)
        cosines = dict(semantic)
        rows = self.store.chunk_rows([item.key for item in fused])
        hits = [
            _hit(rows[item.key], item.score, item.ranks, bm25_scores, cosines)
            for item in fused
            if item.key in rows
        ]
        return fit_to_budget(hits, max_tokens) if max_tokens is not None else hits


def _hit(
    row: ChunkRow,
    score: float,
    ranks: tuple[int | None, ...],
    bm25_scores: dict[int, float],
    cosines: dict[int, float],
) -> Hit:
    return Hit(
        path=row.path,
        section=row.section,
        heading_context=row.heading_context,
        text=row.text,
        score=score,
        bm25_rank=ranks[0],
        vec_rank=ranks[1],
        bm25_score=bm25_scores.get(row.id),
        cosine=cosines.get(row.id),
        chunk_id=row.id,
    )
