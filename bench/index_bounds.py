"""What one hostile file costs the index: size, time and peak memory of `noteseek index`.

    python bench/index_bounds.py                         # this checkout
    python bench/index_bounds.py --old-src /tmp/old/src  # and another one (e.g. `git archive`)
    python bench/index_bounds.py --smoke                 # the small cases only, seconds

Each case is a vault of one file, indexed from scratch by `python -m noteseek index` in a child
process (its peak RSS from wait4); the figure is the index file's size after a checkpoint, next
to the file's own size:

- `title-150k`: a frontmatter title of 150 KB over 200 short sections;
- `aliases-2k`: 2,000 aliases of 50 characters over 200 short sections;
- `title-1.5m`: a 1.47 MB title over 200 short sections (skipped with --smoke; minutes before the
  caps);
- `pdf-title-142k`: a 200-page PDF whose /Title is 142 KB.

Results: bench/results/index_bounds.json (with the command that made them).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from tests.test_index_bounds import WORDS, hostile_pdf, long_title  # noqa: E402  # one generator for both

SECTIONS = "\n\n".join(
    f"## Section {i}\n\nShort text number {i} about {WORDS[i % len(WORDS)]} things here."
    for i in range(200)
)


def cases(smoke: bool) -> dict[str, tuple[str, bytes]]:
    """name -> (file name, bytes)."""
    aliases = "\n".join(f"  - alias number {i} {'x' * 34}" for i in range(2_000))
    out = {
        "title-150k": ("huge.md", f"---\ntitle: {long_title(150_000)}\n---\n\n{SECTIONS}\n".encode()),
        "aliases-2k": ("aliases.md", f"---\naliases:\n{aliases}\n---\n\n{SECTIONS}\n".encode()),
        "pdf-title-142k": (
            "big-title.pdf",
            hostile_pdf(long_title(142_000), [f"Page {i} about {WORDS[i % 13]}." for i in range(200)]),
        ),
    }
    if not smoke:
        out["title-1.5m"] = ("huger.md", f"---\ntitle: {long_title(1_470_000)}\n---\n\n{SECTIONS}\n".encode())
    return out


def measure(src: Path, name: str, data: bytes, work: Path) -> dict[str, float | int]:
    vault = work / "vault"
    vault.mkdir(parents=True)
    (vault / name).write_bytes(data)
    db = work / "i.db"
    env = {k: v for k, v in os.environ.items() if not k.startswith("NOTESEEK_")}
    env.update(PYTHONPATH=str(src), NOTESEEK_HOME=str(work / "home"), HF_HUB_OFFLINE="1")
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "noteseek", "index", str(vault), "--db", str(db), "-q"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - started
    if status != 0:
        raise SystemExit(f"{name}: index failed ({status}): {proc.stderr.read().decode()[-2000:] if proc.stderr else ''}")
    import apsw

    conn = apsw.Connection(str(db))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    size = sum(p.stat().st_size for p in work.glob("i.db*"))
    return {"file_bytes": len(data), "index_bytes": size, "seconds": round(seconds, 2),
            "peak_rss_mb": round(usage.ru_maxrss / 1024, 1)}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--old-src", type=Path, help="also run another checkout's src folder")
    parser.add_argument("--smoke", action="store_true", help="skip the 1.5 MB title")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args()
    sources = {"new": REPO / "src"} | ({"old": args.old_src} if args.old_src else {})
    results: dict[str, dict[str, dict[str, float | int]]] = {}
    for case, (name, data) in cases(args.smoke).items():
        for label, src in sources.items():
            with tempfile.TemporaryDirectory() as tmp:
                row = measure(src, name, data, Path(tmp))
            results.setdefault(case, {})[label] = row
            print(
                f"{case:<15} {label:<4} file {row['file_bytes'] / 1e6:7.2f} MB  "
                f"index {row['index_bytes'] / 1e6:8.2f} MB  {row['seconds']:7.1f} s  "
                f"peak RSS {row['peak_rss_mb']:7.1f} MB",
                flush=True,
            )
    if args.json:
        command = "python bench/index_bounds.py " + " ".join(sys.argv[1:])
        args.json.write_text(json.dumps({"command": command, "results": results}, indent=2) + "\n")


if __name__ == "__main__":
    main()
