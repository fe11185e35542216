"""Latency of authenticated `noteseek web` requests while idle connections try to fill the server.

    nice -n 10 python bench/web_idle.py [--db INDEX] [--idle 0 150 1000] [--requests 200]
        [--old-src OTHER/src] [--fd-limit 1024] [--json bench/results/web_idle.json]
    python bench/web_idle.py --smoke        # CI: the sample vault, 0 and 150 idle, 20 requests

Starts a real `noteseek web --token T` (one worker) over INDEX (default: the sample vault,
indexed into a temporary folder), and for each N of `--idle` opens N sockets to it from
127.0.0.1 that never send a byte, replacing every one the server closes (as an attacker would,
at most N new sockets a second). With them open it sends `--requests` authenticated
`GET /api/search` requests, each on a new connection (the path an attacker can block), and
prints p50/p95/max latency, how many were not 200, and how many of the N sockets the server
kept open. `--old-src` runs the same rounds against another checkout's server (e.g. main before
the connection guard) for comparison; `--fd-limit` gives the server a descriptor limit such as
a desktop's (the attacker's process keeps its own). Loopback only; every loop is bounded.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from multiprocessing.connection import Connection
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SAMPLE_VAULT = REPO / "examples" / "sample-vault"
TOKEN = "bench-token-" + "0" * 32
QUERIES = ["undo a rebase", "rotate tokens", "sourdough", "kubernetes ingress", "fusion"]


@dataclass(frozen=True)
class Round:
    server: str
    idle_wanted: int
    idle_held: int
    requests: int
    not_200: int
    p50_ms: float
    p95_ms: float
    max_ms: float


class IdleCrowd:
    """N sockets that never send a byte, replaced when the server closes them; in a process of
    their own, so the attacker's work does not slow down the client being measured."""

    def __init__(self, port: int, count: int) -> None:
        self.port, self.count = port, count
        self.parent, child = multiprocessing.Pipe()
        self.process = multiprocessing.Process(target=_crowd, args=(port, count, child))

    def __enter__(self) -> IdleCrowd:
        self.process.start()
        self.parent.recv()  # "open": every socket connected
        time.sleep(0.5)  # and accepted (or evicted) by the server
        return self

    def held(self) -> int:
        """How many of the sockets the server has not closed (asked before leaving)."""
        self.parent.send("held?")
        return int(self.parent.recv())

    def __exit__(self, *exc: object) -> None:
        self.parent.send("stop")
        self.process.join(30)
        if self.process.is_alive():
            self.process.terminate()


def _crowd(port: int, count: int, pipe: Connection) -> None:
    def open_one() -> socket.socket | None:
        try:
            return socket.create_connection(("127.0.0.1", port), timeout=5)
        except OSError:
            return None

    sockets = [open_one() for _ in range(count)]
    pipe.send("open")
    while True:
        if pipe.poll(1.0):  # at most `count` new sockets a second
            ask = pipe.recv()
            if ask == "stop":
                break
            pipe.send(sum(s is not None and not _closed(s) for s in sockets))
            continue
        for i, s in enumerate(sockets):
            if s is None or _closed(s):
                if s is not None:
                    s.close()
                sockets[i] = open_one()
    for s in sockets:
        if s is not None:
            s.close()


def _closed(sock: socket.socket) -> bool:
    import select

    try:
        readable, _, _ = select.select([sock], [], [], 0)
        return bool(readable) and sock.recv(1, socket.MSG_PEEK) == b""
    except (OSError, ValueError):
        return True


def start_server(
    db: Path, src: Path | None, fd_limit: int | None = None
) -> tuple[subprocess.Popen[bytes], int]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    env = dict(os.environ, PYTHONPATH=str(src)) if src is not None else dict(os.environ)
    command = [sys.executable, "-m", "noteseek", "web", "--db", str(db), "--port", str(port)]

    def limit_descriptors() -> None:  # the server's own soft limit, as on a desktop (1,024)
        import resource

        if fd_limit is not None:
            hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
            resource.setrlimit(resource.RLIMIT_NOFILE, (fd_limit, hard))

    proc = subprocess.Popen(
        [*command, "--workers", "1", "--token", TOKEN],
        env=env,
        stderr=subprocess.DEVNULL,
        preexec_fn=limit_descriptors,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            status, _ = request(port)
            if status == 200:
                return proc, port
        except OSError:
            time.sleep(0.2)
    proc.terminate()
    raise SystemExit("the server did not come up")


def request(port: int, query: str = "rebase") -> tuple[int, float]:
    """One authenticated search on a new connection: (status, seconds)."""
    started = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request(
            "GET",
            "/api/search?q=" + query.replace(" ", "+"),
            headers={"Authorization": f"Bearer {TOKEN}"},
        )
        reply = conn.getresponse()
        reply.read()
        return reply.status, time.perf_counter() - started
    finally:
        conn.close()


def measure(name: str, port: int, idle: int, requests: int) -> Round:
    times, failures = [], 0
    with IdleCrowd(port, idle) as crowd:
        for i in range(requests):
            try:
                status, seconds = request(port, QUERIES[i % len(QUERIES)])
            except OSError:
                status, seconds = 0, 30.0
            failures += status != 200
            times.append(seconds * 1000)
        held = crowd.held()
    times.sort()
    return Round(
        name,
        idle,
        held,
        requests,
        failures,
        round(statistics.median(times), 2),
        round(times[max(0, int(len(times) * 0.95) - 1)], 2),
        round(times[-1], 2),
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, help="an index (default: the sample vault's)")
    parser.add_argument("--idle", type=int, nargs="+", default=[0, 150, 1000])
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--old-src", type=Path, help="also run another checkout's server")
    parser.add_argument("--json", type=Path, help="write the rounds here")
    parser.add_argument(
        "--fd-limit", type=int, help="the server's descriptor limit (e.g. 1024, Linux's default)"
    )
    parser.add_argument("--smoke", action="store_true", help="0 and 150 idle, 20 requests")
    args = parser.parse_args()
    if args.smoke:
        args.idle, args.requests = [0, 150], 20
    with tempfile.TemporaryDirectory() as tmp:
        db = args.db
        if db is None:
            import noteseek

            db = Path(tmp) / "sample.db"
            with noteseek.Index(db) as idx:
                idx.update(SAMPLE_VAULT)
        servers: list[tuple[str, Path | None]] = [("this", None)]
        if args.old_src is not None:
            servers.append((f"old ({args.old_src})", args.old_src))
        rounds = []
        for name, src in servers:
            proc, port = start_server(db, src, args.fd_limit)
            try:
                for idle in args.idle:
                    result = measure(name, port, idle, args.requests)
                    rounds.append(result)
                    print(
                        f"{name}: {idle} idle wanted, {result.idle_held} held by the server | "
                        f"{result.requests} authenticated searches, {result.not_200} not 200 | "
                        f"p50 {result.p50_ms} ms p95 {result.p95_ms} ms max {result.max_ms} ms",
                        flush=True,
                    )
            finally:
                proc.terminate()
                proc.wait(30)
    if args.json is not None:
        args.json.write_text(json.dumps([asdict(r) for r in rounds], indent=2) + "\n")
    failed = [r for r in rounds if r.server == "this" and r.not_200]
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
