"""Phase 1 of an update: check the index can be written, settle the model and the pipeline, walk the
vault (or only the paths a targeted update names) and decide which notes to look at.

A targeted plan (`targets`) looks only at the named paths (`vault_targets.walk_targets`) and the
known files at or below them, so it leads to exactly the rows a whole pass would, provided the
rest of the index already reflects the vault. It falls back to a whole pass whenever that is not
known: a forced or first run, another pipeline, other folders (scope) or another vault than the
last finished run, or an earlier run that did not finish (`meta.UPDATE_INCOMPLETE`). The files a
whole pass reads again although their stat is unchanged (documents to retry) are named with them.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ...core.file_kinds import DOCUMENT_SUFFIXES, document_kind
from ...embedding.embedder import Embedder
from ...errors import VaultGoneError, VectorSupportError
from ...storage import meta
from ...storage.records import FileState
from .. import folder_listings
from ..vault_targets import covered, normalise_targets, walk_targets
from ..vault_walk import NoteFile, walk_vault
from .options import IndexOptions
from .stored_reads import library_now_installed, ocr_now_on

if TYPE_CHECKING:
    from ...storage.protocol import Storage

__all__ = ["UpdatePlan", "check_vault", "plan_update", "vault_identity"]

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
    # What the index held before the run; of a targeted run, the files it can touch.
    known: dict[str, FileState]
    gone: list[str]  # known paths no longer in the vault, in order
    candidates: list[NoteFile]  # notes whose stat changed (or all, when forced)
    problems: list[tuple[str, str]] = field(default_factory=list)
    unchanged: int = 0
    targeted: bool = False  # only the named paths were looked at
    identity: tuple[int, int] = (0, 0)  # the vault folder's (device, inode) when the run began
    # The index held no chunk when the run began: no stored vector to reuse, so a pool's
    # workers embed what they prepare (run.py).
    no_chunks: bool = False
    # Documents to extract even if their content is unchanged: stored as `unsupported` for a
    # library that is installed now, or indexed as a note before (an `.excalidraw.md`).
    retry: set[str] = field(default_factory=set)
    # The folder listings to remember (meta.FOLDER_LISTINGS), when the walk saw them change.
    listings: str | None = None


def vault_identity(root: Path) -> tuple[int, int]:
    """The vault folder's device and inode: another pair means it was replaced or unmounted."""
    st = os.stat(root)
    return st.st_dev, st.st_ino


def check_vault(plan: UpdatePlan) -> None:
    """Raise VaultGoneError when the vault folder is gone or no longer the one the run began on,
    before the run records anything it saw missing (a vanished note, a note gone from the walk)."""
    try:
        same = plan.root.is_dir() and vault_identity(plan.root) == plan.identity
    except OSError:
        same = False
    if not same:
        raise VaultGoneError(
            f"the vault folder {str(plan.root)!r} was deleted, replaced or unmounted during the "
            "update; what was indexed before stays as it was"
        )


