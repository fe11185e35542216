"""Helpers for the web tests: an index of a vault, a pool over it, and a real uvicorn server."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the web tests need the web extra: pip install -e '.[web]'")

import uvicorn

from noteseek import Index
from noteseek.web.pool import IndexPool

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "testserver"})


def build_index(vault: Path, db: Path) -> Path:
    """Index `vault` into `db` with the bundled model (what every command uses)."""
    with Index(db) as idx:
        idx.update(vault)
    return db


def make_pool(db: Path, *, workers: int = 2, timeout: float = 10.0) -> IndexPool:
    pool = IndexPool(db, workers=workers, timeout=timeout)
    pool.warm()
    return pool


@contextmanager
def serve(app: Any) -> Iterator[str]:
    """Run `app` under uvicorn on an ephemeral loopback port; yield its base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        app, http="h11", log_level="warning", access_log=False, lifespan="off"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def noteseek_web(db: Path, *args: str) -> Iterator[int]:
    """Run a real `noteseek web` process on a free loopback port; yield the port."""
    import os
    import subprocess
    import sys

    port = free_port()
    cli = Path(sys.executable).with_name("noteseek")
    proc = subprocess.Popen(
        [str(cli), "web", "--db", str(db), "--port", str(port), "--workers", "1", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "NO_COLOR": "1"},
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"noteseek web exited: {proc.stderr.read().decode()}")  # type: ignore[union-attr]
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        else:
            raise RuntimeError("noteseek web did not start")
        yield port
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        if proc.stderr is not None:
            proc.stderr.close()
