"""`noteseek install-hooks` / `uninstall-hooks`: noteseek's entries in a Claude Code settings file.

The merge is pure (`merge_hooks`, `remove_hooks` take and return dicts); the file wrapper
(`plan_install`, `plan_uninstall`, `apply_change`) reads, diffs and writes atomically. A handler
is ours when its command runs `noteseek hook prompt|pre-tool|post-tool`; everything else in the
file — other keys, events, groups, handlers and their order — is left exactly as it was.
See docs/claude-code-hooks.md for the protocol these entries rely on.
"""

from __future__ import annotations

import copy
import difflib
import json
import os
import re
import shlex
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from .errors import NoteseekError
from .tool_hooks import POST_TOOL_MATCHER, PRE_TOOL_MATCHER

__all__ = [
    "HOOK_TIMEOUT_SECONDS",
    "HookEntry",
    "SettingsChange",
    "SettingsFileError",
    "apply_change",
    "hook_entries",
    "install_cmd",
    "merge_hooks",
    "noteseek_executable",
    "plan_install",
    "plan_uninstall",
    "project_settings_path",
    "remove_hooks",
    "uninstall_cmd",
    "user_settings_path",
]

# Claude Code's default is 600 s for a command hook; a note search that has not answered in 10 s
# should not hold up a prompt or a tool call.
HOOK_TIMEOUT_SECONDS = 10
# The path may be quoted by shlex ('/my dir/noteseek' hook prompt), or run as python -m noteseek.
_OURS = re.compile(r"noteseek(?:\.exe)?['\"]?\s+hook\s+(prompt|pre-tool|post-tool)\b")


class SettingsFileError(NoteseekError):
    """A settings file cannot be read or merged safely; it has been left untouched."""


@dataclass(frozen=True)
class HookEntry:
    """One noteseek handler and where it goes: event, matcher (None: every occurrence), command."""

    event: str
    kind: str
    command: str
    matcher: str | None = None
    timeout: int = HOOK_TIMEOUT_SECONDS

    def handler(self) -> dict[str, Any]:
        """The handler object, as settings.json holds it."""
        return {"type": "command", "command": self.command, "timeout": self.timeout}

    def group(self) -> dict[str, Any]:
        """A matcher group holding only this handler."""
        group: dict[str, Any] = {} if self.matcher is None else {"matcher": self.matcher}
        group["hooks"] = [self.handler()]
        return group


def noteseek_executable() -> list[str]:
    """The command that runs this noteseek from anywhere: its interpreter with `-m noteseek`.

    Not the `noteseek` console script: the script pip writes imports `re` before anything else,
    ~5 ms that every hook call would pay, and the interpreter path is as stable (a venv, pipx or
    Homebrew keeps it across upgrades of the package). absolute(), not resolve(): a venv's
    python is a symlink whose target would bypass the venv.
    """
    return [str(Path(sys.executable).absolute()), "-m", "noteseek"]


def hook_entries(
    *, executable: Sequence[str], db: Path | None = None, tools: bool = True
) -> tuple[HookEntry, ...]:
    """noteseek's entries: the prompt hook, and unless `tools` is false the two tool hooks."""
    db_args = ["--db", str(db)] if db is not None else []

    def command(kind: str) -> str:
        return shlex.join([*executable, "hook", kind, *db_args])

    entries = [HookEntry("UserPromptSubmit", "prompt", command("prompt"))]
    if tools:
        entries.append(HookEntry("PreToolUse", "pre-tool", command("pre-tool"), PRE_TOOL_MATCHER))
        entries.append(
            HookEntry("PostToolUse", "post-tool", command("post-tool"), POST_TOOL_MATCHER)
        )
    return tuple(entries)


def _kind(handler: Any) -> str | None:
    """Which noteseek hook a handler runs, or None when it is not ours."""
    if not isinstance(handler, dict) or handler.get("type", "command") != "command":
        return None
    command = handler.get("command")
    match = _OURS.search(command) if isinstance(command, str) else None
    return match.group(1) if match else None


def merge_hooks(settings: dict[str, Any], entries: Iterable[HookEntry]) -> dict[str, Any]:
    """`settings` with exactly `entries` as noteseek's handlers; a new dict, nothing else changed.

    An existing handler of ours is updated where it stands (its whole group when the group is ours
    alone), so installing twice changes nothing and an upgrade moves nothing. Handlers of ours that
    `entries` no longer lists are removed.
    """
    entries = tuple(entries)
    result = _strip(settings, keep=frozenset(e.kind for e in entries))
    if not entries:
        return result
    hooks = result.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise SettingsFileError('"hooks" is not a JSON object; fix it by hand first')
    for entry in entries:
        groups = hooks.setdefault(entry.event, [])
        if not isinstance(groups, list):
            raise SettingsFileError(
                f'"hooks.{entry.event}" is not a JSON list; fix it by hand first'
            )
        groups[:] = _placed(groups, entry)
    return result


