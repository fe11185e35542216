"""Speed and size of noteseek on a real vault: index time, DB size, memory, query latency.

    python bench/perf.py                       # MDN (13,062 notes) from ../shared/data
    python bench/perf.py --vault DIR --queries FILE.jsonl

Every figure is a median over repeated runs on this machine, measured in one go. Timings are printed,
never asserted. Each indexing run happens in a child process, so its peak memory is its own.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from datasets import CORPORA, ensure_corpus

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared" / "data"
MDN_TAR = SHARED / "mdn-content-en" / "mdn-en-us-md.tar.gz"
MDN_QUERIES = SHARED / "mdn-content-en" / "knownitem-anchor" / "queries.jsonl"

CHILD_INDEX = """
import json, sys, time, noteseek
db, vault, full = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
with noteseek.Index(db) as idx:
    t = time.perf_counter()
    s = idx.update(vault, full=full)
    elapsed = time.perf_counter() - t
print(json.dumps({"seconds": elapsed, "chunks": s.chunks, "added": s.added, "changed": s.changed,
                  "embedded": s.chunks_embedded, "skipped": s.skipped}))
"""

CHILD_QUERIES = """
import json, sys, time, resource, noteseek
db, queries, mode = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
with noteseek.Index(db, create=False) as idx:
    t = time.perf_counter(); idx.search(queries[0], mode=mode); first = time.perf_counter() - t
    times = []
    for q in queries:
        t = time.perf_counter(); idx.search(q, mode=mode); times.append(time.perf_counter() - t)
