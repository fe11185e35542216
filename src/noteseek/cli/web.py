"""`noteseek web`: a local HTTP API and search page over one index (`noteseek.web`, the web extra)."""

from __future__ import annotations

import click

from .. import DatabaseUrl, IndexNotFoundError, locate_index
from ..web.server import DEFAULT_HOST, DEFAULT_PORT, default_workers, run_server
from .options import collection_option, db_option
from .output import echo_line

__all__ = ["web_cmd"]

ENV_TOKEN = "NOTESEEK_WEB_TOKEN"


@click.command("web")
@db_option()
@collection_option()
@click.option(
    "--vault",
    type=click.Path(exists=True, file_okay=False),
    help="Serve the index of this vault.",
)
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
    collection: str | None,
    vault: str | None,
    host: str,
    port: int,
    token: str | None,
    cors_origins: tuple[str, ...],
    allow_hosts: tuple[str, ...],
    workers: int,
    timeout: float,
) -> None:
    """Serve a search page and a JSON API for an index at http://127.0.0.1:8765/.

    The index is reopened when its file is replaced; edits by 'noteseek index' show at once.
    """
    # Resolved once: the server keeps serving this file, whatever the current folder becomes.
    path = locate_index(db=db, vault=vault, collection=collection)
    if vault is not None and db is None and not isinstance(path, DatabaseUrl) and not path.exists():
        raise IndexNotFoundError.at(path, vault=vault)  # the command that builds it, as search says

    def ready(url: str) -> None:
        echo_line(
            f"noteseek web: {url} ({workers} workers, index {path})"
            + ("; API needs the token" if token else ""),
            err=True,
        )

    run_server(
        path,
        host=host,
        port=port,
        token=token,
        cors_origins=cors_origins,
        allow_hosts=allow_hosts,
        workers=workers,
        timeout=timeout,
        ready=ready,
    )
