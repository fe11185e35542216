"""Find a vault's notes and read them safely: every problem becomes a reason, never an exception."""

from __future__ import annotations

import codecs
import fnmatch
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "DEFAULT_EXCLUDE",
    "DEFAULT_MAX_FILE_BYTES",
    "NoteFile",
    "ReadResult",
    "decode_note",
    "scan_vault",
]

DEFAULT_EXCLUDE: tuple[str, ...] = (".obsidian", ".trash", ".git")
DEFAULT_MAX_FILE_BYTES = 20 * 1024 * 1024
NOTE_SUFFIXES = (".md",)


@dataclass(frozen=True)
class NoteFile:
    """A note found in the vault: its path relative to the vault (always with '/') and its stat."""

    rel_path: str
    abs_path: Path
    mtime_ns: int
    size: int


@dataclass(frozen=True)
class ReadResult:
    """Decoded text, or None with the reason; `warning` names a problem that was worked around."""

    text: str | None
    problem: str | None = None
    warning: str | None = None


def _matches(rel_dir: str, patterns: Sequence[str]) -> bool:
    """True if a relative folder path is one of the patterns or lies below one."""
    for pattern in patterns:
        pattern = pattern.strip("/")
        if not pattern:
            continue
        if fnmatch.fnmatch(rel_dir, pattern) or rel_dir.startswith(pattern + "/"):
            return True
        if "/" not in pattern and any(
            fnmatch.fnmatch(part, pattern) for part in rel_dir.split("/")
        ):
            return True
    return False


def scan_vault(
    root: Path,
    *,
    include: Sequence[str] = (),
    exclude: Sequence[str] = DEFAULT_EXCLUDE,
) -> tuple[list[NoteFile], list[tuple[str, str]]]:
    """All notes under `root`, sorted by path, plus (path, reason) for entries that were passed over.

    Dot-folders are always excluded. `include` (folders relative to the vault) limits the scan
    when given. Symlinks are followed only when their target lies inside the vault.
    """
    root = root.resolve()
    notes: list[NoteFile] = []
    passed_over: list[tuple[str, str]] = []

    def walk_error(error: OSError) -> None:
        where = Path(error.filename or "").resolve() if error.filename else root
        rel = where.relative_to(root).as_posix() if where.is_relative_to(root) else str(where)
        passed_over.append((rel, f"cannot read folder: {error.strerror or error}"))

    for dirpath, dirnames, filenames in os.walk(root, onerror=walk_error, followlinks=False):
        rel_dir = Path(dirpath).relative_to(root).as_posix()
        rel_dir = "" if rel_dir == "." else rel_dir
        kept = []
        for name in sorted(dirnames):
            sub = f"{rel_dir}/{name}" if rel_dir else name
            if name.startswith(".") or _matches(sub, exclude):
                continue
            kept.append(name)
        dirnames[:] = kept
        for name in sorted(filenames):
            if not name.lower().endswith(NOTE_SUFFIXES) or name.startswith("."):
                continue
            rel = f"{rel_dir}/{name}" if rel_dir else name
            if include and not _matches(rel_dir, include):
                continue
            full = Path(dirpath) / name
            try:
                if full.is_symlink():
                    target = full.resolve(strict=True)
                    if not target.is_relative_to(root):
                        passed_over.append((rel, "symlink points outside the vault"))
                        continue
                stat = full.stat()
            except (OSError, RuntimeError) as exc:
                reason = getattr(exc, "strerror", None) or str(exc)
                passed_over.append((rel, f"cannot stat: {reason}"))
                continue
            if not os.path.isfile(full):
                continue
            notes.append(NoteFile(rel, full, stat.st_mtime_ns, stat.st_size))
    notes.sort(key=lambda n: n.rel_path)
    return notes, passed_over


def decode_note(data: bytes) -> ReadResult:
    """Decode a note's bytes: UTF-8 (with or without BOM), UTF-16 with BOM, else UTF-8 with repair."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return ReadResult(data.decode("utf-16"))
        except UnicodeDecodeError:
            return ReadResult(None, problem="starts with a UTF-16 mark but is not valid UTF-16")
    head = data[:8192]
    if b"\x00" in head and head.count(b"\x00") > len(head) // 100:
        return ReadResult(None, problem="binary file (NUL bytes), not a text note")
    try:
        return ReadResult(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        # Keep the readable text: a few bad bytes must not hide a whole note.
        return ReadResult(
            data.decode("utf-8-sig", errors="replace"),
            warning=f"invalid UTF-8 at byte {exc.start}; undecodable bytes replaced",
        )
