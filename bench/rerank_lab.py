"""Learned rerank over the fused head, measured on the development pools (issue 16, part 1).

Usage (after ``bench/rerank_pool.py``)::

    nice -n 10 python bench/rerank_lab.py                      # LOCO CV, LambdaRank + linear
    nice -n 10 python bench/rerank_lab.py --ablate             # plus the ablation table
    nice -n 10 python bench/rerank_lab.py --export DIR         # train on everything, write models

Candidates are the first ``--rerank`` (40) notes of the default hybrid ranking; the reranker
reorders them and the rest keep their places after. Features: `noteseek.core.rerank_features`.
Leave-one-corpus-out: a model never sees a query or a note of the corpus it is scored on (the
three Help sets are one corpus, the four XQuAD sets one). nDCG@10 here has trec_eval's definition
(linear gain, ideal from every judged note); the baseline column reproduces bench/quality.py.
"""

from __future__ import annotations

import argparse
import json
import math
import pickle
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import apsw
import numpy as np
from scipy import stats as sps

from datasets import CACHE_DIR
from lab_rerank_features import FEATURE_NAMES, Candidate, NoteTokens, QueryTerms, features
from noteseek.storage.sqlite.tokenizer import StemOptions, register

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
LINK_BUILT = {"mdn", "hub"}  # query sets built from link anchors
HEAD = 30  # notes per list in the fusion head (SearchSettings.candidates)

GROUPS: dict[str, tuple[str, ...]] = {
    "lists (scores, ranks)": (
        "fused_score",
        "fused_rrank",
        "bm25_norm",
        "bm25_rrank",
        "bm25_present",
        "cosine",
        "vec_norm",
        "vec_rrank",
        "vec_present",
    ),
    "matched-chunk counts": ("bm25_chunks", "vec_chunks"),
    "term coverage": (
        "cov_title",
        "cov_tags",
        "cov_headings",
        "cov_body",
        "cov_best",
        "cov_body_count",
        "all_terms_note",
        "all_terms_chunk",
    ),
    "proximity + phrase": ("proximity", "phrase"),
    "names": ("exact_name", "title_equal_terms"),
    "lengths": ("log_chunks", "log_note_chars", "log_best_len"),
    "link in-degree": ("log_indegree",),
    "recency": ("recency",),
}


def ndcg10(ranked: list[int], qrels: dict[int, int]) -> float:
    gains = [qrels.get(f, 0) for f in ranked[:10]]
    dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains) if g > 0)
    ideal = sorted(qrels.values(), reverse=True)[:10]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal) if g > 0)
    return dcg / idcg if idcg > 0 else 0.0


class Tokens:
    """The index's own tokens, from an in-memory connection with the `noteseek` tokenizer."""

    def __init__(self) -> None:
        self.db = apsw.Connection(":memory:")
        register(self.db, StemOptions())
        self.tok = self.db.fts5_tokenizer("noteseek", [])

    def __call__(self, text: str, lang: str | None) -> tuple[str, ...]:
        return tuple(
            str(t[2]) for t in self.tok(text.encode("utf-8"), apsw.FTS5_TOKENIZE_DOCUMENT, lang)
        )


def note_tokens(tokens: Tokens, note: dict[str, Any]) -> dict[str, Any]:
    lang = note.get("lang")
    return {
        "title": frozenset(tokens(note.get("title", ""), lang)),
        "tags": frozenset(tokens(note.get("tags", ""), lang)),
        "headings": frozenset(t for _, s, _ in note["chunks"] for t in tokens(s, lang)),
        "chunks": tuple(tokens(text, lang) for _, _, text in note["chunks"]),
        "ids": [cid for cid, _, _ in note["chunks"]],
        "chars": sum(len(text) for _, _, text in note["chunks"]),
    }


def idf(df: int, n: int) -> float:
    return max(math.log((n - df + 0.5) / (df + 0.5)), 0.0) if df else 0.0


