"""Memory of a large CSV: peak RSS of one extraction, and of a whole `noteseek index` over several.

    nice -n 10 python bench/csv_memory.py [--mb 200] [--copies 3] [--json OUT] [--smoke]

A synthetic CSV of `--mb` megabytes (an id, a date, a name, a number and a sentence of words per
row; every copy different) is written to a temporary folder. Two measurements, each in a fresh
process so nothing is shared with this one:

- `extract`: `noteseek.documents.extract_file` on one file, in this process's child; its peak RSS
  is the child's own `ru_maxrss` (exact, no sampling), with the outcome and the time it took.
- `index`: `noteseek index VAULT --db FILE` over a vault holding `--copies` such files (the pool runs
  two extraction workers at once); the RSS of the process tree is sampled every 50 ms: the peak of
  the sum over the tree and the peak of the largest single process, with the outcomes
  `noteseek status --files` reports.

Figures are one invocation on a shared machine; `--smoke` uses 2 MB files and checks it runs.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import psutil

_WORDS = [
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
    "mike",
    "november",
    "oscar",
    "papa",
    "quebec",
    "romeo",
    "sierra",
    "tango",
    "uniform",
    "victor",
    "whiskey",
    "xray",
    "yankee",
    "zulu",
    "note",
    "vault",
    "search",
    "index",
    "meeting",
    "project",
    "budget",
    "invoice",
    "summary",
    "report",
    "draft",
    "review",
    "release",
]

_EXTRACT = """
import json, resource, sys, time
from noteseek.documents import extract_file
started = time.perf_counter()
result = extract_file(sys.argv[1])
seconds = time.perf_counter() - started
doc = result.document
print(json.dumps({
    "outcome": result.outcome.value,
    "reason": result.reason[-160:],
    "units": len(doc.units) if doc else 0,
    "chars": doc.char_count if doc else 0,
    "seconds": round(seconds, 2),
    "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
}))
"""


def write_csv(path: Path, megabytes: float, seed: int) -> int:
    """A CSV of about `megabytes` MB; returns its size in bytes."""
    rng = random.Random(seed)
    target = int(megabytes * 1_000_000)
    with path.open("w", encoding="utf-8", newline="") as out:
        out.write("id,date,name,amount,comment\n")
        written, row = 0, 0
        while written < target:
            lines = []
            for _ in range(1000):
                row += 1
                words = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(4, 14)))
                lines.append(
                    f"{row},2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d},"
                    f"{rng.choice(_WORDS).title()} {rng.choice(_WORDS).title()},"
                    f'{rng.randint(0, 99999) / 100:.2f},"{words}"\n'
                )
            chunk = "".join(lines)
            out.write(chunk)
            written += len(chunk)
    return path.stat().st_size


def measure_extract(path: Path) -> dict[str, Any]:
    """One extraction in a fresh interpreter, its own peak RSS."""
    done = subprocess.run(
        [sys.executable, "-c", _EXTRACT, str(path)],
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def _tree_rss(process: psutil.Process) -> tuple[int, int]:
    """(sum, largest) resident bytes of a process and its descendants, now."""
    sizes = []
    for proc in [process, *process.children(recursive=True)]:
        try:
            sizes.append(proc.memory_info().rss)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return sum(sizes), max(sizes, default=0)


def measure_index(vault: Path, db: Path, noteseek: str) -> dict[str, Any]:
    """`noteseek index` over the vault, the process tree's RSS sampled every 50 ms."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        [noteseek, "index", str(vault), "--db", str(db)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    root = psutil.Process(proc.pid)
    peaks = {"sum": 0, "largest": 0}

    def sample() -> None:
        while proc.poll() is None:
            try:
                total, largest = _tree_rss(root)
            except psutil.NoSuchProcess:
                return
            peaks["sum"] = max(peaks["sum"], total)
            peaks["largest"] = max(peaks["largest"], largest)
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    output, _ = proc.communicate()
    seconds = time.perf_counter() - started
    sampler.join()
    status = subprocess.run(
        [noteseek, "status", "--db", str(db), "--files"], capture_output=True, text=True
    )
    csv_lines = [line.strip()[:200] for line in status.stdout.splitlines() if ".csv" in line]
    return {
        "rc": proc.returncode,
        "seconds": round(seconds, 1),
        "peak_tree_rss_mb": round(peaks["sum"] / 1_048_576, 1),
        "peak_process_rss_mb": round(peaks["largest"] / 1_048_576, 1),
        "summary": output.strip().splitlines()[-3:],
        "files": csv_lines,
    }


def main() -> None:
    """Write the files, run both measurements, print (and optionally save) the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, default=200.0, help="size of each CSV in MB")
    parser.add_argument("--copies", type=int, default=3, help="CSVs in the indexed vault")
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--smoke", action="store_true", help="2 MB files: checks that it runs")
    args = parser.parse_args()
    megabytes = 2.0 if args.smoke else args.mb
    noteseek = str(Path(sys.executable).with_name("noteseek"))
    with tempfile.TemporaryDirectory(prefix="csv-memory-") as tmp:
        vault = Path(tmp) / "vault"
        vault.mkdir()
        sizes = [write_csv(vault / f"table-{i}.csv", megabytes, seed=i) for i in range(args.copies)]
        (vault / "readme.md").write_text("# Tables\n\nLarge CSV files beside one note.\n")
        report: dict[str, Any] = {
            "command": " ".join(["python", "bench/csv_memory.py", *sys.argv[1:]]),
            "csv_bytes": sizes,
            "extract": measure_extract(vault / "table-0.csv"),
            "index": measure_index(vault, Path(tmp) / "index.db", noteseek),
            "cpu_count": os.cpu_count(),
        }
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
