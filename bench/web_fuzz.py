"""Fuzz the web API from its own OpenAPI schema with schemathesis: the aim is 0 server errors.

    pip install -e '.[bench]'            # schemathesis
    nice -n 10 python bench/web_fuzz.py [--db INDEX] [--max-examples 300] [--checks all]

Starts `noteseek web` (a child process, on a free loopback port) over INDEX, or over a fresh
index of examples/sample-vault, runs `schemathesis run http://127.0.0.1:PORT/openapi.json`
against it (every phase: examples, coverage, fuzzing, stateful), then prints schemathesis's
summary, the number of 5xx replies the server sent (counted from its own log, independent of
schemathesis) and whether the server was still answering at the end. Exit status 1 when any
server error was seen or a check failed.
"""

from __future__ import annotations

import argparse
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# A schema-violating request may also be refused as 413/414 (the server's size limits: a URL
# over 128 KiB is refused before its parameters are read); schemathesis's default list of
# rejection codes lacks them. And `/api/search`'s `since`/`until` take free text (dates, spans,
# words in two languages) that no schema can describe: a 422 naming the parameter is the
# designed answer to one that reads as no date ("000…"), so that operation may answer a
# schema-valid request with 422. Nothing else is relaxed.
CONFIG = """
[checks.negative_data_rejection]
expected-statuses = [400, 401, 403, 404, 405, 406, 409, 413, 414, 415, 422, 428, 429]

[[operations]]
include-path = "/api/search"
checks.positive_data_acceptance.expected-statuses = [200, 422]
"""
BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_up(url: str, proc: subprocess.Popen[bytes], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"noteseek web exited with {proc.returncode}")
        try:
            urllib.request.urlopen(url + "/api/status", timeout=2).read()
            return
        except OSError:
            time.sleep(0.3)
    raise SystemExit("noteseek web did not come up")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, help="index to serve (default: the sample vault's)")
    parser.add_argument("--max-examples", type=int, default=300, help="per operation and phase")
    parser.add_argument("--checks", default="all")
    parser.add_argument("--seed", type=int, default=17)
    args = parser.parse_args()
    if not (BIN / "schemathesis").exists():
        print("web_fuzz skipped: schemathesis is not installed (pip install -e '.[bench]')")
        return 0

    with tempfile.TemporaryDirectory() as tmp:
        db = args.db
        if db is None:
            db = Path(tmp) / "sample.db"
            subprocess.run(
                [BIN / "noteseek", "index", REPO / "examples" / "sample-vault", "--db", db, "-q"],
                check=True,
            )
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        log = Path(tmp) / "server.log"
        # --log-level: noteseek's own logger writes one line per 5xx reply ("request ... failed").
        with log.open("wb") as sink:
            server = subprocess.Popen(
                [BIN / "noteseek", "-v", "web", "--db", db, "--port", str(port), "--workers", "2"],
                stdout=sink,
                stderr=subprocess.STDOUT,
            )
            try:
                wait_up(url, server)
                config = Path(tmp) / "schemathesis.toml"
                config.write_text(CONFIG, encoding="utf-8")
                started = time.perf_counter()
                fuzz = subprocess.run(
                    [
                        BIN / "schemathesis",
                        "--config-file",
                        str(config),
                        "run",
                        f"{url}/openapi.json",
                        "--checks",
                        args.checks,
                        "--max-examples",
                        str(args.max_examples),
                        "--seed",
                        str(args.seed),
                        "--workers",
                        "2",
                        "--no-color",
                        "--request-timeout",
                        "30",
                        "--generation-database",
                        "none",
                    ],
                    capture_output=True,
                    text=True,
                )
                seconds = time.perf_counter() - started
                alive = server.poll() is None
                if alive:
                    urllib.request.urlopen(url + "/api/status", timeout=5).read()
            finally:
                server.terminate()
                server.wait(30)
        text = log.read_text("utf-8", "replace")
    # Failing cases can carry 10,000-character queries: shorten each line, keep every line.
    for line in fuzz.stdout.splitlines():
        print(line if len(line) <= 400 else line[:400] + f" … ({len(line)} characters)")
    if fuzz.stderr.strip():
        print(fuzz.stderr[-2000:], file=sys.stderr)
    server_errors = len(re.findall(r"request \S+ failed", text))
    tracebacks = text.count("Traceback")
    print(f"schemathesis exit code {fuzz.returncode} after {seconds:.0f} s")
    print(f"5xx replies logged by the server: {server_errors}; tracebacks in its log: {tracebacks}")
    print(f"server still answering at the end: {alive}")
    return 0 if fuzz.returncode == 0 and server_errors == 0 and alive else 1


if __name__ == "__main__":
    sys.exit(main())
