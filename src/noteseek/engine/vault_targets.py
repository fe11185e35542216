"""The vault walk restricted to named paths: what a full walk would list at and below each of them.

A targeted update (`Index.update(vault, paths=…, folders=…)`, fed by the file watcher) looks only
at the paths that changed. For each one this module gives exactly the entries `walk_vault` would
give for it, by the walk's own rules (`enters_folder` and `note_entry` below apply to one path
what the walk applies inline; both share its `file_entry`): every folder on the way must be one
the walk enters (a real folder, not a symlink, not a dot-folder or excluded, no ignore marker, a
UTF-8 name), a file must pass the walk's file test (a note, or a document unless documents are
off), and a folder is walked whole (`walk_vault(under=…)`). A named note that is now a folder is
walked as one, and a named folder that is now a file is tested as a file. What it cannot mirror
without listing every folder on the way: a folder that cannot be read but can be entered (a full
walk reports "cannot read folder"; here its files are stat-ed and read directly).
"""

from __future__ import annotations

import os
import posixpath
import stat as stat_module
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from ..core.vault_rules import IGNORE_MARKER, VaultRules
from .vault_walk import (
    DEFAULT_EXCLUDE,
    NoteFile,
    file_entry,
    is_utf8_name,
    printable_path,
    walk_vault,
)

__all__ = ["TargetListing", "covered", "normalise_targets", "walk_targets"]


@dataclass(frozen=True)
class TargetListing:
    """The notes and passed-over entries at or below the targets, and the targets themselves."""

    notes: list[NoteFile]
    passed_over: list[tuple[str, str]]
    targets: tuple[str, ...]  # vault-relative, no one below another

    def covers(self, rel_path: str) -> bool:
        """Whether a vault-relative path is a target or lies below one (its state was looked at)."""
        return covered(self._wanted, rel_path)

    @cached_property
    def _wanted(self) -> frozenset[str]:
        return frozenset(self.targets)


def covered(targets: frozenset[str], rel_path: str) -> bool:
    """Whether `rel_path` is one of `targets` or lies below one."""
    # The path and each folder above it looked up in a set: a plan asks this of every known
    # file, and a 1,000-file checkout times 13,000 MDN files is 13 million prefix tests.
    if rel_path in targets:
        return True
    cut = rel_path.find("/")
    while cut != -1:
        if rel_path[:cut] in targets:
            return True
        cut = rel_path.find("/", cut + 1)
    return False


def normalise_targets(paths: Iterable[str]) -> tuple[str, ...] | None:
    """The paths as vault-relative, `/`-separated and free of `.`/`..`, none below another, an
    ignore marker standing for its folder; None when one of them is the whole vault (`""`).
    ValueError for a path outside the vault."""
    cleaned: set[str] = set()
    for raw in paths:
        path = str(raw).replace(os.sep, "/")
        if path.startswith("/") or (len(path) > 1 and path[1] == ":"):
            raise ValueError(f"{raw!r} is not a path relative to the vault")
        path = posixpath.normpath(path) if path else "."
        if path == "..":
            raise ValueError(f"{raw!r} lies outside the vault")
        if path.startswith("../"):
            raise ValueError(f"{raw!r} lies outside the vault")
        folder, _, name = path.rpartition("/")
        if name == IGNORE_MARKER:
            # The marker decides for its whole folder: created, it drops the folder's notes;
            # removed, it brings them back. A watcher names its folder; a caller may name it.
            path = folder or "."
        if path == ".":
            return None
        cleaned.add(path)
    kept: set[str] = set()
    for path in sorted(cleaned):
        parts = path.split("/")
        if not any("/".join(parts[:depth]) in kept for depth in range(1, len(parts))):
            kept.add(path)
    return tuple(sorted(kept))


