"""Scrubber throughput and false-positive census on the MDN Markdown corpus.

Usage (from the repo root)::

    python bench/scrub_throughput.py [--runs 3] [--show 0]
    # before/after in one process, alternating: the old scrubber from a commit's source tree
    git archive <commit> src/noteseek | tar -x -C /tmp/ns-old
    python bench/scrub_throughput.py --old-src /tmp/ns-old/src/noteseek --runs 5

Reads every ``.md`` file of ``../shared/data/mdn-content-en/mdn-en-us-md.tar.gz``
into memory, scrubs each file's text ``--runs`` times, and prints the median
throughput, how many replacements each pattern made, and how many files were
touched.  With ``--old-src`` the package at that path is loaded under another name
(``noteseek_old``) and both scrubbers run in turn in each round, timed in CPU seconds
of this process (the machine is shared), then both censuses are printed.  MDN is public documentation, so every hit is a false positive or a
documentation example; ``--show N`` prints up to N hits per pattern (file and
line, with the secret already redacted) for inspection.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import tarfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from datasets import CORPORA, DATA_DIR, REPO

CORPUS = DATA_DIR / CORPORA["mdn-content-en"].source

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


Scrub = Callable[[str], Any]


def load_old(src: Path) -> tuple[Scrub, tuple[str, ...]]:
    """``scrub`` and ``PATTERN_NAMES`` of the package at ``src`` (a ``noteseek`` source tree),
    imported as ``noteseek_old`` so it can run beside this checkout's."""
    spec = importlib.util.spec_from_file_location(
        "noteseek_old", src / "__init__.py", submodule_search_locations=[str(src)]
    )
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load a package from {src}")
    module = importlib.util.module_from_spec(spec)
    sys.modules["noteseek_old"] = module
    spec.loader.exec_module(module)
    scrubber = importlib.import_module("noteseek_old.secrets.scrubber")
    return scrubber.scrub, tuple(scrubber.PATTERN_NAMES)


def census(
    docs: list[tuple[str, str]], scrub_fn: Scrub, names: tuple[str, ...], show: int, label: str
) -> None:
    """Replacements per pattern and files touched, with up to ``show`` redacted lines each."""
    totals: Counter[str] = Counter()
    files_per_pattern: Counter[str] = Counter()
    examples: defaultdict[str, list[str]] = defaultdict(list)
    touched = 0
    for name, text in docs:
        result = scrub_fn(text)
        if not result.counts:
            continue
        touched += 1
        totals.update(result.counts)
        files_per_pattern.update(result.counts.keys())
        if show:
            for line_no, line in enumerate(result.text.splitlines(), 1):
                for pattern in names:
                    if f"[REDACTED:{pattern}]" in line and len(examples[pattern]) < show:
                        examples[pattern].append(f"{name}:{line_no}: {line.strip()[:160]}")
    print(f"\n[{label}] files touched: {touched:,} of {len(docs):,}")
    print(f"[{label}] replacements: {sum(totals.values()):,}")
    for pattern in names:
        print(f"  {pattern:28s} {totals[pattern]:6d}  in {files_per_pattern[pattern]:4d} files")
        for example in examples.get(pattern, []):
            print(f"      {example}")


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the report; returns the process exit code."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="timed runs (median is reported)")
    parser.add_argument("--show", type=int, default=0, help="print up to N hits per pattern")
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="path to the .tar.gz")
    parser.add_argument(
        "--old-src", type=Path, help="a noteseek source tree to compare with (src/noteseek)"
    )
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

    scrubbers: dict[str, tuple[Scrub, tuple[str, ...]]] = {"new": (scrub, PATTERN_NAMES)}
    if args.old_src is not None:
        scrubbers = {"old": load_old(args.old_src), **scrubbers}
    timings: dict[str, list[float]] = {label: [] for label in scrubbers}
    for _ in range(max(1, args.runs)):
        for label, (scrub_fn, _names) in scrubbers.items():
            start = time.process_time()
            for _, text in docs:
                scrub_fn(text)
            timings[label].append(time.process_time() - start)
    for label, values in timings.items():
        median = statistics.median(values)
        runs = ", ".join(f"{t:.2f}s" for t in values)
        print(f"[{label}] scrub CPU time: median {median:.2f}s over {len(values)} run(s) [{runs}]")
        print(f"[{label}] throughput: {mb / median:.1f} MB/CPU-s (median)")
    if len(timings) == 2:
        ratio = statistics.median(timings["new"]) / statistics.median(timings["old"])
        print(f"new / old CPU time: {ratio:.2f}")
    for label, (scrub_fn, names) in scrubbers.items():
        census(docs, scrub_fn, names, args.show, label)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
