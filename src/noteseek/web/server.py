"""Run the web app: warm the indexes, then serve it with uvicorn until interrupted."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

import uvicorn

from noteseek import Locator

from .app import create_app
from .connections import ConnectionLimits, guarded_protocol
from .pool import IndexPool
from .security import Limits, allowed_hosts, check_bind

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "default_workers", "run_server"]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765


def default_workers() -> int:
    """One index per core, at most four (each holds its own vector matrix)."""
    return max(1, min(4, os.cpu_count() or 1))


def run_server(
    db: Locator,
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
    """Serve the index `db` (a file or a database URL; it must exist) until interrupted; `ready`
    gets the URL once every worker's index is open and warm. Raises UnsafeBindError for a
    non-loopback `host` without a token, and what opening the index raises (IndexNotFoundError,
    ...)."""
    check_bind(host, token)
    pool = IndexPool(db, workers=workers, timeout=timeout)
    try:
        pool.warm()
        limits = Limits()
        connection_limits = ConnectionLimits(
            max_url_bytes=limits.max_url_bytes, max_head_bytes=limits.max_head_bytes
        )
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
            # the app sees it, while a 10,000-character query can take 120 KiB percent-encoded.
            # The guarded protocol adds what uvicorn lacks (connections.py): a timeout for the
            # request head, caps that evict idle connections rather than refuse busy clients, and
            # JSON replies for heads h11 refuses. uvicorn's limit_concurrency is off on purpose:
            # it counts idle sockets, so 128 of them denied every request.
            http=guarded_protocol(connection_limits),
            limit_concurrency=None,
            timeout_keep_alive=connection_limits.idle_seconds,
            h11_max_incomplete_event_size=connection_limits.max_head_bytes,
            # asyncio accepts up to `backlog` sockets per wake-up before any evicted one closes;
            # 2,048 of them at once exhausted a 1,024-descriptor limit under a flood.
            backlog=256,
        )
        uvicorn.Server(config).run()
    finally:
        pool.close()
