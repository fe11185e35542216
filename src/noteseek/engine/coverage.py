"""Per-file coverage of an index (`noteseek status --files`): what it holds of each file, and why.

Each file is in one state:
- `indexed`: searchable (`chunks`, `indexed_at`; `reason` names a problem worked around, such as
  repaired UTF-8);
- `skipped`: looked at and left out as it is: not text, over the size limit, a symlink out of the
  vault or a loop, a name that is not UTF-8 or holds a secret (looked at again when it changes);
- `failed`: noteseek tried and could not: the file could not be read or stat-ed (permissions, a
  folder that cannot be listed), vanished or kept changing while it was read, or indexing it hit
  an error; tried again on every update;
- `pending`: the vault differs from what the index holds: new, changed (time or size) or deleted
  since the last update, found by a stat walk of the vault (no file is read).

The stored rows say ok / warning / skipped; failed is told from skipped by the reason, which the
vault walk and the indexer word (`_FAILURES` lists their first words).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..secrets.scrubber import Allowlist, scrub
from .vault_walk import walk_vault

if TYPE_CHECKING:
    from ..storage.protocol import Storage
    from .update.options import IndexOptions

__all__ = ["Coverage", "FileCoverage", "file_coverage", "is_failure"]

State = Literal["indexed", "skipped", "failed", "pending"]
STATES: tuple[State, ...] = ("indexed", "skipped", "failed", "pending")

# How the reasons of failures begin (vault_walk.read_note, the vault walk, update/run.py).
_FAILURES = (
    "vanished",
    "permission denied",
    "cannot read",
    "cannot stat",
    "cannot follow symlink",
    "kept changing",
    "not a regular file",
    "could not be indexed",
    "unreadable",
)


def is_failure(reason: str | None) -> bool:
    """Whether a skipped file's reason says noteseek failed on it (rather than left it out)."""
    return bool(reason) and str(reason).lower().startswith(_FAILURES)


@dataclass(frozen=True)
class FileCoverage:
    """One file as `status --files --json` lists it."""

    path: str
    state: State
    reason: str | None
    chunks: int
    indexed_at: float | None  # when its row was last written; None for a file never indexed


@dataclass(frozen=True)
class Coverage:
    """Every file the index knows or the vault holds, by path, and whether pending was checked."""

    db_path: str
    vault_root: str | None
    files: tuple[FileCoverage, ...]
    pending_checked: bool
    pending_problem: str | None  # why the vault could not be compared, when it could not

    def counts(self) -> dict[str, int]:
        """Files in each state."""
        return {state: sum(1 for f in self.files if f.state == state) for state in STATES}

    def to_json(self, *, problems_only: bool = False) -> dict[str, Any]:
        """The document `status --files --json` prints (`files` without clean ones when asked)."""
        shown = [f for f in self.files if not problems_only or f.state != "indexed" or f.reason]
        return {
            "db_path": self.db_path,
            "vault_root": self.vault_root,
            "pending_checked": self.pending_checked,
            "pending_problem": self.pending_problem,
            "counts": self.counts(),
            "files": [asdict(f) for f in shown],
        }


def file_coverage(
    store: Storage, options: IndexOptions, *, vault_root: str | None, pending: bool = True
) -> Coverage:
    """The coverage of every file; with `pending`, the vault is walked (stat only) to find what
    changed since the last update."""
    entries = store.file_entries()
    files: dict[str, FileCoverage] = {}
    for e in entries:
        if e.status == "skipped":
            state: State = "failed" if is_failure(e.problem) else "skipped"
            files[e.path] = FileCoverage(e.path, state, e.problem, 0, e.indexed_at)
        else:
            files[e.path] = FileCoverage(e.path, "indexed", e.problem, e.chunks, e.indexed_at)
    checked, problem = False, None
    if not pending:
        problem = "not checked"
    elif vault_root is None:
        problem = "the index has no vault yet"
    elif not Path(vault_root).is_dir():
        problem = f"the vault folder {vault_root!r} is not there (deleted, moved or unmounted?)"
    else:
        _mark_pending(files, entries, Path(vault_root), options)
        checked = True
    return Coverage(
        db_path=store.location,
        vault_root=vault_root,
        files=tuple(files[k] for k in sorted(files)),
        pending_checked=checked,
        pending_problem=problem,
    )


def _mark_pending(
    files: dict[str, FileCoverage], entries: list[Any], root: Path, options: IndexOptions
) -> None:
    """Compare the vault's listing with the rows, as the next update would (without reading)."""
    known = {e.path: e for e in entries}
    notes, passed_over = walk_vault(root, include=options.include, exclude=options.exclude)
    seen: set[str] = set()
    for note in notes:
        shown = _secret_free(note.rel_path, options.allow)
        if shown != note.rel_path:  # never indexed, only named (scrubbed), as update does
            reason = "the file name contains a secret; rename the file to index it"
            files[shown] = FileCoverage(shown, "skipped", reason, 0, None)
            continue
        seen.add(note.rel_path)
        row = known.get(note.rel_path)
        if row is None:
            files[note.rel_path] = FileCoverage(
                note.rel_path, "pending", "new since the last update", 0, None
            )
        elif row.mtime_ns == 0:
            continue  # a problem looked at again on every run: its state says what happened
        elif (row.mtime_ns, row.size) != (note.mtime_ns, note.size):
            old = files[note.rel_path]
            files[note.rel_path] = FileCoverage(
                note.rel_path,
                "pending",
                "changed since the last update",
                old.chunks,
                old.indexed_at,
            )
    for path, reason in passed_over:
        seen.add(path)
        if path not in known:
            files[path] = FileCoverage(
                path, "pending", f"new since the last update ({reason})", 0, None
            )
    for path in known:
        if path not in seen:
            old = files[path]
            files[path] = FileCoverage(
                path, "pending", "deleted since the last update", old.chunks, old.indexed_at
            )


def _secret_free(path: str, allow: Allowlist | None) -> str:
    result = scrub(path, allow=allow)
    return result.text if result.counts else path
