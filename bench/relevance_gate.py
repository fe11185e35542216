"""Does the vault answer the query at all? A query-level gate beside the per-hit probability, LOCO.

Usage (after ``relevance_train.py --modes hybrid`` has collected its rows; same
``--per-set/--per-pair/--seed``)::

    nice -n 10 python relevance_gate.py --per-set 300 --per-pair 100 \
        --export ../src/noteseek/engine/search/relevance-model.json > results/relevance_gate.md

Reads the hybrid rows ``relevance_train.py`` cached (the engine's own features per hit, limit 10).
Per query: Q = P(the top 10 holds a relevant note | query-level features), a logistic model over
``core.calibration.answer_features`` (the engine's own function: the first hit's features, its
probability, how the first three hits and the head agree, the first three rows, and the two
lists' best scores); trained on on-topic queries whose top 10 holds a relevant note (1) and off-topic queries
(0). Both Q and the per-hit model are leave-one-corpus-out: a query's scores come from models
that never saw its vault's corpus. Printed: for rules "show hit i when Q >= a and p_i >= b" (and
two other families: a cut at a share of the first hit's p, a count that grows with Q), the
off-topic share with no hit and mean hits, and the on-topic share whose relevant note stays shown
(of the queries whose top 10 held one) — the issue's acceptance figures, on development rows;
per corpus at the chosen rule; the prompt hook's rule estimated on the same rows (its first six
hits). ``--export`` writes the hybrid per-hit and query-level models (trained on every row) into
the model file, keeping its bm25 and vector models.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from noteseek import DEFAULT_MIN_ANSWER, DEFAULT_MIN_SCORE
from noteseek.core.calibration import (
    HEAD_FEATURES,
    Calibrator,
    answer_features,
    head_features,
    non_increasing,
)
from noteseek.core.relevance import HOOK_MIN_ANSWER
from relevance_train import CORPUS_OF, IDS, PER_IDS, SEED, collect, corpora, fit, reliability


def heads_of(block: dict[str, Any]) -> list[float]:
    """The block's `head_features`, from the list heads its search captured."""
    kw, cosines, mass, words, _ = block["heads"] or ([], [], 0.0, 0, 0)
    return head_features(kw, cosines, mass, words)


def head_variants(block: dict[str, Any]) -> dict[str, list[float]]:
    """Other list-head features than the shipped ones, for the comparison table: none, the best
    cosine alone, with BM25's best, the shipped set, and the shipped set with the vector list's
    cosines further down (ranks 10 and 30, the mean) or with the query's IDF mass and mean IDF in
    units of the index's largest (log(chunks + 1))."""
    kw, cosines, mass, words, chunks = block["heads"] or ([], [], 0.0, 0, 0)
    shipped = head_features(kw, cosines, mass, words)

    def at(rank: int) -> float:
        return cosines[min(rank, len(cosines)) - 1] if cosines else 0.0

    unit = float(np.log(max(chunks, 1) + 1))
    return {
        "none": [],
        "best cosine": shipped[:1],
        "best cosine, BM25's best": [shipped[0], shipped[3]],
        "shipped (best cosine, its one-word split, BM25's best)": shipped,
        "shipped + cosines at ranks 10, 30 and the mean": [
            *shipped, at(10), at(30), float(np.mean(cosines)) if cosines else 0.0,
        ],
        "shipped + the query's IDF mass and mean IDF": [
            *shipped, mass / unit, mass / words / unit if words else 0.0,
        ],
    }


def per_hit_loco(blocks: list[dict[str, Any]]) -> list[np.ndarray]:
    """Each block's per-hit probabilities (capped down the list) from the model without its vault."""
    out: list[np.ndarray | None] = [None] * len(blocks)
    for held in sorted({c for b in blocks for c in corpora(b)} - {"agent"}):
        w, b = fit([x for x in blocks if held not in corpora(x)])
        for i, block in enumerate(blocks):
            if out[i] is None and CORPUS_OF[block["vault"]] == held and len(block["y"]):
                p = 1 / (1 + np.exp(-(block["X"] @ w + b)))
                out[i] = np.array(non_increasing(list(p)))
    return [o if o is not None else np.zeros(0) for o in out]


