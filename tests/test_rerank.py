"""The learned rerank of the fused head: pure features, the shipped model, the engine's use."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

import noteseek
from noteseek import SearchSettings
from noteseek.core.rerank_features import FEATURE_NAMES, candidate_features, term_weights
from noteseek.core.rerank_model import LinearModel
from noteseek.engine.search.rerank import MODEL_FILE, bundled_model
from tests.conftest import WriteNotes, note

EMPTY: frozenset[str] = frozenset()


def test_the_model_ships_as_package_data_and_names_every_feature() -> None:
    assert MODEL_FILE.is_file() and MODEL_FILE.stat().st_size < 4096
    doc = json.loads(MODEL_FILE.read_text(encoding="utf-8"))
    assert tuple(doc["features"]) == FEATURE_NAMES
    model = bundled_model()
    assert model.features == FEATURE_NAMES
    row = [0.5] * len(FEATURE_NAMES)
    assert model.score(row) == pytest.approx(doc["bias"] + 0.5 * sum(doc["weights"]))


def test_linear_model_round_trips_and_refuses_a_mismatch() -> None:
    model = LinearModel(("a", "b"), (2.0, -1.0), 0.5)
    assert model.score([1.0, 3.0]) == pytest.approx(-0.5)
    again = LinearModel.from_json(model.to_json())
    assert again.weights == model.weights and again.bias == model.bias
    with pytest.raises(ValueError):
        LinearModel(("a",), (1.0, 2.0), 0.0)


def test_features_cover_title_tags_headings_by_idf() -> None:
    forms = [("tag",), ("link",)]
    weights = term_weights([1, 9], 10)  # 'tag' is rare, 'link' common
    assert weights[0] > weights[1] > 0
    lists = (2, 0.8, 1, 1.0, None, None, 0.0, 3, 0, True)
    title = frozenset({"tag", "and", "link"})
    row = candidate_features(forms, weights, lists, (title, frozenset({"link"}), EMPTY, 4, 1000))
    f = dict(zip(FEATURE_NAMES, row))
    assert len(row) == len(FEATURE_NAMES)
    assert f["fused_rrank"] == 0.5 and f["bm25_rrank"] == 1.0 and f["vec_present"] == 0.0
    assert f["cov_title"] == pytest.approx(1.0)
    assert f["cov_tags"] == pytest.approx(weights[1] / sum(weights))
    assert f["cov_headings"] == 0.0 and f["exact_name"] == 1.0 and f["title_equal_terms"] == 1.0
    assert f["bm25_chunks"] == pytest.approx(math.log1p(3)) and f["log_note_bytes"] == pytest.approx(math.log1p(1000))


def _vault(make_vault: WriteNotes) -> Path:
    notes = {
        f"n{i}.md": note(f"Topic {i}", ("Body", f"widget gadget number {i} " + "filler " * i))
        for i in range(12)
    }
    notes["tags.md"] = note("Widget gadget", ("Overview", "All about the widget gadget."), tags="widget")
    return make_vault(notes)


def test_engine_reranks_only_the_head_and_stays_limit_independent(
    make_vault: WriteNotes, tmp_path: Path, fake_embedder
) -> None:  # type: ignore[no-untyped-def]
    vault = _vault(make_vault)
    db = tmp_path / "i.db"
    with noteseek.Index(db, embedder=fake_embedder) as idx:
        idx.update(vault)
        assert idx._store.note_terms([1])  # token sets stored at index time
        on = [h.path for h in idx.search("widget gadget", limit=5)]
        assert on == [h.path for h in idx.search("widget gadget", limit=40)][:5]
        reranker = idx._searcher.reranker
        reranker.capture = True
        idx.search("widget gadget", limit=5)
        assert reranker.last is not None
        head, rows = reranker.last
        assert len(head) == len(rows) and all(len(r) == len(FEATURE_NAMES) for r in rows)
    with noteseek.Index(db, embedder=fake_embedder, settings=SearchSettings(rerank=False)) as idx:
        off = [h.path for h in idx.search("widget gadget", limit=40)]
    assert set(on) <= set(off[:30])


def test_rerank_never_moves_an_exact_name_down(make_vault: WriteNotes, tmp_path: Path, fake_embedder) -> None:  # type: ignore[no-untyped-def]
    vault = _vault(make_vault)
    with noteseek.Index(tmp_path / "i.db", embedder=fake_embedder) as idx:
        idx.update(vault)
        hits = idx.search("Widget gadget", explain=True)
        assert hits[0].path == "tags.md"
        assert hits[0].explanation is not None and hits[0].explanation.exact_name
