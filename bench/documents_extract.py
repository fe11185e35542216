"""Document extraction speed: a long text PDF, per-format throughput on a mixed set, pool overhead.

    python bench/documents_extract.py [--runs 5] [--workers 2] [--json OUT]

Needs the `documents` extra and Debian's apt-get (bench/documents_fetch.py downloads gnuplot-doc,
asymptote-doc, r-cran-readxl and r-cran-readr into bench/.cache/documents/ once). Prints:

1. The gnuplot 5.4 manual (311 text pages, the closest long real PDF in a Debian doc package to
   the issue's 285 pages): median wall time of `--runs` extractions, in this process and through a
   warm `ExtractionPool` worker (which adds pickling the result across the pipe).
2. Per-format throughput over a mixed set (every PDF, HTML page, spreadsheet and CSV in those
   packages plus tests/data/documents), through a pool of `--workers` processes after a warm-up
   file of each kind per worker: files, MB, the sum of in-worker seconds, files/s and MB/s per
   format, and the wall time of the whole set.
3. Pool overhead: starting a worker (spawn to first result), and per file on a warm worker
   (a tiny .txt through the pool minus the same file in this process, medians over 300 files).
Run it under `nice -n 10` on a shared machine; the figures are medians of one run, not timed asserts.
`--smoke` takes the repository's own samples (tests/data/documents) instead of the Debian packages:
a 13-page PDF with an outline as the long one, the samples as the mixed set, 20 pool files.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from documents_fetch import MANUAL, PACKAGES, ensure_packages
from noteseek.documents import ExtractionPool, Outcome, document_kind, extract_file

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "tests" / "data" / "documents"


def long_pdf(path: Path, runs: int) -> dict[str, Any]:
    inproc: list[float] = []
    pooled: list[float] = []
    first = extract_file(path)
    assert first.ok and first.document is not None, first.reason
    doc = first.document
    for _ in range(runs):
        t = time.perf_counter()
        result = extract_file(path)
        inproc.append(time.perf_counter() - t)
        assert result.ok
    with ExtractionPool(workers=1) as pool:
        pool.extract(SAMPLES / "crazyones.pdf")  # warm: the worker is up and pypdfium2 imported
        for _ in range(runs):
            t = time.perf_counter()
            result = pool.extract(path)
            pooled.append(time.perf_counter() - t)
            assert result.ok
    return {
        "file": str(path.relative_to(path.parents[5])) if len(path.parents) > 5 else str(path),
        "pages": doc.page_count,
        "units": len(doc.units),
        "chars": doc.char_count,
        "bookmarked_units": sum(1 for u in doc.units if u.section),
        "in_process_median_s": statistics.median(inproc),
        "pool_median_s": statistics.median(pooled),
        "runs": runs,
    }


def mixed_set(cache: Path | None) -> list[Path]:
    # The four packages this benchmark was measured on (documents_index.py reads more).
    files = [
        p
        for package in (PACKAGES if cache is not None else ())
        for p in sorted((cache / package).rglob("*"))  # type: ignore[operator]
        if p.is_file() and document_kind(p)
    ]
    files += [p for p in sorted(SAMPLES.iterdir()) if document_kind(p)]
    return files


def throughput(files: list[Path], workers: int) -> dict[str, Any]:
    per: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    outcomes: dict[str, int] = defaultdict(int)
    with ExtractionPool(workers=workers) as pool:
        # Warm-up, not counted: each worker imports a format's library on its first file of it
        # (python-pptx ~0.4 s), which would swamp the small formats' figures.
        first = {document_kind(p): p for p in reversed(files)}
        list(pool.extract_many(list(first.values()) * workers))
        t = time.perf_counter()
        for result in pool.extract_many(files):
            kind = document_kind(result.path) or "?"
            row = per[kind]
            row["files"] += 1
            row["bytes"] += Path(result.path).stat().st_size
            row["seconds"] += result.seconds
            row["chars"] += result.document.char_count if result.document else 0
            row["ok"] += result.outcome is Outcome.OK
            outcomes[result.outcome.value] += 1
        stats = pool.stats
    wall = time.perf_counter() - t
    return {
        "per_format": {k: dict(v) for k, v in sorted(per.items())},
        "wall_s": wall,
        "outcomes": dict(outcomes),
        "workers": workers,
        "pool": stats.__dict__,
    }


def pool_overhead(n: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        tiny = Path(tmp) / "tiny.txt"
        tiny.write_text("A short note about the pool.\n", encoding="utf-8")
        t = time.perf_counter()
        with ExtractionPool(workers=1) as pool:
            pool.extract(tiny)
            start = time.perf_counter() - t
            pooled = []
            for _ in range(n):
                t = time.perf_counter()
                pool.extract(tiny)
                pooled.append(time.perf_counter() - t)
        local = []
        for _ in range(n):
            t = time.perf_counter()
            extract_file(tiny)
            local.append(time.perf_counter() - t)
    return {
        "worker_start_to_first_result_s": start,
        "warm_pool_per_file_ms": statistics.median(pooled) * 1000,
        "in_process_per_file_ms": statistics.median(local) * 1000,
        "overhead_per_file_ms": (statistics.median(pooled) - statistics.median(local)) * 1000,
        "files": n,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--smoke", action="store_true", help="the repository's samples, seconds")
    args = parser.parse_args(argv)
    cache = None if args.smoke else ensure_packages()
    manual = SAMPLES / "pdflatex-outline.pdf" if cache is None else cache / MANUAL

    pdf = long_pdf(manual, args.runs)
    print(
        f"long PDF: {manual.name} — {pdf['pages']} pages, {pdf['chars']:,} chars, {pdf['units']} units "
        f"({pdf['bookmarked_units']} under a bookmark)"
    )
    print(
        f"  in process: median {pdf['in_process_median_s']:.2f} s over {args.runs} runs; "
        f"warm pool worker: median {pdf['pool_median_s']:.2f} s"
    )

    files = mixed_set(cache)
    mix = throughput(files, args.workers)
    print(
        f"\nmixed set: {len(files)} files, {args.workers} workers, wall {mix['wall_s']:.1f} s, "
        f"outcomes {mix['outcomes']}, pool {mix['pool']}"
    )
    print(
        f"  {'format':10} {'files':>6} {'MB':>7} {'worker s':>9} {'files/s':>8} {'MB/s':>7} {'ok':>5}"
    )
    for kind, row in mix["per_format"].items():
        secs = max(row["seconds"], 1e-9)
        print(
            f"  {kind:10} {row['files']:6.0f} {row['bytes'] / 1e6:7.2f} {secs:9.2f} "
            f"{row['files'] / secs:8.1f} {row['bytes'] / 1e6 / secs:7.2f} {row['ok']:5.0f}"
        )

    over = pool_overhead(20 if args.smoke else 300)
    print(
        f"\npool: worker start to first result {over['worker_start_to_first_result_s']:.2f} s; "
        f"per file warm {over['warm_pool_per_file_ms']:.2f} ms vs in process "
        f"{over['in_process_per_file_ms']:.2f} ms → overhead {over['overhead_per_file_ms']:.2f} ms"
    )
    if args.json:
        args.json.write_text(
            json.dumps({"long_pdf": pdf, "mixed": mix, "pool": over}, indent=2) + "\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