def fit_logistic(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    scaler = StandardScaler().fit(X)
    model = LogisticRegression(C=1.0, max_iter=2000, class_weight="balanced").fit(scaler.transform(X), y)
    w = model.coef_[0] / scaler.scale_
    return w, float(model.intercept_[0] - (w * scaler.mean_).sum())


def q_loco(blocks: list[dict[str, Any]], rows: np.ndarray, answered: np.ndarray, usable: np.ndarray) -> np.ndarray:
    q = np.zeros(len(blocks))
    for held in sorted({c for b in blocks for c in corpora(b)} - {"agent"}):
        train = np.array([usable[i] and held not in corpora(b) for i, b in enumerate(blocks)])
        w, bias = fit_logistic(rows[train], answered[train])
        test = np.array([CORPUS_OF[b["vault"]] == held for b in blocks])
        q[test] = 1 / (1 + np.exp(-(rows[test] @ w + bias)))
    return q


def figures(
    blocks: list[dict[str, Any]], p: list[np.ndarray], q: np.ndarray, a: float, b: float, idx: list[int],
    rule: Callable[[int], np.ndarray] | None = None,
) -> tuple[float, float, float, float, int, int]:
    """(off-topic no hit, off-topic hits shown, on-topic relevant kept, on-topic hits shown, counts)
    for "show hit i when Q >= a and p_i >= b" (and `rule(query)[i]`, when given)."""
    off = [i for i in idx if not blocks[i]["on_topic"]]
    on = [i for i in idx if blocks[i]["on_topic"] and blocks[i]["y"].any()]
    shown = {i: (q[i] >= a) * (p[i] >= b) * (rule(i) if rule else True) for i in idx}
    return (
        float(np.mean([not shown[i].any() for i in off])) if off else float("nan"),
        float(np.mean([shown[i].sum() for i in off])) if off else float("nan"),
        float(np.mean([shown[i][blocks[i]["y"]].any() for i in on])) if on else float("nan"),
        float(np.mean([shown[i].sum() for i in on])) if on else float("nan"),
        len(off), len(on),
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--per-set", type=int, default=300)
    ap.add_argument("--per-pair", type=int, default=100)
    ap.add_argument("--per-ids", type=int, default=PER_IDS, help="identifier lookups per set and pair (0: none)")
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--answer", type=float, default=DEFAULT_MIN_ANSWER, help="the Q threshold reported per corpus (default: the engine's)")
    ap.add_argument("--floor", type=float, default=DEFAULT_MIN_SCORE, help="the per-hit floor reported per corpus (default: the engine's)")
    ap.add_argument("--hook-answer", type=float, default=HOOK_MIN_ANSWER)
    ap.add_argument("--hook-score", type=float, default=0.2)
    ap.add_argument("--export", type=Path)
    args = ap.parse_args()
    if importlib.util.find_spec("sklearn") is None:  # the ranking-lab extra
        print("relevance_gate skipped: scikit-learn is not installed (pip install -e '.[ranking-lab]')")
        return 0
    blocks = [b for b in collect("hybrid", args.per_set, args.per_pair, args.seed, False, args.per_ids) if len(b["y"])]
    p = per_hit_loco(blocks)
    rows = np.array([answer_features(b["X"], list(s), heads_of(b)) for b, s in zip(blocks, p)])
    answered = np.array([b["on_topic"] and bool(b["y"].any()) for b in blocks])
    usable = np.array([(not b["on_topic"]) or bool(b["y"].any()) for b in blocks])
    q = q_loco(blocks, rows, answered, usable)
    # The sweeps and per-corpus tables read the judged sets and the written prompts; the
    # identifier lookups have their own row (per query family, below).
    everything = [i for i, b in enumerate(blocks) if not b["source"].endswith(IDS)]
    _, _, _, _, n_off, n_on = figures(blocks, p, q, 0, 0, everything)
    print(f"{len(everything)} queries of the judged sets and prompts (and {len(blocks) - len(everything)} "
          f"identifier lookups, trained on and reported apart): {n_on} on-topic whose top 10 holds a "
          f"relevant note, {n_off} off-topic (LOCO: every score from models that never saw the query's vault)\n")
    print("| Q ≥ | p ≥ | off-topic: no hit | off-topic: hits shown | on-topic: relevant kept | on-topic: hits shown |")
    print("|---:|---:|---:|---:|---:|---:|")
    for a in (0.0, 0.05, 0.1, 0.12, 0.14, 0.16, 0.17, 0.18, 0.19, 0.2, 0.25, 0.3, 0.5):
        for b in (0.0, 0.005, 0.01, 0.02, 0.05, 0.1):
            no_hit, hits_off, kept, hits_on, _, _ = figures(blocks, p, q, a, b, everything)
            print(f"| {a:.2f} | {b:.3f} | {no_hit:.3f} | {hits_off:.2f} | {kept:.3f} | {hits_on:.2f} |")
    # Other ways to shorten the lists that pass Q: cut below a share of the first hit's p, show
    # at most ceil(K * Q) hits (fewer the less sure Q is), or a per-hit floor for unsure lists only.
    # Which list-head features the query-level model reads: each variant's rows are the first
    # hits' part of answer_features with the variant's head features after it, LOCO like Q.
    print("\nList-head features of the query-level model (LOCO; each at the highest Q threshold that "
          "keeps 97 % of the on-topic relevant notes):\n")
    print("| head features | Q ≥ | off-topic: no hit | off-topic: hits shown | on-topic: relevant kept |")
    print("|---|---:|---:|---:|---:|")
    hits_part = rows[:, : rows.shape[1] - len(HEAD_FEATURES)]
    variants = [head_variants(b) for b in blocks]
    for name in variants[0]:
        extra = np.array([v[name] for v in variants]).reshape(len(blocks), -1)
        qv = q_loco(blocks, np.hstack([hits_part, extra]), answered, usable)
        best = None
        for a in np.arange(0.02, 0.6, 0.005):
            no_hit, hits_off, kept, _, _, _ = figures(blocks, p, qv, float(a), 0.0, everything)
            if kept >= 0.97:
                best = (float(a), no_hit, hits_off, kept)
        if best is not None:
            print(f"| {name} | {best[0]:.3f} | {best[1]:.3f} | {best[2]:.2f} | {best[3]:.3f} |")
    print(f"\nOther display rules at Q ≥ {args.answer}:\n")
    print("| rule | off-topic: no hit | off-topic: hits shown | on-topic: relevant kept | on-topic: hits shown |")
    print("|---|---:|---:|---:|---:|")
    for label, rule in [
        *[(f"p_i ≥ {r} × p_1", lambda i, r=r: p[i] >= r * p[i][:1].sum()) for r in (0.01, 0.02, 0.05, 0.1)],
        *[(f"at most ⌈{k} × Q⌉", lambda i, k=k: np.arange(len(p[i])) < np.ceil(k * q[i])) for k in (10, 15, 20)],
        *[(f"at most ⌈{k} × √Q⌉", lambda i, k=k: np.arange(len(p[i])) < np.ceil(k * np.sqrt(q[i]))) for k in (10, 12, 15)],
        *[(f"p_i ≥ {f} where Q < {c}", lambda i, f=f, c=c: p[i] >= (f if q[i] < c else 0.0))
          for f, c in ((0.002, 0.5), (0.005, 0.3), (0.005, 0.5), (0.01, 0.5))],
    ]:
        no_hit, hits_off, kept, hits_on, _, _ = figures(blocks, p, q, args.answer, 0.0, everything, rule)
        print(f"| {label} | {no_hit:.3f} | {hits_off:.2f} | {kept:.3f} | {hits_on:.2f} |")
    print("\nQ's calibration per vault corpus (LOCO; label: the top 10 holds a relevant note; "
          "on-topic queries whose top 10 holds none are left out):\n")
    print("| vault | queries | ECE | reliability (mean predicted → observed, count) |")
    print("|---|---:|---:|---|")
    for corpus in [*sorted({CORPUS_OF[b["vault"]] for b in blocks}), "all"]:
        idx = [i for i, b in enumerate(blocks) if usable[i] and corpus in ("all", CORPUS_OF[b["vault"]])]
        ece, bins = reliability([q[idx]], [answered[idx]])
        curve = " · ".join(f"{m:.2f}→{o:.2f} ({n})" for _, m, o, n in bins)
        print(f"| {corpus} | {len(idx)} | {ece:.3f} | {curve} |")
    print(f"\nPer vault corpus at Q ≥ {args.answer}, p ≥ {args.floor}:\n")
    print("| vault | off-topic queries | no hit | hits shown | on-topic queries | relevant kept | hits shown |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for corpus in sorted({CORPUS_OF[b["vault"]] for b in blocks}):
        idx = [i for i in everything if CORPUS_OF[blocks[i]["vault"]] == corpus]
        no_hit, hits_off, kept, hits_on, n_off, n_on = figures(blocks, p, q, args.answer, args.floor, idx)
        print(f"| {corpus} | {n_off} | {no_hit:.3f} | {hits_off:.2f} | {n_on} | {kept:.3f} | {hits_on:.2f} |")
    print(f"\nPer query family at Q ≥ {args.answer}, p ≥ {args.floor} (the judged sets' own queries; the "
          "identifier lookups of relevance_train.identifier_queries):\n")
    print("| family | off-topic queries | no hit | hits shown | on-topic queries | relevant kept | hits shown |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for family, chosen in (
        ("judged sets", lambda b: b["source"] not in ("agent", "chat") and not b["source"].endswith(IDS)),
        ("written prompts (agent, chat)", lambda b: b["source"] in ("agent", "chat")),
        ("identifier lookups", lambda b: b["source"].endswith(IDS)),
    ):
        idx = [i for i, b in enumerate(blocks) if chosen(b)]
        no_hit, hits_off, kept, hits_on, n_off, n_on = figures(blocks, p, q, args.answer, args.floor, idx)
        print(f"| {family} | {n_off} | {no_hit:.3f} | {hits_off:.2f} | {n_on} | {kept:.3f} | {hits_on:.2f} |")
    print("\nPer query source (off-topic rows by the corpus their queries come from):\n")
    print("| queries of → vault | queries | no hit | hits shown |")
    print("|---|---:|---:|---:|")
    for pair in sorted({(b["source"], b["vault"]) for b in blocks if not b["on_topic"]}):
        idx = [i for i, b in enumerate(blocks) if (b["source"], b["vault"]) == pair]
        no_hit, hits_off, *_ = figures(blocks, p, q, args.answer, args.floor, idx)
        print(f"| {pair[0]} → {pair[1]} | {len(idx)} | {no_hit:.3f} | {hits_off:.2f} |")
    # The hook, estimated on the same lists: its first six hits, a block when Q and a hit's p clear
    # its thresholds; "names a relevant note" when one of the first three kept hits is relevant.
    print("\nPrompt hook estimate (first 6 hits; block = up to 3 hits with p ≥ hook score, when Q ≥ hook answer):\n")
    print("| hook Q ≥ | hook p ≥ | off-topic: silent | on-topic (all queries): names a relevant note | Help queries: names a relevant note |")
    print("|---:|---:|---:|---:|---:|")
    for a in (0.15, 0.3, 0.5, 0.6, 0.7, 0.8):
        for b in (0.0, 0.02, 0.05, 0.1, 0.2):
            def block(i: int, a: float = a, b: float = b) -> list[int]:
                if q[i] < a:
                    return []
                return [j for j in range(min(6, len(p[i]))) if p[i][j] >= b][:3]
            off = [i for i in everything if not blocks[i]["on_topic"]]
            on = [i for i in everything if blocks[i]["on_topic"]]
            helpq = [i for i in on if blocks[i]["vault"] == "obsidian-help-en"]
            silent = np.mean([not block(i) for i in off])
            names = np.mean([any(blocks[i]["y"][j] for j in block(i)) for i in on])
            names_help = np.mean([any(blocks[i]["y"][j] for j in block(i)) for i in helpq])
            print(f"| {a:.2f} | {b:.2f} | {silent:.3f} | {names:.3f} | {names_help:.3f} |")
    if args.export:
        w, bias = fit(blocks)
        p_all = [np.array(non_increasing(list(1 / (1 + np.exp(-(x["X"] @ w + bias)))))) for x in blocks]
        rows_all = np.array([answer_features(x["X"], list(s), heads_of(x)) for x, s in zip(blocks, p_all)])
        aw, ab = fit_logistic(rows_all[usable], answered[usable])
        doc = json.loads(args.export.read_text(encoding="utf-8"))
        doc["modes"]["hybrid"] = {"weights": list(map(float, w)), "bias": float(bias),
                                  "answer": {"weights": list(map(float, aw)), "bias": ab}}
        Calibrator.from_json(doc)  # refuses a malformed document before it is written
        doc["note"] = (
            "bm25, vector: bench/relevance_train.py (scikit-learn LogisticRegression(C=1) on "
            "standardised features, folded into raw-feature weights); hybrid per-hit and "
            "query-level ('answer', class-balanced) models: bench/relevance_gate.py; development "
            "sets with off-topic pairs only"
        )
        args.export.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
        print(f"\nwrote {args.export} ({args.export.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
