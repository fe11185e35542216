from __future__ import annotations

import json
from pathlib import Path

import pytest

from noteseek import Index
from noteseek.evaluation import (
    EvalQuery,
    NoteMatcher,
    evaluate,
    load_qrels,
    load_queries,
    score_run,
)
from noteseek.evaluation.report import render_table, write_report

from .conftest import FakeEmbedder, WriteNotes, note


def test_loaders_read_beir_files(tmp_path: Path) -> None:
    q = tmp_path / "q.jsonl"
    q.write_text(
        json.dumps({"_id": "1", "text": "alpha", "metadata": {"category": "c"}})
        + "\n\n"
        + json.dumps({"_id": 2, "text": "beta"})
        + "\n"
    )
    assert load_queries(q) == [EvalQuery("1", "alpha", "c"), EvalQuery("2", "beta", None)]
    r = tmp_path / "r.tsv"
    r.write_text("query-id\tcorpus-id\tscore\n1\tdocs/a.md\t2\n1\tb\t1\n2\tc\t0\n")
    assert load_qrels(r) == {"1": {"docs/a.md": 2, "b": 1}, "2": {"c": 0}}


def test_note_matcher_rules() -> None:
    paths = ["docs/a.md", "notes/b.md", "x/index.md", "y/index.md", "deep/folder/c.md"]
    judged = ["docs/a.md", "notes/b", "b", "index", "de/deep/folder/c.md", "missing"]
    m = NoteMatcher(paths, judged)
    assert m.corpus_id("docs/a.md") == "docs/a.md"
    assert m.corpus_id("deep/folder/c.md") == "de/deep/folder/c.md"  # prefix the vault lacks
    assert m.corpus_id("x/index.md") == "x/index.md"  # ambiguous stem matches nothing
    assert set(m.unmatched) == {"index", "missing"}
    assert m.corpus_id("notes/b.md") in {"notes/b", "b"}


def test_score_run_counts_missing_queries_as_zero() -> None:
    queries = [EvalQuery("q1", "x"), EvalQuery("q2", "y"), EvalQuery("q3", "z")]
    qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 1}}
    run = {"q1": ["d1", "d9"], "q2": ["d9", "d2"]}  # q3 returned nothing
    result = score_run("m", run, queries, qrels)
    assert result.queries == 3
    assert result.per_query["q1"]["ndcg@10"] == pytest.approx(1.0)
    assert result.per_query["q2"]["mrr@10"] == pytest.approx(0.5)
    assert result.per_query["q2"]["hit@1"] == 0.0
    assert result.per_query["q3"]["ndcg@10"] == 0.0
    assert result.metrics["mrr@10"] == pytest.approx((1 + 0.5 + 0) / 3)
    assert result.metrics["recall@10"] == pytest.approx(2 / 3)


def test_graded_ndcg_matches_the_textbook_formula() -> None:
    import math

    qrels = {"q": {"a": 2, "b": 1}}
    result = score_run("m", {"q": ["b", "x", "a"]}, [EvalQuery("q", "t")], qrels)
    # trec_eval's nDCG uses gain = relevance, discount log2(rank + 1).
    dcg = 1 / math.log2(2) + 2 / math.log2(4)
    ideal = 2 / math.log2(2) + 1 / math.log2(3)
    assert result.metrics["ndcg@10"] == pytest.approx(dcg / ideal, abs=1e-4)


def test_evaluate_an_index_end_to_end(
    tmp_path: Path, make_vault: WriteNotes, fake_embedder: FakeEmbedder
) -> None:
    vault = make_vault(
        {
            "pg.md": note("Postgres", ("Vacuum", "Autovacuum reclaims dead tuples in big tables.")),
            "git.md": note("Git", ("Rebase", "Use the reflog to undo a rebase that went wrong.")),
            "k8s.md": note(
                "Kubernetes", ("Rollout", "kubectl rollout undo goes back one revision.")
            ),
        }
    )
    queries = [
        EvalQuery("1", "dead tuples autovacuum", "kw"),
        EvalQuery("2", "undo rebase reflog", "kw"),
        EvalQuery("3", "rollout revision", "nl"),
        EvalQuery("4", "not judged", None),
    ]
    qrels = {"1": {"pg": 1}, "2": {"git.md": 1}, "3": {"k8s.md": 1}}
    with Index(tmp_path / "i.db", embedder=fake_embedder) as idx:
        idx.update(vault)
        report = evaluate(idx, queries, qrels)
    assert report.queries == 3 and report.unmatched_ids == ()
    assert report.modes["bm25"].metrics["ndcg@10"] == pytest.approx(1.0)
    assert set(report.modes) == {"bm25", "vector", "hybrid"}
    assert report.modes["hybrid"].by_category["kw"]["queries"] == 2
    assert len(report.comparisons) == 3
    doc = report.to_json()
    assert set(doc["modes"]["hybrid"]) >= {
        "ndcg@10",
        "recall@10",
        "recall@100",
        "mrr@10",
        "hit@1",
        "queries",
    }
    table = render_table(report)
    assert "| bm25 | 1.0000" in table and "nDCG@10 per query category" in table
    md = write_report(report, tmp_path / "report", title="t")
    assert md.read_text().count("modes.png") == 1
    assert (tmp_path / "report" / "modes.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
