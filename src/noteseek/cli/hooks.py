"""`noteseek hook` (the Claude Code hook, when run through click: `--help`) and
`noteseek install-hooks` / `uninstall-hooks` (noteseek's entries in a settings file).

The per-prompt hook itself never comes here: `noteseek.entry` sends `noteseek hook EVENT` straight
to the daemon client or to `noteseek.hooks.command`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

import click

from .. import DatabaseUrl, IndexNotFoundError, data_dir, locate_index
from ..hooks.command import main as hook_main
from ..hooks.install import (
    SettingsChange,
    SettingsFileError,
    apply_change,
    hook_entries,
    noteseek_executable,
    plan_install,
    plan_uninstall,
    project_settings_path,
    user_settings_path,
)
from ..settings import DEFAULT_CONTEXT_TOKENS, ENV_DB, ENV_HOME
from .output import echo_block, echo_line

__all__ = ["hook_cmd", "install_cmd", "uninstall_cmd"]


@click.command(
    "hook",
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
    add_help_option=True,
)
@click.argument("event", type=click.Choice(["prompt", "pre-tool", "post-tool"]))
# Declared for --help: a real hook run never comes through click (noteseek.entry parses these
# itself, in hooks/command.py), so they are handed on exactly as given.
@click.option(
    "--db",
    metavar="PATH|URL",
    help="The index to use (default: $NOTESEEK_DB, else the index of the vault holding the "
    "working folder, else the only index).",
)
@click.option(
    "--max-tokens",
    type=int,
    metavar="N",
    help="Token budget of the context a prompt gets (≈ 4 characters per token; default "
    f"{DEFAULT_CONTEXT_TOKENS}).",
)
@click.pass_context
def hook_cmd(ctx: click.Context, event: str, db: str | None, max_tokens: int | None) -> None:
    """Claude Code hook: reads the event JSON on stdin, prints the protocol JSON.

    EVENT is prompt (UserPromptSubmit), pre-tool (PreToolUse) or post-tool (PostToolUse).
    Always exits 0; problems go to hook.log in the data folder. Installed by
    'noteseek install-hooks'.
    """
    forwarded = [
        *(["--db", db] if db else []),
        *(["--max-tokens", str(max_tokens)] * bool(max_tokens)),
    ]
    sys.exit(hook_main([event, *forwarded, *ctx.args]))


def _target(user: bool, project: Path | None) -> Path:
    if user and project is not None:
        raise click.UsageError("choose one of --user and --project")
    return project_settings_path(project) if project is not None else user_settings_path()


def _report(change: SettingsChange, *, dry_run: bool, done: str) -> None:
    if change.before is None and change.after is None:
        echo_line(f"no change: {change.path} does not exist")
    elif not change.changed:
        echo_line(f"no change: {change.path} is already as it should be")
    elif dry_run:
        echo_block(change.diff(), nl=False)
        echo_line(f"(dry run: {change.path} was not written)")
    else:
        backup = apply_change(change)
        echo_line(f"{done} {change.path}" + (f" (original kept in {backup})" if backup else ""))


_SCOPE_HELP = (
    "Default --user: ~/.claude/settings.json ($CLAUDE_CONFIG_DIR if set), for every project. "
    "--project DIR: DIR/.claude/settings.local.json, this machine only."
)


def _default_index() -> Path | DatabaseUrl | None:
    """The index a plain `noteseek search` here would use, to pin in the hooks; None if unclear.

    A pinned path lets each hook skip finding the index and ask the warm daemon straight away;
    without one (several indexes, none yet) the hooks find it per call, as `search` does. A
    database URL with a password is not pinned: the hooks read it from $NOTESEEK_DB as this
    command did, and the settings file never holds the password.
    """
    try:
        found = locate_index()
    except IndexNotFoundError:
        return None
    if isinstance(found, DatabaseUrl):
        return None if found.has_password else found
    return found.absolute() if found.exists() else None


def _unpinned_warning() -> str:
    """What a user must know when the hooks pin no index: where they will look, and what fails."""
    try:
        found = locate_index()
    except IndexNotFoundError as exc:
        if "several indexes" in str(exc):
            warning = (
                f"the hooks pin no index: {exc}. Each hook uses the index of the vault holding "
                "Claude Code's working folder and finds none elsewhere; pass --db to pin one"
            )
        else:
            warning = f"{exc}; the hooks find nothing until then (or pass --db to pin one)"
    else:
        if os.environ.get(ENV_DB):
            return (
                f"the hooks read ${ENV_DB} where they run ({found} here; its password stays out "
                f"of the settings file): Claude Code must start with ${ENV_DB} set"
            )
        warning = f"no index at {found} yet; the hooks find nothing until it exists"
    if os.environ.get(ENV_HOME):
        # The hooks run in Claude Code's environment, which may not have this shell's variables.
        warning += (
            f". ${ENV_HOME} is set in this shell ({data_dir()}): hooks started without it look "
            "in the default data folder instead"
        )
    return warning


def _pinned(db: str | None, vault: Path | None = None) -> Path | DatabaseUrl | None:
    """The index to write into the hook commands: `--db` as given, `--vault`'s index, else
    `_default_index()`."""
    if db is None and vault is None:
        return _default_index()
    found = locate_index(db=db, vault=vault)
    if not isinstance(found, DatabaseUrl):
        return found.expanduser().absolute()
    if found.has_password:
        raise click.ClickException(
            "this database URL holds a password, which the settings file would keep: put the "
            "password in ~/.pgpass (or $PGPASSFILE) and pass the URL without it, or leave out "
            "--db and set NOTESEEK_DB where the hooks run"
        )
    return found


def _scope_options(verb: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """--user / --project, which both commands take: where the settings file is."""

    def decorate(command: Callable[..., None]) -> Callable[..., None]:
        command = click.option(
            "--project",
            type=click.Path(exists=True, file_okay=False, path_type=Path),
            help=f"{verb} DIR/.claude/settings.local.json instead.",
        )(command)
        return click.option(
            "--user", "user", is_flag=True, help=f"{verb} the user settings (the default)."
        )(command)

    return decorate


@click.command("install-hooks", epilog=_SCOPE_HELP)
@_scope_options("Write")
@click.option(
    "--db",
    help="The index the hooks search: a file or a postgresql:// URL without a password "
    "(default: the one 'noteseek search' here would use).",
)
@click.option(
    "--vault",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="The vault whose index the hooks search (instead of --db).",
)
@click.option("--no-tool-hooks", is_flag=True, help="Install only the prompt hook.")
@click.option("--dry-run", is_flag=True, help="Print the change as a diff; write nothing.")
def install_cmd(
    user: bool,
    project: Path | None,
    db: str | None,
    vault: Path | None,
    no_tool_hooks: bool,
    dry_run: bool,
) -> None:
    """Add noteseek's Claude Code hooks to a settings file, leaving everything else as it is."""
    if db is not None and vault is not None:
        raise click.UsageError("pass --db or --vault, not both")
    path = _target(user, project)
    pinned = _pinned(db, vault)
    if pinned is not None and db is None:
        echo_line(f"the hooks search {pinned} (pass --db or --vault to choose another index)")
    if pinned is None:
        echo_line(f"warning: {_unpinned_warning()}", err=True)
    if pinned is not None and not pinned.exists():
        echo_line(
            f"note: no index at {pinned} yet; the hooks stay silent until it exists", err=True
        )
    entries = hook_entries(executable=noteseek_executable(), db=pinned, tools=not no_tool_hooks)
    try:
        _report(plan_install(path, entries), dry_run=dry_run, done="installed noteseek hooks in")
    except SettingsFileError as exc:
        raise click.ClickException(str(exc)) from exc
    if not dry_run:
        for entry in entries:
            where = f" ({entry.matcher})" if entry.matcher else ""
            echo_line(f"  {entry.event}{where}: {entry.command}")


@click.command("uninstall-hooks", epilog=_SCOPE_HELP)
@_scope_options("Edit")
@click.option("--dry-run", is_flag=True, help="Print the change as a diff; write nothing.")
def uninstall_cmd(user: bool, project: Path | None, dry_run: bool) -> None:
    """Remove noteseek's Claude Code hooks from a settings file, and nothing else."""
    path = _target(user, project)
    try:
        _report(plan_uninstall(path), dry_run=dry_run, done="removed noteseek hooks from")
    except SettingsFileError as exc:
        raise click.ClickException(str(exc)) from exc
