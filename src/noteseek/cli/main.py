"""The `noteseek` command group: finds each command's module when it runs, turns errors into lines.

Every command lives in its own module of this package and is imported only when it runs (or when
`--help` lists it), so `noteseek search` does not pay for the MCP SDK, the intake code or the
indexer. A command whose optional dependency is missing says which extra to install.
"""

from __future__ import annotations

import importlib
import logging
import sys
from typing import ClassVar

import click

from .. import __version__
from ..errors import NoteseekError

__all__ = ["cli", "main"]


class _LazyGroup(click.Group):
    """A group whose commands are imported only when run (or listed by --help)."""

    lazy: ClassVar[dict[str, str]] = {
        "index": "noteseek.cli.index:index_cmd",
        "search": "noteseek.cli.search:search_cmd",
        "context": "noteseek.cli.search:context_cmd",
        "hook": "noteseek.cli.hooks:hook_cmd",
        "status": "noteseek.cli.status:status_cmd",
        "mcp": "noteseek.cli.mcp:mcp_cmd",
        "web": "noteseek.cli.web:web_cmd",
        "intake": "noteseek.cli.intake:intake_cmd",
        "eval": "noteseek.cli.eval:eval_cmd",
        "scan": "noteseek.cli.scan:scan_cmd",
        "serve": "noteseek.cli.serve:serve_cmd",
        "watch": "noteseek.cli.watch:watch_cmd",
        "links": "noteseek.cli.links:links_cmd",
        "related": "noteseek.cli.links:related_cmd",
        "install-hooks": "noteseek.cli.hooks:install_cmd",
        "uninstall-hooks": "noteseek.cli.hooks:uninstall_cmd",
    }
    # Commands of the core install: a failed import there is a broken install, not a missing extra.
    core: ClassVar[frozenset[str]] = frozenset(
        {"index", "search", "context", "hook", "status", "links", "related"}
    )

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted([*super().list_commands(ctx), *self.lazy])

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = self.lazy.get(cmd_name)
        if target is None:
            return super().get_command(ctx, cmd_name)
        module_name, attr = target.split(":")
        try:
            command = getattr(importlib.import_module(module_name), attr)
        except ImportError as exc:
            if cmd_name in self.core:
                raise
            return _unavailable(cmd_name, exc)
        assert isinstance(command, click.Command)
        return command


def _unavailable(name: str, exc: ImportError) -> click.Command:
    """Stands in for a command whose optional dependency is missing, and says how to add it."""
    missing = exc.name or str(exc)

    def fail() -> None:
        raise click.ClickException(
            f"'noteseek {name}' needs {missing!r}, which is not installed: "
            f"pip install 'noteseek[{name}]'"
        )

    return click.Command(name, callback=fail, help=f"(unavailable: {missing} is not installed)")


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="noteseek")
@click.option("-v", "--verbose", is_flag=True, help="Log what happens (to stderr).")
def cli(verbose: bool) -> None:
    """Hybrid BM25 + vector search for Markdown note vaults, in one SQLite file."""
    logging.basicConfig(
        level=logging.INFO if verbose else logging.ERROR,
        format="%(levelname)s %(name)s: %(message)s",
    )


def main() -> None:
    """Console entry point: domain errors become one line and exit code 1."""
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except NoteseekError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    except KeyboardInterrupt:
        click.echo("interrupted; the index is consistent", err=True)
        sys.exit(130)
