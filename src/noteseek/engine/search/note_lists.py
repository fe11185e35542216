"""Each list grouped by note, its min-max normalisation, and the section shown per note."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ...core.markup import readable

__all__ = [
    "NoteList",
    "SectionMatches",
    "best_chunks",
    "group",
    "normalise",
    "own_match",
    "pick_section",
    "tied_ranks",
    "untied_head",
]


@dataclass
class NoteList:
    """A ranked list grouped by note: best score per note and the chunk that earned it."""

    scores: list[tuple[int, float]]  # (file id, best chunk score), best first
    best_chunk: dict[int, int]  # file id -> chunk id

    @property
    def rank(self) -> dict[int, int]:
        return {fid: i for i, (fid, _) in enumerate(self.scores, start=1)}

    @property
    def tied_rank(self) -> dict[int, int]:
        """1-based ranks where equal scores share the best one: which of several equal scores
        comes first is up to ids and list depth, and must not change a calibrated score."""
        ranks: dict[int, int] = {}
        previous: float | None = None
        rank = 0
        for position, (fid, score) in enumerate(self.scores, start=1):
            if score != previous:
                rank, previous = position, score
            ranks.setdefault(fid, rank)
        return ranks


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
    per_note: int = 1,
) -> dict[int, list[tuple[float, int]]]:
    """The sections that may be shown for each note: its chunks with the best convex score over
    both lists, best first ((score, chunk id), at most `per_note`).

    Chosen per chunk, not per note: every chunk of a note carries the same title field, so the
    note-level BM25 winner is often a short chunk rather than the section that answers the query.
    Only the first `head` chunks of each list count, so the choice does not depend on `limit`.
    """
    kw, vec = normalise(keyword, head), normalise(semantic, head)
    in_head = {cid for cid, _ in keyword[:head]} | {cid for cid, _ in semantic[:head]}
    found: dict[int, list[tuple[float, int]]] = {}
    deep: dict[int, list[tuple[float, int]]] = {}
    for cid in {*kw, *vec}:
        fid = file_of.get(cid)
        if fid is None:
            continue
        value = share * kw.get(cid, 0.0) + (1 - share) * vec.get(cid, 0.0)
        (found if cid in in_head else deep).setdefault(fid, []).append((value, cid))
    # A note with a chunk in a head is shown by its head chunks only: the deeper ones (all 0)
    # would enter its candidates as `limit` reads the lists further, and change the section.
    for fid, items in deep.items():
        found.setdefault(fid, items)
    return {
        fid: sorted(items, key=lambda x: (-x[0], x[1]))[:per_note] for fid, items in found.items()
    }


# What a section's own text must match to count as answering the query: a shown word's first
# letters (a cheap stem: "repetition" matches "repetitions", "spaced" matches "space").
_STEM = 5


def own_match(words: list[str], section: str, text: str) -> float:
    """Share of the query's words found in a section's own heading and text (not in the note's
    title field, which every section of the note shares for BM25)."""
    if not words:
        return 0.0
    # Link targets are not the section's words: a footer's URL names the note it sits in.
    body = readable(f"{section}\n{text}").lower()
    return sum(1 for w in words if w[:_STEM] in body) / len(words)


class SectionMatches:
    """`own_match` of one query's words per chunk id, each computed once: a shown note's
    candidates are compared (`pick_section`) and the chosen one is checked again."""

    __slots__ = ("_done", "_texts", "_words")

    def __init__(self, words: list[str], texts: dict[int, tuple[str, str]]) -> None:
        self._words, self._texts = words, texts
        self._done: dict[int, float] = {}

    def __call__(self, chunk_id: int) -> float:
        share = self._done.get(chunk_id)
        if share is None:
            share = own_match(self._words, *self._texts.get(chunk_id, ("", "")))
            self._done[chunk_id] = share
        return share


def pick_section(candidates: list[tuple[float, int]], match: SectionMatches) -> int:
    """The candidate to show: the fused chunk score plus half the share of query words in its own
    text, so a boilerplate section that BM25 found only through the title field (the hub's "This
    note in GitHub" footer on every note) loses to one that says something about the query."""
    best = max(candidates, key=lambda c: (c[0] + 0.5 * match(c[1]), -c[1]))
    return best[1]


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


def tied_ranks(scores: Sequence[tuple[int, float]]) -> dict[int, int]:
    """1-based ranks where equal scores share the best rank: ties are broken by ids in the lists,
    and an id must not change a feature (a rebuilt index numbers its notes differently)."""
    ranks: dict[int, int] = {}
    previous: float | None = None
    rank = 0
    for position, (key, score) in enumerate(scores, start=1):
        if score != previous:
            rank, previous = position, score
        ranks.setdefault(key, rank)
    return ranks


def untied_head(scores: list[tuple[int, float]], size: int) -> list[tuple[int, float]]:
    """A list's head without the notes tied with its last one when it is full: which of several
    equal scores made the head is up to ids (their normalised score is 0, so fusion ignores them
    too)."""
    if len(scores) < size or not scores:
        return scores
    last = scores[-1][1]
    return [(fid, score) for fid, score in scores if score > last]