def query_features(
    pool: dict[str, Any],
    q: dict[str, Any],
    toks: dict[int, dict[str, Any]],
    depth: int,
    body: str = "matched",
    timing: dict[str, float] | None = None,
) -> tuple[list[int], np.ndarray, float]:
    """(candidate file ids, feature matrix, seconds spent in `features`) for one query.

    `body="matched"` gives the extractor only what a search has at hand: the title and tags
    fields, the note's headings, and the sections each list matched best (at most two); "whole"
    gives it every section of the note (the cost of reading and tokenizing whole notes).
    """
    chunk_file = pool["chunk_file"]
    n = pool["total_chunks"]
    forms = tuple(frozenset(f) for f in q["tokens"])
    weights = tuple(max(idf(q["df"].get(f, 0), n) for f in fs) for fs in q["tokens"])
    qt = QueryTerms(forms, weights)

    def grouped(
        rows: list[tuple[int, float]],
    ) -> tuple[dict[int, float], dict[int, int], dict[int, int], dict[int, int]]:
        best: dict[int, float] = {}
        rank: dict[int, int] = {}
        count: dict[int, int] = defaultdict(int)
        first: dict[int, int] = {}
        for cid, score in rows:
            fid = chunk_file.get(cid)
            if fid is None:
                continue
            count[fid] += 1
            if fid not in best:
                best[fid] = score
                rank[fid] = len(rank) + 1
                first[fid] = cid
        return best, rank, count, first

    kw_best, kw_rank, kw_count, kw_first = grouped(q["kw"])
    vec_best, vec_rank, vec_count, vec_first = grouped(q["vec"])

    def norm(best: dict[int, float], rank: dict[int, int]) -> dict[int, float]:
        head = [s for f, s in best.items() if rank[f] <= HEAD]
        if not head:
            return {}
        low, span = min(head), max(head) - min(head)
        return {
            f: ((s - low) / span if span > 0 else 1.0) for f, s in best.items() if rank[f] <= HEAD
        }

    kw_norm, vec_norm = norm(kw_best, kw_rank), norm(vec_best, vec_rank)
    fused = q["fused"][:depth]
    exact = set(q["exact"])
    mtimes = [pool["notes"][f]["mtime"] for f, *_ in fused]
    lo, hi = (min(mtimes), max(mtimes)) if mtimes else (0, 0)
    rows = []
    spent = 0.0
    for pos, (fid, score, _, _) in enumerate(fused, start=1):
        t = toks[fid]
        best_cid = kw_first.get(fid) or vec_first.get(fid)
        best = t["ids"].index(best_cid) if best_cid in t["ids"] else 0
        if body == "matched":
            picked = [c for c in (kw_first.get(fid), vec_first.get(fid)) if c in t["ids"]] or [
                t["ids"][0]
            ]
            picked = list(dict.fromkeys(picked))
            chunks = tuple(t["chunks"][t["ids"].index(c)] for c in picked)
            note = NoteTokens(t["title"], t["tags"], t["headings"], chunks, 0)
            if timing is not None:  # what a search would tokenize for this candidate
                raw = pool["notes"][fid]
                texts = [raw.get("title", ""), " ".join(s for _, s, _ in raw["chunks"])]
                texts += [raw["chunks"][t["ids"].index(c)][2] for c in picked]
                started = time.perf_counter()
                for text in texts:
                    TOKENS(text, raw.get("lang"))
                timing["runtime_tokenize_s"] = (
                    timing.get("runtime_tokenize_s", 0.0) + time.perf_counter() - started
                )
        else:
            note = NoteTokens(t["title"], t["tags"], t["headings"], t["chunks"], best)
        cand = Candidate(
            fused_rank=pos,
            fused_score=score,
            bm25_rank=kw_rank.get(fid),
            bm25_norm=kw_norm.get(fid, 0.0),
            vec_rank=vec_rank.get(fid),
            cosine=vec_best.get(fid),
            vec_norm=vec_norm.get(fid, 0.0),
            bm25_chunks=kw_count.get(fid, 0),
            vec_chunks=vec_count.get(fid, 0),
            exact_name=fid in exact,
            chunk_count=len(t["chunks"]),
            note_chars=t["chars"],
            indegree=pool["notes"][fid]["indegree"],
            recency=(pool["notes"][fid]["mtime"] - lo) / (hi - lo) if hi > lo else 0.5,
        )
        started = time.perf_counter()
        rows.append(features(qt, cand, note))
        spent += time.perf_counter() - started
    return (
        [f for f, *_ in fused],
        np.array(rows, dtype=np.float64).reshape(len(rows), len(FEATURE_NAMES)),
        spent,
    )


