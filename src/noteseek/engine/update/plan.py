"""Phase 1 of an update: check the index can be written, settle the model and the pipeline, walk the
vault and decide which notes to look at."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ...embedding.embedder import Embedder
from ...errors import VectorSupportError
from ...secrets.scrubber import scrub
from ...storage import meta
from ...storage.records import FileState
from ..vault_walk import NoteFile, walk_vault
from .documents import library_now_installed
from .options import IndexOptions

if TYPE_CHECKING:
    from ...storage.protocol import Storage

__all__ = ["UpdatePlan", "plan_update"]

log = logging.getLogger("noteseek.indexer")


@dataclass
class UpdatePlan:
    """What one update will do, and what it found on the way (problems, counts)."""

    root: Path
    options: IndexOptions
    use_vectors: bool
    force: bool  # re-process every note: --full, or the pipeline changed
    pipeline: str  # the options' fingerprint, stored when the run finishes
    notes: list[NoteFile]  # every note to keep in the index
    passed_over: list[tuple[str, str]]  # (path, reason) of entries the walk could not use
    known: dict[str, FileState]  # what the index held before the run
    gone: list[str]  # known paths no longer in the vault, in order
    candidates: list[NoteFile]  # notes whose stat changed (or all, when forced)
    problems: list[tuple[str, str]] = field(default_factory=list)
    unchanged: int = 0
    # Documents to extract even if their content is unchanged: stored as `unsupported` for a
    # library that is installed now, or indexed as a note before (an `.excalidraw.md`).
    retry: set[str] = field(default_factory=set)


def plan_update(
    store: Storage,
    embedder: Embedder | None,
    root: Path,
    *,
    options: IndexOptions,
    full: bool,
) -> UpdatePlan:
    """Settle the vectors and the pipeline (one transaction), then walk the vault."""
    use_vectors = embedder is not None and store.vectors_available
    if not store.vectors_available and store.has_vector_table():
        # Writing now would leave vectors of deleted chunks behind; searching still works.
        raise VectorSupportError(
            f"this index has vectors but sqlite-vec cannot be loaded ({store.vector_error}); "
            "reinstall it (pip install --force-reinstall sqlite-vec) before updating the index"
        )
    with store.write():
        if use_vectors:
            assert embedder is not None
            fingerprint = embedder.fingerprint
            if not store.has_vector_table() or store.get_meta(meta.MODEL_FINGERPRINT) != fingerprint:
                log.info(
                    "embedding model changed (%s): every chunk will be re-embedded", fingerprint
                )
                store.reset_vectors(embedder.dim, fingerprint)
        pipeline = options.fingerprint()
        force = full or store.get_meta(meta.PIPELINE) != pipeline
        store.set_meta(meta.VAULT_ROOT, str(root))

    notes, passed_over = walk_vault(
        root, include=options.include, exclude=options.exclude, documents=options.documents
    )
    problems: list[tuple[str, str]] = []
    known = store.file_states()
    # A path is the files table's key and appears in results and logs, so it cannot be scrubbed
    # like text: a note whose path holds a secret is not indexed at all, only named (scrubbed).
    # A path the index holds passed this check when it was stored, under the same rules and
    # allow-list (another fingerprint forces every note through again), so only new ones need it.
    secret_paths = [
        n
        for n in notes
        if (force or n.rel_path not in known) and scrub(n.rel_path, allow=options.allow).counts
    ]
    for note in secret_paths:
        shown = scrub(note.rel_path, allow=options.allow).text
        log.warning("not indexed: the path of %s contains a secret; rename the file", shown)
        problems.append((shown, "the file name contains a secret; rename the file to index it"))
    notes = [n for n in notes if n not in secret_paths]
    # The entries the walk passed over are stored too (as skipped, by path): the same rule.
    secret_entries = [e for e in passed_over if scrub(e[0], allow=options.allow).counts]
    for path, _ in secret_entries:
        shown = scrub(path, allow=options.allow).text
        problems.append((shown, "the file name contains a secret; rename the file to index it"))
    passed_over = [e for e in passed_over if e not in secret_entries]
    # Passed-over entries (symlinks out of the vault, loops) are re-recorded as skipped; they are
    # still there, so they must not be counted as removed on every run.
    present = {n.rel_path for n in notes} | {path for path, _ in passed_over}
    retry = {
        n.rel_path
        for n in notes
        if n.is_document
        and n.rel_path in known
        and (
            (known[n.rel_path].kind or "note") != n.kind
            or library_now_installed(known[n.rel_path])
        )
    }
    candidates = [
        n
        for n in notes
        if force
        or n.rel_path not in known
        or known[n.rel_path].mtime_ns != n.mtime_ns
        or known[n.rel_path].size != n.size
        or n.rel_path in retry
    ]
    return UpdatePlan(
        root=root,
        options=options,
        use_vectors=use_vectors,
        force=force,
        pipeline=pipeline,
        notes=notes,
        passed_over=passed_over,
        known=known,
        gone=sorted(set(known) - present),
        candidates=candidates,
        problems=problems,
        unchanged=len(notes) - len(candidates),
        retry=retry,
    )
