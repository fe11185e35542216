"""The learned rerank of the fused head: the first notes of the convex fusion, reordered
by a linear model over cheap features (core/rerank_features.py).

Everything the features need is at hand in the search (each list's head, its chunk counts, the
fusion's normalised scores) or one indexed read away: the query words' document counts
(`Storage.query_term_counts`, fts5vocab) and the candidates' stored token sets, chunk counts and
sizes (`Storage.note_terms`, written at index time, schema m007). The model is a JSON file in the
package (`rerank-linear.json`, trained by bench/rerank_train.py on the development sets only).
Measured cost and gains: docs/ranking.md, "The learned rerank".
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...core.rerank_features import candidate_features, term_weights
from ...core.rerank_model import LinearModel
from .note_lists import tied_ranks, untied_head

if TYPE_CHECKING:
    from ...storage.protocol import Storage
    from .note_lists import NoteList

__all__ = ["MODEL_FILE", "Reranker", "bundled_model"]

MODEL_FILE = Path(__file__).with_name("rerank-linear.json")
_bundled: LinearModel | None = None

# (file id, fused score, explanation), best first: what Searcher._fuse returns.
Fused = list[tuple[int, float, Any]]


def bundled_model() -> LinearModel:
    """The model shipped in the package, read once per process."""
    global _bundled
    if _bundled is None:
        _bundled = LinearModel.from_json(json.loads(MODEL_FILE.read_text(encoding="utf-8")))
    return _bundled


def _counts(
    chunks: Sequence[tuple[int, float]], file_of: dict[int, int], cut: float | None
) -> dict[int, int]:
    """Chunks per note among `chunks`, leaving out those scored `cut` (the last score of a full
    head) or lower: which of several equal scores fall inside the head is decided by chunk ids."""
    out: dict[int, int] = {}
    for cid, score in chunks:
        if cut is not None and score <= cut:
            continue
        fid = file_of.get(cid)
        if fid is not None:
            out[fid] = out.get(fid, 0) + 1
    return out


class Reranker:
    """Reorders the first `depth` notes of a fused list; keeps nothing between queries but the
    chunk total (per data version) and, for the training script, the last feature rows."""

    def __init__(self, store: Storage, model: LinearModel | None = None) -> None:
        self._store = store
        self._model = model
        self._total: tuple[Hashable, int] | None = None
        self.capture = False  # bench/rerank_train.py: keep the rows of every query in `last`
        self.last: tuple[list[int], list[list[float]]] | None = None

    @property
    def model(self) -> LinearModel:
        if self._model is None:
            self._model = bundled_model()
        return self._model

    def chunk_total(self) -> int:
        """Chunks in the index (read once per data version)."""
        return self._chunk_total()

    def _chunk_total(self) -> int:
        version = self._store.data_version()
        if self._total is None or self._total[0] != version:
            self._total = (version, self._store.chunk_count())
        return self._total[1]

    def features(
        self,
        query: str,
        head: Fused,
        lists: tuple[NoteList, NoteList],
        chunks: tuple[Sequence[tuple[int, float]], Sequence[tuple[int, float]]],
        file_of: dict[int, int],
        exact: set[int],
        cuts: tuple[float | None, float | None] = (None, None),
        head_size: int = 30,
        counts: Sequence[tuple[tuple[str, ...], int]] = (),
        chunk_total: int | None = None,
    ) -> list[list[float]]:
        """One feature row per note of `head`, in order; `counts` are the query's content words'
        index forms and chunk counts (`Storage.query_term_counts`); `chunk_total` the index's
        chunks when the caller has read them (`chunk_total()`)."""
        forms = [f for f, _ in counts]
        total = self._chunk_total() if chunk_total is None else chunk_total
        weights = term_weights([c for _, c in counts], total)
        kw, vec = (untied_head(x.scores, head_size) for x in lists)
        kw_rank, vec_rank = tied_ranks(kw), tied_ranks(vec)
        fused_rank = tied_ranks([(fid, score) for fid, score, _ in head])
        cosine = dict(vec)
        kw_n, vec_n = _counts(chunks[0], file_of, cuts[0]), _counts(chunks[1], file_of, cuts[1])
        notes = self._store.note_terms([fid for fid, _, _ in head])
        empty: frozenset[str] = frozenset()
        rows = []
        for fid, score, why in head:
            b = why.bm25_normalised if why is not None else None
            v = why.vector_normalised if why is not None else None
            facts = (
                fused_rank[fid],
                score,
                kw_rank.get(fid),
                b or 0.0,
                vec_rank.get(fid),
                cosine.get(fid),
                v or 0.0,
                kw_n.get(fid, 0),
                vec_n.get(fid, 0),
                fid in exact,
            )
            note = notes.get(fid) or (empty, empty, empty, 0, 0)
            rows.append(candidate_features(forms, weights, facts, note))
        return rows

    def rerank(
        self,
        query: str,
        fused: Fused,
        depth: int,
        lists: tuple[NoteList, NoteList],
        chunks: tuple[Sequence[tuple[int, float]], Sequence[tuple[int, float]]],
        file_of: dict[int, int],
        exact: set[int],
        *,
        cuts: tuple[float | None, float | None] = (None, None),
        head_size: int = 30,
        apply: bool = True,
        counts: Sequence[tuple[tuple[str, ...], int]] = (),
        chunk_total: int | None = None,
    ) -> Fused:
        """`fused` with its first `depth` notes in the model's order (ties keep fused order; not
        `apply`: in fused order), each explanation carrying the model's output (`rerank`) for the
        calibration."""
        head = fused[:depth]
        if not head:
            return fused
        rows = self.features(
            query, head, lists, chunks, file_of, exact, cuts, head_size, counts, chunk_total
        )
        if self.capture:
            self.last = ([fid for fid, _, _ in head], rows)
        model = self.model
        scores = [model.score(row) for row in rows]
        order = (
            sorted(range(len(head)), key=lambda i: (-scores[i], i)) if apply else range(len(head))
        )
        out = [
            (head[i][0], head[i][1], replace(head[i][2], rerank=scores[i], reranked=apply))
            for i in order
        ]
        return out + fused[depth:]