def walk_targets(
    root: Path,
    targets: Sequence[str],
    *,
    include: Sequence[str] = (),
    exclude: Sequence[str] = DEFAULT_EXCLUDE,
    documents: bool = True,
) -> TargetListing:
    """What `walk_vault(root)` would list at or below each target (normalised, none `""`)."""
    root = root.resolve()
    rules = VaultRules(include=include, exclude=exclude, documents=documents)
    notes: dict[str, NoteFile] = {}
    passed_over: dict[str, str] = {}
    for target in targets:
        parent = _reached_folder(root, rules, target, passed_over)
        if parent is None:
            continue
        path = os.path.join(str(root), *target.split("/"))
        try:
            st = os.lstat(path)
        except OSError:
            continue  # gone (or unreachable): nothing of it is in the vault any more
        if stat_module.S_ISDIR(st.st_mode):
            entered = enters_folder(rules, target, path)
            if isinstance(entered, str):
                passed_over[printable_path(target)] = entered
            elif entered:
                found, skipped = walk_vault(
                    root, include=include, exclude=exclude, documents=documents, under=target
                )
                notes.update((n.rel_path, n) for n in found)
                passed_over.update(skipped)
        elif not os.path.isdir(path):
            # A symlink to a folder is listed among a folder's subfolders, and never entered.
            if not rules.includes_folder(parent):
                continue
            name = target.rpartition("/")[2]
            entry = note_entry(root, rules, parent, os.path.dirname(path), name)
            if isinstance(entry, NoteFile):
                notes[entry.rel_path] = entry
            elif entry is not None:
                passed_over[entry[0]] = entry[1]
    return TargetListing(
        notes=[notes[k] for k in sorted(notes)],
        passed_over=sorted(passed_over.items()),
        targets=tuple(targets),
    )


def _reached_folder(
    root: Path, rules: VaultRules, target: str, passed_over: dict[str, str]
) -> str | None:
    """The target's parent folder when the walk reaches it through folders it enters, else None
    (a folder on the way that is passed over is recorded, as the walk records it)."""
    parts = target.split("/")
    for depth in range(1, len(parts)):
        folder = "/".join(parts[:depth])
        path = os.path.join(str(root), *parts[:depth])
        try:
            st = os.lstat(path)
        except OSError:
            return None
        if not stat_module.S_ISDIR(st.st_mode):
            return None  # a file, or a symlink: os.walk does not follow it
        entered = enters_folder(rules, folder, path)
        if isinstance(entered, str):
            passed_over[printable_path(folder)] = entered
            return None
        if not entered:
            return None
    return "/".join(parts[:-1])


# The walk's rules for one entry: walk_vault applies the same tests inline (a folder's ignore
# marker and name when it lists the folder, its subfolders by rule, its files by `file_entry`).


def enters_folder(rules: VaultRules, rel_dir: str, path: str) -> bool | str:
    """Whether the walk goes into a folder it found (vault-relative `rel_dir`, on disk at `path`):
    False when a rule or an ignore marker leaves it out, a reason when it is passed over."""
    if rules.skips_folder(rel_dir, parents_checked=True):
        return False
    if os.path.lexists(os.path.join(path, IGNORE_MARKER)):
        return False
    if not is_utf8_name(rel_dir):
        return "folder name is not valid UTF-8; rename it to index its notes"
    return True


def note_entry(
    root: Path, rules: VaultRules, rel_dir: str, dirpath: str, name: str
) -> NoteFile | tuple[str, str] | None:
    """What the walk makes of a file `name` listed in the folder `rel_dir` (on disk at `dirpath`;
    `root` resolved): a note or document, (path, reason) when it is passed over, or None when it
    is neither."""
    kind = rules.file_kind(name)
    rel = f"{rel_dir}/{name}" if rel_dir else name
    if kind is None:
        hidden = rules.hidden_reason(name)
        return None if hidden is None else (printable_path(rel), hidden)
    return file_entry(root, rel, os.path.join(dirpath, name), kind, None)
