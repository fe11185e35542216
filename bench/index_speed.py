"""Indexing cost of noteseek against the literal seed-1 design, side by side in one run.

    nice -n 10 python bench/index_speed.py                  # MDN (../shared/data), 2 rounds
    nice -n 10 python bench/index_speed.py --smoke          # the sample vault, seconds
    nice -n 10 python bench/index_speed.py --no-seed        # one noteseek build: size, updates
    nice -n 10 python bench/index_speed.py --no-seed --tables   # and what each table costs
    nice -n 10 python bench/index_speed.py --no-seed --updates-also HEAD~1   # updates, before/after

The seed-1 design is the seed's first complete checkout (commit ae0a9d0 by default, `--seed`):
the literal reference design (FTS5 + sqlite-vec, potion-base-8M) with its scrubber, taken out of
this repository with `git archive` into a temporary folder and imported from there. Each round
builds a fresh index of the vault once per side, in alternating order (seed first in odd rounds,
noteseek first in even ones), each in its own child process (`Index(db).update(vault)`). CPU is
the child's user + system time including its worker processes (`wait4`), so a parallel build
cannot hide work in other processes. The machine's load average is printed with each line:
wall-time ratios on a loaded machine understate what the second core gives.

Then, on the last noteseek index: a no-op run and a one-note change (whole pass, and a targeted
update naming the path, as the watcher does), each in a fresh process with the index already
open, timed around `update` only, and the targeted one again in a warm process (the watcher's:
one targeted update first, then the timed one), with `--updates-also REV` the same runs of other
revisions side by side in each repeat, and beside them two floors: a plain os.scandir listing of
every folder with a stat per note (any pass that lists folders), and a stat of every folder and
note (a pass that remembers listings); the database size per 50,000 chunks; and, with
`--crossover`, fresh builds of the first N notes in-process (`workers=0`) against the pool (`workers=2`), which
is how `POOL_MIN_NOTES` in engine/update/workers.py was chosen. `--json FILE` keeps every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SEED_COMMIT = "ae0a9d0"
SAMPLE = REPO / "examples" / "sample-vault"

BUILD = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
import noteseek
db, vault, workers = sys.argv[2], sys.argv[3], sys.argv[4]
kwargs = {}
if workers != "-":
    kwargs["options"] = noteseek.IndexOptions(workers=int(workers))
t = time.perf_counter()
with noteseek.Index(db, **kwargs) as idx:
    s = idx.update(vault)
print(json.dumps({"wall": time.perf_counter() - t, "chunks": s.chunks, "file": noteseek.__file__}))
"""

UPDATE = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
import noteseek
db, vault, mode, path = sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
with noteseek.Index(db) as idx:
    if mode.startswith("warm:"):
        # The watcher's case: a long-lived process whose first targeted update has loaded the
        # update path (imports, the model, the tokenizer); the second one is timed.
        with open(path, "a", encoding="utf-8") as fh:
            fh.write("\\nA line the warm-up run takes in.\\n")
        idx.update(vault, paths=[mode.split(":", 1)[1]])
        mode = "paths:" + mode.split(":", 1)[1]
    if mode != "noop":
        with open(path, "a", encoding="utf-8") as fh:
            fh.write("\\nOne more line, appended by the benchmark.\\n")
    t = time.perf_counter()
    s = idx.update(vault, paths=[mode.split(":", 1)[1]]) if mode.startswith("paths:") else idx.update(vault)
    wall = time.perf_counter() - t
print(json.dumps({"wall": wall, "changed": s.changed, "unchanged": s.unchanged}))
"""

# The least a whole pass must do: list every folder and stat every note (no rules, no index);
# then, with the names known from that listing, a stat of every folder and every note: the
# least a pass that remembers folder listings must do (engine/folder_listings.py).
FLOOR = """
import json, os, sys, time
t = time.perf_counter()
stack, found, folders, notes = [sys.argv[1]], 0, [], []
while stack:
    folder = stack.pop()
    folders.append(folder)
    with os.scandir(folder) as listing:
        for entry in listing:
            if entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
            elif entry.name.endswith(".md"):
                entry.stat(follow_symlinks=False)
                notes.append(entry.path)
                found += 1
listed = time.perf_counter() - t
t = time.perf_counter()
for path in folders:
    os.lstat(path)
