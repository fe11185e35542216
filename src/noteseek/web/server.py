"""Run the web app: warm the indexes, then serve it with uvicorn until interrupted."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from .app import create_app
from .pool import IndexPool
from .security import Limits, allowed_hosts, check_bind

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "default_workers", "run_server"]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
# Connections beyond this get 503 from uvicorn at once instead of queueing without bound.
MAX_CONNECTIONS = 128


def default_workers() -> int:
    """One index per core, at most four (each holds its own vector matrix)."""
    return max(1, min(4, os.cpu_count() or 1))


def run_server(
    db: Path,
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    token: str | None = None,
    cors_origins: Sequence[str] = (),
    allow_hosts: Sequence[str] = (),
    workers: int = 1,
    timeout: float = 10.0,
    ready: Callable[[str], None] | None = None,
) -> None:
    """Serve the index file `db` (which must exist) until interrupted; `ready` gets the URL once
    every worker's index is open and warm. Raises UnsafeBindError for a non-loopback `host`
    without a token, and what opening the index raises (IndexNotFoundError, ...)."""
    import uvicorn

    check_bind(host, token)
    pool = IndexPool(db, workers=workers, timeout=timeout)
    try:
        pool.warm()
        limits = Limits()
        app = create_app(
            pool,
            token=token,
            hosts=allowed_hosts(host, allow_hosts),
            cors_origins=cors_origins,
            limits=limits,
        )
        if ready is not None:
            ready(f"http://{f'[{host}]' if ':' in host else host}:{port}/")
        config = uvicorn.Config(
            app,
            host=host,
            port=port,
            log_level="warning",
            access_log=False,  # query strings are the user's searches: not for a log
            server_header=False,
            proxy_headers=False,
            # h11, not httptools: httptools refuses a URL over 64 KiB with a plain-text 400 before
            # the app sees it, while a 10,000-character query can take 120 KiB percent-encoded;
            # with h11 every request reaches the guards and gets a JSON answer (413/414/...).
            http="h11",
            limit_concurrency=MAX_CONNECTIONS,
            timeout_keep_alive=5,
            h11_max_incomplete_event_size=limits.max_url_bytes + 8 * 1024,
        )
        uvicorn.Server(config).run()
    finally:
        pool.close()
