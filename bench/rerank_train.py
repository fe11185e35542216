"""Train the linear reranker on the development sets; LOCO cross-validation, ablation, export.

Usage (bench extra + scikit-learn: ``pip install -e '.[ranking-lab]'``)::

    nice -n 10 python bench/rerank_train.py --data-dir /work/shared/data            # LOCO table
    nice -n 10 python bench/rerank_train.py --data-dir … --ablate                   # + ablation
    nice -n 10 python bench/rerank_train.py --data-dir … --export src/noteseek/engine/search/rerank-linear.json

The features are the engine's own: every judged query runs through the real ``Index.search`` with
the rerank off (the default ranking) and the reranker's capture on, so the rows are exactly what
the engine computes at query time (``engine/search/rerank.py``); no feature is re-implemented here.
Labels are the qrels grades (relevant = grade > 0); the model is scikit-learn's standardised
logistic regression, pointwise. Reranked lists are rebuilt as the engine builds them (the head
reordered, exact names first, the rest in fused order); ``--check`` re-runs every query through the
engine with the exported model and compares (the emulation must agree exactly).

Leave-one-corpus-out: the Help sets (en, de, de→en) are one corpus, the four XQuAD sets another;
no query or note of the scored corpus is seen in training. Development halves only: nothing here
reads a held-out set or the public golden set.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import pickle
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats as sps

import _internals
import noteseek
from datasets import (
    CACHE_DIR,
    CORPORA,
    DATA_DIR,
    NoteMatcher,
    ensure_corpus,
    load_qrels,
    read_queries,
    select_datasets,
)
from noteseek import SearchSettings
from noteseek.core.rerank_features import FEATURE_NAMES
from noteseek.core.rerank_model import LinearModel
from quality import evaluate, open_index

SETS = (
    "beir-scifact,mdn,obsidian-hub,obsidian-help-en,obsidian-help-de,obsidian-help-de-en,tldr,"
    "xquad-de,xquad-en,xquad-de-en,xquad-en-de"
)
CORPUS_OF = {
    "beir-scifact": "scifact",
    "mdn": "mdn",
    "obsidian-hub": "hub",
    "obsidian-help-en": "help",
    "obsidian-help-de": "help",
    "obsidian-help-de-en": "help",
    "tldr": "tldr",
    "xquad-de": "xquad",
    "xquad-en": "xquad",
    "xquad-de-en": "xquad",
    "xquad-en-de": "xquad",
}
# Sets whose queries were not made from links (anchors, [[target|alias]]): where any feature that
# can profit from the link construction (names, title coverage) must be judged on its own.
NOT_FROM_LINKS = ("beir-scifact", "tldr", "xquad-de", "xquad-en", "xquad-de-en", "xquad-en-de")
GROUPS = {
    "lists (scores, ranks)": (
        "fused_score", "fused_rrank", "bm25_norm", "bm25_rrank", "bm25_present", "cosine",
        "vec_norm", "vec_rrank", "vec_present",
    ),
    "matched-chunk counts": ("bm25_chunks", "vec_chunks"),
    "title/heading coverage": ("cov_title", "cov_headings"),
    "tag coverage": ("cov_tags",),
    "names (exact, title = query)": ("exact_name", "title_equal_terms"),
    "lengths (chunks, bytes)": ("log_chunks", "log_note_bytes"),
    "query length": ("query_terms",),
}
LIMIT = 100
POOLS = CACHE_DIR / "rerank-train"


def collect(name: str, data_dir: Path, cache_dir: Path) -> list[dict[str, Any]]:
    """Per judged query: baseline notes (limit 100), head notes + rows, exact notes, qrels."""
    (ds,) = select_datasets(name)
    corpus = ensure_corpus(CORPORA[ds.corpus], data_dir, cache_dir)
    vault = corpus / ds.vault if ds.vault else corpus
    info = open_index(ds, vault, cache_dir, reindex=False)
    db = Path(info.db)
    settings = SearchSettings(rerank=False)
    with noteseek.Index(db, create=False, settings=settings) as idx:
        paths = _internals.storage(idx).file_paths()
        counts = {p: 1 for p in paths.values()}
        matcher = NoteMatcher(counts, ds.id_prefix)
        qrels, _ = matcher.map_qrels(load_qrels(ds, data_dir, cache_dir))
        texts = read_queries(data_dir / ds.queries)
        out = []
        with _internals.rerank_rows(idx) as rerank_rows:
            for qid, text in texts.items():
                if qid not in qrels:
                    continue
                hits = idx.search(text, limit=LIMIT, explain=True, min_score=0, min_answer=0)
                last = rerank_rows()
                head, rows = last if last is not None else ([], [])
                out.append(
                    {
                        "qid": qid,
                        "text": text,
                        "hits": [matcher.note_id(h.path) for h in hits],
                        "exact": [matcher.note_id(h.path) for h in hits if h.explanation and h.explanation.exact_name],
                        "head": [matcher.note_id(paths[f]) for f in head],
                        # file ids of the head, for lab features computed from the index (rerank_signals.py)
                        "head_fids": list(head),
                        "X": np.array(rows, dtype=np.float64).reshape(len(rows), len(FEATURE_NAMES)),
                        "qrels": qrels[qid],
                    }
                )
    return out


def reranked(q: dict[str, Any], scores: np.ndarray | None) -> list[str]:
    """The engine's list with the head in model order (exact names first, rest in fused order)."""
    hits, head, exact = q["hits"], q["head"], set(q["exact"])
    if scores is None or not head:
        return list(dict.fromkeys(hits))
    order = [head[i] for i in sorted(range(len(head)), key=lambda i: (-scores[i], i))]
    in_head = set(head)
    first = [n for n in order if n in exact] + [n for n in hits if n in exact and n not in in_head]
    rest = [n for n in order if n not in exact] + [n for n in hits if n not in exact and n not in in_head]
    return list(dict.fromkeys(first + rest))


