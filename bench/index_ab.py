"""Full-index throughput of two checkouts on MDN, side by side in alternating rounds.

    git worktree add /tmp/ns-old 241977c && python -m venv /tmp/ns-old-venv \\
        && /tmp/ns-old-venv/bin/pip install -e /tmp/ns-old
    nice -n 10 python bench/index_ab.py --old /tmp/ns-old-venv/bin/python --rounds 3

Each round indexes the same unpacked MDN vault from scratch, once with the old interpreter (its
noteseek) and once with this one (``--new``, default: the running interpreter), in alternating
order (old first in odd rounds, new first in even ones), each in a child process.  Printed per
side: wall seconds, CPU seconds of the child (user + system: the machine is shared, so CPU time is
the steadier figure) and chunks per CPU-second; then the medians and new/old ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from datasets import CORPORA, DATA_DIR, ensure_corpus

CHILD = """
import json, sys, time, noteseek
db, vault = sys.argv[1], sys.argv[2]
with noteseek.Index(db) as idx:
    t = time.perf_counter()
    s = idx.update(vault)
    elapsed = time.perf_counter() - t
print(json.dumps({"seconds": elapsed, "chunks": s.chunks, "files": s.files_seen,
                  "secrets": s.secrets_scrubbed, "version": noteseek.__file__}))
"""


def run(python: str, vault: Path, work: Path) -> dict[str, float]:
    db = work / "ab.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    proc = subprocess.Popen(
        [python, "-c", CHILD, str(db), str(vault)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    out = proc.stdout.read() if proc.stdout else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{python} failed:\n{proc.stderr.read() if proc.stderr else ''}")
    answer: dict[str, float] = json.loads(out.strip().splitlines()[-1])
    answer["cpu"] = usage.ru_utime + usage.ru_stime
    return answer


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--old", required=True, help="python of the old checkout's venv")
    parser.add_argument("--new", default=sys.executable, help="python of the new checkout")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--vault", type=Path, help="default: MDN from ../shared/data")
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR)
    args = parser.parse_args()
    mdn = CORPORA["mdn-content-en"]
    vault = args.vault or ensure_corpus(mdn, data_dir=args.data_dir) / "files" / "en-us"
    results: dict[str, list[dict[str, float]]] = {"old": [], "new": []}
    with tempfile.TemporaryDirectory(prefix="noteseek-ab-") as tmp:
        work = Path(tmp)
        for round_ in range(1, args.rounds + 1):
            order = ("old", "new") if round_ % 2 else ("new", "old")
            for side in order:
                answer = run(args.old if side == "old" else args.new, vault, work)
                results[side].append(answer)
                print(
                    f"round {round_} {side}: {answer['seconds']:6.1f} s wall, {answer['cpu']:6.1f} s "
                    f"CPU, {answer['chunks']} chunks, {answer['chunks'] / answer['cpu']:,.0f} "
                    f"chunks/CPU-s, {answer['secrets']} secrets scrubbed",
                    flush=True,
                )
    print()
    medians = {}
    for side, runs in results.items():
        wall = statistics.median(r["seconds"] for r in runs)
        cpu = statistics.median(r["cpu"] for r in runs)
        rate = statistics.median(r["chunks"] / r["cpu"] for r in runs)
        medians[side] = (wall, cpu, rate)
        print(f"{side}: median {wall:.1f} s wall, {cpu:.1f} s CPU, {rate:,.0f} chunks/CPU-s")
    (ow, oc, orate), (nw, nc, nrate) = medians["old"], medians["new"]
    print(
        f"new/old: wall {nw / ow:.3f}, CPU {nc / oc:.3f}, chunks/CPU-s {nrate / orate:.3f} "
        "(the new pipeline keeps more chunks: short sections are merged, not dropped)"
    )


if __name__ == "__main__":
    main()
