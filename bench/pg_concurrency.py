"""Load on the PostgreSQL backend: 16 searcher processes and 1 indexer for 60 s on MDN.

    nice -n 10 python bench/pg_concurrency.py --data-dir /work/shared/data --db "$NOTESEEK_TEST_PG" \\
        --json bench/results/pg_concurrency.json

Uses the `mdn` collection that bench/pg_parity.py builds (built here from the vault first when
`--db` has none); `--set obsidian-hub` the hub's instead, with the hub's queries and notes. Each searcher is its own process with
its own `Index` (one connection), started together after a warm-up search; it runs MDN's judged
query texts in a shuffled order through `Index.search(q, mode="hybrid")` (limit 10) until the
time is up, recording each search's latency and any exception. The indexer, in its own process,
edits 20 random MDN notes per round (a sentence appended) and runs `Index.update` on the vault:
real per-file write transactions into the collection the searchers read. At the end the notes
are restored (text and mtime) and one more update puts the collection back; its integrity check
must pass.

Printed: errors, searches, throughput (searches/s over the window), p50/p95/p99 per search, the
indexer's rounds, files written and its p50 per round, and the load average (the machine is
shared and has 2 cores: 17 busy processes and the server share them).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import random
import statistics
import sys
import time
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from datasets import CACHE_DIR, CORPORA, DATA_DIR, DATASETS, ensure_corpus, read_queries
from pg_parity import backend_cpu_seconds

EDITS_PER_ROUND = 20


def ready(counter: Any) -> None:
    with counter.get_lock():
        counter.value += 1


def searcher(
    url: str, queries: list[str], seed: int, start: Any, stop_at: Any, counter: Any, out: Any
) -> None:
    import noteseek

    latencies: list[float] = []
    errors: list[str] = []
    order = list(queries)
    random.Random(seed).shuffle(order)
    with noteseek.Index(url, create=False) as idx:
        idx.search("warm up")  # model and connection ready before the clock
        ready(counter)
        start.wait()
        i = 0
        while time.time() < stop_at.value:
            text = order[i % len(order)]
            i += 1
            began = time.perf_counter()
            try:
                idx.search(text, mode="hybrid")
            except Exception as exc:  # counted, never fatal: the point is to see them
                errors.append(f"{type(exc).__name__}: {exc}"[:300])
                continue
            latencies.append(1000 * (time.perf_counter() - began))
    out.put({"latencies": latencies, "errors": errors})


def indexer(
    url: str,
    vault: str,
    seed: int,
    start: Any,
    stop_at: Any,
    counter: Any,
    out: Any,
    every: float = 0.0,
) -> None:
    import noteseek

    rng = random.Random(seed)
    notes = sorted(Path(vault).rglob("*.md"))
    originals: dict[Path, tuple[bytes, int, int]] = {}
    rounds: list[dict[str, float]] = []
    errors: list[str] = []
    with noteseek.Index(url) as idx:
        idx.embed(["warm up"])
        ready(counter)
        start.wait()
        n = 0
        next_round = time.time()
        while time.time() < stop_at.value:
            if every > 0:  # a round every `every` seconds (the watcher's pace), not back to back
                time.sleep(max(0.0, next_round - time.time()))
                next_round += every
                if time.time() >= stop_at.value:
                    break
            n += 1
            for path in rng.sample(notes, min(EDITS_PER_ROUND, len(notes))):
                if path not in originals:
                    info = path.stat()
                    originals[path] = (path.read_bytes(), info.st_atime_ns, info.st_mtime_ns)
                with path.open("a", encoding="utf-8") as handle:
                    handle.write(f"\n\nLoad test round {n}: {rng.random():.6f} searchable words.\n")
            began, cpu_began = time.perf_counter(), time.process_time()
            server_began = backend_cpu_seconds(idx)
            try:
                stats = idx.update(vault)
            except Exception as exc:
                errors.append(f"{type(exc).__name__}: {exc}"[:300])
                continue
            server = backend_cpu_seconds(idx)
            rounds.append(
                {
                    "seconds": time.perf_counter() - began,
                    "cpu": time.process_time() - cpu_began,
                    # The indexer's server process; NaN when the server runs elsewhere.
                    "server_cpu": (
                        server - server_began
                        if server is not None and server_began is not None
                        else float("nan")
                    ),
                    "files": stats.added + stats.changed,
                }
            )
    # Put the vault back as it was (text and times), then the collection.
    for path, (data, atime, mtime) in originals.items():
        path.write_bytes(data)
        os.utime(path, ns=(atime, mtime))
    with noteseek.Index(url) as idx:
        restored = idx.update(vault)
        problems = idx.check()
    out.put(
        {
            "rounds": rounds,
            "errors": errors,
            "restored_files": restored.changed,
            "integrity_problems": problems,
        }
    )


def percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * (len(ordered) - 1) + 0.5))]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", required=True, help="postgresql:// URL of the benchmark server")
    parser.add_argument("--set", default="mdn", choices=("mdn", "obsidian-hub"))
    parser.add_argument("--collection", help="default: the set's index name (mdn, obsidian-hub)")
    parser.add_argument("--searchers", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--no-indexer", action="store_true")
    parser.add_argument(
        "--round-every",
        type=float,
        default=0.0,
        help="start an indexer round every S seconds (0: back to back, as fast as it goes)",
    )
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR)
    parser.add_argument("--cache-dir", type=Path, default=CACHE_DIR)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)

    from noteseek.core.locator import with_collection

    ds = DATASETS[args.set]
    args.collection = args.collection or ds.index
    url = with_collection(args.db, args.collection)
    vault = ensure_corpus(CORPORA[ds.corpus], args.data_dir, args.cache_dir) / ds.vault
    queries = list(read_queries(args.data_dir / ds.queries).values())
    import noteseek

    try:
        noteseek.Index(url, create=False).close()
    except noteseek.IndexNotFoundError:
        began = time.perf_counter()
        with noteseek.Index(url) as idx:
            built = idx.update(vault)
        seconds = time.perf_counter() - began
        print(f"built {args.collection}: {built.added} notes in {seconds:.1f} s")
    ctx = mp.get_context("spawn")
    start = ctx.Event()
    stop_at = ctx.Value("d", 0.0)
    counter = ctx.Value("i", 0)
    out = ctx.Queue()
    workers = [
        ctx.Process(target=searcher, args=(url, queries, seed, start, stop_at, counter, out))
        for seed in range(args.searchers)
    ]
    if not args.no_indexer:
        workers.append(
            ctx.Process(
                target=indexer,
                args=(url, str(vault), 99, start, stop_at, counter, out, args.round_every),
            )
        )
    for worker in workers:
        worker.start()
    deadline = time.time() + 600
    while counter.value < len(workers) and time.time() < deadline:
        time.sleep(0.2)  # every process has loaded noteseek, the model and its connection
        failed = [w for w in workers if w.exitcode is not None]
        if failed:  # a worker that died before it was ready would leave the others waiting
            for worker in workers:
                worker.terminate()
            print(f"{len(failed)} worker(s) failed before the start", file=sys.stderr)
            return 2
    load_before = [round(x, 2) for x in os.getloadavg()]
    stop_at.value = time.time() + args.seconds
    began = time.time()
    start.set()
    results = [out.get(timeout=args.seconds + 900) for _ in workers]
    for worker in workers:
        worker.join(60)
    window = args.seconds
    searches = [r for r in results if "latencies" in r]
    index_runs = [r for r in results if "rounds" in r]
    latencies = [x for r in searches for x in r["latencies"]]
    errors = [e for r in results for e in r["errors"]]
    report: dict[str, Any] = {
        "searchers": args.searchers,
        "indexer": not args.no_indexer,
        "round_every": args.round_every,
        "seconds": window,
        "wall_seconds": round(time.time() - began, 1),
        "searches": len(latencies),
        "errors": len(errors),
        "error_samples": errors[:5],
        "searches_per_second": round(len(latencies) / window, 1),
        "p50_ms": round(statistics.median(latencies), 1) if latencies else None,
        "p95_ms": round(percentile(latencies, 0.95), 1) if latencies else None,
        "p99_ms": round(percentile(latencies, 0.99), 1) if latencies else None,
        "load_before": load_before,
        "load_after": [round(x, 2) for x in os.getloadavg()],
    }
    if index_runs:
        rounds = index_runs[0]["rounds"]
        report["indexer_rounds"] = len(rounds)
        report["indexer_files_written"] = int(sum(r["files"] for r in rounds))
        report["indexer_round_p50_s"] = (
            round(statistics.median(r["seconds"] for r in rounds), 2) if rounds else None
        )
        # CPU per round, the indexer's process and its server process: a faster indexer runs
        # more rounds in the window, and its CPU is taken from the searchers.
        for key in ("cpu", "server_cpu"):
            report[f"indexer_round_{key}_p50_s"] = (
                round(statistics.median(r[key] for r in rounds), 3) if rounds else None
            )
        report["restored_files"] = index_runs[0]["restored_files"]
        report["integrity_problems"] = index_runs[0]["integrity_problems"]
    print(json.dumps(report, indent=2))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0 if not errors else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception:
        traceback.print_exc()
        sys.exit(2)