for path in notes:
    os.lstat(path)
print(json.dumps({"wall": listed, "stat_only": time.perf_counter() - t, "notes": found}))
"""


def _load() -> float:
    return os.getloadavg()[0]


def _child(args: list[str]) -> dict[str, Any]:
    """Run a child python, return its JSON line plus its CPU seconds (workers included)."""
    # Bytecode caching on, as an installed noteseek has it: with PYTHONDONTWRITEBYTECODE set
    # every fresh process compiled each module again (~0.3 s of a no-op run).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    proc = subprocess.Popen(
        [sys.executable, "-c", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    out = proc.stdout.read() if proc.stdout else ""
    err = proc.stderr.read() if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"child failed:\n{err[-3000:]}")
    row: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    row["cpu"] = usage.ru_utime + usage.ru_stime
    row["peak_rss_mb"] = usage.ru_maxrss / 1024
    return row


def _size(db: Path) -> int:
    return sum(p.stat().st_size for p in db.parent.glob(db.name + "*") if p.is_file())


def _clear(db: Path) -> None:
    for p in db.parent.glob(db.name + "*"):
        p.unlink()


def _seed_src(commit: str, dest: Path) -> Path:
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", commit, "src"], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest / "src"


def _subset(vault: Path, dest: Path, count: int) -> Path:
    notes = sorted(p for p in vault.rglob("*.md") if p.is_file())[:count]
    for p in notes:
        target = dest / p.relative_to(vault)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(p, target)
    return dest


def _builds(
    seed: Path | None, new: Path, vault: Path, work: Path, rounds: int, workers: str
) -> dict[str, Any]:
    """`rounds` fresh builds per side; noteseek's alone (once) when `seed` is None."""
    results: dict[str, list[dict[str, Any]]] = (
        {"noteseek": []}
        if seed is None
        else {
            "seed": [],
            "noteseek": [],
        }
    )
    for r in range(1, rounds + 1):
        both = ("seed", "noteseek") if r % 2 else ("noteseek", "seed")
        order = [side for side in both if side in results]
        for side in order:
            db = work / f"{side}.db"
            _clear(db)
            src, w = (seed or new, "-") if side == "seed" else (new, workers)
            before = _load()
            row = _child([BUILD, str(src), str(db), str(vault), w])
            row.update(bytes=_size(db), load=(before + _load()) / 2)
            # Which code ran, checked here and kept relative: no machine path in the figures.
            row["file"] = Path(row["file"]).resolve().relative_to(src.resolve().parent).as_posix()
            results[side].append(row)
            print(
                f"round {r} {side:8}: {row['wall']:6.1f} s wall, {row['cpu']:6.1f} s CPU, "
                f"{row['chunks']} chunks, {row['bytes'] / 1e6:.1f} MB, "
                f"peak RSS {row['peak_rss_mb']:.0f} MB, load {row['load']:.1f}",
                flush=True,
            )
    med = {
        side: {k: statistics.median(row[k] for row in rows) for k in ("wall", "cpu", "bytes")}
        for side, rows in results.items()
    }
    for side, m in med.items():
        print(f"{side:8}: median {m['wall']:.1f} s wall, {m['cpu']:.1f} s CPU")
    ratio: dict[str, float] = {}
    if "seed" in med:
        ratio = {k: med["noteseek"][k] / med["seed"][k] for k in ("wall", "cpu", "bytes")}
        print(
            f"noteseek / seed-1: wall {ratio['wall']:.3f} (target <= 0.5), "
            f"CPU {ratio['cpu']:.3f} (target <= 0.8)",
            flush=True,
        )
    chunks = results["noteseek"][-1]["chunks"]
    per_50k = med["noteseek"]["bytes"] / chunks * 50_000 / 1e6 if chunks else 0.0
    print(f"noteseek database: {per_50k:.1f} MB per 50,000 chunks (target <= 83)")
    return {"runs": results, "median": med, "ratio": ratio, "mb_per_50k_chunks": per_50k}


