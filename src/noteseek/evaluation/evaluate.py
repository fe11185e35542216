"""Retrieval-quality evaluation of an index against a BEIR-style judged query set.

Metrics come from ir-measures (trec_eval underneath), the paired tests from scipy; both are in the
`eval` extra (`pip install 'noteseek[eval]'`), so the core stays lean.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import NoteseekError
from ..extras import require

__all__ = [
    "METRICS",
    "Comparison",
    "EvalQuery",
    "EvalReport",
    "ModeResult",
    "NoteMatcher",
    "compare_modes",
    "evaluate",
    "load_qrels",
    "load_queries",
    "score_run",
    "search_run",
]

# Our names → ir-measures measures.
METRICS: dict[str, str] = {
    "ndcg@10": "nDCG@10",
    "recall@10": "R@10",
    "recall@100": "R@100",
    "mrr@10": "RR@10",
    "hit@1": "Success@1",
}


@dataclass(frozen=True)
class EvalQuery:
    """One judged query."""

    id: str
    text: str
    category: str | None = None


@dataclass(frozen=True)
class ModeResult:
    """Scores of one search mode: means overall and per category, and every query's scores."""

    mode: str
    metrics: dict[str, float]
    queries: int
    by_category: dict[str, dict[str, float]] = field(default_factory=dict)
    per_query: dict[str, dict[str, float]] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class Comparison:
    """Paired comparison of two modes on per-query nDCG@10."""

    a: str
    b: str
    mean_difference: float
    p_value: float
    wins: int
    losses: int
    ties: int


@dataclass(frozen=True)
class EvalReport:
    """Everything `noteseek eval` reports."""

    modes: dict[str, ModeResult]
    comparisons: tuple[Comparison, ...]
    queries: int
    judged_ids: int
    unmatched_ids: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        """The `--json` document: per mode the metric means and the query count."""
        return {
            "queries": self.queries,
            "unmatched_qrels_ids": list(self.unmatched_ids),
            "modes": {
                name: {
                    **result.metrics,
                    "queries": result.queries,
                    "by_category": result.by_category,
                }
                for name, result in self.modes.items()
            },
            "comparisons": [c.__dict__ for c in self.comparisons],
        }


def load_queries(path: str | Path) -> list[EvalQuery]:
    """Queries from a BEIR `queries.jsonl` (`_id`, `text`, optional `metadata.category`)."""
    queries = []
    with Path(path).open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                category = (row.get("metadata") or {}).get("category")
                queries.append(EvalQuery(str(row["_id"]), str(row["text"]), category))
            except (ValueError, KeyError, AttributeError) as exc:
                raise NoteseekError(f"{path}:{number}: not a BEIR query line ({exc})") from None
    return queries


def load_qrels(path: str | Path) -> dict[str, dict[str, int]]:
    """Judgments from a TSV `query-id corpus-id score` with a header line; graded scores kept."""
    qrels: dict[str, dict[str, int]] = {}
    with Path(path).open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            parts = line.rstrip("\n").split("\t")
            if number == 1 and not parts[-1].lstrip("-").isdigit():
                continue  # header
            if len(parts) < 3:
                if line.strip():
                    raise NoteseekError(f"{path}:{number}: expected 3 tab-separated columns")
                continue
            qrels.setdefault(parts[0], {})[parts[1]] = int(parts[2])
    return qrels


class NoteMatcher:
    """Maps a note path to the corpus id the qrels use: the path, the path without `.md`, or the stem.

    Ids that carry a folder prefix the vault does not have (`de/Notes/x.md` for a vault rooted at
    `de/`) match by their longest suffix that is a note path, when exactly one note has it.
    """

    def __init__(self, note_paths: Iterable[str], judged_ids: Iterable[str]) -> None:
        keys: dict[str, set[str]] = {}
        for path in note_paths:
            stem = path.rsplit("/", 1)[-1]
            stem = stem[:-3] if stem.lower().endswith(".md") else stem
            no_ext = path[:-3] if path.lower().endswith(".md") else path
            for key in (path, no_ext, stem):
                keys.setdefault(key, set()).add(path)
        self._to_id: dict[str, str] = {}
        self.unmatched: list[str] = []
        for judged in sorted(set(judged_ids)):
            paths = keys.get(judged, set())
            rest = judged
            while not paths and "/" in rest:
                rest = rest.split("/", 1)[1]
                paths = keys.get(rest, set()) if "/" in rest or rest.endswith(".md") else set()
            # A key shared by several notes (every MDN page is `index.md`) identifies none of them.
            if len(paths) == 1:
                self._to_id[next(iter(paths))] = judged
            else:
                self.unmatched.append(judged)

    def corpus_id(self, path: str) -> str:
        """The judged id of a note, or its path when it is not judged."""
        return self._to_id.get(path, path)