TOKENS: Tokens


def load(sets: list[str], depth: int, body: str = "matched") -> dict[str, Any]:
    """Per set: per query (qid, candidate ids, features, labels, full fused list, qrels)."""
    global TOKENS
    tokens = TOKENS = Tokens()
    data: dict[str, Any] = {}
    timing = {
        "tokenize_s": 0.0,
        "notes": 0,
        "features_s": 0.0,
        "candidates": 0,
        "runtime_tokenize_s": 0.0,
    }
    for name in sets:
        path = CACHE_DIR / "pools" / f"{name}.pkl"
        if not path.exists():
            print(f"skip {name}: no pool ({path})", file=sys.stderr)
            continue
        pool = pickle.loads(path.read_bytes())
        started = time.perf_counter()
        wanted = {f for q in pool["queries"].values() for f, *_ in q["fused"][:depth]}
        toks = {fid: note_tokens(tokens, pool["notes"][fid]) for fid in wanted}
        timing["tokenize_s"] += time.perf_counter() - started
        timing["notes"] += len(toks)
        rows = []
        for qid, q in pool["queries"].items():
            cands, X, spent = query_features(pool, q, toks, depth, body, timing)
            timing["features_s"] += spent
            timing["candidates"] += len(cands)
            y = np.array([q["qrels"].get(f, 0) for f in cands], dtype=np.int32)
            rows.append((qid, cands, X, y, [f for f, *_ in q["fused"]], q["qrels"], q["text"]))
        data[name] = rows
    data["_timing"] = timing
    return data


def rerank(rows: list[Any], scores: list[np.ndarray]) -> list[float]:
    out = []
    for (_qid, cands, _X, _y, fused, qrels, _), s in zip(rows, scores):
        order = [cands[i] for i in sorted(range(len(cands)), key=lambda i: (-s[i], i))]
        out.append(ndcg10(order + fused[len(cands) :], qrels))
    return out


def baseline(rows: list[Any]) -> list[float]:
    return [ndcg10(fused, qrels) for _, _, _, _, fused, qrels, _ in rows]


def train(kind: str, rows: list[Any], cols: list[int], seed: int = 0, trees: int = 300) -> Any:
    X = np.vstack([r[2][:, cols] for r in rows])
    y = np.concatenate([r[3] for r in rows])
    if kind == "lambdarank":
        import lightgbm as lgb

        model = lgb.LGBMRanker(
            objective="lambdarank",
            n_estimators=trees,
            learning_rate=0.05,
            num_leaves=15,
            min_child_samples=50,
            subsample=0.8,
            subsample_freq=1,
            colsample_bytree=0.8,
            lambdarank_truncation_level=20,
            random_state=seed,
            verbose=-1,
            n_jobs=2,
        )
        model.fit(X, y, group=[len(r[1]) for r in rows])
        return model
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    model = make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=2000))
    model.fit(X, (y > 0).astype(int))
    return model


def predict(kind: str, model: Any, X: np.ndarray) -> np.ndarray:
    if kind == "lambdarank":
        return np.asarray(model.predict(X))
    return np.asarray(model.decision_function(X))


