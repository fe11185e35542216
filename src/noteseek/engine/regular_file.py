"""Open a listed vault file for reading, safely: the one open both readers use (notes and documents).

Between the walk that listed a file and the read, the file may have vanished, become a symlink out of
the vault, a symlink loop, a FIFO or a device. `open_regular_file` re-checks all of that at read
time and never blocks: the target is resolved (it must lie inside the vault), opened with
`O_NOFOLLOW` (a symlink swapped in after the resolve is refused, not followed) and `O_NONBLOCK` (a
FIFO swapped in must not wait forever for a writer), then `fstat`ed: only a regular file is handed
out. Every problem is a reason a person can act on, never an exception.

On Linux the common case is cheaper and checks the same: the path is opened as it is (`O_NOFOLLOW`
refuses a final symlink) and the kernel says where the descriptor leads (`/proc/self/fd`), one
`readlink` instead of `resolve`'s `lstat` per path component in Python (1.5 → 0.6 CPU-s for
reading MDN's 13,062 notes, with the read to the size seen). Anything but a regular file inside the vault — a symlinked note, a
folder linked out, a FIFO — takes the portable path, which allows or names it as before.
"""

from __future__ import annotations

import errno
import os
import stat as stat_module
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

__all__ = [
    "CHANGING",
    "LOOP",
    "OUTSIDE",
    "PERMISSION_DENIED",
    "READ_ATTEMPTS",
    "VANISHED",
    "RegularFile",
    "Unreadable",
    "not_regular_reason",
    "open_regular_file",
]

LOOP = "symlink loop: the link leads back to itself"
PERMISSION_DENIED = "permission denied: noteseek may not read this file (check its permissions)"
VANISHED = "vanished before it could be read (deleted or moved during indexing)"
OUTSIDE = "symlink points outside the vault"
CHANGING = "kept changing while it was read (still being written?); it is read again next run"
# How often a file that changes while it is read is read again before it is left for this run.
READ_ATTEMPTS = 3

# What a file that is not a regular file is, for the reason a person reads.
_KINDS = (
    (stat_module.S_ISFIFO, "a named pipe (FIFO)"),
    (stat_module.S_ISSOCK, "a socket"),
    (stat_module.S_ISCHR, "a character device"),
    (stat_module.S_ISBLK, "a block device"),
    (stat_module.S_ISDIR, "a folder"),
)


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "a special file")


def not_regular_reason(mode: int) -> str:
    """Why a listed file of this `st_mode` is left out: what it is instead of a regular file."""
    return f"{_kind(mode)}, not a regular file: noteseek reads only regular files"


@dataclass(frozen=True)
class RegularFile:
    """An open regular file inside the vault: the resolved `target`, the `handle` (close it: use
    `with opened.handle:`) and the `stat` of what was opened."""

    target: Path
    handle: BinaryIO
    stat: os.stat_result


@dataclass(frozen=True)
class Unreadable:
    """Why a listed file could not be opened. Each of these can go away without the file's
    listing changing, so the file is looked at again on the next run."""

    problem: str


_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_BINARY", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
)
_PROC_FD = "/proc/self/fd"
_HAS_PROC_FD = sys.platform == "linux" and os.path.isdir(_PROC_FD)


def open_regular_file(path: str | os.PathLike[str], root: Path) -> RegularFile | Unreadable:
    """Open `path` for reading if it is a regular file inside `root` (resolved), else say why not."""
    if _HAS_PROC_FD:
        opened = _open_inside(path, root)
        if opened is not None:
            return opened
    path = Path(path)
    try:
        target = path.resolve(strict=True)
    except FileNotFoundError:
        return Unreadable(VANISHED)
    except RuntimeError:  # Python < 3.13 reports a loop this way
        return Unreadable(LOOP)
    except OSError as exc:
        return Unreadable(
            LOOP if exc.errno == errno.ELOOP else f"cannot read: {exc.strerror or exc}"
        )
    if not target.is_relative_to(root):
        return Unreadable(OUTSIDE)
    try:
        fd = os.open(target, _FLAGS)
    except FileNotFoundError:
        return Unreadable(VANISHED)
    except PermissionError:
        return Unreadable(PERMISSION_DENIED)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # O_NOFOLLOW met a symlink created after the resolve
            return Unreadable("became a symlink while it was read; it is read again next run")
        return Unreadable(f"cannot read: {exc.strerror or exc}")
    try:
        stat = os.fstat(fd)
    except OSError as exc:
        os.close(fd)
        return Unreadable(f"cannot read: {exc.strerror or exc}")
    if not stat_module.S_ISREG(stat.st_mode):
        os.close(fd)
        # Listed as a regular file a moment ago (the walk names the others itself).
        return Unreadable(
            f"not a regular file: it became {_kind(stat.st_mode)} since it was listed"
        )
    return RegularFile(target, open(fd, "rb", closefd=True), stat)


def _open_inside(path: str | os.PathLike[str], root: Path) -> RegularFile | None:
    """The open regular file when `path` leads to one inside `root` without a final symlink;
    None for anything else (the portable path then decides, and names the problem)."""
    try:
        fd = os.open(path, _FLAGS)
    except OSError:
        return None
    try:
        target = os.readlink(f"{_PROC_FD}/{fd}")
        stat = os.fstat(fd)
    except OSError:
        os.close(fd)
        return None
    inside = str(root)
    inside = inside if inside.endswith(os.sep) else inside + os.sep
    if not (stat_module.S_ISREG(stat.st_mode) and target.startswith(inside)):
        os.close(fd)
        return None
    return RegularFile(Path(target), open(fd, "rb", closefd=True), stat)