def _placed(groups: list[Any], entry: HookEntry) -> list[Any]:
    out: list[Any] = []
    placed = False
    for group in groups:
        handlers = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(handlers, list) or all(_kind(h) != entry.kind for h in handlers):
            out.append(group)
            continue
        if placed:  # a duplicate of ours: drop it, keep whatever shares its group
            rest = [h for h in handlers if _kind(h) != entry.kind]
            if rest:
                out.append({**group, "hooks": rest})
            continue
        placed = True
        if all(_kind(h) == entry.kind for h in handlers):
            out.append(entry.group())
            continue
        # Someone put our handler into a group with theirs: swap ours in place, keep their matcher.
        swapped: list[Any] = []
        for handler in handlers:
            if _kind(handler) != entry.kind:
                swapped.append(handler)
            elif not any(_kind(h) == entry.kind for h in swapped):
                swapped.append(entry.handler())
        out.append({**group, "hooks": swapped})
    if not placed:
        out.append(entry.group())
    return out


def remove_hooks(settings: dict[str, Any]) -> dict[str, Any]:
    """`settings` without noteseek's handlers; groups, events and `hooks` it emptied are dropped."""
    return _strip(settings, keep=frozenset())


def _strip(settings: dict[str, Any], *, keep: frozenset[str]) -> dict[str, Any]:
    result = copy.deepcopy(settings)
    hooks = result.get("hooks")
    if not isinstance(hooks, dict):
        return result
    emptied = False
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        out: list[Any] = []
        touched = False
        for group in groups:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            if isinstance(handlers, list):
                rest = [h for h in handlers if _kind(h) is None or _kind(h) in keep]
                if len(rest) != len(handlers):
                    touched = True
                    if rest:
                        out.append({**group, "hooks": rest})
                    continue
            out.append(group)
        if touched and out:
            hooks[event] = out
        elif touched:
            del hooks[event]
            emptied = True
    if emptied and not hooks:
        del result["hooks"]
    return result


def user_settings_path() -> Path:
    """The user's settings file: `$CLAUDE_CONFIG_DIR/settings.json`, else ~/.claude/settings.json."""
    base = os.environ.get("CLAUDE_CONFIG_DIR")
    return (Path(base).expanduser() if base else Path.home() / ".claude") / "settings.json"


def project_settings_path(project: Path) -> Path:
    """A project's local settings file, `.claude/settings.local.json`.

    Local, not the shared `.claude/settings.json`: the entries hold this machine's absolute path to
    noteseek (and maybe a personal --db), which would break the hook for every teammate.
    """
    return project / ".claude" / "settings.local.json"


@dataclass(frozen=True)
class SettingsChange:
    """A settings file before and after an edit; `before` is None when the file does not exist."""

    path: Path
    before: str | None
    after: str | None

    @property
    def changed(self) -> bool:
        """Whether applying the change would write anything."""
        return self.after is not None and self.after != self.before

    def diff(self) -> str:
        """The change as a unified diff ('' when nothing changes)."""
        if not self.changed:
            return ""
        old = (self.before or "").splitlines(keepends=True)
        new = (self.after or "").splitlines(keepends=True)
        source = str(self.path) if self.before is not None else "/dev/null"
        return "".join(difflib.unified_diff(old, new, fromfile=source, tofile=str(self.path)))


