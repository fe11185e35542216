"""`/api/search` over loopback against the warm library on MDN, and 16 clients for 30 s.

    nice -n 10 python bench/web_load.py [--db bench/.cache/mdn.db] [--queries N] [--seconds 30]

1. Latency, side by side: `noteseek web` runs as a child process over the MDN index (built by
   bench/quality.py or perf.py into bench/.cache/mdn.db; --db for another). This process opens
   the same index as a library `Index` and warms it. Then, query by query in alternation, it
   times `Index.search(q)` and `GET /api/search?q=…` on one kept-alive HTTP connection (same
   query, same defaults: hybrid, limit 10), so both see the same machine load. Printed: p50 and
   p95 of each, and the p50 of the per-query difference (HTTP − library). Target: HTTP p50 ≤
   library p50 + 3 ms.
2. Load: Debian's `wrk` (apt-get install wrk) with 16 connections on 2 threads for `--seconds`,
   cycling through the same queries (a Lua script), against 127.0.0.1 only, `--rounds` times.
   Printed per round: requests, errors (connect/read/write/timeout and non-2xx), throughput,
   p50/p95/p99, and the server's RSS after it (VmRSS) and its peak (VmHWM); RSS before the first.

Queries are MDN's anchor-text known-item queries from ../shared/data (exit 2 without them).
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
import noteseek  # noqa: E402
from datasets import CACHE_DIR, DATA_DIR, read_queries  # noqa: E402

BIN = Path(sys.executable).parent
QUERIES = Path("mdn-content-en") / "knownitem-anchor" / "queries.jsonl"
WRK_SCRIPT = """
local paths = {}
for line in io.lines("%(paths)s") do paths[#paths + 1] = line end
local counter = 0
request = function()
  counter = counter + 1
  return wrk.format("GET", paths[(counter %% #paths) + 1])
end
done = function(summary, latency, requests)
  io.write(string.format(
    "RESULT {\\"requests\\": %%d, \\"seconds\\": %%f, \\"connect\\": %%d, \\"read\\": %%d, "
    .. "\\"write\\": %%d, \\"status\\": %%d, \\"timeout\\": %%d, \\"p50_ms\\": %%f, "
    .. "\\"p95_ms\\": %%f, \\"p99_ms\\": %%f, \\"max_ms\\": %%f}\\n",
    summary.requests, summary.duration / 1e6, summary.errors.connect, summary.errors.read,
    summary.errors.write, summary.errors.status, summary.errors.timeout,
    latency:percentile(50) / 1e3, latency:percentile(95) / 1e3, latency:percentile(99) / 1e3,
    latency.max / 1e3))
end
"""


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def rss_kb(pid: int) -> dict[str, int]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0])
    return fields


def wait_up(port: int, proc: subprocess.Popen[bytes], timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"noteseek web exited with {proc.returncode}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/api/status")
            if conn.getresponse().status == 200:
                return
        except OSError:
            time.sleep(0.5)
    raise SystemExit("noteseek web did not come up")


def side_by_side(port: int, db: Path, queries: list[str]) -> dict[str, float]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    lib_ms: list[float] = []
    http_ms: list[float] = []
    server: dict[str, list[float]] = {}  # the server's own Server-Timing parts, ms
    with noteseek.Index(db, create=False) as idx:
        for q in queries[:20]:  # warm both: vectors, encoder, numpy, connection, page cache
            idx.search(q)
            conn.request("GET", "/api/search?" + urllib.parse.urlencode({"q": q}))
            conn.getresponse().read()
        for i, q in enumerate(queries):
            path = "/api/search?" + urllib.parse.urlencode({"q": q})
            order = ("lib", "http") if i % 2 == 0 else ("http", "lib")
            for what in order:
                t = time.perf_counter()
                if what == "lib":
                    idx.search(q)
                    lib_ms.append((time.perf_counter() - t) * 1000)
                else:
                    conn.request("GET", path)
                    reply = conn.getresponse()
                    body = reply.read()
                    http_ms.append((time.perf_counter() - t) * 1000)
                    if reply.status != 200:
                        raise SystemExit(f"HTTP {reply.status} for {q!r}: {body[:200]!r}")
                    for part in (reply.getheader("server-timing") or "").split(","):
                        name, _, value = part.strip().partition(";dur=")
                        server.setdefault(name, []).append(float(value))
    diffs = [h - lib for h, lib in zip(http_ms, lib_ms)]
    return {
        "library_p50": statistics.median(lib_ms),
        "library_p95": pct(lib_ms, 95),
        "http_p50": statistics.median(http_ms),
        "http_p95": pct(http_ms, 95),
        "diff_p50": statistics.median(diffs),
        **{f"server_{name}_p50": statistics.median(v) for name, v in server.items()},
    }


def load(port: int, queries: list[str], seconds: int, tmp: Path) -> dict[str, float]:
    wrk = shutil.which("wrk")
    if wrk is None:
        raise SystemExit("the load test needs Debian's wrk: apt-get install -y wrk")
    paths = tmp / "paths.txt"
    paths.write_text(
        "".join("/api/search?" + urllib.parse.urlencode({"q": q}) + "\n" for q in queries)
    )
    script = tmp / "cycle.lua"
    script.write_text(WRK_SCRIPT % {"paths": paths})
    out = subprocess.run(
        [
            wrk,
            "-t2",
            "-c16",
            f"-d{seconds}s",
            "--timeout",
            "10s",
            "-s",
            str(script),
            f"http://127.0.0.1:{port}/",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    line = next(x for x in out.splitlines() if x.startswith("RESULT "))
    result: dict[str, float] = json.loads(line.removeprefix("RESULT "))
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, default=CACHE_DIR / "mdn.db")
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--seconds", type=int, default=30)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2, help="load rounds (RSS after each)")
    args = parser.parse_args()
    source = args.data_dir / QUERIES
    if not source.exists():
        print(f"needs {source} (../shared/data beside the repo, or --data-dir)", file=sys.stderr)
        return 2
    if not args.db.exists():
        print(f"no index at {args.db}: run bench/quality.py --sets mdn first", file=sys.stderr)
        return 2
    if args.rounds and shutil.which("wrk") is None:
        print("web_load skipped: the load rounds need Debian's wrk (apt-get install -y wrk)")
        return 0
    texts = list(read_queries(source).values())
    queries = random.Random(17).sample(texts, min(args.queries, len(texts)))
    port = free_port()
    server = subprocess.Popen(
        [
            BIN / "noteseek",
            "web",
            "--db",
            args.db,
            "--port",
            str(port),
            "--workers",
            str(args.workers),
        ],
        stderr=subprocess.PIPE,
    )
    try:
        wait_up(port, server)
        print(f"MDN index {args.db}, {len(queries)} anchor queries, server workers={args.workers}")
        lat = side_by_side(port, args.db, queries)
        print(
            f"latency, alternating ({len(queries)} queries each): library p50 "
            f"{lat['library_p50']:.2f} ms p95 {lat['library_p95']:.2f} ms | /api/search p50 "
            f"{lat['http_p50']:.2f} ms p95 {lat['http_p95']:.2f} ms | per-query difference p50 "
            f"{lat['diff_p50']:+.2f} ms (target: HTTP p50 ≤ library p50 + 3 ms: "
            f"{'met' if lat['http_p50'] <= lat['library_p50'] + 3 else 'NOT met'})"
        )
        print(
            "  inside the server (Server-Timing p50): "
            + ", ".join(
                f"{k.removeprefix('server_').removesuffix('_p50')} {v:.2f} ms"
                for k, v in lat.items()
                if k.startswith("server_")
            )
        )
        before = rss_kb(server.pid)
        print(f"server RSS before the load {before['VmRSS'] / 1024:.0f} MB")
        errors = 0
        for round_ in range(1, args.rounds + 1):
            with tempfile.TemporaryDirectory() as tmp:
                result = load(port, queries, args.seconds, Path(tmp))
            after = rss_kb(server.pid)
            failed = sum(int(result[k]) for k in ("connect", "read", "write", "status", "timeout"))
            errors += failed
            print(
                f"load round {round_}, wrk 16 connections / 2 threads / {result['seconds']:.0f} s: "
                f"{int(result['requests'])} requests, {failed} errors "
                f"(connect {int(result['connect'])}, read {int(result['read'])}, write "
                f"{int(result['write'])}, non-2xx {int(result['status'])}, timeout "
                f"{int(result['timeout'])}), {result['requests'] / result['seconds']:.1f} req/s, "
                f"p50 {result['p50_ms']:.0f} ms p95 {result['p95_ms']:.0f} ms p99 "
                f"{result['p99_ms']:.0f} ms max {result['max_ms']:.0f} ms; server RSS after "
                f"{after['VmRSS'] / 1024:.0f} MB (peak so far {after['VmHWM'] / 1024:.0f} MB)"
            )
        return 0 if errors == 0 else 1
    finally:
        server.terminate()
        server.wait(30)


if __name__ == "__main__":
    sys.exit(main())
