"""A real `noteseek web` process under hostile connections: idle sockets, slow heads, oversized
and malformed request heads, long note paths, CORS preflights. Raw sockets on 127.0.0.1 only,
every loop bounded. The guard is web/connections.py; the limits are its ConnectionLimits."""

from __future__ import annotations

import json
import select
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import SAMPLE_VAULT
from .web_support import build_index, noteseek_web

TOKEN = "t0ken-for-the-connection-tests-0123456789"
AUTH = f"Authorization: Bearer {TOKEN}\r\n"


@pytest.fixture(scope="module")
def port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    db = build_index(SAMPLE_VAULT, tmp_path_factory.mktemp("webconn") / "index.db")
    with noteseek_web(db, "--token", TOKEN, "--cors-origin", "app://obsidian.md") as p:
        yield p


def connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=10)


def exchange(port: int, head: bytes, *, piece: int = 16 * 1024) -> tuple[int, dict[str, str], bytes]:
    """Send `head` in pieces (as a slow network would), read the whole reply: (status, headers,
    body). Raises if the server resets the connection instead of answering."""
    with connect(port) as sock:
        for start in range(0, len(head), piece):
            try:
                sock.sendall(head[start : start + piece])
            except (BrokenPipeError, ConnectionResetError):
                break  # the server answered early and stopped reading; its reply is buffered
        reply = b""
        while chunk := sock.recv(65536):
            reply += chunk
    top, _, body = reply.partition(b"\r\n\r\n")
    lines = top.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(lines[0].split()[1]), headers, body


def get(port: int, target: str, extra: str = AUTH) -> tuple[int, dict[str, str], bytes]:
    return exchange(
        port, f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n{extra}Connection: close\r\n\r\n".encode()
    )


def closed_by_server(sock: socket.socket) -> bool:
    """Whether the server has closed `sock` (without waiting)."""
    readable, _, _ = select.select([sock], [], [], 0)
    if not readable:
        return False
    try:
        return sock.recv(1, socket.MSG_PEEK) == b""
    except ConnectionResetError:
        return True


def test_authenticated_requests_answer_with_150_idle_connections_open(port: int) -> None:
    idle = [connect(port) for _ in range(150)]
    try:
        time.sleep(0.3)  # every one of them accepted by the server
        for _ in range(5):
            status, _, body = get(port, "/api/status")
            assert status == 200, body[:200]
            assert json.loads(body)["files"] > 0
        assert get(port, "/api/status", extra="")[0] == 401  # the token still counts
        # One address holds at most max_per_client (64) connections: the oldest idle ones went.
        gone = [closed_by_server(s) for s in idle]
        assert sum(gone) >= 150 - 64
        assert all(gone[:50]) and not any(gone[-40:])
    finally:
        for s in idle:
            s.close()


def test_idle_and_slow_connections_are_closed(port: int) -> None:
    silent, drip = connect(port), connect(port)
    head = b"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\n" + AUTH.encode() + b"\r\n"
    closed_at: dict[str, float] = {}
    start = time.monotonic()
    try:
        for i in range(60):  # one byte every 0.25 s: the head would take 25 s
            if "drip" not in closed_at:
                try:
                    drip.send(head[i : i + 1])
                except (BrokenPipeError, ConnectionResetError):
                    closed_at["drip"] = time.monotonic() - start
            for name, sock in (("silent", silent), ("drip", drip)):
                if name not in closed_at and closed_by_server(sock):
                    closed_at[name] = time.monotonic() - start
            if len(closed_at) == 2:
                break
            time.sleep(0.25)
    finally:
        silent.close()
        drip.close()
    # Bounds, not speed: the silent socket goes after the idle timeout (5 s), the dripping one
    # after the head timeout (10 s), although it sent a byte every 0.25 s.
    assert 3 < closed_at["silent"] < 9, closed_at
    assert 8 < closed_at["drip"] < 14, closed_at


