"""noteseek's entries in a Claude Code settings file: plan the change, show it, write it safely.

The merge itself is pure and lives in `settings_json` (`merge_hooks`, `remove_hooks`); this module
reads the file, plans the change, shows it as a diff and writes it atomically. The commands
(`noteseek install-hooks` / `uninstall-hooks`) are in `noteseek.cli.hooks`.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..settings import ENV_CLAUDE_CONFIG_DIR
from .settings_json import (
    HOOK_TIMEOUT_SECONDS,
    HookEntry,
    SettingsFileError,
    hook_entries,
    merge_hooks,
    noteseek_executable,
    remove_hooks,
)

__all__ = [
    "HOOK_TIMEOUT_SECONDS",
    "HookEntry",
    "SettingsChange",
    "SettingsFileError",
    "apply_change",
    "hook_entries",
    "merge_hooks",
    "noteseek_executable",
    "plan_install",
    "plan_uninstall",
    "project_settings_path",
    "remove_hooks",
    "user_settings_path",
]

def user_settings_path() -> Path:
    """The user's settings file: `$CLAUDE_CONFIG_DIR/settings.json`, else ~/.claude/settings.json."""
    base = os.environ.get(ENV_CLAUDE_CONFIG_DIR)
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
