"""noteseek's entries in a Claude Code settings document, merged and removed as plain dicts. Pure.

A handler is ours when its command runs `noteseek hook prompt|pre-tool|post-tool`; everything else —
other keys, events, groups, handlers and their order — is left exactly as it was. `hooks_install`
reads and writes the file around these functions. See docs/claude-code-hooks.md for the protocol
the entries rely on.
"""

from __future__ import annotations

import copy
import re
import shlex
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..agents.tool_hooks import POST_TOOL_MATCHER, PRE_TOOL_MATCHER
from ..errors import NoteseekError

__all__ = [
    "HOOK_TIMEOUT_SECONDS",
    "HookEntry",
    "SettingsFileError",
    "hook_entries",
    "merge_hooks",
    "noteseek_executable",
    "remove_hooks",
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
