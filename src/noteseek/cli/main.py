"""The `noteseek` command group: finds each command's module when it runs, turns errors into lines.

Every command lives in its own module of this package and is imported only when it runs (or when
`--help` lists it), so `noteseek search` does not pay for the MCP SDK, the intake code or the
indexer. A command whose optional dependency is missing says which extra to install.
"""

from __future__ import annotations

import importlib
import io
import json
import logging
import os
import sys
from typing import ClassVar

import click

from .. import __version__
from ..errors import NoteseekError
from ..extras import extra_of, install_hint
from .output import PrintableLogFormatter, echo_block, echo_line, tolerate_narrow_terminals

__all__ = ["cli", "exit_now", "main"]


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

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        try:
            return super().resolve_command(ctx, args)
        except click.UsageError:
            name = args[0] if args else ""
            close = _close_commands(name, self.list_commands(ctx))
            if not close:
                raise
            suggestion = " or ".join(f"'noteseek {c}'" for c in close)
            raise click.UsageError(
                f"No such command {name!r}. Did you mean {suggestion}?", ctx
            ) from None

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


def _close_commands(name: str, commands: list[str]) -> list[str]:
    """Commands a mistyped name probably meant: close spellings (`serach`), then commands that
    contain it or that it contains (`hooks`: `hook`, `install-hooks`, `uninstall-hooks`)."""
    import difflib  # deferred: ~5 ms, for a mistyped command only; every command loads this module

    typed = name.lower()
    if len(typed) < 2 or typed.startswith("-"):
        return []
    close = difflib.get_close_matches(typed, commands, n=3, cutoff=0.6)
    close += [c for c in commands if c not in close and (typed in c or c in typed)]
    return close[:4]


def _unavailable(name: str, exc: ImportError) -> click.Command:
    """Stands in for a command whose optional dependency is missing, and says how to add it:
    the extra that installs it, or (a core library missing) a reinstall."""
    missing = (exc.name or str(exc)).split(".")[0]
    extra = extra_of(missing)
    fix = install_hint(extra) if extra else "pip install --force-reinstall noteseek"

    def fail() -> None:
        raise click.ClickException(
            f"'noteseek {name}' needs the Python package {missing!r}, which is not installed: {fix}"
        )

    # Takes whatever the real command would, so `noteseek web --db X` says what to install
    # rather than "No such option".
    return click.Command(
        name,
        callback=fail,
        help=f"(unavailable: {missing} is not installed; {fix})",
        context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
        add_help_option=False,
    )


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="noteseek")
@click.option("-v", "--verbose", is_flag=True, help="Log what happens (to stderr).")
def cli(verbose: bool) -> None:
    """Hybrid BM25 + vector search for Markdown note vaults, in one SQLite file."""
    handler = logging.StreamHandler()
    handler.setFormatter(PrintableLogFormatter("%(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.INFO if verbose else logging.ERROR, handlers=[handler])


def exit_now(code: int) -> None:
    """End a long-running command's process at once, its output flushed: for `watch` and
    `serve` once the index is closed and consistent (and a daemon's lock released).

    Interpreter shutdown after such a run took 0.5-2 s (freeing the model, the vectors, the
    libraries' native state) in which the process still looked alive: `serve --stop` had
    returned and a hook could start another daemon beside it. Nothing is left to finalise."""
    sys.stdout.flush()
    sys.stderr.flush()
    logging.shutdown()
    os._exit(code)


def _wants_json(argv: list[str]) -> bool:
    """Whether the command line asked for JSON output (`--json` before any `--`)."""
    return "--json" in (argv[: argv.index("--")] if "--" in argv else argv)


def main() -> None:
    """Console entry point: domain errors become one line (a JSON document on stdout when the
    command was asked for JSON) and exit code 1."""
    tolerate_narrow_terminals(json_out=_wants_json(sys.argv[1:]))
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        shown = io.StringIO()  # it may quote a file name or a value: printed through echo_block
        exc.show(file=shown)
        echo_block(shown.getvalue(), err=True, nl=False)
        sys.exit(exc.exit_code)
    except NoteseekError as exc:
        if _wants_json(sys.argv[1:]):
            # A caller that asked for JSON parses stdout: the error must be JSON there too.
            error = {"error": str(exc), "kind": type(exc).__name__}
            reason = getattr(exc, "reason", None)  # DatabaseConnectionError's category
            if isinstance(reason, str):
                error["reason"] = reason
            click.echo(json.dumps(error, ensure_ascii=False, indent=2))
        else:
            echo_line(f"error: {exc}", err=True)  # one line, whatever a quoted name holds
        sys.exit(1)
    except KeyboardInterrupt:
        click.echo("interrupted; the index is consistent", err=True)
        sys.exit(130)
