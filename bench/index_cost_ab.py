"""Full-index time and DB size of two noteseek checkouts on one vault, side by side, alternating.

    git archive main | tar -x -C /tmp/ns-main
    nice -n 10 python bench/index_cost_ab.py --old-src /tmp/ns-main/src --vault bench/.cache/mdn-content-en/mdn-en-us

Each round builds a fresh index of the vault once per checkout (old first, then new), each in its
own child process (`Index.update(vault)` from an empty DB, WAL checkpointed by closing), so machine
noise hits both alike. Prints wall and CPU seconds per round, the medians, the DB sizes and the
new/old ratios. The default path only: no multilingual lane is built.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

CHILD = """
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
import noteseek
db, vault = sys.argv[2], sys.argv[3]
cpu = resource.getrusage(resource.RUSAGE_SELF)
t = time.perf_counter()
with noteseek.Index(db) as idx:
    s = idx.update(vault)
wall = time.perf_counter() - t
after = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"wall": wall, "cpu": after.ru_utime + after.ru_stime - cpu.ru_utime - cpu.ru_stime,
                  "chunks": s.chunks, "file": noteseek.__file__}))
"""


def _size(db: Path) -> int:
    return sum(p.stat().st_size for p in db.parent.glob(db.name + "*"))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--old-src", required=True, type=Path)
    parser.add_argument("--new-src", type=Path, default=REPO / "src")
    parser.add_argument("--vault", required=True, type=Path)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    if not args.vault.is_dir():
        raise SystemExit(f"{args.vault} is not a folder (quality.py unpacks MDN into bench/.cache/)")
    results: dict[str, list[dict[str, float]]] = {"old": [], "new": []}
    with tempfile.TemporaryDirectory(prefix="index-cost-") as tmp:
        for r in range(args.rounds):
            for name, src in (("old", args.old_src), ("new", args.new_src)):
                db = Path(tmp) / f"{name}-{r}.db"
                out = subprocess.run(
                    [sys.executable, "-c", CHILD, str(src.resolve()), str(db), str(args.vault)],
                    capture_output=True,
                    text=True,
                    check=True,
                )
                row = json.loads(out.stdout.strip().splitlines()[-1])
                row["bytes"] = _size(db)
                results[name].append(row)
                print(
                    f"round {r + 1} {name}: {row['wall']:.1f} s wall, {row['cpu']:.1f} s CPU, "
                    f"{row['bytes'] / 1e6:.1f} MB, {row['chunks']} chunks ({row['file']})",
                    flush=True,
                )
                db.unlink()
                for extra in Path(tmp).glob(f"{name}-{r}.db-*"):
                    extra.unlink()
    med = {
        name: {k: statistics.median(row[k] for row in rows) for k in ("wall", "cpu", "bytes")}
        for name, rows in results.items()
    }
    for name, m in med.items():
        print(f"{name}: median {m['wall']:.1f} s wall, {m['cpu']:.1f} s CPU, {m['bytes'] / 1e6:.1f} MB")
    print(
        f"new / old: wall {med['new']['wall'] / med['old']['wall']:.3f}, "
        f"CPU {med['new']['cpu'] / med['old']['cpu']:.3f}, size {med['new']['bytes'] / med['old']['bytes']:.3f}"
    )


if __name__ == "__main__":
    main()
