"""`noteseek mcp`: serve the MCP tools (`noteseek.mcp.server`) over stdio or local HTTP."""

from __future__ import annotations

import click

from ..mcp.server import DEFAULT_PORT, LOCALHOST, VaultService, build_server, serve
from .options import collection_option, db_option, write_db_option

__all__ = ["mcp_cmd"]


@click.command("mcp")
@db_option()
@collection_option()
@write_db_option()
@click.option(
    "--vault",
    type=click.Path(exists=True, file_okay=False),
    help="Serve the index of this vault.",
)
@click.option(
    "--transport", type=click.Choice(["stdio", "http"]), default="stdio", show_default=True
)
@click.option(
    "--port",
    type=click.IntRange(1, 65535),
    default=DEFAULT_PORT,
    show_default=True,
    help=f"Port on {LOCALHOST} for --transport http.",
)
@click.option(
    "--watch/--no-watch",
    default=True,
    show_default=True,
    help="Keep the index fresh: index each change of the vault (--vault, or the index's own).",
)
@click.option(
    "--refresh",
    is_flag=True,
    help="With --no-watch: update the index once in the background while serving.",
)
@click.option(
    "--allow-writes",
    is_flag=True,
    help="Also serve save_note and append_to_note (scrubbed, through intake, undoable).",
)
def mcp_cmd(
    db: str | None,
    collection: str | None,
    write_db: str | None,
    vault: str | None,
    transport: str,
    port: int,
    watch: bool,
    refresh: bool,
    allow_writes: bool,
) -> None:
    """Serve search, get_note, status, links and related to MCP clients (Claude Code, ...)."""
    service = VaultService(
        db=db, vault=vault, collection=collection, write_db=write_db, allow_writes=allow_writes
    )
    server = build_server(service)
    if allow_writes:
        service.agent.warm_writes()
    if watch:
        service.start_watch()  # its catch-up pass is the refresh
    elif refresh:
        service.start_refresh()
    try:
        serve(server, transport=transport, port=port)
    finally:
        service.close()