def loco(data: dict[str, Any], kind: str, cols: list[int], trees: int = 300) -> dict[str, list[float]]:
    """Per set: per-query nDCG@10 after reranking with a model trained on the other corpora."""
    sets = [s for s in data if not s.startswith("_")]
    out: dict[str, list[float]] = {}
    for corpus in sorted({CORPUS_OF[s] for s in sets}):
        train_rows = [r for s in sets if CORPUS_OF[s] != corpus for r in data[s]]
        model = train(kind, train_rows, cols, trees=trees)
        for s in sets:
            if CORPUS_OF[s] == corpus:
                out[s] = rerank(data[s], [predict(kind, model, r[2][:, cols]) for r in data[s]])
    return out


def fmt_p(a: list[float], b: list[float]) -> str:
    if not any(x != y for x, y in zip(a, b)):
        return "1.000"
    p = float(sps.ttest_rel(a, b).pvalue)
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default=",".join(CORPUS_OF))
    parser.add_argument("--rerank", type=int, default=40)
    parser.add_argument("--ablate", action="store_true")
    parser.add_argument("--ablate-kind", choices=["linear", "lambdarank"], default="linear")
    parser.add_argument("--kinds", default="lambdarank,linear")
    parser.add_argument("--drop", default="", help="comma-separated feature or group names left out")
    parser.add_argument("--export", type=Path)
    parser.add_argument("--export-without", default="", help="corpus left out of the exported models")
    parser.add_argument("--no-cv", action="store_true", help="only export")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--body", choices=["matched", "whole"], default="matched")
    args = parser.parse_args()
    names = [s.strip() for s in args.sets.split(",")]
    cache = CACHE_DIR / f"rerank-features-{args.body}-{args.rerank}.pkl"
    stamp = [(n, (CACHE_DIR / "pools" / f"{n}.pkl").stat().st_mtime_ns) for n in names if (CACHE_DIR / "pools" / f"{n}.pkl").exists()]
    cached = pickle.loads(cache.read_bytes()) if cache.exists() else None
    if cached is not None and cached["stamp"] == stamp:
        data = cached["data"]
    else:
        data = load(names, args.rerank, args.body)
        cache.write_bytes(pickle.dumps({"stamp": stamp, "data": data}))
    t = data["_timing"]
    sets = [s for s in data if not s.startswith("_")]
    print(
        f"tokenizing {t['notes']} notes: {1e3 * t['tokenize_s'] / max(t['notes'], 1):.3f} ms/note; "
        f"features: {1e6 * t['features_s'] / max(t['candidates'], 1):.1f} µs/candidate; "
        f"tokenizing what a search would ({args.body}): {1e6 * t['runtime_tokenize_s'] / max(t['candidates'], 1):.1f} µs/candidate"
    )
    if args.export and args.no_cv:
        export(data, args.export, args.export_without, args.drop)
        return 0
    dropped = {n for d in args.drop.split(",") if d for n in GROUPS.get(d, (d,))}
    unknown = dropped - set(FEATURE_NAMES)
    if unknown:
        parser.error(f"--drop: unknown features {sorted(unknown)}")
    all_cols = [i for i, n in enumerate(FEATURE_NAMES) if n not in dropped]
    if dropped:
        print(f"features left out: {', '.join(sorted(dropped))}")
    result: dict[str, Any] = {"baseline": {s: baseline(data[s]) for s in sets}}
    kinds = [k for k in args.kinds.split(",") if k]
    for kind in kinds:
        result[kind] = loco(data, kind, all_cols)
    print("\n| set | queries | hybrid now | " + " | ".join(f"{k} (LOCO) | Δ (p)" for k in kinds) + " |")
    print("|---|---|---|" + "---|---|" * len(kinds))
    for s in sets:
        b = result["baseline"][s]
        cells = [s, str(len(b)), f"{np.mean(b):.3f}"]
        for kind in kinds:
            r = result[kind][s]
            cells += [f"{np.mean(r):.3f}", f"{np.mean(r) - np.mean(b):+.3f} ({fmt_p(r, b)})"]
        print("| " + " | ".join(cells) + " |")
    if args.ablate:
        kind = args.ablate_kind
        print(f"\nAblation ({kind}, LOCO, one group left out; mean nDCG@10 per set):\n")
        print("| without | " + " | ".join(sets) + " |")
        print("|---|" + "---|" * len(sets))
        print("| (hybrid today) | " + " | ".join(f"{np.mean(result['baseline'][s]):.3f}" for s in sets) + " |")
        print("| (all features) | " + " | ".join(f"{np.mean(result[kind][s]):.3f}" for s in sets) + " |")
        result["ablation"] = {}
        for group, names in GROUPS.items():
            cols = [i for i, n in enumerate(FEATURE_NAMES) if n not in names]
            r = loco(data, kind, cols, trees=150)
            result["ablation"][group] = r
            cells = []
            for s in sets:
                diff = np.mean(r[s]) - np.mean(result[kind][s])
                cells.append(f"{np.mean(r[s]):.3f} ({diff:+.3f}, p {fmt_p(r[s], result[kind][s])})")
            print(f"| {group} | " + " | ".join(cells) + " |", flush=True)
    if args.export:
        export(data, args.export, args.export_without, args.drop)
    if args.json:
        args.json.write_text(json.dumps(result), encoding="utf-8")
    return 0


