"""Which paths of a vault are indexed: the rules the vault walk prunes by, usable one path at a time.

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
from .file_kinds import (
    DOCUMENT_SUFFIXES,
    EXCALIDRAW_SUFFIX,
    NOTE_SUFFIXES,
    document_kind,
    is_note_file_name,
)

__all__ = ["DEFAULT_EXCLUDE", "IGNORE_MARKER", "NOTE_SUFFIXES", "FolderPatterns", "VaultRules"]
# A folder holding a file of this name is not indexed (nor anything below it): a way to keep a
# folder out that works for every command and every tool, without flags. Intake puts one in its
# set-aside folder.
IGNORE_MARKER = ".noteseekignore"
_GLOB = re.compile(r"[*?\[]")


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
        # Plain folder names (`.git`, `drafts`): with the parents checked, the last component
        # equal to one of them is the whole test, a set lookup instead of a regex per pattern.
        self._names = frozenset(
            os.path.normcase(p) for p in cleaned if p and "/" not in p and not _GLOB.search(p)
        )
        self._others = [
            item for item in self._patterns if item[0] not in self._names or not item[2]
        ]

    def __bool__(self) -> bool:
        return bool(self._patterns)

    def match(self, rel_dir: str, *, parents_checked: bool = False) -> bool:
        """Whether a folder path (with `/`) is one of the patterns or lies below one.

        `parents_checked`: every parent of `rel_dir` is known not to match (the walk prunes
        matching folders), so only its last component needs the per-component test.
        """
        if parents_checked:
            last = os.path.normcase(rel_dir.rsplit("/", 1)[-1])
            if last in self._names:
                return True
            patterns = self._others
        else:
            patterns = self._patterns
        if not patterns:
            return False
        folded = os.path.normcase(rel_dir)
        parts = rel_dir.rsplit("/", 1)[-1:] if parents_checked else rel_dir.split("/")
        folded_parts = [os.path.normcase(part) for part in parts]
        for pattern, matches, single in patterns:
            if matches(folded) or rel_dir.startswith(pattern + "/"):
                return True
            if single and any(matches(part) for part in folded_parts):
                return True
        return False


class VaultRules:
    """The include/exclude folders and the file names of one vault walk: notes, and documents
    (PDF, Office, CSV, HTML, canvases, drawings: `file_kinds.document_kind`) unless `documents`
    is False. The same folder rules apply to both."""

    def __init__(
        self,
        *,
        include: Sequence[str] = (),
        exclude: Sequence[str] = DEFAULT_EXCLUDE,
        documents: bool = True,
    ) -> None:
        self._excluded = FolderPatterns(exclude)
        self._included = FolderPatterns(include)
        self.documents = documents

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
        """A Markdown file name that is not hidden (editors' `.#x.md` locks, `.x.md.swp`...) and
        not an Excalidraw drawing (`x.excalidraw.md`, a document)."""
        return is_note_file_name(name) and not name.startswith(".")

    def file_kind(self, name: str) -> str | None:
        """What the walk indexes a file name as: "note", a document kind ("pdf", "excalidraw",
        ...), or None when it is neither (hidden, another type, or documents are off).

        `~$x.docx` is Microsoft Office's owner file, written beside a document while it is open
        (162 bytes, not a document): neither the walk nor the watcher takes it."""
        if name.startswith((".", "~$")):
            return None
        # Asked once per file of the vault (13,000 on MDN): the common case first, in C calls.
        lower = name.lower()
        if lower.endswith(NOTE_SUFFIXES) and not lower.endswith(EXCALIDRAW_SUFFIX):
            return "note"
        if not self.documents or not lower.endswith(DOCUMENT_SUFFIXES):
            return None
        return document_kind(lower)

    def hidden_reason(self, name: str) -> str | None:
        """Why a hidden file that would otherwise be indexed is passed over (`.x.md`, `..md`), so
        the run names it instead of leaving it out without a word; None for any other name.

        Files that tools write beside a note while it is open stay unnamed: `.#x.md` (an Emacs
        lock), `._x.md` (macOS metadata on a foreign disk), `~$x.docx` (an Office owner file)."""
        if not name.startswith(".") or name.startswith((".#", "._")):
            return None
        lower = name.lower()
        if not (lower.endswith(NOTE_SUFFIXES) or (self.documents and document_kind(lower))):
            return None
        return "hidden file (its name starts with '.'): not indexed; rename it to index it"

    def is_note_path(self, rel_path: str) -> bool:
        """Whether a vault-relative file path (with `/`) is one the walk would index (a note, or a
        document when documents are on), by name alone.

        The disk decides the rest: whether it is a regular file, a symlink that stays inside the
        vault, and whether a folder above it holds an `IGNORE_MARKER`.
        """
        folder, _, name = rel_path.rpartition("/")
        if self.file_kind(name) is None:
            return False
        return not (folder and self.skips_folder(folder)) and self.includes_folder(folder)
