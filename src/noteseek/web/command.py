"""`noteseek web`: parse the options, check where it may listen, warm the indexes, run uvicorn."""

from __future__ import annotations

import os
from functools import partial

import click

from . import library
from .app import create_app
from .pool import IndexPool
from .security import Limits, allowed_hosts, check_bind

__all__ = ["DEFAULT_PORT", "web_cmd"]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
ENV_TOKEN = "NOTESEEK_WEB_TOKEN"
# Connections beyond this get 503 from uvicorn at once instead of queueing without bound.
MAX_CONNECTIONS = 128


def default_workers() -> int:
    """One index per core, at most four (each holds its own vector matrix)."""
    return max(1, min(4, os.cpu_count() or 1))


@click.command("web")
@click.option("--db", type=click.Path(dir_okay=False), help="Index file.")
@click.option("--vault", type=click.Path(file_okay=False), help="Serve the index of this vault.")
@click.option("--host", default=DEFAULT_HOST, show_default=True, help="Address to listen on.")
@click.option("--port", default=DEFAULT_PORT, show_default=True, type=click.IntRange(1, 65535))
@click.option(
    "--token",
    envvar=ENV_TOKEN,
    help=f"Require 'Authorization: Bearer TOKEN' on /api/ (also ${ENV_TOKEN}, which ps cannot "
    "show); needed for any --host beyond loopback.",
)
@click.option(
    "--cors-origin",
    "cors_origins",
    multiple=True,
    help="Let pages of this origin call the API (repeatable), e.g. app://obsidian.md.",
)
@click.option(
    "--allow-host",
    "allow_hosts",
    multiple=True,
    help="Also answer requests whose Host header is this name (repeatable; '*' for any).",
)
@click.option(
    "--workers",
    type=click.IntRange(1, 32),
    default=default_workers(),
    show_default=True,
    help="Worker threads, each with its own open index.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(0.1, 600),
    default=10.0,
    show_default=True,
    help="Seconds a request may take before it gets 503.",
)
def web_cmd(
    db: str | None,
    vault: str | None,
    host: str,
    port: int,
    token: str | None,
    cors_origins: tuple[str, ...],
    allow_hosts: tuple[str, ...],
    workers: int,
    timeout: float,
) -> None:
    """Serve a search page and a JSON API for an index at http://127.0.0.1:8765/."""
    import uvicorn

    check_bind(host, token)
    path = library.resolve(db, vault)
    pool = IndexPool(partial(library.open_index, path), workers=workers, timeout=timeout)
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
        shown = f"[{host}]" if ":" in host else host
        click.echo(
            f"noteseek web: http://{shown}:{port}/ ({workers} workers, index {path})"
            + ("; API needs the token" if token else ""),
            err=True,
        )
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
