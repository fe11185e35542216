"""Which paths of a vault are notes: the rules the vault walk prunes by, usable one path at a time.

Pure (no I/O): `walk_vault` applies them while it walks, and the file watcher applies the same
object to each path an event names, so the two can never disagree about what is a note. The one
rule that needs the disk, a folder holding an `IGNORE_MARKER` file, stays with the callers.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Sequence

from ..settings import DEFAULT_EXCLUDE

__all__ = ["DEFAULT_EXCLUDE", "IGNORE_MARKER", "NOTE_SUFFIXES", "FolderPatterns", "VaultRules"]

NOTE_SUFFIXES = (".md",)
# A folder holding a file of this name is not indexed (nor anything below it): a way to keep a
# folder out that works for every command and every tool, without flags. Intake puts one in its
# set-aside folder.
IGNORE_MARKER = ".noteseekignore"


class FolderPatterns:
    """Folder patterns (`name`, or a glob path from the vault root), compiled once for a scan.

    A folder matches when its path matches a pattern, lies below a pattern, or (for a pattern without
    `/`) has a path component that matches it; matching is `fnmatch.fnmatch`'s (case-folded where the
    platform's paths are). Compiled because a scan asks once per folder: MDN has 13,000 of them.
    """

    def __init__(self, patterns: Sequence[str]) -> None:
        cleaned = [p.strip("/") for p in patterns]
        self._patterns = [
            (p, re.compile(fnmatch.translate(os.path.normcase(p))).match, "/" not in p)
            for p in cleaned
            if p
        ]

    def __bool__(self) -> bool:
        return bool(self._patterns)

    def match(self, rel_dir: str, *, parents_checked: bool = False) -> bool:
        """Whether a folder path (with `/`) is one of the patterns or lies below one.

        `parents_checked`: every parent of `rel_dir` is known not to match (the walk prunes
        matching folders), so only its last component needs the per-component test.
        """
        folded = os.path.normcase(rel_dir)
        parts = rel_dir.rsplit("/", 1)[-1:] if parents_checked else rel_dir.split("/")
        folded_parts = [os.path.normcase(part) for part in parts]
        for pattern, matches, single in self._patterns:
            if matches(folded) or rel_dir.startswith(pattern + "/"):
                return True
            if single and any(matches(part) for part in folded_parts):
                return True
        return False


class VaultRules:
    """The include/exclude folders and note names of one vault walk."""

    def __init__(
        self, *, include: Sequence[str] = (), exclude: Sequence[str] = DEFAULT_EXCLUDE
    ) -> None:
        self._excluded = FolderPatterns(exclude)
        self._included = FolderPatterns(include)

    def skips_folder(self, rel_dir: str, *, parents_checked: bool = False) -> bool:
        """Whether the walk leaves out this folder (and all below it): a dot-folder or excluded.

        Without `parents_checked`, every folder on the path is tested, as the walk would have.
        """
        if parents_checked:
            name = rel_dir.rsplit("/", 1)[-1]
            return name.startswith(".") or self._excluded.match(rel_dir, parents_checked=True)
        parts = rel_dir.split("/")
        return any(
            self.skips_folder("/".join(parts[: i + 1]), parents_checked=True)
            for i in range(len(parts))
        )

    def includes_folder(self, rel_dir: str) -> bool:
        """Whether notes directly in this (not skipped) folder are indexed under `include`."""
        return not self._included or self._included.match(rel_dir)

    @staticmethod
    def is_note_name(name: str) -> bool:
        """A Markdown file name that is not hidden (editors' `.#x.md` locks, `.x.md.swp`...)."""
        return name.lower().endswith(NOTE_SUFFIXES) and not name.startswith(".")

    def is_note_path(self, rel_path: str) -> bool:
        """Whether a vault-relative file path (with `/`) is one the walk would index, by name alone.

        The disk decides the rest: whether it is a regular file, a symlink that stays inside the
        vault, and whether a folder above it holds an `IGNORE_MARKER`.
        """
        folder, _, name = rel_path.rpartition("/")
        if not self.is_note_name(name):
            return False
        return not (folder and self.skips_folder(folder)) and self.includes_folder(folder)