def export(data: dict[str, Any], out: Path, without: str = "", drop: str = "") -> None:
    """Train on every development set (but `without`'s corpus) and write both models as JSON.

    Left-out features get weight 0 (linear) or are never split on (trees), so both files still
    take the full `FEATURE_NAMES` vector.
    """
    sets = [s for s in data if not s.startswith("_") and CORPUS_OF[s] != without]
    dropped = {n for d in drop.split(",") if d for n in GROUPS.get(d, (d,))}
    rows = [(*r[:2], np.where([n in dropped for n in FEATURE_NAMES], 0.0, r[2]), *r[3:]) for s in sets for r in data[s]]
    cols = list(range(len(FEATURE_NAMES)))
    out.mkdir(parents=True, exist_ok=True)
    lgbm = train("lambdarank", rows, cols)
    dump = lgbm.booster_.dump_model()
    dump["feature_names"] = list(FEATURE_NAMES)
    (out / "rerank-lambdarank.json").write_text(json.dumps(dump), encoding="utf-8")
    lin = train("linear", rows, cols)
    scaler, logit = lin.steps[0][1], lin.steps[1][1]
    weights = logit.coef_[0] / scaler.scale_
    bias = float(logit.intercept_[0] - np.sum(logit.coef_[0] * scaler.mean_ / scaler.scale_))
    (out / "rerank-linear.json").write_text(
        json.dumps({"features": list(FEATURE_NAMES), "weights": weights.tolist(), "bias": bias}),
        encoding="utf-8",
    )
    print(f"wrote {out}/rerank-lambdarank.json and rerank-linear.json")
    # The pure-Python evaluators must give the training libraries' own scores.
    from lab_rerank_model import load_model

    X = np.vstack([r[2] for r in rows[:300]])
    for name, ref in (
        ("rerank-lambdarank.json", lgbm.predict(X)),
        ("rerank-linear.json", lin.decision_function(X)),
    ):
        model = load_model(out / name)
        mine = np.array([model.score(list(x)) for x in X])
        started = time.perf_counter()
        for x in X:
            model.score(list(x))
        us = 1e6 * (time.perf_counter() - started) / len(X)
        gap = float(np.max(np.abs(mine - ref)))
        print(f"{name}: pure-Python score vs the library's on {len(X)} rows: max |Δ| = {gap:.1e}; {us:.1f} µs/candidate")


if __name__ == "__main__":
    sys.exit(main())
