"""Moving items without ever overwriting or losing one, and putting them back.

A move first creates the new name (a hard link, which fails if the name exists, so two notes can
never collide) and only then removes the old one. A crash in between leaves the file under both
names, never under none. Where hard links are impossible (another file system, some network
drives) the file is copied to a temporary name beside its destination, linked into place the
same way, and only then removed from the inbox.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

__all__ = ["Move", "insert_block", "move_file", "remove_block", "unique_name"]

_OPEN = re.compile(rb"\A---[ \t]*(\r?\n)")
_BOM = b"\xef\xbb\xbf"
_MAX_CLASHES = 10_000


@dataclass(frozen=True)
class Move:
    """Where a file went, and the frontmatter block written into it (empty for a plain move)."""

    src: Path
    dst: Path
    inserted: str = ""
    offset: int = 0


def unique_name(folder: Path, name: str, *, taken: set[str] | None = None) -> Path:
    """`folder/name`, or `name (2)`, `name (3)`, ... when that exists (or is `taken`)."""
    stem, dot, suffix = name.rpartition(".")
    if not dot or not stem:
        stem, suffix = name, ""
    for n in range(1, _MAX_CLASHES):
        candidate = name if n == 1 else f"{stem} ({n}){'.' + suffix if suffix else ''}"
        path = folder / candidate
        if not os.path.lexists(path) and (taken is None or candidate not in taken):
            return path
    raise FileExistsError(f"{folder}: over {_MAX_CLASHES} files named like {name!r}")


def _fsync_dir(folder: Path) -> None:
    # Makes the new directory entry durable; not possible (nor needed) on Windows.
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _write_temp(folder: Path, data: bytes) -> Path:
    temp = folder / f".intake-{uuid.uuid4().hex}.tmp"
    with temp.open("xb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    return temp


def _link_new(source: Path, folder: Path, name: str) -> Path:
    """Give `source` a new, unused name in `folder` (never replacing a file); return it."""
    while True:
        target = unique_name(folder, name)
        try:
            os.link(source, target)
        except FileExistsError:
            continue  # someone took the name since we looked: try the next one
        return target


def _place(data: bytes | None, src: Path, folder: Path, name: str) -> Path:
    """Create `folder/name` (or a free variant) holding `data`, or `src`'s bytes when None."""
    folder.mkdir(parents=True, exist_ok=True)
    if data is None:
        try:
            target = _link_new(src, folder, name)
            _fsync_dir(folder)
            return target
        except OSError as exc:
            if isinstance(exc, FileExistsError) or exc.errno not in (
                errno.EXDEV,
                errno.EPERM,
                errno.EMLINK,
                errno.ENOTSUP,
                errno.EOPNOTSUPP,
            ):
                raise
        data = src.read_bytes()  # no hard links here: copy, then link the copy into place
    temp = _write_temp(folder, data)
    try:
        try:
            target = _link_new(temp, folder, name)
        except OSError as exc:
            if isinstance(exc, FileExistsError):
                raise
            # No hard links at all on this file system: claim the name exclusively instead.
            target = unique_name(folder, name)
            with target.open("xb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
    finally:
        temp.unlink(missing_ok=True)
    _fsync_dir(folder)
    return target


def move_file(src: Path, folder: Path, name: str, *, data: bytes | None = None) -> Path:
    """Move `src` into `folder` as `name` (or a free variant), optionally with new bytes."""
    target = _place(data, src, folder, name)
    src.unlink()
    return target


def insert_block(data: bytes, fields: dict[str, Any]) -> tuple[bytes, str, int]:
    """Add an `intake:` mapping to a note's frontmatter (creating one if needed).

    Returns the new bytes, the inserted text and its byte offset: the insertion is the only
    change, so undo can take it out again exactly.
    """
    start = len(_BOM) if data.startswith(_BOM) else 0
    block = yaml.safe_dump({"intake": fields}, sort_keys=False, allow_unicode=True)
    opened = _OPEN.match(data[start:])
    if opened:
        newline = opened.group(1).decode()
        inserted = block.replace("\n", newline)
        offset = start + opened.end()
    else:
        first_line = data.split(b"\n", 1)[0]
        newline = "\r\n" if first_line.endswith(b"\r") else "\n"
        inserted = f"---{newline}{block.replace(chr(10), newline)}---{newline}"
        offset = start
    raw = inserted.encode("utf-8")
    return data[:offset] + raw + data[offset:], inserted, offset


def remove_block(data: bytes, inserted: str, offset: int) -> bytes | None:
    """The bytes without a block `insert_block` added, or None if it was edited since."""
    raw = inserted.encode("utf-8")
    if data[offset : offset + len(raw)] != raw:
        return None
    return data[:offset] + data[offset + len(raw) :]
