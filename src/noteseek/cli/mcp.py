"""`noteseek mcp`: serve the MCP tools (`noteseek.mcp.server`) over stdio or local HTTP."""

from __future__ import annotations

import click

from ..mcp.server import DEFAULT_PORT, LOCALHOST, VaultService, build_server, serve

__all__ = ["mcp_cmd"]


@click.command("mcp")
@click.option("--db", type=click.Path(dir_okay=False), help="Index file.")
@click.option("--vault", type=click.Path(file_okay=False), help="Serve the index of this vault.")
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
def mcp_cmd(
    db: str | None, vault: str | None, transport: str, port: int, watch: bool, refresh: bool
) -> None:
    """Serve search, get_note and status to MCP clients (Claude Code, Claude Desktop, ...)."""
    service = VaultService(db=db, vault=vault)
    server = build_server(service)
    if watch:
        service.start_watch()  # its catch-up pass is the refresh
    elif refresh:
        service.start_refresh()
    try:
        serve(server, transport=transport, port=port)
    finally:
        service.close()