def test_oversized_heads_get_json_not_a_reset(port: int) -> None:
    url = b"/api/search?q=" + b"a" * 200_000
    status, headers, body = exchange(
        port, b"GET " + url + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n" + AUTH.encode() + b"\r\n"
    )
    assert status == 414 and headers["content-type"] == "application/json"
    assert "URL longer than" in json.loads(body)["error"]
    big = b"X-Big: " + b"b" * 1_000_000 + b"\r\n"
    status, headers, body = exchange(
        port, b"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\n" + AUTH.encode() + big + b"\r\n"
    )
    assert status == 431 and "request headers over" in json.loads(body)["error"]
    assert headers["cache-control"] == "no-store" and headers["x-content-type-options"] == "nosniff"
    # A head that arrives in one piece reaches the app's guard: the same answers.
    assert exchange(port, b"GET " + url + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", piece=1 << 30)[0] == 414
    status, _, body = exchange(
        port,
        b"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"c" * 200_000 + b"\r\n\r\n",
        piece=1 << 30,
    )
    assert status == 431 and json.loads(body)["error"]


@pytest.mark.parametrize(
    "head",
    [
        b"GET /api/\xff\xfe HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        b"GET /api/status?q=\xc3\x28 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + bytes(range(256)) + b"\r\n\r\n",  # TLS
        b"GET / HTTP/1.1\r\nHost 127.0.0.1\r\n\r\n",
        b"BREW /pot HTCPCP/1.0\r\n\r\n",
        b"\r\n\r\n\r\n" + b"\x00" * 100 + b"\r\n\r\n",
    ],
)
def test_malformed_request_heads_get_a_json_400(port: int, head: bytes) -> None:
    status, headers, body = exchange(port, head)
    assert status == 400 and headers["content-type"] == "application/json"
    assert json.loads(body)["error"].startswith("malformed HTTP request")


@pytest.mark.parametrize("length", [49_996, 60_000, 120_000])
def test_long_note_paths_are_json_404s_with_a_bounded_message(port: int, length: int) -> None:
    status, headers, body = get(port, "/api/notes/" + "a" * length)
    assert status == 404, body[:300]
    error = json.loads(body)["error"]
    assert "not an indexed note" in error and len(body) < 2_000
    assert headers["cache-control"] == "no-store"


def test_api_replies_are_never_cached_and_preflights_are_json(port: int) -> None:
    for target in ["/api/status", "/api/search?q=rebase", "/api/nope", "/api/notes/Home.md"]:
        status, headers, _ = get(port, target)
        assert headers["cache-control"] == "no-store", (target, status)
        assert headers["content-type"] == "application/json"
    preflight = (
        "OPTIONS /api/search HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: {origin}\r\n"
        "Access-Control-Request-Method: GET\r\nConnection: close\r\n\r\n"
    )
    status, headers, body = exchange(port, preflight.format(origin="https://evil.example").encode())
    assert status == 400 and headers["content-type"] == "application/json"
    assert "Disallowed CORS origin" in json.loads(body)["error"]
    assert "access-control-allow-origin" not in headers
    status, headers, body = exchange(port, preflight.format(origin="app://obsidian.md").encode())
    assert status == 200 and headers["access-control-allow-origin"] == "app://obsidian.md"
    assert json.loads(body) == {"allowed": True}


def test_the_server_still_answers_after_all_of_it(port: int) -> None:
    status, _, body = get(port, "/api/search?q=rebase")
    assert status == 200 and json.loads(body)["hits"]



def test_the_idle_connection_benchmark_runs_in_smoke_mode() -> None:
    """bench/web_idle.py --smoke: a real server, 150 idle sockets refilled, 20 searches."""
    import subprocess
    import sys

    bench = Path(__file__).resolve().parent.parent / "bench" / "web_idle.py"
    result = subprocess.run(
        [sys.executable, str(bench), "--smoke"], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "this: 150 idle wanted" in result.stdout and "20 authenticated searches, 0 not 200" in result.stdout
