from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from noteseek.core.fusion import reciprocal_rank_fusion


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


def test_convex_fusion_normalises_each_list_and_weights_them() -> None:
    from noteseek.core.fusion import convex_fusion

    fused = convex_fusion(
        [[("a", 10.0), ("b", 5.0), ("c", 0.0)], [("c", 0.9), ("a", 0.5)]], weights=(0.7, 0.3)
    )
    scores = {f.key: f.score for f in fused}
    assert scores["a"] == pytest.approx(0.7 * 1.0 + 0.3 * 0.0)
    assert scores["b"] == pytest.approx(0.7 * 0.5)
    assert scores["c"] == pytest.approx(0.7 * 0.0 + 0.3 * 1.0)
    assert [f.key for f in fused] == ["a", "b", "c"]
    assert {f.key: f.ranks for f in fused}["c"] == (3, 1)


def test_convex_fusion_keeps_a_clear_keyword_winner_first() -> None:
    """RRF lets a weak second list outvote a far-ahead BM25 hit; score fusion does not."""
    from noteseek.core.fusion import convex_fusion

    keyword = [("exact", 30.0), ("x", 5.0), ("y", 4.9)]
    vector = [("x", 0.61), ("y", 0.60), ("noise", 0.59)]  # the weak list misses it
    assert convex_fusion([keyword, vector], weights=(0.7, 0.3))[0].key == "exact"
    rrf = reciprocal_rank_fusion([[k for k, _ in keyword], [k for k, _ in vector]])
    assert rrf[0].key != "exact"


def test_convex_fusion_handles_empty_and_constant_lists() -> None:
    from noteseek.core.fusion import convex_fusion

    assert convex_fusion([[], []], weights=(0.5, 0.5)) == []
    only = convex_fusion([[("a", 2.0), ("b", 2.0)], []], weights=(0.7, 0.3))
    assert [f.score for f in only] == [pytest.approx(0.7), pytest.approx(0.7)]
    with pytest.raises(ValueError):
        convex_fusion([[("a", 1.0)]], weights=(0.5, 0.5))


def test_convex_heads_make_the_first_items_independent_of_list_length() -> None:
    from noteseek.core.fusion import convex_fusion

    a = [(f"a{i}", 10.0 - i) for i in range(40)]
    b = [(f"a{i}" if i % 3 else f"b{i}", 5.0 - i / 10) for i in range(40)]
    short = convex_fusion([a[:20], b[:15]], weights=(0.7, 0.3))
    long = convex_fusion([a, b], weights=(0.7, 0.3), heads=(20, 15))
    assert [x.key for x in long[: len(short)]] == [x.key for x in short]
    assert [x.score for x in long[: len(short)]] == [x.score for x in short]
    assert {x.key for x in long} == {k for k, _ in a} | {k for k, _ in b}
    with pytest.raises(ValueError):
        convex_fusion([a, b], weights=(0.7, 0.3), heads=(3,))


def test_rrf_heads_make_the_first_items_independent_of_list_length() -> None:
    a = [f"n{i}" for i in range(50)]
    b = [f"n{(i * 7) % 50}" for i in range(50)]
    short = reciprocal_rank_fusion([a[:10], b[:12]])
    long = reciprocal_rank_fusion([a, b], heads=(10, 12))
    assert [x.key for x in long[: len(short)]] == [x.key for x in short]
    assert len(long) == 50
