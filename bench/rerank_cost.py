"""The learned rerank's own cost in a warm hybrid query: one process, one index, query by query.

    nice -n 10 python bench/rerank_cost.py --db bench/.cache/mdn.db
    python bench/rerank_cost.py --smoke      # the sample vault and its judged queries, seconds

Two `Index` objects on the same file, one with the default settings and one with
`SearchSettings(rerank=False)`; every query runs through both, in a random order per query, after
one warm-up pass, so machine load hits both alike and the per-query difference is the reranker's
work (its storage read of the candidates' note terms, the features, the model, the sort). Prints
the p50 of each, the median and p90 of the per-query difference, and the ratio of the p50s.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from pathlib import Path

import noteseek
from datasets import SAMPLE_QUERIES, sample_index
from noteseek import SearchSettings

REPO = Path(__file__).resolve().parent.parent
QUERIES = REPO.parent / "shared" / "data" / "mdn-content-en" / "knownitem-anchor" / "queries.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--db", type=Path)
    parser.add_argument("--queries", type=Path, default=QUERIES)
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="the sample vault, one pass")
    args = parser.parse_args()
    tmp = tempfile.TemporaryDirectory()
    if args.smoke:
        args.db, args.queries, args.passes = sample_index(Path(tmp.name)), SAMPLE_QUERIES, 1
    elif args.db is None:
        parser.error("--db is required (or --smoke)")
    if not args.queries.exists():
        raise SystemExit(f"{args.queries} not found: pass --queries (needs ../shared/data)")
    queries = [json.loads(line)["text"] for line in args.queries.open(encoding="utf-8")]
    rng = random.Random(42)
    rng.shuffle(queries)
    queries = queries[: args.n]
    on = noteseek.Index(args.db, create=False)
    off = noteseek.Index(args.db, create=False, settings=SearchSettings(rerank=False))
    times: dict[str, list[float]] = {"rerank": [], "no rerank": []}
    diffs: list[float] = []
    try:
        for q in queries:  # warm-up: both caches, both encoders
            on.search(q)
            off.search(q)
        for _ in range(args.passes):
            for q in queries:
                pair = [("rerank", on), ("no rerank", off)]
                rng.shuffle(pair)
                took = {}
                for name, idx in pair:
                    t = time.perf_counter()
                    idx.search(q, mode="hybrid")
                    took[name] = (time.perf_counter() - t) * 1000
                    times[name].append(took[name])
                diffs.append(took["rerank"] - took["no rerank"])
    finally:
        on.close()
        off.close()
    p50 = {name: statistics.median(v) for name, v in times.items()}
    for name, v in times.items():
        print(f"{name}: p50 {p50[name]:.2f} ms, p95 {sorted(v)[int(0.95 * (len(v) - 1))]:.2f} ms")
    diffs.sort()
    print(
        f"per-query difference: median {statistics.median(diffs):+.2f} ms, "
        f"p90 {diffs[int(0.9 * (len(diffs) - 1))]:+.2f} ms; "
        f"p50 ratio {p50['rerank'] / p50['no rerank']:.3f} ({len(diffs)} paired queries)"
    )


if __name__ == "__main__":
    main()
