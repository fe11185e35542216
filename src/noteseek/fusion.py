"""Reciprocal Rank Fusion. Pure: ranked lists in, fused scores out."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = ["DEFAULT_RRF_K", "FusedItem", "reciprocal_rank_fusion"]

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