def _tables(db: Path) -> dict[str, int]:
    """Bytes of each table and index of the file (SQLite's dbstat), largest first, printed."""
    import apsw  # deferred: only with --tables

    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        found: list[Any] = conn.execute(
            "SELECT name, SUM(pgsize), SUM(unused) FROM dbstat GROUP BY name ORDER BY 2 DESC"
        ).fetchall()
        pragmas: list[Any] = [
            conn.execute(f"PRAGMA {name}").fetchall()[0][0]
            for name in ("freelist_count", "page_size")
        ]
        free, page = int(pragmas[0]), int(pragmas[1])
    finally:
        conn.close()
    rows = [(str(name), int(size), int(unused)) for name, size, unused in found]
    out = {name: size for name, size, _ in rows}
    out["(free pages)"] = free * page
    print(f"tables of the last noteseek database ({page // 1024} KB pages):")
    for name, size, unused in rows:
        if size >= 100_000:
            print(f"  {name:28} {size / 1e6:6.2f} MB ({unused / 1e6:.2f} MB of it unused)")
    small = sum(size for _, size, _ in rows if size < 100_000)
    print(f"  {'(the rest)':28} {small / 1e6:6.2f} MB")
    print(f"  {'(free pages)':28} {out['(free pages)'] / 1e6:6.2f} MB", flush=True)
    return out


def _updates(
    sources: list[tuple[str, Path]], vault: Path, work: Path, repeats: int
) -> dict[str, Any]:
    """No-op and one-note runs on the last noteseek index, for each (label, src) in turn within
    each repeat (side by side: the first is this checkout, others are `--updates-also` revisions,
    each on an index it builds itself, since an older revision may not open a newer schema)."""
    dbs = {label: work / "noteseek.db" for label, _ in sources[:1]}
    for i, (label, src) in enumerate(sources[1:], 1):
        dbs[label] = work / f"rev-{i}.db"
        _clear(dbs[label])
        _child([BUILD, str(src), str(dbs[label]), str(vault), "-"])
    note = sorted(p for p in vault.rglob("*.md") if p.is_file())[
        len(list(vault.rglob("*.md"))) // 2
    ]
    rel = note.relative_to(vault).as_posix()
    modes = (
        ("noop", "noop"),
        ("one_note", "one"),
        ("one_note_targeted", f"paths:{rel}"),
        ("one_note_watcher", f"warm:{rel}"),
    )
    out: dict[str, dict[str, list[float]]] = {
        label: {name: [] for name, _ in modes} for label, _ in sources
    }
    floor: list[float] = []
    stat_floor: list[float] = []
    original = note.read_bytes()
    try:
        for _ in range(repeats):
            row = _child([FLOOR, str(vault)])
            floor.append(row["wall"])
            stat_floor.append(row["stat_only"])
            for label, src in sources:
                db = dbs[label]
                # Untimed: this index takes in what the other sources' runs appended to the note,
                # so its no-op run finds nothing to do.
                _child([UPDATE, str(src), str(db), str(vault), "noop", str(note)])
                for name, mode in modes:
                    row = _child([UPDATE, str(src), str(db), str(vault), mode, str(note)])
                    out[label][name].append(row["wall"])
    finally:
        note.write_bytes(original)
    med = {
        label: {k: statistics.median(v) for k, v in runs.items()} for label, runs in out.items()
    }
    for label, m in med.items():
        print(
            f"{label}: no-op run {m['noop']:.3f} s (target <= 0.3), one-note change: whole pass "
            f"{m['one_note']:.3f} s, targeted {m['one_note_targeted']:.3f} s in a fresh process, "
            f"{m['one_note_watcher']:.3f} s in a warm one, as the watcher's (target <= 0.2); "
            f"load {_load():.1f}",
            flush=True,
        )
    print(
        f"a plain listing of every folder with a stat per note: {statistics.median(floor):.3f} s; "
        f"a stat of every folder and note (the floor with remembered listings): "
        f"{statistics.median(stat_floor):.3f} s",
        flush=True,
    )
    first = sources[0][0]
    return {
        "runs": out[first],
        "median": med[first],
        "also": {k: med[k] for k in med if k != first},
        "walk_floor": statistics.median(floor),
        "stat_floor": statistics.median(stat_floor),
    }


