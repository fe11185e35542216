"""Undo one intake run: every file goes back to the inbox name it came from, unchanged."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .config import IntakeConfig
from .errors import IntakeLogError
from .log import DecisionLog, read_log
from .moves import move_file, remove_block

__all__ = ["UndoReport", "undo_run"]

# What an intake run moves back out: inbox items (items.py) and an agent's staged notes.
_NOTE_SUFFIXES = (".md", ".markdown", ".txt")


@dataclass(frozen=True)
class UndoReport:
    """What `undo_run` put back, and what it could not."""

    run_id: str
    restored: tuple[tuple[str, str], ...]  # (from, back to)
    problems: tuple[tuple[str, str], ...]  # (path, why it was left)


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _forged(record: dict[str, Any], vault: Path) -> str | None:
    """Why a log record cannot be one an intake run wrote, or None.

    The log lives in the vault, and a synced or shared vault is written by others too: a record
    that names a file outside the vault as moved in (`dst`) would have undo move, say, a private
    key into a synced folder, and one that names a program's file as the item's old place
    (`src`) would plant vault text there. A run only ever moves notes into the vault and writes
    into notes inside it."""
    dst = Path(str(record.get("dst", "")))
    try:
        inside = dst.is_absolute() and dst.resolve().is_relative_to(vault.resolve())
    except (OSError, RuntimeError):  # a symlink loop
        inside = False
    if not inside or dst.is_symlink():
        return "is not a file inside the vault; an intake run only moves notes into it"
    if not dst.name.lower().endswith(_NOTE_SUFFIXES):
        return "is not a note; an intake run only moves and appends to notes"
    src = record.get("src")
    if src is not None and not str(src).lower().endswith(_NOTE_SUFFIXES):
        return f"would be moved back to {src!r}, which is not a note"
    return None


def _undo_append(
    record: dict[str, Any], restored: list[tuple[str, str]], problems: list[tuple[str, str]]
) -> None:
    """Take an appended block out of its note again, if it is still there as written."""
    dst = Path(record["dst"])
    try:
        data = dst.read_bytes()
    except OSError:
        problems.append((str(dst), "no longer there (moved or deleted since); left as is"))
        return
    back = remove_block(data, str(record["inserted"]), int(record["offset"]))
    if back is None:
        if record.get("phase") == "start" and hashlib.sha256(data).hexdigest() != record["sha256"]:
            return  # the write never happened: nothing to take out
        problems.append((str(dst), "edited where the text was appended; left as is"))
        return
    temp = dst.parent / f".noteseek-undo-{os.getpid()}.tmp"
    temp.write_bytes(back)
    os.chmod(temp, os.stat(dst).st_mode & 0o7777)
    os.replace(temp, dst)
    restored.append((str(dst), str(dst)))


def undo_run(run_id: str, *, vault: str | Path, config: IntakeConfig | None = None) -> UndoReport:
    """Move every file of run `run_id` back to where it was, newest move first; take out the
    text an agent's `append_to_note` run added."""
    config = config or IntakeConfig()
    vault_path = Path(vault).expanduser()
    log_path = vault_path / config.log_file
    moves: dict[str, dict[str, Any]] = {}  # by source: the last record (done beats start)
    appends: dict[tuple[str, int], dict[str, Any]] = {}  # an agent's appends (agent_writes.py)
    runs: set[str] = set()
    for record in read_log(log_path):
        runs.add(str(record.get("run")))
        if record.get("run") == run_id and record.get("event") == "move":
            moves[str(record["src"])] = record
        if record.get("run") == run_id and record.get("event") == "append":
            appends[(str(record["dst"]), int(record["offset"]))] = record
    if run_id not in runs:
        recent = ", ".join(sorted(runs)[-5:]) or "none"
        raise IntakeLogError(f"no run {run_id!r} in {log_path} (latest runs: {recent})")
    restored: list[tuple[str, str]] = []
    problems: list[tuple[str, str]] = []
    for record in reversed(list(appends.values())):
        if (why := _forged(record, vault_path)) is not None:
            problems.append((str(record.get("dst")), f"{why}: left as is (the log was edited)"))
            continue
        _undo_append(record, restored, problems)
    for record in reversed(list(moves.values())):
        if (why := _forged(record, vault_path)) is not None:
            problems.append((str(record.get("dst")), f"{why}: left as is (the log was edited)"))
            continue
        src, dst = Path(record["src"]), Path(record["dst"])
        if not dst.exists():
            if not src.exists():
                problems.append((str(dst), "no longer there (moved or deleted since); left as is"))
            continue  # never moved, or undone already
        if src.exists() and _same_file(src, dst):  # a move interrupted between link and unlink
            dst.unlink()
            restored.append((str(dst), str(src)))
            continue
        data: bytes | None = None
        if record.get("inserted"):
            data = remove_block(dst.read_bytes(), str(record["inserted"]), int(record["offset"]))
            if data is None:
                problems.append((str(dst), "edited since the run; moved back with its edits"))
        elif (
            record.get("sha256")
            and hashlib.sha256(dst.read_bytes()).hexdigest() != record["sha256"]
        ):
            problems.append((str(dst), "edited since the run; moved back with its edits"))
        back = move_file(dst, src.parent, src.name, data=data)
        if back != src:
            problems.append(
                (str(back), f"{src.name} exists again in the inbox; restored beside it")
            )
        restored.append((str(dst), str(back)))
    DecisionLog(log_path).append(
        {
            "event": "undo",
            "run": run_id,
            "restored": len(restored),
            "problems": [reason for _, reason in problems],
        }
    )
    return UndoReport(run_id, tuple(restored), tuple(problems))
