"""A collection's first build on PostgreSQL against SQLite's, side by side in one run.

    eval "$(.ci/postgres.sh start --dir /tmp/nspg-build)"
    nice -n 10 python bench/pg_build.py --db "$NOTESEEK_TEST_PG"            # the Obsidian hub
    nice -n 10 python bench/pg_build.py --db "$NOTESEEK_TEST_PG" --smoke    # the sample vault

Each round builds the vault from nothing once per backend (SQLite first in odd rounds,
PostgreSQL first in even ones), each in its own child process through `noteseek.Index(...)
.update(vault)`: a fresh SQLite file, and a fresh collection of `--db` (a new name per round).
`--src` imports another checkout's `src` (e.g. `git archive` of an older commit) to compare
two versions on the same server. Prints wall and CPU seconds of the child (its workers
included; the server's own CPU is not counted) and the PostgreSQL / SQLite wall ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "examples" / "sample-vault"

CHILD = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
import noteseek
db, vault = sys.argv[2], sys.argv[3]
t = time.perf_counter()
with noteseek.open_index(db, vault, create=True, write=True) as idx:
    s = idx.update(vault)
print(json.dumps({"wall": time.perf_counter() - t, "chunks": s.chunks}))
"""


def _with_collection(url: str, name: str) -> str:
    parts = urlsplit(url)
    query = "&".join(q for q in (parts.query, urlencode({"collection": name})) if q)
    return urlunsplit(parts._replace(query=query))


def _child(src: Path, db: str, vault: Path) -> dict[str, Any]:
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(src), db, str(vault)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    out = proc.stdout.read() if proc.stdout else ""
    if os.waitstatus_to_exitcode(status) != 0:
        err = proc.stderr.read() if proc.stderr else ""
        raise SystemExit(f"build failed:\n{err[-3000:]}")
    row: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    row["cpu"] = usage.ru_utime + usage.ru_stime
    return row


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--db", required=True, help="postgresql:// URL of the benchmark server")
    parser.add_argument("--vault", type=Path, help="default: the Obsidian hub (../shared/data)")
    parser.add_argument("--src", type=Path, default=REPO / "src")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--smoke", action="store_true", help="the sample vault, one round")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if args.smoke:
        vault, rounds = SAMPLE, 1
    elif args.vault is not None:
        vault, rounds = args.vault, args.rounds
    else:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from datasets import CORPORA, ensure_corpus

        vault, rounds = ensure_corpus(CORPORA["obsidian-hub"]), args.rounds
    runs: dict[str, list[dict[str, Any]]] = {"sqlite": [], "postgres": []}
    stamp = time.strftime("%H%M%S")
    with tempfile.TemporaryDirectory(prefix="pg-build-") as tmp:
        for r in range(1, rounds + 1):
            order = ("sqlite", "postgres") if r % 2 else ("postgres", "sqlite")
            for side in order:
                db = (
                    str(Path(tmp) / f"r{r}.db")
                    if side == "sqlite"
                    else _with_collection(args.db, f"build-{stamp}-{r}")
                )
                before = os.getloadavg()[0]
                row = _child(args.src.resolve(), db, vault)
                row["load"] = (before + os.getloadavg()[0]) / 2
                runs[side].append(row)
                print(
                    f"round {r} {side:8}: {row['wall']:6.1f} s wall, {row['cpu']:6.1f} s CPU, "
                    f"{row['chunks']} chunks, load {row['load']:.1f}",
                    flush=True,
                )
    med = {s: statistics.median(r["wall"] for r in rows) for s, rows in runs.items()}
    ratio = med["postgres"] / med["sqlite"]
    print(
        f"median wall: SQLite {med['sqlite']:.1f} s, PostgreSQL {med['postgres']:.1f} s; "
        f"PostgreSQL / SQLite {ratio:.2f} (target <= 2.5)"
    )
    if args.json:
        report = {"vault": str(vault), "src": str(args.src), "runs": runs, "ratio": ratio}
        args.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