def _crossover(new: Path, vault: Path, work: Path, sizes: list[int]) -> list[dict[str, Any]]:
    rows = []
    for n in sizes:
        sub = _subset(vault, work / f"sub{n}", n)
        row: dict[str, Any] = {"notes": n}
        for w in ("0", "2"):
            db = work / f"x{n}-{w}.db"
            _clear(db)
            # Force the pool at any size: POOL_MIN_NOTES is what this measures.
            got = _child([_FORCED_POOL + BUILD, str(new), str(db), str(sub), w])
            row[f"wall_w{w}"], row[f"cpu_w{w}"] = got["wall"], got["cpu"]
        rows.append(row)
        print(
            f"{n:5} notes: in-process {row['wall_w0']:.2f} s wall / {row['cpu_w0']:.2f} s CPU, "
            f"2 workers {row['wall_w2']:.2f} s / {row['cpu_w2']:.2f} s; load {_load():.1f}",
            flush=True,
        )
        shutil.rmtree(sub)
    return rows


_FORCED_POOL = (
    "import sys\nsys.path.insert(0, sys.argv[1])\n"
    "import noteseek.engine.update.workers as w\nw.POOL_MIN_NOTES = 1\n"
)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--vault", type=Path, help="default: MDN from ../shared/data")
    parser.add_argument("--seed", default=SEED_COMMIT, help="the seed-1 commit")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--new-src",
        type=Path,
        default=REPO / "src",
        help="noteseek's src folder (default: this one)",
    )
    parser.add_argument("--workers", default="-", help="noteseek's workers (default: its own)")
    parser.add_argument("--repeats", type=int, default=3, help="no-op / one-note runs")
    parser.add_argument("--crossover", default="", help="note counts, e.g. 25,50,100,200,400")
    parser.add_argument(
        "--no-seed",
        action="store_true",
        help="one noteseek build only (its size, then the no-op and one-note runs on it)",
    )
    parser.add_argument(
        "--tables",
        action="store_true",
        help="print what each table and index of the database costs",
    )
    parser.add_argument(
        "--updates-also",
        default="",
        help="git revisions whose update runs are measured beside this checkout's, e.g. HEAD~1",
    )
    parser.add_argument("--smoke", action="store_true", help="the sample vault, one round")
    parser.add_argument("--json", type=Path, help="write every figure here")
    args = parser.parse_args()
    if args.smoke:
        vault, rounds, repeats = SAMPLE, 1, 1
        crossover = [10]
    else:
        if args.vault is None:
            sys.path.insert(0, str(Path(__file__).resolve().parent))
            from datasets import CORPORA, ensure_corpus

            args.vault = ensure_corpus(CORPORA["mdn-content-en"]) / "files" / "en-us"
        vault, rounds, repeats = args.vault, args.rounds, args.repeats
        crossover = [int(n) for n in args.crossover.split(",") if n]
    report: dict[str, Any] = {
        # Relative to the checkout: the figures are kept in the repository, machine paths not.
        "vault": str(vault.relative_to(REPO)) if vault.is_relative_to(REPO) else vault.name,
        "seed": args.seed,
        "cores": os.cpu_count(),
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "load_at_start": _load(),
    }
    with tempfile.TemporaryDirectory(prefix="index-speed-") as tmp:
        work = Path(tmp)
        (work / "seed").mkdir()
        try:
            seed = _seed_src(args.seed, work / "seed")
        except (OSError, subprocess.CalledProcessError) as exc:
            if not args.smoke:
                raise SystemExit(
                    f"the seed design {args.seed} is not in this checkout's history: {exc}"
                ) from None
            # A smoke run checks the script, not the figures: a checkout without history (a CI
            # tarball) compares noteseek with itself.
            print(
                f"seed {args.seed} unavailable ({exc}); smoke run compares this checkout with itself"
            )
            seed = args.new_src.resolve()
        copy = _subset(vault, work / "vault", 10**9)  # the one-note change edits a copy
        new = args.new_src.resolve()
        if args.no_seed:
            report["builds"] = _builds(None, new, copy, work, 1, args.workers)
        else:
            report["builds"] = _builds(seed, new, copy, work, rounds, args.workers)
        if args.tables:
            report["tables"] = _tables(work / "noteseek.db")
        sources = [("noteseek", new)]
        for rev in (r for r in args.updates_also.split(",") if r):
            (work / f"rev-{len(sources)}").mkdir()
            sources.append((rev, _seed_src(rev, work / f"rev-{len(sources)}")))
        report["updates"] = _updates(sources, copy, work, repeats)
        if crossover:
            report["crossover"] = _crossover(new, copy, work, crossover)
    report["load_at_end"] = _load()
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
