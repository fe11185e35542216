"""Ranking regression test: the golden query set over the sample vault must keep its nDCG@10.

The judged set lives in examples/golden/ (see its README). This indexes the sample vault once with
the real bundled model, runs every query in every mode and checks the scores against floors. The
floors sit about 0.05 below the values measured when the set was written, so a deterministic run
passes with room for float noise across platforms, while a real ranking regression (heading
context no longer indexed, a broken keyword query, fusion weights badly off) drops below them.

When a change *improves* ranking, raise the floors to the new measured values minus ~0.05 and
update the measured figures in the comments. When a change lowers a figure on purpose, say why in
the commit that lowers the floor.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

import noteseek
from noteseek.evaluation import EvalReport, evaluate, load_qrels, load_queries

from .conftest import REPO, SAMPLE_VAULT

GOLDEN = REPO / "examples" / "golden"
QUERIES = GOLDEN / "queries.jsonl"
QRELS = GOLDEN / "qrels.tsv"
MODES = ("bm25", "vector", "hybrid")
CATEGORIES = {"identifier", "natural-language", "german", "cross-lingual", "tag", "title"}

# nDCG@10 floors per mode. First measured 2026-11-29 (40 queries, bundled potion-base-8M):
# bm25 0.816, vector 0.750, hybrid 0.869. Re-measured 2026-11-29 after the ranking change (title and
# tags fields, porter stemming, note-level convex fusion, exact names): bm25 0.861, hybrid 0.882.
MODE_FLOORS = {
    "bm25": 0.81,  # measured 0.861
    "vector": 0.69,  # measured 0.750
    "hybrid": 0.83,  # measured 0.882
}

# Hybrid nDCG@10 floors per category, only for categories with at least 5 queries
# (cross-lingual has 4 and no floor). Measured 2026-11-29 after the ranking change.
CATEGORY_FLOORS = {
    "identifier": 0.91,  # measured 0.961 (8 queries); 0.958 before
    "natural-language": 0.90,  # measured 0.956 (13 queries); 0.969 before
    # Lowered on purpose: 0.916 before the ranking change, 0.842 after. The fusion is not the
    # cause (RRF over the new lists gives the same German figure); the BM25 side with porter
    # stemming and the title field ranks two German notes lower here, while the development sets
    # (Obsidian Help de +0.086, XQuAD de +0.112 nDCG@10) gained. See docs/ranking.md.
    "german": 0.79,  # measured 0.842 (5 queries)
    "tag": 0.89,  # measured 0.942 (5 queries); 0.783 before
    "title": 0.92,  # measured 0.972 (5 queries); 0.924 before
}
MIN_CATEGORY_QUERIES = 5


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> EvalReport:
    """Index a copy of the sample vault (the repo is never written) and evaluate every mode."""
    root = tmp_path_factory.mktemp("golden")
    vault = root / "sample-vault"
    shutil.copytree(SAMPLE_VAULT, vault, symlinks=True)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")  # the bundled model needs no network
        with noteseek.Index(root / "golden.db") as idx:
            idx.update(vault)
            return evaluate(idx, load_queries(QUERIES), load_qrels(QRELS), modes=MODES)


def _summary(report: EvalReport) -> str:
    lines = []
    for mode, result in report.modes.items():
        lines.append(f"{mode}: ndcg@10={result.metrics['ndcg@10']:.3f}")
        for category, scores in result.by_category.items():
            lines.append(f"  {category}: ndcg@10={scores['ndcg@10']:.3f}")
    return "\n".join(lines)


def test_golden_files_are_well_formed() -> None:
    rows = [json.loads(line) for line in QUERIES.read_text(encoding="utf-8").splitlines() if line]
    ids = [row["_id"] for row in rows]
    assert len(ids) == len(set(ids)), "duplicate query ids"
    assert 20 <= len(ids) <= 40
    assert {row["metadata"]["category"] for row in rows} <= CATEGORIES
    header, *lines = QRELS.read_text(encoding="utf-8").splitlines()
    assert header == "query-id\tcorpus-id\tscore"
    judged = Counter()
    for line in lines:
        qid, corpus_id, score = line.split("\t")
        assert qid in ids, f"qrels row for unknown query {qid}"
        assert corpus_id.endswith(".md") and score in {"1", "2"}, line
        judged[qid] += score == "2"
    assert all(judged[qid] >= 1 for qid in ids), "every query needs a note graded 2"
    categories = Counter(row["metadata"]["category"] for row in rows)
    for category in CATEGORY_FLOORS:
        assert categories[category] >= MIN_CATEGORY_QUERIES, category


def test_every_judged_note_exists(report: EvalReport) -> None:
    assert report.unmatched_ids == ()
    assert report.queries == len(load_queries(QUERIES))


@pytest.mark.parametrize("mode", MODES)
def test_mode_ndcg_floor(report: EvalReport, mode: str) -> None:
    ndcg = report.modes[mode].metrics["ndcg@10"]
    assert ndcg >= MODE_FLOORS[mode], f"{mode} nDCG@10 {ndcg:.3f}\n{_summary(report)}"


@pytest.mark.parametrize("category", sorted(CATEGORY_FLOORS))
def test_hybrid_category_floor(report: EvalReport, category: str) -> None:
    scores = report.modes["hybrid"].by_category[category]
    assert scores["queries"] >= MIN_CATEGORY_QUERIES
    ndcg = scores["ndcg@10"]
    assert ndcg >= CATEGORY_FLOORS[category], (
        f"hybrid nDCG@10 for {category} {ndcg:.3f}\n{_summary(report)}"
    )


def test_fusion_beats_each_single_mode(report: EvalReport) -> None:
    # The point of hybrid search: on this set it must not be worse than either ranker alone.
    ndcg = {mode: report.modes[mode].metrics["ndcg@10"] for mode in MODES}
    assert ndcg["hybrid"] >= max(ndcg["bm25"], ndcg["vector"]), _summary(report)


def test_golden_paths_are_relative_to_the_vault() -> None:
    # qrels name notes by their path inside the vault, so they also work for `noteseek eval`.
    for line in QRELS.read_text(encoding="utf-8").splitlines()[1:]:
        corpus_id = line.split("\t")[1]
        assert (SAMPLE_VAULT / Path(corpus_id)).is_file(), corpus_id
