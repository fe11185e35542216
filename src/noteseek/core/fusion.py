"""Fusion of ranked lists: reciprocal rank fusion and convex score fusion. Pure."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = ["DEFAULT_RRF_K", "FusedItem", "ScoredItem", "convex_fusion", "reciprocal_rank_fusion"]

DEFAULT_RRF_K = 60
K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True)
class FusedItem(Generic[K]):
    """An item, its fused score, and its 1-based rank in each input list (None if absent)."""

    key: K
    score: float
    ranks: tuple[int | None, ...]


def _order(ranks: Sequence[int | None], heads: Sequence[int] | None) -> tuple[bool, int, int]:
    """Tie-break: items within some list's head first, then by their best position."""
    return min(
        (heads is not None and rank > heads[list_no], rank, list_no)
        for list_no, rank in enumerate(ranks)
        if rank is not None
    )


def _check_heads(lists: Sequence[object], heads: Sequence[int] | None) -> None:
    if heads is not None and len(heads) != len(lists):
        raise ValueError(f"{len(lists)} lists but {len(heads)} heads")


def reciprocal_rank_fusion(
    lists: Sequence[Sequence[K]],
    *,
    weights: Sequence[float] | None = None,
    k: float = DEFAULT_RRF_K,
    heads: Sequence[int] | None = None,
) -> list[FusedItem[K]]:
    """score(d) = Σ weight_i / (k + rank_i(d)), best first; ties by best position.

    `heads`: per list, only ranks up to this count score; deeper items score 0 in that list. The
    first items of the result are then the same however far the lists go on (see search.py).
    """
    _check_heads(lists, heads)
    if weights is None:
        weights = [1.0] * len(lists)
    if len(weights) != len(lists):
        raise ValueError(f"{len(lists)} lists but {len(weights)} weights")
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    scores: dict[K, float] = {}
    ranks: dict[K, list[int | None]] = {}
    for list_no, (items, weight) in enumerate(zip(lists, weights)):
        for position, key in enumerate(items, start=1):
            if key in ranks and ranks[key][list_no] is not None:
                continue  # a duplicate within one list counts once, at its best rank
            if key not in ranks:
                ranks[key] = [None] * len(lists)
                scores[key] = 0.0
            ranks[key][list_no] = position
            if heads is None or position <= heads[list_no]:
                scores[key] += weight / (k + position)
    fused = sorted(scores, key=lambda key: (-scores[key], _order(ranks[key], heads)))
    return [FusedItem(key, scores[key], tuple(ranks[key])) for key in fused]


@dataclass(frozen=True)
class ScoredItem(Generic[K]):
    """An item's fused score, its min-max normalised score in each list (0 when absent) and ranks."""

    key: K
    score: float
    normalised: tuple[float, ...]
    ranks: tuple[int | None, ...]


def convex_fusion(
    lists: Sequence[Sequence[tuple[K, float]]],
    *,
    weights: Sequence[float],
    heads: Sequence[int] | None = None,
) -> list[ScoredItem[K]]:
    """score(d) = Σ weight_i · minmax_i(score_i(d)), best first; absent from a list counts 0.

    Unlike RRF, this keeps how far apart the scores are: a BM25 hit far ahead of the rest stays
    ahead even when the vector list ranks it low. Each list is (item, score) with higher = better.
    `heads`: per list, only its first items set its min-max scale, and deeper items (scoring
    below that minimum) count 0, as if absent; the first items of the result are then the same
    however far the lists go on (see search.py).
    """
    _check_heads(lists, heads)
    if len(weights) != len(lists):
        raise ValueError(f"{len(lists)} lists but {len(weights)} weights")
    normalised: dict[K, list[float]] = {}
    ranks: dict[K, list[int | None]] = {}
    for list_no, items in enumerate(lists):
        if not items:
            continue
        head = len(items) if heads is None else heads[list_no]
        values = [score for _, score in items[:head]] or [score for _, score in items]
        low, high = min(values), max(values)
        span = high - low
        for position, (key, score) in enumerate(items, start=1):
            if key not in normalised:
                normalised[key] = [0.0] * len(lists)
                ranks[key] = [None] * len(lists)
            if ranks[key][list_no] is not None:
                continue
            ranks[key][list_no] = position
            if position <= head:
                normalised[key][list_no] = (score - low) / span if span > 0 else 1.0
    scores = {key: sum(w * v for w, v in zip(weights, vals)) for key, vals in normalised.items()}
    fused = sorted(scores, key=lambda key: (-scores[key], _order(ranks[key], heads)))
    return [ScoredItem(k, scores[k], tuple(normalised[k]), tuple(ranks[k])) for k in fused]
