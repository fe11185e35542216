"""How long a search's file filter takes with long folder and tag lists, on SQLite and PostgreSQL.

    python bench/filter_lists.py                                   # SQLite only
    python bench/filter_lists.py --pg postgresql://user:pw@host/db  # and a PostgreSQL collection
    python bench/filter_lists.py --smoke                           # 500 files, seconds

Fills a fresh index through the storage protocol (what `Index.update` writes: files, tags, one
chunk each) with N files in 50 folders, each with 3 of 200 tags (some nested), then times
`files_matching` (the statement every filtered search runs first) for 1, 200, 1,000 and 1,500
folders and tags, the median of 5. The lists are mostly names that match nothing plus one that
matches, the shape a hostile or generated request has. Before the lists became one parameter,
200 tags took 4.9 s on PostgreSQL and 1,000 folders raised "Expression tree is too large" on
SQLite. Results: bench/results/filter_lists.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from noteseek import DatabaseUrl
from noteseek.storage.open import open_storage
from noteseek.storage.queries import FileFilter
from noteseek.storage.records import ChunkRecord, FileRecord, FileWrite

SIZES = (1, 200, 1_000, 1_500)


def fill(store: object, files: int) -> None:
    with store.write():  # type: ignore[attr-defined]
        for i in range(files):
            tags = (f"t{i % 200}", f"t{(i * 7) % 200}/sub", f"group{i % 10}")
            record = FileRecord(f"f{i % 50}/n{i}.md", 1, 1, f"h{i}", f"N{i}", "ok", None, tags=tags)
            store.replace_file(FileWrite(record, [ChunkRecord(0, "S", f"text {i}", i)]))  # type: ignore[attr-defined]


def timed(store: object, filters: FileFilter) -> float:
    runs = []
    for _ in range(5):
        started = time.perf_counter()
        store.files_matching(filters)  # type: ignore[attr-defined]
        runs.append(time.perf_counter() - started)
    return statistics.median(runs)


def measure(locator: Path | DatabaseUrl, files: int) -> dict[str, dict[int, float]]:
    store = open_storage(locator, create=True)
    try:
        fill(store, files)
        out: dict[str, dict[int, float]] = {"folders": {}, "tags": {}}
        for n in SIZES:
            folders = [f"none/{k}" for k in range(n - 1)] + ["f3"]
            tags = [f"none{k}" for k in range(n - 1)] + ["t3"]
            out["folders"][n] = timed(store, FileFilter(folders=folders))
            out["tags"][n] = timed(store, FileFilter(tags=tags))
        return out
    finally:
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pg", help="a postgresql:// URL (a collection 'filter-bench' is made)")
    parser.add_argument("--files", type=int, default=5_000)
    parser.add_argument("--smoke", action="store_true", help="500 files")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    files = 500 if args.smoke else args.files
    results: dict[str, dict[str, dict[int, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        results["sqlite"] = measure(Path(tmp) / "i.db", files)
    if args.pg:
        from noteseek.core.locator import with_collection

        results["postgres"] = measure(DatabaseUrl(with_collection(args.pg, "filter-bench")), files)
    for backend, kinds in results.items():
        for kind, by_size in kinds.items():
            row = "  ".join(f"{n:>5}: {s * 1000:8.1f} ms" for n, s in by_size.items())
            print(f"{backend:<8} {kind:<7} {row}")
    if args.json:
        command = "python bench/filter_lists.py " + " ".join(
            "URL" if a.startswith("postgresql") else a for a in sys.argv[1:]
        )
        args.json.write_text(
            json.dumps({"command": command, "files": files, "seconds": results}, indent=2) + "\n"
        )


if __name__ == "__main__":
    main()
