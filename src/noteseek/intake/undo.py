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


def undo_run(run_id: str, *, vault: str | Path, config: IntakeConfig | None = None) -> UndoReport:
    """Move every file of run `run_id` back to where it was, newest move first."""
    config = config or IntakeConfig()
    vault_path = Path(vault).expanduser()
    log_path = vault_path / config.log_file
    moves: dict[str, dict[str, Any]] = {}  # by source: the last record (done beats start)
    runs: set[str] = set()
    for record in read_log(log_path):
        runs.add(str(record.get("run")))
        if record.get("run") == run_id and record.get("event") == "move":
            moves[str(record["src"])] = record
    if run_id not in runs:
        recent = ", ".join(sorted(runs)[-5:]) or "none"
        raise IntakeLogError(f"no run {run_id!r} in {log_path} (latest runs: {recent})")
    restored: list[tuple[str, str]] = []
    problems: list[tuple[str, str]] = []
    for record in reversed(list(moves.values())):
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
