"""Notes like a given note: the cosine of its chunks' centroid to every other note's best chunk,
plus what the vault's own structure says (a link between the two, shared link targets, shared
tags). Never the note itself.

The cosine is search's: the note's chunk vectors averaged, quantised like a query and scored by
the same int8 SIMD pass. The score is `cosine + LINK_BONUS·linked + TARGETS_BONUS·J(targets) + TAGS_BONUS·J(tags)` (J:
Jaccard overlap). The vectors are the ones search holds in memory; the link graph, the tags and
each chunk's row position are kept per index state (`Storage.data_version`), so a warm call is one
matrix-vector product and a few lookups (bench/related_latency.py).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from ..embedding.quantize import dequantize, quantize_query
from ..errors import ModelLoadError
from .links import LinkCache, LinkGraph
from .search.hits import Hit

if TYPE_CHECKING:
    from ..embedding.embedder import Embedder
    from ..storage.protocol import Storage
    from .search.vectors import VectorIndex

__all__ = ["LINK_BONUS", "TAGS_BONUS", "TARGETS_BONUS", "RelatedNotes"]

# What the graph adds to a cosine (0..1). Small: two notes about the same thing that never link
# still rank by meaning; among similar ones, a link or shared tags decide.
LINK_BONUS = 0.10
TARGETS_BONUS = 0.05
TAGS_BONUS = 0.05
_MAX_EMBEDDED = 64  # chunks of the note embedded again where the vectors stay on the server
_HEAD = 200  # best chunks looked at, at least (a note's neighbours by meaning are among them)


def _jaccard(a: set[str] | frozenset[str], b: set[str] | frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


class _State:
    """What a call needs, for one index state."""

    def __init__(self, store: Storage, vectors: VectorIndex, graph: LinkGraph) -> None:
        self.store = store
        self.graph = graph
        self.tags = {f: frozenset(t) for f, t in store.note_tags().items()}
        self.matrix = vectors.prepare()
        self.rows: npt.NDArray[np.int8] | None = None
        self.position: dict[int, int] = {}
        if self.matrix is not None and len(self.matrix.ids):
            m = self.matrix
            self.rows = np.frombuffer(m.rows, dtype=np.int8).reshape(len(m.ids), m.dim)
            self.position = {int(cid): i for i, cid in enumerate(m.ids)}
        # chunk -> note and note -> chunks of every vector, read once per state rather than by
        # two queries per call.
        self.file_of: dict[int, int] = store.file_ids(list(self.position)) if self.position else {}
        self.chunks_of: dict[int, list[int]] = {}
        for chunk, owner in sorted(self.file_of.items()):
            self.chunks_of.setdefault(owner, []).append(chunk)
        self.targets: dict[int, frozenset[str]] = {}

    def link_targets(self, file_ids: list[int]) -> dict[int, frozenset[str]]:
        """file id -> the link keys it links to (cached; one query for the missing ones)."""
        missing = [f for f in file_ids if f not in self.targets]
        if missing:
            found = self.store.links_of_files(missing)
            for f in missing:
                self.targets[f] = frozenset(k.key for k in found.get(f, ()))
        return {f: self.targets[f] for f in file_ids}

    def unit_rows(self, chunk_ids: Iterable[int]) -> tuple[list[int], npt.NDArray[np.float32]]:
        """(chunk ids that have a vector, their unit float32 rows)."""
        kept = [c for c in chunk_ids if c in self.position]
        if self.rows is None or not kept:
            return [], np.zeros((0, 1), dtype=np.float32)
        return kept, dequantize(self.rows[[self.position[c] for c in kept]])


class RelatedNotes:
    """`Index.related`: the notes most like one note, best first."""

    def __init__(
        self, store: Storage, vectors: VectorIndex, links: LinkCache, embedder: Embedder | None
    ) -> None:
        self._store = store
        self._embedder = embedder
        self._vectors = vectors
        self._links = links
        self._state: _State | None = None
        self._version: Hashable = None

    def _current(self) -> _State:
        version = self._store.data_version()
        if self._state is None or version != self._version:
            self._state = _State(self._store, self._vectors, self._links.get())
            self._version = version
        return self._state

    def related(self, note: str, *, limit: int) -> list[Hit]:
        """The `limit` notes most like `note` (a path or a note's name), each with its chunk
        closest to the note; NoteNotIndexedError when the index does not hold it."""
        with self._store.snapshot():
            state = self._current()
            graph = state.graph
            path = graph.find(note)
            file_id = graph.ids[path]
            outs, ins = graph.neighbours(path)
            linked = {graph.ids[p] for p in outs | ins if p in graph.ids}
            cosines, best_chunk = self._by_meaning(
                state, path, file_id, linked, max(_HEAD, 20 * limit)
            )
            candidates = (set(cosines) | linked) - {file_id}
            own_tags = state.tags.get(file_id, frozenset())
            scored: list[tuple[float, int]] = []
            for other in candidates:
                if other not in graph.paths:
                    continue
                score = cosines.get(other, 0.0)
                score += LINK_BONUS if other in linked else 0.0
                score += TAGS_BONUS * _jaccard(own_tags, state.tags.get(other, frozenset()))
                scored.append((score, other))
            scored.sort(key=lambda item: (-item[0], graph.paths[item[1]]))
            # Shared link targets move a note by at most TARGETS_BONUS: only the notes within
            # that of the limit-th can change places, so only they are looked up.
            cut = scored[min(limit, len(scored)) - 1][0] - TARGETS_BONUS if scored else 0.0
            head = [item for item in scored if item[0] >= cut][: 3 * limit + 20]
            targets = state.link_targets([file_id, *(f for _, f in head)])
            own_targets = targets[file_id]
            rescored = [
                (score + TARGETS_BONUS * _jaccard(own_targets, targets[f]), f) for score, f in head
            ]
            rescored.sort(key=lambda item: (-item[0], graph.paths[item[1]]))
            top = rescored[:limit]
            firsts = {f: best_chunk.get(f) or self._store.first_chunk(f) for _, f in top}
            rows = self._store.chunk_rows([c for c in firsts.values() if c is not None])
            hits = []
            for rank, (score, other) in enumerate(top, start=1):
                chunk = firsts[other]
                row = rows.get(chunk) if chunk is not None else None
                if row is None:
                    continue
                hits.append(
                    Hit(
                        path=row.path,
                        section=row.section,
                        heading_context=row.heading_context,
                        text=row.text,
                        score=round(score, 6),
                        bm25_rank=None,
                        vec_rank=rank if other in cosines else None,
                        bm25_score=None,
                        cosine=round(cosines[other], 6) if other in cosines else None,
                        chunk_id=row.id,
                        page=row.page,
                        page_label=row.page_label,
                        slide=row.slide,
                        sheet=row.sheet,
                        rows=(row.row_first, row.row_last)
                        if row.row_first is not None and row.row_last is not None
                        else None,
                    )
                )
            return hits

    def _own_rows(self, state: _State, path: str, file_id: int) -> npt.NDArray[np.float32]:
        """The note's unit chunk vectors: from the vectors in memory, else (a backend whose
        vectors stay on the server) its chunks embedded again by the index's model."""
        _, own = state.unit_rows(state.chunks_of.get(file_id, []))
        if len(own) or state.rows is not None or self._embedder is None:
            return own
        if not self._store.vectors_available or not self._store.has_vector_table():
            return own
        texts = self._store.chunk_texts(path)[:_MAX_EMBEDDED]
        try:
            return self._embedder.embed(texts) if texts else own
        except ModelLoadError:
            return own

    def _by_meaning(
        self, state: _State, path: str, file_id: int, linked: set[int], head: int
    ) -> tuple[dict[int, float], dict[int, int]]:
        """(file id -> best chunk cosine to the note's centroid, file id -> that chunk's id) of
        the notes among the best chunks and of the `linked` ones; empty without vectors."""
        own = self._own_rows(state, path, file_id)
        if not len(own):
            return {}, {}
        centroid = own.mean(axis=0)
        norm = float(np.linalg.norm(centroid))
        query = quantize_query((centroid / norm).tolist()) if norm > 0 else None
        if query is None:
            return {}, {}
        # The SIMD int8 pass search uses (~1 ms per 60k rows), not a float matrix product.
        matches = self._vectors.search(query, head + len(own))
        files = state.file_of or self._store.file_ids([m.chunk_id for m in matches])
        cosines: dict[int, float] = {}
        chunks: dict[int, int] = {}
        for m in matches:
            other = files.get(m.chunk_id)
            if other is None or other == file_id or other in cosines:
                continue
            cosines[other] = float(m.cosine)
            chunks[other] = m.chunk_id
        rest = sorted(linked - set(cosines) - {file_id})[:head]
        if rest:
            ids, rows = state.unit_rows(c for f in rest for c in state.chunks_of.get(f, []))
            if ids:
                near = rows @ (centroid / norm)
                owner = state.file_of
                for chunk, value in zip(ids, near.tolist()):
                    other = owner.get(chunk)
                    if other is not None and value > cosines.get(other, -2.0):
                        cosines[other] = float(value)
                        chunks[other] = chunk
        return cosines, chunks
