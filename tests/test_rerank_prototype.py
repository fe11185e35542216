"""The reranker prototype's pure parts: feature extraction and the JSON model evaluators."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from noteseek.core.rerank_features import FEATURE_NAMES, Candidate, NoteTokens, QueryTerms, features
from noteseek.core.rerank_model import LinearModel, TreeModel, load_model


def _cand(**changes: object) -> Candidate:
    base = dict(
        fused_rank=2,
        fused_score=0.5,
        bm25_rank=1,
        bm25_norm=1.0,
        vec_rank=None,
        cosine=None,
        vec_norm=0.0,
        bm25_chunks=2,
        vec_chunks=0,
        exact_name=False,
        chunk_count=3,
        note_chars=900,
        indegree=4,
        recency=0.5,
    )
    base.update(changes)
    return Candidate(**base)  # type: ignore[arg-type]


def _query(*terms: str, idf: tuple[float, ...] | None = None) -> QueryTerms:
    return QueryTerms(tuple(frozenset([t]) for t in terms), idf or tuple(1.0 for _ in terms))


def test_feature_vector_has_one_value_per_name() -> None:
    note = NoteTokens(frozenset(), frozenset(), frozenset(), ((),), 0)
    row = features(_query("x"), _cand(), note)
    assert len(row) == len(FEATURE_NAMES)


def test_coverage_weights_terms_by_idf_and_sees_each_field() -> None:
    note = NoteTokens(
        title=frozenset({"tag"}),
        tags=frozenset(),
        headings=frozenset({"link"}),
        chunks=(("differ", "word"), ("tag", "and", "link")),
        best=0,
    )
    f = dict(
        zip(
            FEATURE_NAMES,
            features(_query("tag", "link", "differ", idf=(1.0, 1.0, 8.0)), _cand(), note),
        )
    )
    assert f["cov_title"] == pytest.approx(1.0 / 10.0, abs=1e-3)
    assert f["cov_headings"] == pytest.approx(1.0 / 10.0, abs=1e-3)
    assert f["cov_body"] == pytest.approx(1.0)
    assert f["cov_best"] == pytest.approx(
        0.8, abs=1e-3
    )  # only the rare word is in the shown section
    assert f["all_terms_note"] == 1.0
    assert f["all_terms_chunk"] == 0.0  # no single chunk holds all three


def test_proximity_is_matched_terms_over_the_smallest_window() -> None:
    near = NoteTokens(frozenset(), frozenset(), frozenset(), (("a", "tag", "link", "b"),), 0)
    far = NoteTokens(frozenset(), frozenset(), frozenset(), (("tag",) + ("x",) * 8 + ("link",),), 0)
    q = _query("tag", "link")
    fn = FEATURE_NAMES.index("proximity")
    ph = FEATURE_NAMES.index("phrase")
    assert features(q, _cand(), near)[fn] == pytest.approx(1.0)
    assert features(q, _cand(), far)[fn] == pytest.approx(0.2)
    assert features(q, _cand(), near)[ph] == 1.0
    assert features(q, _cand(), far)[ph] == 0.0


def test_linear_model_scores_a_row() -> None:
    m = LinearModel(features=("a", "b"), weights=(2.0, -1.0), bias=0.5)
    assert m.score([1.0, 3.0]) == pytest.approx(-0.5)


def test_tree_model_follows_lightgbm_dump_format(tmp_path: Path) -> None:
    # Two trees in LightGBM's dump_model() shape: a split on feature 0, and a leaf.
    dump = {
        "feature_names": ["x", "y"],
        "tree_info": [
            {
                "tree_structure": {
                    "split_feature": 0,
                    "threshold": 0.5,
                    "decision_type": "<=",
                    "default_left": True,
                    "left_child": {"leaf_value": -1.0},
                    "right_child": {
                        "split_feature": 1,
                        "threshold": 2.0,
                        "decision_type": "<=",
                        "default_left": False,
                        "left_child": {"leaf_value": 0.25},
                        "right_child": {"leaf_value": 3.0},
                    },
                }
            },
            {"tree_structure": {"leaf_value": 0.5}},
        ],
    }
    path = tmp_path / "m.json"
    path.write_text(json.dumps(dump), encoding="utf-8")
    model = load_model(path)
    assert isinstance(model, TreeModel)
    assert model.score([0.5, 9.0]) == pytest.approx(-0.5)  # <= threshold goes left
    assert model.score([0.6, 2.0]) == pytest.approx(0.75)
    assert model.score([0.6, 2.1]) == pytest.approx(3.5)
    assert model.score([float("nan"), 0.0]) == pytest.approx(-0.5)  # NaN: default_left
    assert model.score([0.6, float("nan")]) == pytest.approx(3.5)  # NaN: default right


def test_tree_model_refuses_splits_it_cannot_evaluate(tmp_path: Path) -> None:
    dump = {
        "tree_info": [
            {
                "tree_structure": {
                    "split_feature": 0,
                    "threshold": "1||2",
                    "decision_type": "==",
                    "left_child": {"leaf_value": 1},
                    "right_child": {"leaf_value": 0},
                }
            }
        ]
    }
    path = tmp_path / "m.json"
    path.write_text(json.dumps(dump), encoding="utf-8")
    with pytest.raises(ValueError, match="unsupported split"):
        load_model(path)
