"""Turn a burst of file events into one `ChangeBatch` of vault-relative notes and folders.

Pure: the watcher says, per path, whether it exists now and is a folder, and which folders hold an
ignore marker; this module decides what the index must look at, by the vault walk's own rules
(`VaultRules`). The disk is the truth, not the event kind: an atomic save (temp file renamed over
the note) or vim's rename dance reaches us as deleted + created, a sync tool's touch as modified,
and all three just name the note; the index then compares mtime, size and content hash.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..core.vault_rules import IGNORE_MARKER, VaultRules

__all__ = ["ChangeBatch", "PathChange", "classify", "is_editor_temp"]

# Editors' and sync tools' side files that are never notes and never folders worth re-checking.
# Dot-names (`.x.md.swp`, emacs' `.#x.md` lock, `.syncthing.x.md.tmp`) are hidden and skipped by
# the vault rules already. vim probes whether it may write a folder by creating and deleting a
# file named 4913 (then 4913 + 123 k while one exists).
_TEMP_SUFFIXES = (
    "~",  # vim/emacs backups (`x.md~`)
    ".swp",
    ".swx",
    ".swo",
    ".tmp",
    ".temp",
    ".bak",
    ".part",
    ".crdownload",
    "___jb_tmp___",  # JetBrains safe write
    "___jb_old___",
)
_VIM_PROBE, _VIM_PROBE_STEP = 4913, 123


def is_editor_temp(name: str) -> bool:
    """Whether a file name is an editor's swap, backup, lock or temporary file."""
    if name.startswith((".", "~$")) or name.endswith(_TEMP_SUFFIXES):
        return True
    if name.startswith("#") and name.endswith("#"):  # emacs auto-save
        return True
    return (
        name.isdigit()
        and int(name) >= _VIM_PROBE
        and (int(name) - _VIM_PROBE) % _VIM_PROBE_STEP == 0
    )


@dataclass(frozen=True)
class PathChange:
    """One path an event named, with what is there now (`gone`: nothing; `is_dir`: a real folder).

    `modified`: the event said the entry changed in place, not that it appeared or went. For a
    folder that only means its own mtime or mode changed (polling sees an entry added below it);
    the entries below come with events of their own, so it needs no re-check.
    """

    rel_path: str
    gone: bool
    is_dir: bool = False
    modified: bool = False


@dataclass(frozen=True)
class ChangeBatch:
    """What changed in the vault since the last batch, as vault-relative paths with `/`.

    `notes`: note files that were created, written, touched, renamed or deleted; whether each still
    exists is for the consumer to look up. `folders`: folders whose whole content must be checked
    again because a folder was created, moved in or out, renamed or deleted, or its ignore marker
    came or went; an entry may no longer exist (then notes indexed below it are gone) or may never
    have been a folder (a deleted file of another kind: nothing is indexed below it). `""` means
    the whole vault (a full incremental pass), asked for with a `reason`. No note lies below a
    listed folder and no folder below another.
    """

    notes: frozenset[str] = frozenset()
    folders: frozenset[str] = frozenset()
    events: int = 0
    reason: str = ""

    @property
    def full(self) -> bool:
        """Whether the whole vault must be checked (a plain incremental run)."""
        return "" in self.folders

    def __bool__(self) -> bool:
        return bool(self.notes or self.folders)

    def merged(self, other: ChangeBatch) -> ChangeBatch:
        """One batch holding both."""
        notes, folders = _compact(set(self.notes | other.notes), set(self.folders | other.folders))
        return ChangeBatch(
            notes=notes,
            folders=folders,
            events=self.events + other.events,
            reason=self.reason or other.reason,
        )

    @classmethod
    def whole_vault(cls, reason: str, *, events: int = 0) -> ChangeBatch:
        """A batch asking for a full incremental pass, and why."""
        return cls(folders=frozenset({""}), events=events, reason=reason)


def _below(path: str, folders: Iterable[str]) -> bool:
    return any(folder == "" or path.startswith(folder + "/") for folder in folders)


def _compact(notes: set[str], folders: set[str]) -> tuple[frozenset[str], frozenset[str]]:
    """Drop entries a listed folder covers: its notes and its subfolders."""
    if "" in folders:
        return frozenset(), frozenset({""})
    kept_folders: list[str] = []
    for folder in sorted(folders):  # a parent sorts before its children
        if not _below(folder, kept_folders):
            kept_folders.append(folder)
    kept_notes = {n for n in notes if n not in folders and not _below(n, kept_folders)}
    return frozenset(kept_notes), frozenset(kept_folders)


def classify(
    changes: Iterable[PathChange],
    rules: VaultRules,
    *,
    marked: Callable[[str], bool],
) -> ChangeBatch:
    """The batch for these changes. `marked(folder)`: the folder or one above holds the ignore marker."""
    notes: set[str] = set()
    folders: set[str] = set()
    count = 0
    for change in changes:
        count += 1
        path = change.rel_path
        if not path:
            continue  # the vault folder itself: the watcher checks it is still there
        parent, _, name = path.rpartition("/")
        if parent and rules.skips_folder(parent):
            continue  # inside `.obsidian/`, `.git/`, `.trash/`, a dot-folder or an excluded folder
        if name == IGNORE_MARKER:
            folders.add(parent)  # the folder just went out of (or came back into) the index
            continue
        if marked(parent):
            continue
        if change.is_dir:
            if change.modified:
                continue
            if not rules.skips_folder(path, parents_checked=True) and not marked(path):
                folders.add(path)
        elif is_editor_temp(name):
            continue
        elif rules.is_note_path(path):
            notes.add(path)
        elif change.gone and not rules.skips_folder(path, parents_checked=True):
            folders.add(path)  # it may have been a folder (moved out, deleted, renamed)
    kept_notes, kept_folders = _compact(notes, folders)
    return ChangeBatch(notes=kept_notes, folders=kept_folders, events=count)