def _require() -> tuple[Any, Any]:
    what = "evaluation (noteseek eval)"
    ir_measures = require("eval", "ir_measures", what=what)
    return ir_measures, require("eval", "scipy.stats", what=what)


def _paired(
    a: str, b: str, per_a: Mapping[str, float], per_b: Mapping[str, float], stats: Any
) -> Comparison:
    ids = sorted(per_a)
    diffs = [per_a[q] - per_b.get(q, 0.0) for q in ids]
    wins = sum(d > 0 for d in diffs)
    losses = sum(d < 0 for d in diffs)
    if len(ids) < 2 or all(d == 0 for d in diffs):
        p = 1.0
    else:
        p = float(stats.ttest_rel([per_a[q] for q in ids], [per_b.get(q, 0.0) for q in ids]).pvalue)
        p = 1.0 if math.isnan(p) else p
    mean = sum(diffs) / len(diffs) if diffs else 0.0
    return Comparison(a, b, mean, p, wins, losses, len(ids) - wins - losses)


def search_run(
    index: Any,
    queries: Sequence[EvalQuery],
    matcher: NoteMatcher,
    *,
    mode: str,
    depth: int = 100,
) -> dict[str, list[str]]:
    """Each query's ranked note ids: chunk hits mapped to notes, a note at its first chunk's rank.
    Every hit counts, whatever its score (`min_score=0, min_answer=0`): this measures the ranking."""
    run: dict[str, list[str]] = {}
    for query in queries:
        seen: dict[str, None] = {}
        for hit in index.search(query.text, limit=depth, mode=mode, min_score=0, min_answer=0):
            seen.setdefault(matcher.corpus_id(hit.path), None)
        run[query.id] = list(seen)
    return run


def score_run(
    name: str,
    run: Mapping[str, Sequence[str]],
    queries: Sequence[EvalQuery],
    qrels: Mapping[str, Mapping[str, int]],
) -> ModeResult:
    """Score ranked note ids per query with trec_eval's measures (via ir-measures).

    A judged query missing from the run, or with no hits, scores 0 rather than being dropped
    (trec_eval alone would drop it and flatter the run).
    """
    ir_measures, _ = _require()
    judged = [q for q in queries if q.id in qrels]
    measures = {name: ir_measures.parse_measure(spec) for name, spec in METRICS.items()}
    by_measure = {str(m): metric for metric, m in measures.items()}
    qrel_rows = [
        ir_measures.Qrel(q.id, cid, int(score))
        for q in judged
        for cid, score in qrels[q.id].items()
    ]
    scored = [
        ir_measures.ScoredDoc(qid, doc, float(len(docs) - rank))
        for qid, docs in run.items()
        for rank, doc in enumerate(docs)
    ]
    per_query: dict[str, dict[str, float]] = {q.id: dict.fromkeys(measures, 0.0) for q in judged}
    for metric in ir_measures.iter_calc(list(measures.values()), qrel_rows, scored):
        if metric.query_id in per_query:
            per_query[metric.query_id][by_measure[str(metric.measure)]] = float(metric.value)
    means = {m: sum(s[m] for s in per_query.values()) / max(len(per_query), 1) for m in measures}
    categories: dict[str, dict[str, float]] = {}
    for category in sorted({q.category for q in judged if q.category}):
        ids = [q.id for q in judged if q.category == category]
        categories[category] = {m: sum(per_query[i][m] for i in ids) / len(ids) for m in measures}
        categories[category]["queries"] = float(len(ids))
    return ModeResult(name, means, len(judged), categories, per_query)


def compare_modes(
    results: Mapping[str, ModeResult], metric: str = "ndcg@10"
) -> tuple[Comparison, ...]:
    """Paired t-tests between every pair of modes on a per-query metric."""
    _, stats = _require()
    names = list(results)
    out = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            pa = {q: s[metric] for q, s in results[a].per_query.items()}
            pb = {q: s[metric] for q, s in results[b].per_query.items()}
            out.append(_paired(a, b, pa, pb, stats))
    return tuple(out)


def evaluate(
    index: Any,
    queries: Sequence[EvalQuery],
    qrels: Mapping[str, Mapping[str, int]],
    *,
    modes: Sequence[str] = ("bm25", "vector", "hybrid"),
    depth: int = 100,
) -> EvalReport:
    """Run every judged query in each mode, map chunk hits to notes, and score the runs."""
    _require()
    judged = [q for q in queries if q.id in qrels]
    judged_ids = {cid for q in judged for cid in qrels[q.id]}
    matcher = NoteMatcher(index.note_paths(), judged_ids)
    results = {
        mode: score_run(
            mode, search_run(index, judged, matcher, mode=mode, depth=depth), judged, qrels
        )
        for mode in modes
    }
    return EvalReport(
        results, compare_modes(results), len(judged), len(judged_ids), tuple(matcher.unmatched)
    )
