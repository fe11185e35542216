"""`/api/search` of this checkout against another checkout's server and the warm library, side by side.

    nice -n 10 python bench/web_latency_ab.py --old-src /work/main/src [--db bench/.cache/mdn.db]
        [--data-dir ../shared/data] [--queries 300]

Starts two `noteseek web` servers over the same index (2 workers each): one on this checkout's
`src`, one with `PYTHONPATH=OLD_SRC` (e.g. the branch before a change), and opens the index as a
library `Index` in this process. Then query by query, in a rotating order, it times
`Index.search(q)` and `GET /api/search?q=…` on one kept-alive connection to each server, so all
three see the same machine load. Printed: the p50 of each and the per-query differences' p50s.
Queries are MDN's anchor-text known-item queries (exit 2 without them).
"""

from __future__ import annotations

import argparse
import http.client
import itertools
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
import noteseek  # noqa: E402
from datasets import CACHE_DIR, DATA_DIR, read_queries  # noqa: E402

QUERIES = Path("mdn-content-en") / "knownitem-anchor" / "queries.jsonl"


def start(src: Path, db: Path) -> tuple[subprocess.Popen[bytes], http.client.HTTPConnection]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    env = dict(os.environ, PYTHONPATH=str(src))
    command = [sys.executable, "-m", "noteseek", "web", "--db", str(db), "--port", str(port)]
    proc = subprocess.Popen([*command, "--workers", "2"], env=env, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            conn.request("GET", "/api/status")
            conn.getresponse().read()
            return proc, conn
        except OSError:
            time.sleep(0.2)
    proc.terminate()
    raise SystemExit(f"the server on {src} did not come up")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old-src", type=Path, required=True)
    parser.add_argument("--db", type=Path, default=CACHE_DIR / "mdn.db")
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR)
    parser.add_argument("--queries", type=int, default=300)
    args = parser.parse_args()
    if not (args.data_dir / QUERIES).exists():
        print(f"needs {args.data_dir / QUERIES}", file=sys.stderr)
        return 2
    queries = list(read_queries(args.data_dir / QUERIES).values())[: args.queries]
    servers = {"old": start(args.old_src, args.db), "new": start(REPO / "src", args.db)}
    times: dict[str, list[float]] = {"library": [], "old": [], "new": []}
    try:
        with noteseek.Index(args.db, create=False) as idx:

            def one(what: str, q: str) -> float:
                started = time.perf_counter()
                if what == "library":
                    idx.search(q)
                else:
                    conn = servers[what][1]
                    conn.request("GET", "/api/search?" + urllib.parse.urlencode({"q": q}))
                    reply = conn.getresponse()
                    reply.read()
                    if reply.status != 200:
                        raise SystemExit(f"{what}: HTTP {reply.status} for {q!r}")
                return (time.perf_counter() - started) * 1000

            for q in queries[:20]:  # warm all three
                for what in times:
                    one(what, q)
            orders = list(itertools.permutations(times))
            for i, q in enumerate(queries):
                for what in orders[i % len(orders)]:
                    times[what].append(one(what, q))
    finally:
        for proc, _ in servers.values():
            proc.terminate()
    p50 = {k: statistics.median(v) for k, v in times.items()}

    def diff(a: str, b: str) -> float:
        return statistics.median([x - y for x, y in zip(times[a], times[b])])

    print(f"{len(queries)} queries, old = {args.old_src}, new = {REPO / 'src'}")
    print(
        f"p50: library {p50['library']:.2f} ms | old server {p50['old']:.2f} ms | "
        f"new server {p50['new']:.2f} ms"
    )
    print(
        f"per-query p50: old - library {diff('old', 'library'):+.2f} ms | new - library "
        f"{diff('new', 'library'):+.2f} ms | new - old {diff('new', 'old'):+.2f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
