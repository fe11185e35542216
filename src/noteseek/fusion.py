"""Reciprocal Rank Fusion. Pure: ranked lists in, fused scores out."""

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


def reciprocal_rank_fusion(
    lists: Sequence[Sequence[K]],
    *,
    weights: Sequence[float] | None = None,
    k: float = DEFAULT_RRF_K,
) -> list[FusedItem[K]]:
    """score(d) = Σ weight_i / (k + rank_i(d)), best first; ties keep first-list order."""
    if weights is None:
        weights = [1.0] * len(lists)
    if len(weights) != len(lists):
        raise ValueError(f"{len(lists)} lists but {len(weights)} weights")
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    scores: dict[K, float] = {}
    ranks: dict[K, list[int | None]] = {}
    order: dict[K, tuple[int, int]] = {}
    for list_no, (items, weight) in enumerate(zip(lists, weights)):
        for position, key in enumerate(items, start=1):
            if key in ranks and ranks[key][list_no] is not None:
                continue  # a duplicate within one list counts once, at its best rank
            if key not in ranks:
                ranks[key] = [None] * len(lists)
                scores[key] = 0.0
                order[key] = (position, list_no)
            ranks[key][list_no] = position
            scores[key] += weight / (k + position)
    fused = sorted(scores, key=lambda key: (-scores[key], order[key]))
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
) -> list[ScoredItem[K]]:
    """score(d) = Σ weight_i · minmax_i(score_i(d)), best first; absent from a list counts 0.

    Unlike RRF, this keeps how far apart the scores are: a BM25 hit far ahead of the rest stays
    ahead even when the vector list ranks it low. Each list is (item, score) with higher = better.
    """
    if len(weights) != len(lists):
        raise ValueError(f"{len(lists)} lists but {len(weights)} weights")
    normalised: dict[K, list[float]] = {}
    ranks: dict[K, list[int | None]] = {}
    order: dict[K, tuple[int, int]] = {}
    for list_no, items in enumerate(lists):
        if not items:
            continue
        values = [score for _, score in items]
        low, high = min(values), max(values)
        span = high - low
        for position, (key, score) in enumerate(items, start=1):
            if key not in normalised:
                normalised[key] = [0.0] * len(lists)
                ranks[key] = [None] * len(lists)
                order[key] = (position, list_no)
            if ranks[key][list_no] is not None:
                continue
            normalised[key][list_no] = (score - low) / span if span > 0 else 1.0
            ranks[key][list_no] = position
    scores = {key: sum(w * v for w, v in zip(weights, vals)) for key, vals in normalised.items()}
    fused = sorted(scores, key=lambda key: (-scores[key], order[key]))
    return [ScoredItem(k, scores[k], tuple(normalised[k]), tuple(ranks[k])) for k in fused]
