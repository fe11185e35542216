"""The decision log: one JSON object per line, appended and flushed to disk record by record.

A move is logged twice, before and after, so a run interrupted between the two still leaves
enough behind for `--undo` to find the file. Only paths, scores and reasons are written, each
passed through the scrubber: an item's text never reaches the log.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..secrets.scrubber import scrub
from .errors import IntakeLogError

__all__ = ["DecisionLog", "read_log"]


# File locations undo needs verbatim. Item names that hold a secret are never moved (run.py
# leaves them in place), so these carry no secret of an item's. "sha256" is the digest intake
# computes of the moved bytes: random-looking hex, which the keyword-free detector would redact.
_VERBATIM = frozenset({"src", "dst", "inbox", "vault", "sha256"})


def _clean(value: Any) -> Any:
    if isinstance(value, str):
        return scrub(value).text
    if isinstance(value, dict):
        return {k: v if k in _VERBATIM else _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


class DecisionLog:
    """Appends scrubbed records to a JSONL file."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def append(self, record: dict[str, Any]) -> None:
        """Write one record and make it durable before the caller acts on it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = json.dumps(_clean(record), ensure_ascii=False, sort_keys=False) + "\n"
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())


def read_log(path: Path) -> Iterator[dict[str, Any]]:
    """The records of a log; a torn last line (a crash mid-write) is skipped."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise IntakeLogError(f"no intake log at {path}: nothing to undo") from None
    except OSError as exc:
        raise IntakeLogError(f"cannot read intake log {path}: {exc.strerror or exc}") from exc
    for line in lines:
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            yield record
