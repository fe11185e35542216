"""Thin-query expansion: RM3-style pseudo-relevance feedback from the BM25 head (issue 16, part 1).

Usage (after ``bench/quality.py`` and ``bench/rerank_pool.py``)::

    nice -n 10 python bench/prf_lab.py [--docs 10] [--terms 10] [--lam 0.5]

For queries with one or two content words (stopwords left out), the first ``--docs`` chunks of the
BM25 list vote for expansion words: each chunk's words weighted by the chunk's normalised BM25
score and the word's share of the chunk (RM1), stopwords, numbers and the query's own words left
out, top ``--terms`` kept. The expanded query (original words + expansion words) runs through the
real BM25 (`Searcher.bm25`), and its note list is interpolated with the original one
(λ · original + (1 − λ) · expanded, both min-max over their heads: RM3's interpolation done on
lists, since FTS5 has no per-term weights). The hybrid ranking is then re-fused exactly as the
engine does it (convex 0.7 / 0.3 over 30-note heads, exact names first); the script checks that
this re-fusion reproduces the engine's own ranking before it measures anything.
"""

from __future__ import annotations

import argparse
import math
import pickle
import re
import sys
from collections import Counter

import numpy as np
from scipy import stats as sps

import noteseek
from datasets import CACHE_DIR
from noteseek.core.fusion import convex_fusion
from noteseek.core.query import STOPWORDS, query_terms

SETS = (
    "beir-scifact",
    "mdn",
    "obsidian-hub",
    "obsidian-help-en",
    "obsidian-help-de",
    "tldr",
    "xquad-de",
    "xquad-en",
    "obsidian-help-de-en",
    "xquad-de-en",
    "xquad-en-de",
)
INDEX = {
    "beir-scifact": "beir-scifact",
    "mdn": "mdn",
    "obsidian-hub": "obsidian-hub",
    "obsidian-help-en": "obsidian-help-en",
    "obsidian-help-de": "obsidian-help-de",
    "tldr": "tldr-en",
    "xquad-de": "xquad-de",
    "xquad-en": "xquad-en",
    "obsidian-help-de-en": "obsidian-help-en",
    "xquad-de-en": "xquad-en",
    "xquad-en-de": "xquad-de",
}
HEAD = 30
_WORD = re.compile(r"[^\W\d_]{3,}")


def ndcg10(ranked: list[int], qrels: dict[int, int]) -> float:
    dcg = sum(qrels.get(f, 0) / math.log2(i + 2) for i, f in enumerate(ranked[:10]))
    ideal = sorted(qrels.values(), reverse=True)[:10]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def notes(rows: list[tuple[int, float]], chunk_file: dict[int, int]) -> list[tuple[int, float]]:
    best: dict[int, float] = {}
    for cid, s in rows:
        fid = chunk_file.get(cid)
        if fid is not None and fid not in best:
            best[fid] = s
    return list(best.items())


def minmax(items: list[tuple[int, float]]) -> dict[int, float]:
    head = items[:HEAD]
    if not head:
        return {}
    lo, hi = min(s for _, s in head), max(s for _, s in head)
    return {f: ((s - lo) / (hi - lo) if hi > lo else 1.0) for f, s in head}


def fused(kw: list[tuple[int, float]], vec: list[tuple[int, float]], exact: list[int]) -> list[int]:
    heads = (min(HEAD, len(kw)), min(HEAD, len(vec)))
    order = [s.key for s in convex_fusion([kw, vec], weights=(0.7, 0.3), heads=heads)]
    first = [f for f in order if f in set(exact)] + [f for f in exact if f not in order]
    return first + [f for f in order if f not in set(exact)]


