"""Warm `Index.related` latency on a built index, and how many other notes each call gives.

Usage::

    nice -n 10 python bench/related_latency.py --db INDEX.db [--notes 300] [--rounds 3] [--json OUT]

One process, one `Index`: a first call loads the vectors, the link graph and the tags (reported
as `cold_ms`); then `--rounds` passes over `--notes` notes drawn with a fixed seed (the same
notes every run), each timed alone (`time.perf_counter`, limit 10). Prints p50, p95 and max of
the warm calls, the process CPU time per call, the 1-minute load average before and after (the
wall clock on a shared machine waits for a core), and the smallest number of other notes a call
returned (a call that returned the note itself would be counted as a failure).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

import noteseek


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--notes", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--limit", type=int, default=10)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args()
    with noteseek.Index(args.db, create=False) as idx:
        paths = sorted(p for p in idx.note_paths() if p.endswith(".md"))
        sample = random.Random(args.seed).sample(paths, min(args.notes, len(paths)))
        started = time.perf_counter()
        idx.related(sample[0], limit=args.limit)
        cold_ms = (time.perf_counter() - started) * 1000
        times: list[float] = []
        fewest = args.limit
        itself = 0
        load_before = os.getloadavg()[0]
        cpu0 = time.process_time()
        for _ in range(args.rounds):
            for path in sample:
                t0 = time.perf_counter()
                hits = idx.related(path, limit=args.limit)
                times.append((time.perf_counter() - t0) * 1000)
                others = {h.path for h in hits} - {path}
                itself += any(h.path == path for h in hits)
                fewest = min(fewest, len(others))
        cpu_ms = (time.process_time() - cpu0) * 1000 / len(times)
        status = idx.status()
    times.sort()
    result = {
        "db_files": status.files,
        "db_chunks": status.chunks,
        "calls": len(times),
        "limit": args.limit,
        "cold_ms": round(cold_ms, 1),
        "p50_ms": round(statistics.median(times), 2),
        "p95_ms": round(times[int(0.95 * (len(times) - 1))], 2),
        "max_ms": round(times[-1], 2),
        "cpu_ms_per_call": round(cpu_ms, 2),
        "load_average_1min": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "cpus": os.cpu_count(),
        "fewest_other_notes": fewest,
        "calls_returning_the_note_itself": itself,
    }
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