print(json.dumps({"first": first, "times": times,
                  "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def run_child(code: str, *args: str) -> tuple[dict[str, Any], float]:
    """Run a child Python; return its JSON answer and its peak RSS in MB."""
    proc = subprocess.Popen(
        [sys.executable, "-c", code, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    out = proc.stdout.read() if proc.stdout else ""
    err = proc.stderr.read() if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"child failed:\n{err}")
    return json.loads(out.strip().splitlines()[-1]), usage.ru_maxrss / 1024


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def unpack_mdn() -> Path:
    """The MDN vault, unpacked once into the cache that quality.py shares."""
    if not MDN_TAR.exists():
        raise SystemExit(
            f"{MDN_TAR} not found: this benchmark needs ../shared/data beside the repo"
        )
    return ensure_corpus(CORPORA["mdn-content-en"]) / "files" / "en-us"


def db_size(db: Path) -> int:
    return sum(p.stat().st_size for p in (db, Path(f"{db}-wal")) if p.exists())


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--vault", type=Path, help="vault folder (default: MDN from ../shared/data)"
    )
    parser.add_argument("--queries", type=Path, help="BEIR queries.jsonl (default: MDN anchors)")
    parser.add_argument("--runs", type=int, default=3, help="full index runs (median)")
    parser.add_argument("--n-queries", type=int, default=300)
    parser.add_argument("--cli-runs", type=int, default=10)
    parser.add_argument("--json", type=Path, default=REPO / "bench" / "results" / "perf-mdn.json")
    args = parser.parse_args()

    vault = args.vault or unpack_mdn()
    queries_file = args.queries or MDN_QUERIES
    if not queries_file.exists():
        raise SystemExit(
            f"{queries_file} not found: this benchmark needs ../shared/data beside the repo"
        )
    queries = [json.loads(line)["text"] for line in queries_file.open(encoding="utf-8")]
    random.Random(42).shuffle(queries)
    queries = queries[: args.n_queries]

    work = Path(tempfile.mkdtemp(prefix="noteseek-perf-"))
    results: dict[str, Any] = {
        "machine": {
            "cpu_count": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
        },
        "vault": str(vault),
    }
    try:
        # Full index, repeated from scratch.
        full_runs = []
        for i in range(args.runs):
            db = work / f"full{i}.db"
            answer, rss = run_child(CHILD_INDEX, str(db), str(vault), "0")
            full_runs.append({**answer, "maxrss_mb": rss, "db_bytes": db_size(db)})
            print(
                f"full index run {i + 1}: {answer['seconds']:.1f} s, {answer['chunks']} chunks",
                flush=True,
            )
        db = work / "full0.db"
        for extra in range(1, args.runs):
            for suffix in ("", "-wal", "-shm"):
                Path(f"{work}/full{extra}.db{suffix}").unlink(missing_ok=True)
        results["full_index"] = {
            "seconds_median": statistics.median(r["seconds"] for r in full_runs),
            "seconds_all": [r["seconds"] for r in full_runs],
            "chunks": full_runs[0]["chunks"],
            "db_mb": full_runs[0]["db_bytes"] / 1e6,
            "db_mb_per_50k_chunks": full_runs[0]["db_bytes"]
            / 1e6
            * 50_000
            / full_runs[0]["chunks"],
            "peak_rss_mb_median": statistics.median(r["maxrss_mb"] for r in full_runs),
        }

        # No-op incremental.
        noop = [run_child(CHILD_INDEX, str(db), str(vault), "0")[0]["seconds"] for _ in range(5)]
        results["noop_incremental_seconds_median"] = statistics.median(noop)

        # Change 10 notes, then incremental; restore them afterwards (work on a copy of the vault).
        copy = work / "vault"
        shutil.copytree(vault, copy)
        shutil.copy(db, work / "copy.db")
        notes = sorted(copy.rglob("*.md"))
        changed_runs = []
        for round_no in range(3):
            for path in random.Random(round_no).sample(notes, 10):
                with path.open("a", encoding="utf-8") as fh:
                    fh.write(
                        f"\n\n## Bench edit {round_no}\n\nAn appended paragraph for the benchmark run.\n"
                    )
            answer, _ = run_child(CHILD_INDEX, str(work / "copy.db"), str(copy), "0")
            changed_runs.append(answer["seconds"])
        results["incremental_10_changed_seconds_median"] = statistics.median(changed_runs)

        # Warm queries in one process, per mode.
        results["warm_query_ms"] = {}
        for mode in ("bm25", "vector", "hybrid"):
            answer, rss = run_child(CHILD_QUERIES, str(db), json.dumps(queries), mode)
            ms = [t * 1000 for t in answer["times"]]
            results["warm_query_ms"][mode] = {
                "p50": pct(ms, 50),
                "p95": pct(ms, 95),
                "p99": pct(ms, 99),
                "first_query_ms": answer["first"] * 1000,
                "queries": len(ms),
                "maxrss_mb": rss,
            }
            print(f"{mode}: p50 {pct(ms, 50):.2f} ms, p95 {pct(ms, 95):.2f} ms", flush=True)

        # One-shot CLI: process start to output, as an agent hook pays it.
        cli = []
        for i in range(args.cli_runs):
            q = queries[i % len(queries)]
            t = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "noteseek", "search", "--db", str(db), "--json", "--", q],
                check=True,
                capture_output=True,
            )
            cli.append(time.perf_counter() - t)
        results["cli_one_shot_seconds_median"] = statistics.median(cli)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=2) + "\n")
    f = results["full_index"]
    w = results["warm_query_ms"]
    print()
    print("| measure | median |")
    print("|---|---|")
    print(
        f"| full index | {f['seconds_median']:.1f} s ({f['chunks']} chunks; runs {', '.join(f'{s:.1f}' for s in f['seconds_all'])}) |"
    )
    print(f"| DB size | {f['db_mb']:.1f} MB ({f['db_mb_per_50k_chunks']:.1f} MB per 50k chunks) |")
    print(f"| peak RSS, full index | {f['peak_rss_mb_median']:.0f} MB |")
    print(f"| no-op incremental | {results['noop_incremental_seconds_median']:.2f} s |")
    print(
        f"| incremental, 10 notes changed | {results['incremental_10_changed_seconds_median']:.2f} s |"
    )
    for mode in ("bm25", "vector", "hybrid"):
        print(
            f"| warm {mode} p50 / p95 / p99 | {w[mode]['p50']:.2f} / {w[mode]['p95']:.2f} / {w[mode]['p99']:.2f} ms |"
        )
    print(f"| first query in a process (hybrid) | {w['hybrid']['first_query_ms']:.0f} ms |")
    print(f"| peak RSS, query process (hybrid) | {w['hybrid']['maxrss_mb']:.0f} MB |")
    print(f"| one-shot CLI search | {results['cli_one_shot_seconds_median'] * 1000:.0f} ms |")
    print(f"\nJSON: {args.json}")


if __name__ == "__main__":
    main()