def expansion(text: str, chunks: list[tuple[str, float]], terms: int) -> list[str]:
    own = set(query_terms(text))
    weight: Counter[str] = Counter()
    top = max((s for _, s in chunks), default=1.0) or 1.0
    for body, score in chunks:
        words = [w for w in _WORD.findall(body.lower()) if w not in STOPWORDS]
        if not words:
            continue
        tf = Counter(words)
        for w, n in tf.items():
            if w not in own:
                weight[w] += (score / top) * n / len(words)
    return [w for w, _ in weight.most_common(terms)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=10)
    parser.add_argument("--terms", type=int, default=10)
    parser.add_argument("--lam", type=float, default=0.5)
    parser.add_argument("--max-words", type=int, default=2)
    parser.add_argument("--sets", default=",".join(SETS))
    args = parser.parse_args()
    print(
        f"RM3 on BM25: {args.docs} feedback chunks, {args.terms} terms, λ = {args.lam}, queries of ≤ {args.max_words} content words\n"
    )
    print(
        "| set | thin queries | hybrid now (thin) | hybrid + RM3 (thin) | Δ (p) | better / worse | bm25 now | bm25 + RM3 |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name in args.sets.split(","):
        path = CACHE_DIR / "pools" / f"{name}.pkl"
        if not path.exists():
            continue
        pool = pickle.loads(path.read_bytes())
        chunk_file = dict(pool["chunk_file"])
        base, new, bbase, bnew = [], [], [], []
        mismatch = 0
        with noteseek.Index(CACHE_DIR / f"{INDEX[name]}.db", create=False) as idx:
            store = idx._store
            for entry in pool["queries"].values():
                text = entry["text"]
                content = [t for t in query_terms(text) if t not in STOPWORDS]
                if not content or len(content) > args.max_words:
                    continue
                kw = notes(entry["kw"], chunk_file)
                vec = notes(entry["vec"], chunk_file)
                exact = entry["exact"]
                now = fused(kw, vec, exact)
                engine = [f for f, *_ in entry["fused"]]
                if now[:10] != engine[:10]:
                    mismatch += 1
                top = entry["kw"][: args.docs]
                rows = store.chunk_rows([c for c, _ in top])
                chunks = [(rows[c].text + " " + rows[c].section, s) for c, s in top if c in rows]
                extra = expansion(text, chunks, args.terms)
                if extra:
                    exp_rows = idx._searcher.bm25(text + " " + " ".join(extra), 100)
                    missing = [c for c, _ in exp_rows if c not in chunk_file]
                    chunk_file.update(store.file_ids(missing))
                    exp = notes(exp_rows, chunk_file)
                    a, b = minmax(kw), minmax(exp)
                    mixed = sorted(
                        {*a, *b},
                        key=lambda f: -(args.lam * a.get(f, 0.0) + (1 - args.lam) * b.get(f, 0.0)),
                    )
                    kw2 = [
                        (f, args.lam * a.get(f, 0.0) + (1 - args.lam) * b.get(f, 0.0))
                        for f in mixed
                    ]
                else:
                    kw2 = kw
                after = fused(kw2, vec, exact)
                base.append(ndcg10(engine, entry["qrels"]))
                new.append(ndcg10(after, entry["qrels"]))
                bbase.append(ndcg10([f for f, _ in kw], entry["qrels"]))
                bnew.append(ndcg10([f for f, _ in kw2], entry["qrels"]))
        if not base:
            print(f"| {name} | 0 | | | | | | |")
            continue
        diff = any(x != y for x, y in zip(new, base))
        p = float(sps.ttest_rel(new, base).pvalue) if diff else 1.0
        wins = sum(x > y for x, y in zip(new, base))
        losses = sum(x < y for x, y in zip(new, base))
        note = f" (re-fusion ≠ engine top 10 in {mismatch})" if mismatch else ""
        print(
            f"| {name}{note} | {len(base)} | {np.mean(base):.3f} | {np.mean(new):.3f} | "
            f"{np.mean(new) - np.mean(base):+.3f} ({p:.3f}) | {wins} / {losses} | {np.mean(bbase):.3f} | {np.mean(bnew):.3f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