def ndcg(rows: list[dict[str, Any]], lists: list[list[str]]) -> list[float]:
    qrels = {q["qid"]: q["qrels"] for q in rows}
    values = evaluate(qrels, {q["qid"]: notes for q, notes in zip(rows, lists)})["nDCG@10"]
    return [values[q["qid"]] for q in rows]


def fit(rows: list[dict[str, Any]], cols: list[int]) -> Any:
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X = np.vstack([q["X"][:, cols] for q in rows if len(q["head"])])
    y = np.concatenate([[q["qrels"].get(n, 0) > 0 for n in q["head"]] for q in rows if len(q["head"])])
    model = make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=5000))
    model.fit(X, y.astype(int))
    return model


def score(model: Any, q: dict[str, Any], cols: list[int]) -> np.ndarray | None:
    if not len(q["head"]):
        return None
    return np.asarray(model.decision_function(q["X"][:, cols]))


def loco(data: dict[str, list[dict[str, Any]]], cols: list[int]) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for corpus in sorted({CORPUS_OF[s] for s in data}):
        model = fit([q for s in data if CORPUS_OF[s] != corpus for q in data[s]], cols)
        for s in data:
            if CORPUS_OF[s] == corpus:
                out[s] = ndcg(data[s], [reranked(q, score(model, q, cols)) for q in data[s]])
    return out


def p_value(a: Sequence[float], b: Sequence[float]) -> float:
    if not any(x != y for x, y in zip(a, b)):
        return 1.0
    return float(sps.ttest_rel(a, b).pvalue)


def delta(a: Sequence[float], b: Sequence[float]) -> str:
    d = float(np.mean(a) - np.mean(b))
    p = p_value(a, b)
    return f"{d:+.3f}" + (f" ({p:.3f})" if p < 0.1 else "")


