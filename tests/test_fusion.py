from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from noteseek.fusion import reciprocal_rank_fusion


def test_rrf_scores_follow_the_formula() -> None:
    fused = reciprocal_rank_fusion([["a", "b", "c"], ["c", "a"]], k=60)
    scores = {f.key: f.score for f in fused}
    assert scores["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert scores["c"] == pytest.approx(1 / 63 + 1 / 61)
    assert scores["b"] == pytest.approx(1 / 62)
    assert [f.key for f in fused] == ["a", "c", "b"]
    assert {f.key: f.ranks for f in fused} == {"a": (1, 2), "b": (2, None), "c": (3, 1)}


def test_weights_shift_the_order() -> None:
    lists = [["kw"], ["vec"]]
    assert reciprocal_rank_fusion(lists, weights=[2.0, 1.0])[0].key == "kw"
    assert reciprocal_rank_fusion(lists, weights=[1.0, 2.0])[0].key == "vec"


def test_ties_keep_a_stable_order() -> None:
    fused = reciprocal_rank_fusion([["x", "y"], ["y", "x"]])
    assert [f.key for f in fused] == ["x", "y"]  # equal scores: first seen at the better rank


def test_duplicates_in_one_list_count_once() -> None:
    fused = reciprocal_rank_fusion([["a", "a", "b"]])
    assert fused[0].score == pytest.approx(1 / 61)
    assert fused[1].ranks == (3,)


def test_bad_arguments_are_rejected() -> None:
    with pytest.raises(ValueError, match="weights"):
        reciprocal_rank_fusion([["a"]], weights=[1.0, 2.0])
    with pytest.raises(ValueError, match="k must"):
        reciprocal_rank_fusion([["a"]], k=-1)


@given(st.lists(st.lists(st.integers(0, 30), max_size=15), min_size=1, max_size=4))
def test_every_item_appears_once_and_scores_descend(lists: list[list[int]]) -> None:
    fused = reciprocal_rank_fusion(lists)
    keys = [f.key for f in fused]
    assert sorted(keys) == sorted({x for items in lists for x in items})
    assert all(a.score >= b.score for a, b in itertools.pairwise(fused))
