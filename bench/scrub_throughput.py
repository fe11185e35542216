"""Scrubber throughput and false-positive census on the MDN Markdown corpus.

Usage (from the repo root)::

    python bench/scrub_throughput.py [--runs 3] [--show 0]

Reads every ``.md`` file of ``../shared/data/mdn-content-en/mdn-en-us-md.tar.gz``
into memory, scrubs each file's text ``--runs`` times, and prints the median
throughput, how many replacements each pattern made, and how many files were
touched.  MDN is public documentation, so every hit is a false positive or a
documentation example; ``--show N`` prints up to N hits per pattern (file and
line, with the secret already redacted) for inspection.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tarfile
import time
from collections import Counter, defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO.parent / "shared" / "data" / "mdn-content-en" / "mdn-en-us-md.tar.gz"

try:
    from noteseek.secrets.scrubber import PATTERN_NAMES, scrub
except ImportError:  # running from a checkout without `pip install -e .`
    sys.path.insert(0, str(REPO / "src"))
    from noteseek.secrets.scrubber import PATTERN_NAMES, scrub


def load_corpus(path: Path) -> list[tuple[str, str]]:
    """Return (member name, decoded text) for every Markdown file in the archive."""
    docs: list[tuple[str, str]] = []
    with tarfile.open(path, "r:gz") as tar:
        for member in tar:
            if not (member.isfile() and member.name.endswith(".md")):
                continue
            handle = tar.extractfile(member)
            if handle is not None:
                docs.append((member.name, handle.read().decode("utf-8", errors="replace")))
    return docs


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the report; returns the process exit code."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="timed runs (median is reported)")
    parser.add_argument("--show", type=int, default=0, help="print up to N hits per pattern")
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="path to the .tar.gz")
    args = parser.parse_args(argv)

    if not args.corpus.is_file():
        print(
            f"MDN corpus not found at {args.corpus}\n"
            "Expected ../shared/data/mdn-content-en/mdn-en-us-md.tar.gz next to the repo.",
            file=sys.stderr,
        )
        return 2

    docs = load_corpus(args.corpus)
    total_bytes = sum(len(text.encode("utf-8")) for _, text in docs)
    mb = total_bytes / 1e6
    print(f"corpus: {len(docs):,} files, {mb:.1f} MB ({total_bytes / 2**20:.1f} MiB)")

    timings: list[float] = []
    for _ in range(max(1, args.runs)):
        start = time.perf_counter()
        for _, text in docs:
            scrub(text)
        timings.append(time.perf_counter() - start)
    median = statistics.median(timings)
    runs = ", ".join(f"{t:.2f}s" for t in timings)
    print(f"scrub time: median {median:.2f}s over {len(timings)} run(s) [{runs}]")
    print(f"throughput: {mb / median:.1f} MB/s (median)")

    totals: Counter[str] = Counter()
    files_per_pattern: Counter[str] = Counter()
    examples: defaultdict[str, list[str]] = defaultdict(list)
    touched = 0
    for name, text in docs:
        result = scrub(text)
        if not result.counts:
            continue
        touched += 1
        totals.update(result.counts)
        files_per_pattern.update(result.counts.keys())
        if args.show:
            for line_no, line in enumerate(result.text.splitlines(), 1):
                for pattern in PATTERN_NAMES:
                    if f"[REDACTED:{pattern}]" in line and len(examples[pattern]) < args.show:
                        examples[pattern].append(f"{name}:{line_no}: {line.strip()[:160]}")

    print(f"files touched: {touched:,} of {len(docs):,}")
    print(f"replacements: {sum(totals.values()):,}")
    for pattern in PATTERN_NAMES:
        print(f"  {pattern:28s} {totals[pattern]:6d}  in {files_per_pattern[pattern]:4d} files")
        for example in examples.get(pattern, []):
            print(f"      {example}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
