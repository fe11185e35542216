"""Each list grouped by note, its min-max normalisation, and the section shown per note."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["NoteList", "best_chunks", "group", "normalise"]


@dataclass
class NoteList:
    """A ranked list grouped by note: best score per note and the chunk that earned it."""

    scores: list[tuple[int, float]]  # (file id, best chunk score), best first
    best_chunk: dict[int, int]  # file id -> chunk id

    @property
    def rank(self) -> dict[int, int]:
        return {fid: i for i, (fid, _) in enumerate(self.scores, start=1)}


def normalise(chunks: list[tuple[int, float]], head: int) -> dict[int, float]:
    """Min-max over the first `head` chunks; deeper ones (below that minimum) count 0."""
    if not chunks:
        return {}
    values = [score for _, score in chunks[:head]] or [score for _, score in chunks]
    low, span = min(values), max(values) - min(values)
    return {
        cid: (score - low) / span if span > 0 and position < head else float(position < head)
        for position, (cid, score) in enumerate(chunks)
    }


def best_chunks(
    keyword: list[tuple[int, float]],
    semantic: list[tuple[int, float]],
    file_of: dict[int, int],
    share: float,
    head: int,
) -> dict[int, int]:
    """The section shown for each note: its chunk with the best convex score over both lists.

    Chosen per chunk, not per note: every chunk of a note carries the same title field, so the
    note-level BM25 winner is often a short chunk rather than the section that answers the query.
    Only the first `head` chunks of each list count, so the choice does not depend on `limit`.
    """
    kw, vec = normalise(keyword, head), normalise(semantic, head)
    best: dict[int, tuple[float, int]] = {}
    for cid in {*kw, *vec}:
        fid = file_of.get(cid)
        if fid is None:
            continue
        value = share * kw.get(cid, 0.0) + (1 - share) * vec.get(cid, 0.0)
        if fid not in best or (value, -cid) > (best[fid][0], -best[fid][1]):
            best[fid] = (value, cid)
    return {fid: cid for fid, (_, cid) in best.items()}


def group(chunks: list[tuple[int, float]], file_of: dict[int, int], limit: int) -> NoteList:
    scores: list[tuple[int, float]] = []
    best: dict[int, int] = {}
    for chunk_id, score in chunks:
        fid = file_of.get(chunk_id)
        if fid is None or fid in best:
            continue
        best[fid] = chunk_id
        scores.append((fid, score))
        if len(scores) >= limit:
            break
    return NoteList(scores, best)