def export(data: dict[str, list[dict[str, Any]]], path: Path, cols: list[int]) -> LinearModel:
    pipe = fit([q for s in data for q in data[s]], cols)
    scaler, lr = pipe[0], pipe[-1]
    w = np.zeros(len(FEATURE_NAMES))
    w[cols] = lr.coef_[0] / scaler.scale_  # a dropped feature keeps weight 0
    b = float(lr.intercept_[0] - np.sum(lr.coef_[0] * scaler.mean_ / scaler.scale_))
    model = LinearModel(FEATURE_NAMES, [float(x) for x in w], b)
    X = np.vstack([q["X"] for s in data for q in data[s] if len(q["head"])])
    ours = np.array([model.score(list(r)) for r in X])
    diff = float(np.max(np.abs(ours - pipe.decision_function(X[:, cols]))))
    doc = model.to_json() | {
        "trained_on": sorted(data),
        "candidates": len(X),
        "note": "bench/rerank_train.py: scikit-learn LogisticRegression(C=1) on standardised "
        "features, folded into raw-feature weights; development sets only",
    }
    path.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {path} ({path.stat().st_size} bytes); max |ours - sklearn| = {diff:.2e}")
    return model


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data-dir", type=Path, default=DATA_DIR)
    ap.add_argument("--cache-dir", type=Path, default=CACHE_DIR)
    ap.add_argument("--sets", default=SETS)
    ap.add_argument("--ablate", action="store_true", help="LOCO with each feature group left out")
    ap.add_argument("--export", type=Path, help="train on every set and write the model JSON")
    ap.add_argument("--check", action="store_true", help="re-run the engine with the exported model")
    ap.add_argument("--fresh", action="store_true", help="recompute the cached feature rows")
    ap.add_argument("--drop", default="", help="comma-separated features left out (weight 0)")
    args = ap.parse_args()
    if importlib.util.find_spec("sklearn") is None:  # the ranking-lab extra
        print("rerank_train skipped: scikit-learn is not installed (pip install -e '.[ranking-lab]')")
        return 0
    POOLS.mkdir(parents=True, exist_ok=True)
    data: dict[str, list[dict[str, Any]]] = {}
    for name in args.sets.split(","):
        cache = POOLS / f"{name}.pkl"
        if cache.exists() and not args.fresh:
            data[name] = pickle.loads(cache.read_bytes())
        else:
            started = time.perf_counter()
            data[name] = collect(name, args.data_dir, args.cache_dir)
            cache.write_bytes(pickle.dumps(data[name]))
            print(f"[{name}] {len(data[name])} queries in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    base = {s: ndcg(data[s], [reranked(q, None) for q in data[s]]) for s in data}
    dropped = {d for d in args.drop.split(",") if d}
    unknown = dropped - set(FEATURE_NAMES)
    if unknown:
        ap.error(f"--drop: unknown features {sorted(unknown)}")
    cols = [i for i, n in enumerate(FEATURE_NAMES) if n not in dropped]
    print(f"features: {len(cols)} of {len(FEATURE_NAMES)}" + (f" (dropped: {', '.join(sorted(dropped))})" if dropped else ""))
    cv = loco(data, cols)
    print("\nLOCO nDCG@10 (model trained on the other corpora), Δ against the default hybrid (p < 0.1 shown):\n")
    print("| set | queries | hybrid (rerank off) | LOCO rerank | Δ (p) |")
    print("|---|---|---|---|---|")
    for s in data:
        print(f"| {s} | {len(data[s])} | {np.mean(base[s]):.3f} | {np.mean(cv[s]):.3f} | {delta(cv[s], base[s])} |")
    if args.ablate:
        print("\nAblation (LOCO, one group left out; Δ against all features, p < 0.1 shown):\n")
        print("| without | " + " | ".join(data) + " |")
        print("|---|" + "---|" * len(data))
        for group, names in GROUPS.items():
            keep = [i for i in cols if FEATURE_NAMES[i] not in names]
            ab = loco(data, keep)
            print(f"| {group} | " + " | ".join(delta(ab[s], cv[s]) for s in data) + " |")
    if args.export:
        model = export(data, args.export, cols)
        full = {s: ndcg(data[s], [reranked(q, np.array([model.score(list(r)) for r in q["X"]]) if len(q["head"]) else None) for q in data[s]]) for s in data}
        print("\nTrained on every development set (in-sample, for reference):")
        for s in data:
            print(f"  {s}: {np.mean(base[s]):.3f} -> {np.mean(full[s]):.3f}")
        if args.check:
            check(args, data, full)
    return 0


def check(args: argparse.Namespace, data: dict[str, list[dict[str, Any]]], full: dict[str, list[float]]) -> None:
    """Run every query through the engine with the exported model: the emulation must agree."""
    for name in data:
        (ds,) = select_datasets(name)
        db = args.cache_dir / f"{ds.index}.db"
        with noteseek.Index(db, create=False) as idx:
            counts = {p: 1 for p in _internals.storage(idx).file_paths().values()}
            matcher = NoteMatcher(counts, ds.id_prefix)
            lists = [list(dict.fromkeys(matcher.note_id(h.path) for h in idx.search(q["text"], limit=LIMIT, min_score=0, min_answer=0))) for q in data[name]]
        engine = ndcg(data[name], lists)
        worst = max((abs(a - b) for a, b in zip(engine, full[name])), default=0.0)
        print(f"  check {name}: engine {np.mean(engine):.4f}, emulated {np.mean(full[name]):.4f}, max per-query |Δ| {worst:.2e}")
        if not math.isclose(float(np.mean(engine)), float(np.mean(full[name])), abs_tol=1e-9):
            print(f"  WARNING: {name}: the engine and the emulation disagree", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
