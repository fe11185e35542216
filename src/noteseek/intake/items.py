"""Reading the inbox: which files are items, and each item's text, or why it is left in place."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.frontmatter import FrontmatterError, parse_frontmatter
from ..engine.vault_walk import DEFAULT_MAX_FILE_BYTES, decode_note

__all__ = ["InboxItem", "ItemProblem", "list_inbox", "read_item"]


@dataclass(frozen=True)
class InboxItem:
    """An item that can be scored: its bytes, decoded text, frontmatter and body."""

    path: Path
    rel: str  # relative to the inbox, '/'-separated
    data: bytes
    text: str
    meta: dict[str, Any] = field(compare=False)
    body: str = ""


@dataclass(frozen=True)
class ItemProblem:
    """An inbox file that is left where it is, and why."""

    rel: str
    reason: str


def list_inbox(inbox: Path, *, include_txt: bool = True, skip: tuple[Path, ...] = ()) -> list[Path]:
    """Markdown (and .txt) files under `inbox`, sorted; dot-files and dot-folders are passed over."""
    suffixes = (".md", ".markdown", ".txt") if include_txt else (".md", ".markdown")
    skipped = {p.resolve() for p in skip}
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(inbox, followlinks=False):
        here = Path(dirpath)
        dirnames[:] = sorted(
            d for d in dirnames if not d.startswith(".") and (here / d).resolve() not in skipped
        )
        for name in sorted(filenames):
            path = here / name
            if name.startswith(".") or not name.lower().endswith(suffixes):
                continue
            if path.is_symlink() or not path.is_file():
                continue  # a moved symlink would leave its target behind: not ours to file
            found.append(path)
    return sorted(found)


def read_item(path: Path, inbox: Path) -> InboxItem | ItemProblem:
    """Read and decode one item strictly: damaged text, binaries and bad YAML are left in place."""
    rel = path.relative_to(inbox).as_posix()
    try:
        size = path.stat().st_size
        if size > DEFAULT_MAX_FILE_BYTES:
            return ItemProblem(rel, f"too large ({size} bytes); left in place")
        data = path.read_bytes()
    except OSError as exc:
        return ItemProblem(rel, f"cannot read: {exc.strerror or exc}; left in place")
    decoded = decode_note(data)
    if decoded.text is None:
        return ItemProblem(rel, f"{decoded.problem}; left in place")
    if decoded.warning:
        # The index would repair and keep it; intake moves files, so it asks for a clean one.
        return ItemProblem(rel, f"{decoded.warning}; left in place — fix or re-save it as UTF-8")
    text = decoded.text
    try:
        meta, body = parse_frontmatter(text.replace("\r\n", "\n"))
    except FrontmatterError as exc:
        return ItemProblem(rel, f"{exc}; left in place — fix the frontmatter and run again")
    return InboxItem(path=path, rel=rel, data=data, text=text, meta=dict(meta.raw), body=body)
