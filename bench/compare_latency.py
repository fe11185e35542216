"""Warm hybrid latency of two noteseek checkouts, side by side, in alternating rounds.

    git worktree add /tmp/old <commit>
    PYTHONPATH=/tmp/old/src python -c "import noteseek; noteseek.Index('/tmp/old.db').update(VAULT)"
    python bench/compare_latency.py --old-src /tmp/old/src --old-db /tmp/old.db --new-db bench/.cache/mdn.db
    python bench/compare_latency.py ... --variant 'no-rerank={"rerank": false}'

`--variant NAME=JSON` adds a third (fourth, ...) child per round: the new checkout and index with
`SearchSettings(**JSON)`, e.g. the new code with one feature switched off. Each round runs the
same shuffled queries through one child process per variant (first query discarded as warm-up),
so machine noise hits all alike. Prints p50 per round, medians, and each median p50 over old's.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
QUERIES = REPO.parent / "shared" / "data" / "mdn-content-en" / "knownitem-anchor" / "queries.jsonl"

CHILD = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
import noteseek
queries = json.loads(sys.argv[3])
changes = json.loads(sys.argv[4])
settings = noteseek.SearchSettings(**changes) if changes else None
with noteseek.Index(sys.argv[2], create=False, settings=settings) as idx:
    idx.search(queries[0])
    out = []
    for q in queries:
        t = time.perf_counter(); idx.search(q, mode="hybrid"); out.append((time.perf_counter() - t) * 1000)
print(json.dumps(out))
"""


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--old-src", required=True, type=Path)
    parser.add_argument("--old-db", required=True, type=Path)
    parser.add_argument("--new-src", type=Path, default=REPO / "src")
    parser.add_argument("--new-db", required=True, type=Path)
    parser.add_argument("--queries", type=Path, default=QUERIES)
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="NAME=JSON",
        help="also time the new checkout with SearchSettings(**JSON) (repeatable)",
    )
    args = parser.parse_args()
    variants: list[tuple[str, Path, Path, str]] = [
        ("old", args.old_src, args.old_db, "{}"),
        ("new", args.new_src, args.new_db, "{}"),
    ]
    for spec in args.variant:
        name, _, changes = spec.partition("=")
        json.loads(changes)  # fail here, not in every child
        variants.append((name, args.new_src, args.new_db, changes))
    if not args.queries.exists():
        raise SystemExit(f"{args.queries} not found: needs ../shared/data beside the repo")
    queries = [json.loads(line)["text"] for line in args.queries.open(encoding="utf-8")]
    random.Random(42).shuffle(queries)
    queries = queries[: args.n]
    results: dict[str, list[tuple[float, float]]] = {name: [] for name, *_ in variants}
    for _ in range(args.rounds):
        for name, src, db, changes in variants:
            out = subprocess.run(
                [sys.executable, "-c", CHILD, str(src), str(db), json.dumps(queries), changes],
                capture_output=True,
                text=True,
                check=True,
            )
            times = sorted(json.loads(out.stdout))
            results[name].append((statistics.median(times), times[int(0.95 * (len(times) - 1))]))
    old_p50 = statistics.median(a for a, _ in results["old"])
    for name, rounds in results.items():
        p50s = ", ".join(f"{a:.2f}" for a, _ in rounds)
        print(
            f"{name}: p50 per round {p50s}; median p50 {statistics.median(a for a, _ in rounds):.2f} ms, "
            f"median p95 {statistics.median(b for _, b in rounds):.2f} ms; "
            f"p50 {statistics.median(a for a, _ in rounds) / old_p50:.2f}x old, "
            f"median per-round p50 ratio {statistics.median(a / b for (a, _), (b, _) in zip(rounds, results['old'])):.2f}"
        )


if __name__ == "__main__":
    main()
