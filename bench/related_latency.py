"""Warm `Index.related` latency on a built index, and how many other notes each call gives.

Usage::

    nice -n 10 python bench/related_latency.py --db INDEX.db [--notes 300] [--rounds 3] [--json OUT]

One process, one `Index`: a first call loads the vectors, the link graph and the tags (reported
as `cold_ms`); then `--rounds` passes over `--notes` notes drawn with a fixed seed (the same
notes every run), each timed alone (`time.perf_counter`, limit 10). Prints p50, p95 and max of
the warm calls, the process CPU time per call, the 1-minute load average before and after (the
wall clock on a shared machine waits for a core), and the smallest number of other notes a call
returned (a call that returned the note itself would be counted as a failure).

Side by side (``--old-src OTHER/src``, the ``src`` folder of another checkout): two worker
processes, one importing this checkout's noteseek and one the other's, each holding its own
`Index` on the same file; every note is sent to both, in alternating order, so both see the same
machine load; each worker times its own calls. Prints both sets of figures, the ratio of the
medians, and how many calls returned the same notes in the same order.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import noteseek


def worker(db: Path, limit: int) -> int:
    """Answer one note per stdin line with `[ms, cpu_ms, paths]` on stdout (side-by-side mode)."""
    with noteseek.Index(db, create=False) as idx:
        print(json.dumps(sorted(p for p in idx.note_paths() if p.endswith(".md"))), flush=True)
        for line in sys.stdin:
            path = json.loads(line)
            c0, t0 = time.process_time(), time.perf_counter()
            hits = idx.related(path, limit=limit)
            ms, cpu = (time.perf_counter() - t0) * 1000, (time.process_time() - c0) * 1000
            print(json.dumps([ms, cpu, [h.path for h in hits]]), flush=True)
    return 0


def _figures(times: list[float], cpu: list[float]) -> dict[str, Any]:
    times = sorted(times)
    return {
        "p50_ms": round(statistics.median(times), 2),
        "p95_ms": round(times[int(0.95 * (len(times) - 1))], 2),
        "max_ms": round(times[-1], 2),
        "cpu_ms_per_call": round(statistics.fmean(cpu), 2),
        "cpu_ms_median": round(statistics.median(cpu), 2),
    }


def side_by_side(args: argparse.Namespace) -> int:
    """This checkout against `--old-src`, interleaved call by call."""
    import os as _os

    procs = {}
    for label, src in (("new", Path(noteseek.__file__).parents[1]), ("old", args.old_src)):
        env = dict(_os.environ, PYTHONPATH=str(src))
        procs[label] = subprocess.Popen(
            [sys.executable, __file__, "--worker", "--db", str(args.db), "--limit", str(args.limit)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
        )  # fmt: skip

    def ask(label: str, path: str) -> list[Any]:
        proc = procs[label]
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps(path) + "\n")
        proc.stdin.flush()
        return list(json.loads(proc.stdout.readline()))

    paths = {}
    for label, proc in procs.items():
        assert proc.stdout is not None
        paths[label] = json.loads(proc.stdout.readline())
    sample = random.Random(args.seed).sample(paths["new"], min(args.notes, len(paths["new"])))
    cold = {label: ask(label, sample[0])[0] for label in procs}
    times: dict[str, list[float]] = {"new": [], "old": []}
    cpu: dict[str, list[float]] = {"new": [], "old": []}
    same = itself = 0
    fewest = args.limit
    load_before = os.getloadavg()[0]
    calls = 0
    for _ in range(args.rounds):
        for i, path in enumerate(sample):
            got = {}
            for label in ("new", "old") if i % 2 == 0 else ("old", "new"):
                ms, cpu_ms, hits = ask(label, path)
                times[label].append(ms)
                cpu[label].append(cpu_ms)
                got[label] = hits
            calls += 1
            same += got["new"] == got["old"]
            itself += path in got["new"]
            fewest = min(fewest, len(set(got["new"]) - {path}))
    for proc in procs.values():
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=60)
    result = {
        "db": args.db.name,
        "calls_each": calls,
        "limit": args.limit,
        "cold_ms": {k: round(v, 1) for k, v in cold.items()},
        "new": _figures(times["new"], cpu["new"]),
        "old": _figures(times["old"], cpu["old"]),
        "p50_new_over_old": round(
            statistics.median(times["new"]) / statistics.median(times["old"]), 3
        ),
        "calls_with_identical_hits": same,
        "fewest_other_notes_new": fewest,
        "calls_returning_the_note_itself_new": itself,
        "load_average_1min": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "cpus": os.cpu_count(),
    }
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--notes", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--limit", type=int, default=10)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--old-src", type=Path, help="the src folder of a checkout to compare with")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(args.db, args.limit)
    if args.old_src:
        return side_by_side(args)
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
