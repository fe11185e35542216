"""Would recency or the link graph help the linear rerank? Leave-one-corpus-out, beside the
engine's own features.

Usage (after ``bench/rerank_train.py`` has cached its feature rows; ranking-lab extra)::

    nice -n 10 python bench/rerank_signals.py --data-dir ../shared/data [--json OUT]

For every judged query the cached head (the notes the rerank reorders, with the engine's own
feature rows) gets candidate features computed from the set's index:

- ``recency``: log(1 + days between the note's date and the newest note date of the index);
- ``in_links``: log(1 + notes linking to it), links resolved as ``Index.links`` resolves them;
- ``head_links``: log(1 + other head notes it links to or is linked from);
- ``shared_tags``: the share of the other head notes with a tag in common.

Each is added alone, and the three graph ones together, to the engine's feature set; the model is
trained as ``rerank_train.py`` trains it (standardised logistic regression on the other corpora)
and nDCG@10 of the reranked lists is compared, per set, with the engine's features alone (paired
t-test). A feature is worth adopting only if it helps on some set without hurting another.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import pickle
import sqlite3
import sys
from collections import defaultdict
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np

import _internals
import noteseek
from datasets import CACHE_DIR, DATA_DIR, select_datasets
from noteseek.core.rerank_features import FEATURE_NAMES
from rerank_train import POOLS, SETS, collect, delta, loco, ndcg, reranked

CANDIDATES = ("recency", "in_links", "head_links", "shared_tags")
TRIALS = {
    "+ recency": ("recency",),
    "+ in_links": ("in_links",),
    "+ head_links": ("head_links",),
    "+ shared_tags": ("shared_tags",),
    "+ all three graph features": ("in_links", "head_links", "shared_tags"),
}


def _day(value: str | None) -> date | None:
    try:
        return date.fromisoformat(value[:10]) if value else None
    except ValueError:
        return None


def index_signals(db: Path) -> dict[str, Any]:
    """Per file id: its date, its resolved link neighbours (out and in) and its tags."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        dates = {int(i): _day(d) for i, d in con.execute("SELECT id, note_date FROM files")}
    with noteseek.Index(db, create=False) as idx:
        store = _internals.storage(idx)
        with store.snapshot():
            graph = _internals.link_graph(idx)
            tags = {f: frozenset(t) for f, t in store.note_tags().items()}
            links = store.links_of_files(list(graph.paths))
        outs: dict[int, set[int]] = defaultdict(set)
        ins: dict[int, set[int]] = defaultdict(set)
        for source, made in links.items():
            path = graph.paths.get(source)
            if path is None:
                continue
            for link in made:
                target = graph.resolve(link, path)
                if target is not None and target != path:
                    outs[source].add(graph.ids[target])
                    ins[graph.ids[target]].add(source)
    newest = max((d for d in dates.values() if d is not None), default=None)
    return {"dates": dates, "newest": newest, "outs": outs, "ins": ins, "tags": tags}


def head_features(head: list[int], sig: dict[str, Any]) -> np.ndarray:
    """The candidate features of each head note, in CANDIDATES order."""
    rows = []
    members = set(head)
    ages = [
        (sig["newest"] - d).days if sig["newest"] is not None and d is not None else None
        for d in (sig["dates"].get(f) for f in head)
    ]
    known = [a for a in ages if a is not None]
    fill = float(np.median(known)) if known else 0.0  # an undated note: the head's median age
    for f, age in zip(head, ages):
        linked = (sig["outs"].get(f, set()) | sig["ins"].get(f, set())) & (members - {f})
        own = sig["tags"].get(f, frozenset())
        sharing = sum(1 for g in head if g != f and own & sig["tags"].get(g, frozenset()))
        rows.append(
            [
                math.log1p(max(0.0, fill if age is None else float(age))),
                math.log1p(len(sig["ins"].get(f, ()))),
                math.log1p(len(linked)),
                sharing / (len(head) - 1) if len(head) > 1 else 0.0,
            ]
        )
    return np.array(rows, dtype=np.float64).reshape(len(head), len(CANDIDATES))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data-dir", type=Path, default=DATA_DIR)
    ap.add_argument("--cache-dir", type=Path, default=CACHE_DIR)
    ap.add_argument("--sets", default=SETS)
    ap.add_argument("--json", type=Path, help="write the per-set figures here")
    args = ap.parse_args()
    if importlib.util.find_spec("sklearn") is None:  # the ranking-lab extra
        print(
            "rerank_signals skipped: scikit-learn is not installed (pip install -e '.[ranking-lab]')"
        )
        return 0
    data: dict[str, list[dict[str, Any]]] = {}
    for name in args.sets.split(","):
        cached = POOLS / f"{name}.pkl"
        if cached.exists():
            rows = pickle.loads(cached.read_bytes())
        else:  # what rerank_train.py would have cached
            POOLS.mkdir(parents=True, exist_ok=True)
            rows = collect(name, args.data_dir, args.cache_dir)
            cached.write_bytes(pickle.dumps(rows))
        if rows and "head_fids" not in rows[0]:
            ap.error(f"{name}: cached rows predate head_fids; rerun rerank_train.py --fresh")
        (ds,) = select_datasets(name)
        sig = index_signals(args.cache_dir / f"{ds.index}.db")
        for q in rows:
            extra = head_features(q["head_fids"], sig)
            q["X"] = np.hstack([q["X"], extra]) if len(q["head_fids"]) else q["X"]
        data[name] = rows
        share = {
            c: float(
                np.mean(
                    [
                        np.any(q["X"][:, len(FEATURE_NAMES) + i] > 0)
                        for q in rows
                        if len(q["head_fids"])
                    ]
                )
            )
            for i, c in enumerate(CANDIDATES)
        }
        print(
            f"[{name}] {len(rows)} queries; share of heads where a feature is non-zero: "
            + ", ".join(f"{c} {v:.2f}" for c, v in share.items()),
            file=sys.stderr,
        )
    base_cols = list(range(len(FEATURE_NAMES)))
    plain = {s: ndcg(data[s], [reranked(q, None) for q in data[s]]) for s in data}
    engine = loco(data, base_cols)
    out: dict[str, Any] = {
        "sets": {s: len(data[s]) for s in data},
        "hybrid": {},
        "engine": {},
        "trials": {},
    }
    print("\nLOCO nDCG@10: the engine's features, and Δ of each candidate added (p < 0.1 shown):\n")
    print("| features | " + " | ".join(data) + " |")
    print("|---|" + "---|" * len(data))
    print("| hybrid, rerank off | " + " | ".join(f"{np.mean(plain[s]):.3f}" for s in data) + " |")
    print("| engine's features | " + " | ".join(f"{np.mean(engine[s]):.3f}" for s in data) + " |")
    for s in data:
        out["hybrid"][s] = round(float(np.mean(plain[s])), 4)
        out["engine"][s] = round(float(np.mean(engine[s])), 4)
    for label, names in TRIALS.items():
        cols = base_cols + [len(FEATURE_NAMES) + CANDIDATES.index(n) for n in names]
        trial = loco(data, cols)
        print(f"| {label} | " + " | ".join(delta(trial[s], engine[s]) for s in data) + " |")
        out["trials"][label] = {s: delta(trial[s], engine[s]) for s in data}
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