def plan_update(
    store: Storage,
    embedder: Embedder | None,
    root: Path,
    *,
    options: IndexOptions,
    full: bool,
    targets: Sequence[str] | None = None,
) -> UpdatePlan:
    """Settle the vectors and the pipeline (one transaction), then walk the vault, or only the
    `targets` (vault-relative notes or folders; `""` is the whole vault) when that is safe."""
    use_vectors = embedder is not None and store.vectors_available
    named = None if targets is None else normalise_targets(targets)
    identity = vault_identity(root)
    # write() first: where this index may not be written at all, that is the message.
    with store.write():
        if not store.vectors_available and store.has_vector_table():
            # Writing now would leave vectors of deleted chunks behind; searching still works.
            raise VectorSupportError(
                f"this index has vectors but {store.vector_error}; "
                "reinstall it (pip install --force-reinstall sqlite-vec) before updating the index"
            )
        if use_vectors:
            assert embedder is not None
            fingerprint = embedder.fingerprint
            if (
                not store.has_vector_table()
                or store.get_meta(meta.MODEL_FINGERPRINT) != fingerprint
            ):
                log.info(
                    "embedding model changed (%s): every chunk will be re-embedded", fingerprint
                )
                store.reset_vectors(embedder.dim, fingerprint)
        pipeline = options.fingerprint()
        stored_pipeline = store.get_meta(meta.PIPELINE)
        force = full or stored_pipeline != pipeline
        targeted = named is not None and not (
            force
            or store.get_meta(meta.SCOPE) != options.scope()
            or store.get_meta(meta.VAULT_ROOT) != str(root)
            or store.get_meta(meta.UPDATE_INCOMPLETE) != "0"
        )
        store.set_meta(meta.VAULT_ROOT, str(root))
        store.set_meta(meta.UPDATE_INCOMPLETE, "1")

    # A targeted run reads only the files it can touch (see FilePart.file_states): each test
    # below that reads `known` asks about those, so the plan is the one all of them would give.
    known = store.file_states(near=named if targeted else None)
    if not targeted and not known and stored_pipeline is None:
        # A first build: every file it writes goes through this pipeline, so an interrupted one
        # resumes where it stopped instead of re-processing what it wrote (the fingerprint is
        # otherwise stored only by a finished run, which proves every note went through it).
        with store.write():
            store.set_meta(meta.PIPELINE, pipeline)
    if targeted:
        assert named is not None
        # What a whole pass would read again although no event names it is named too: a
        # symlink to a named file, a document to retry (see `_also_named`).
        named = normalise_targets(
            [*named, *_also_named(named, known, documents=options.documents, ocr=options.ocr)]
        )
        assert named is not None
        listing = walk_targets(
            root,
            named,
            include=options.include,
            exclude=options.exclude,
            documents=options.documents,
        )
        notes, passed_over, covers = listing.notes, listing.passed_over, listing.covers
        remembered = None
    else:
        context = folder_listings.context_of(
            str(root), options.include, options.exclude, options.documents
        )
        remembered = (
            folder_listings.FolderListings(
                # --full (and a new pipeline) lists every folder: the way to rule the shortcut out.
                old={}
                if force
                else folder_listings.decode(store.get_meta(meta.FOLDER_LISTINGS), context),
                started_ns=time.time_ns(),
            )
            if folder_listings.TRUSTED
            else None
        )
        notes, passed_over = walk_vault(
            root,
            include=options.include,
            exclude=options.exclude,
            documents=options.documents,
            remembered=remembered,
        )
        covers = None
    problems: list[tuple[str, str]] = []
    # A path is the files table's key and appears in results and logs, so it cannot be scrubbed
    # like text: a note whose path holds a secret is not indexed at all, only named (scrubbed).
    # A path the index holds passed this check when it was stored, under the same rules and
    # allow-list (another fingerprint forces every note through again), so only new ones need it.
    fresh = [n for n in notes if force or n.rel_path not in known]
    secret_paths: list[NoteFile] = []
    secret_entries: list[tuple[str, str]] = []
    if fresh or passed_over:
        from ...secrets.scrubber import scrub  # deferred: a run with no new path compiles no rule

        secret_paths = [n for n in fresh if scrub(n.rel_path, allow=options.allow).counts]
        for note in secret_paths:
            shown = scrub(note.rel_path, allow=options.allow).text
            log.warning("not indexed: the path of %s contains a secret; rename the file", shown)
            problems.append((shown, "the file name contains a secret; rename the file to index it"))
        # The entries the walk passed over are stored too (as skipped, by path): the same rule.
        secret_entries = [e for e in passed_over if scrub(e[0], allow=options.allow).counts]
        for path, _ in secret_entries:
            shown = scrub(path, allow=options.allow).text
            problems.append((shown, "the file name contains a secret; rename the file to index it"))
    notes = [n for n in notes if n not in secret_paths]
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
            or ocr_now_on(known[n.rel_path], options.ocr)
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
    listings = None
    if remembered is not None and remembered.changed():
        kept = folder_listings.indexed_only(remembered.found, (n.rel_path for n in notes))
        listings = folder_listings.encode(kept, context)
    looked_at = known if covers is None else [p for p in known if covers(p)]
    plan = UpdatePlan(
        root=root,
        options=options,
        use_vectors=use_vectors,
        force=force,
        pipeline=pipeline,
        notes=notes,
        passed_over=passed_over,
        known=known,
        gone=sorted(set(looked_at) - present),
        candidates=candidates,
        problems=problems,
        unchanged=len(notes) - len(candidates),
        targeted=targeted,
        identity=identity,
        retry=retry,
        no_chunks=store.chunk_count() == 0,
        listings=listings,
    )
    # A walk of a vault that vanished half-way would make every note it missed look deleted.
    check_vault(plan)
    return plan


def _also_named(
    named: Sequence[str], known: dict[str, FileState], *, documents: bool, ocr: bool
) -> list[str]:
    """Known files a whole pass would read again although no watcher names them (one pass over
    the known files, done on every targeted run, so each test is a C call or two):

    - a symlink inside the vault to a named file: an event names the target only, and a link's
      stored stat and content are its target's (the walk follows it), so the same stored
      (mtime, size), or the same content, marks a possible alias (a copy is only stat-ed);
    - a document whose library is installed now, or whose kind changed (an `.excalidraw.md`
      indexed as a note before documents were read).
    """
    wanted = frozenset(named)
    stats: set[tuple[int, int]] = set()
    hashes: set[str] = set()
    for path, state in known.items():
        if covered(wanted, path):
            if state.mtime_ns:  # 0: a problem looked at again anyway, nothing to match
                stats.add((state.mtime_ns, state.size))
            if state.content_hash:
                hashes.add(state.content_hash)
    return [
        path
        for path, state in known.items()
        if (state.mtime_ns, state.size) in stats
        or state.content_hash in hashes
        or (documents and _retry(path, state, ocr=ocr))
    ]


def _retry(path: str, state: FileState, *, ocr: bool) -> bool:
    """Whether a whole pass would extract this known document again though its stat is unchanged
    (`retry` in plan_update)."""
    if state.engine is not None and (library_now_installed(state) or ocr_now_on(state, ocr)):
        return True
    lower = path.lower()
    return lower.endswith(DOCUMENT_SUFFIXES) and (state.kind or "note") != document_kind(lower)