def _read(path: Path) -> tuple[str | None, dict[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return None, {}
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsFileError(f"cannot read {path}: {exc}") from exc
    if not text.strip():
        return text, {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        hint = ""
        # `//` after a space or bracket, not inside "https://…"; or any `/*`.
        if re.search(r"(?:^|[\s,{\[])//|/\*", text):
            hint = " It contains comments, which JSON does not allow."
        raise SettingsFileError(
            f"{path} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}).{hint} "
            "It was left untouched: fix it, or add the hooks by hand (see 'noteseek install-hooks -h')"
        ) from exc
    if not isinstance(data, dict):
        raise SettingsFileError(f"{path} does not hold a JSON object; it was left untouched")
    return text, data


def _render(data: dict[str, Any], like: str | None) -> str:
    """`data` as JSON indented the way `like` (the file's old text) was, two spaces by default."""
    indent: str | int = 2
    found = re.search(r"^([ \t]+)\"", like or "", re.MULTILINE)
    if found:
        indent = found.group(1)
    return json.dumps(data, indent=indent, ensure_ascii=False) + "\n"


def _plan(path: Path, edit: Callable[[dict[str, Any]], dict[str, Any]]) -> SettingsChange:
    before, data = _read(path)
    updated = edit(data)
    # Equal content is not rewritten, so a file formatted by hand keeps its formatting.
    after = before if updated == data else _render(updated, before)
    return SettingsChange(path, before, after)


def plan_install(path: Path, entries: Iterable[HookEntry]) -> SettingsChange:
    """The change `install-hooks` would make to the settings file at `path`."""
    entries = tuple(entries)
    return _plan(path, lambda data: merge_hooks(data, entries))


def plan_uninstall(path: Path) -> SettingsChange:
    """The change `uninstall-hooks` would make; no change when the file does not exist."""
    if not path.exists():
        return SettingsChange(path, None, None)
    return _plan(path, remove_hooks)


def apply_change(change: SettingsChange) -> Path | None:
    """Write `change` atomically; return the backup it made of the original, if it made one now.

    The first write keeps the original file as `<name>.bak`; later writes never replace that copy.
    """
    if not change.changed or change.after is None:
        return None
    # A dotfiles symlink stays a symlink: write through it to its target.
    target = change.path.resolve() if change.path.is_symlink() else change.path
    current, _ = _read(target)
    if current != change.before:  # Claude Code writes this file too (e.g. "always allow")
        raise SettingsFileError(f"{change.path} changed while it was being edited; run again")
    target.parent.mkdir(parents=True, exist_ok=True)
    backup = target.with_name(target.name + ".bak")
    made_backup = change.before is not None and not backup.exists()
    if made_backup:
        shutil.copy2(target, backup)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(change.after)
            handle.flush()
            os.fsync(handle.fileno())
        if change.before is not None:
            os.chmod(tmp, stat.S_IMODE(target.stat().st_mode))
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return backup if made_backup else None


def _target(user: bool, project: Path | None) -> Path:
    if user and project is not None:
        raise click.UsageError("choose one of --user and --project")
    return project_settings_path(project) if project is not None else user_settings_path()


def _report(change: SettingsChange, *, dry_run: bool, done: str) -> None:
    if change.before is None and change.after is None:
        click.echo(f"no change: {change.path} does not exist")
    elif not change.changed:
        click.echo(f"no change: {change.path} is already as it should be")
    elif dry_run:
        click.echo(change.diff(), nl=False)
        click.echo(f"(dry run: {change.path} was not written)")
    else:
        backup = apply_change(change)
        click.echo(f"{done} {change.path}" + (f" (original kept in {backup})" if backup else ""))


_SCOPE_HELP = (
    "Default --user: ~/.claude/settings.json ($CLAUDE_CONFIG_DIR if set), for every project. "
    "--project DIR: DIR/.claude/settings.local.json, this machine only."
)


def _default_index() -> Path | None:
    """The index a plain `noteseek search` here would use, to pin in the hooks; None if unclear.

    A pinned path lets each hook skip finding the index and ask the warm daemon straight away;
    without one (several indexes, none yet) the hooks find it per call, as `search` does.
    """
    from .errors import IndexNotFoundError
    from .paths import resolve_db

    try:
        found = resolve_db()
    except IndexNotFoundError:
        return None
    return found.absolute() if found.exists() else None


@click.command("install-hooks", epilog=_SCOPE_HELP)
@click.option("--user", "user", is_flag=True, help="Write the user settings (the default).")
@click.option(
    "--project",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Write DIR/.claude/settings.local.json instead.",
)
@click.option(
    "--db",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The index the hooks search (default: the one 'noteseek search' here would use).",
)
@click.option("--no-tool-hooks", is_flag=True, help="Install only the prompt hook.")
@click.option("--dry-run", is_flag=True, help="Print the change as a diff; write nothing.")
def install_cmd(
    user: bool, project: Path | None, db: Path | None, no_tool_hooks: bool, dry_run: bool
) -> None:
    """Add noteseek's Claude Code hooks to a settings file, leaving everything else as it is."""
    path = _target(user, project)
    pinned = db.expanduser().absolute() if db is not None else _default_index()
    if pinned is not None and db is None:
        click.echo(f"the hooks search {pinned} (pass --db to choose another index)")
    if pinned is not None and not pinned.exists():
        click.echo(
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
            click.echo(f"  {entry.event}{where}: {entry.command}")


@click.command("uninstall-hooks", epilog=_SCOPE_HELP)
@click.option("--user", "user", is_flag=True, help="Edit the user settings (the default).")
@click.option(
    "--project",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Edit DIR/.claude/settings.local.json instead.",
)
@click.option("--dry-run", is_flag=True, help="Print the change as a diff; write nothing.")
def uninstall_cmd(user: bool, project: Path | None, dry_run: bool) -> None:
    """Remove noteseek's Claude Code hooks from a settings file, and nothing else."""
    path = _target(user, project)
    try:
        _report(plan_uninstall(path), dry_run=dry_run, done="removed noteseek hooks from")
    except SettingsFileError as exc:
        raise click.ClickException(str(exc)) from exc
