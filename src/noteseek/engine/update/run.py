"""Bring an index up to date with a vault: full or incremental, one atomic transaction per file.

`run_update` holds the index's update lock (one run at a time) and runs the phases in order: plan
(plan.py: model, pipeline, vault walk or the named paths, candidates), delete (delete.py: notes
gone from the vault), then per note prepare (prepare.py: read, scrub, chunk) and, per batch of
prepared notes, embed (embed.py) and write each file in its own transaction; then the vector
backfill (embed.py) and finish (finish.py: statistics, text-index upkeep, meta). A stop (the
caller's event, from any thread, or Ctrl-C in the main thread) ends the run after the current
file; every transaction already committed stays.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from ...embedding.embedder import Embedder
from ...storage.records import FileRecord
from .delete import delete_gone
from .embed import backfill_vectors, embed_batch
from .finish import finish_update
from .options import EMBED_BATCH_CHUNKS, IndexOptions, IndexStats, Progress
from .plan import UpdatePlan, check_vault, plan_update
from .prepare import Prepared, Skip, prepare_note

if TYPE_CHECKING:
    from ...storage.protocol import Storage

__all__ = ["IndexOptions", "IndexStats", "Progress", "run_update"]

log = logging.getLogger("noteseek.indexer")


@contextmanager
def _stop_on_first_interrupt(stop: threading.Event | None) -> Iterator[threading.Event]:
    """First Ctrl-C: finish the current file, then stop. Second Ctrl-C: abort at once (rolled back).

    `stop` (the caller's event, set from any thread) stops the run the same way; Ctrl-C sets it.
    Outside the main thread no handler can be installed, so only `stop` counts there.
    """
    stop = stop if stop is not None else threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return

    def handler(signum: int, frame: object) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()
        log.warning(
            "interrupted: finishing the current file, then stopping (Ctrl-C again to abort)"
        )

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield stop
    finally:
        signal.signal(signal.SIGINT, previous)


def holder_label() -> str:
    """Who runs an update, as a waiting writer's message shows it: `noteseek watch [thread]`."""
    program = os.path.basename(sys.argv[0] if sys.argv and sys.argv[0] else "python")
    command = sys.argv[1] if len(sys.argv) > 1 else ""
    if (
        program in ("noteseek", "__main__.py")
        and command[:1].isalpha()
        and command.replace("-", "").isalnum()
    ):
        program = f"noteseek {command}"  # a subcommand name, never an argument that could be data
    thread = threading.current_thread().name
    return program if thread == "MainThread" else f"{program} [{thread}]"


def run_update(
    store: Storage,
    embedder: Embedder | None,
    vault: str,
    *,
    full: bool = False,
    options: IndexOptions | None = None,
    progress: Progress | None = None,
    targets: Sequence[str] | None = None,
    stop: threading.Event | None = None,
    wait: float | None = None,
) -> IndexStats:
    """Index new and changed notes, drop deleted ones, and embed what lacks a vector; with
    `targets`, only at and below those vault-relative paths (see plan.py). `wait`: seconds to
    wait for another update run of this index (None: until it ends) before IndexLockedError."""
    started = time.perf_counter()
    cancel = None if stop is None else stop.is_set
    with store.update_lock(wait=wait, holder=holder_label(), cancel=cancel):
        deleted_before = store.chunks_deleted
        counter: Counter[str] = Counter()
        plan = plan_update(
            store,
            embedder,
            Path(vault).resolve(),
            options=options or IndexOptions(),
            full=full,
            targets=targets,
        )
        counter["unchanged"] = plan.unchanged
        with _stop_on_first_interrupt(stop) as stopping:
            delete_gone(store, plan, counter)
            finished = _write_notes(
                store, embedder, plan, counter, stop=stopping, progress=progress, full=full
            )
            if finished and plan.use_vectors and embedder is not None:
                finished = backfill_vectors(store, embedder, stop=stopping, counter=counter)
        # A stop that came once every note and vector was written cut nothing short: the run
        # finished (a server stopped right after its watcher's catch-up is not "interrupted").
        return finish_update(
            store,
            plan,
            counter,
            started=started,
            deleted_before=deleted_before,
            interrupted=not finished,
        )


def _write_notes(
    store: Storage,
    embedder: Embedder | None,
    plan: UpdatePlan,
    counter: Counter[str],
    *,
    stop: threading.Event,
    progress: Progress | None,
    full: bool,
) -> bool:
    """Prepare every candidate note; write unchanged and skipped ones at once, the others a batch
    at a time once their vectors are known (each file in its own transaction). False when the
    stop came before the last candidate."""
    pending: list[Prepared] = []
    pending_chunks = 0

    def flush() -> None:
        nonlocal pending_chunks
        if not pending:
            return
        all_vectors = (
            embed_batch(store, embedder, pending, reuse=not full, counter=counter)
            if plan.use_vectors and embedder is not None
            else [None] * len(pending)
        )
        for item, vectors in zip(pending, all_vectors):
            with store.write():
                store.replace_file(item.record, item.chunks, vectors)
            counter["added" if item.is_new else "changed"] += 1
            counter["chunks_written"] += len(item.chunks)
        pending.clear()
        pending_chunks = 0

    candidates = plan.candidates
    for done, note in enumerate(candidates, start=1):
        if stop.is_set():
            flush()
            return False
        try:
            result = prepare_note(
                note, plan.root, plan.known.get(note.rel_path), plan.options, plan.force
            )
        except Exception as exc:  # one note must never abort the whole run
            log.exception("failed to index %s", note.rel_path)
            result = Skip(
                f"could not be indexed ({type(exc).__name__}: {exc}); "
                "this is a bug in noteseek, please report it",
                recheck=True,
            )
        if result is None:
            with store.write():
                store.touch_file(note.rel_path, note.mtime_ns, note.size)
            counter["unchanged"] += 1
        elif isinstance(result, Skip):
            if result.recheck:
                check_vault(plan)  # a note that vanished with its vault is not a skipped note
            # mtime 0 never matches a real stat, so a problem that may clear up by itself
            # (permissions, the size limit, a file being written) is looked at again next run.
            mtime_ns = 0 if result.recheck else note.mtime_ns
            with store.write():
                store.replace_file(
                    FileRecord(
                        note.rel_path, mtime_ns, note.size, None, None, "skipped", result.reason
                    ),
                    [],
                    None,
                )
            log.warning("skipped %s: %s", note.rel_path, result.reason)
            plan.problems.append((note.rel_path, result.reason))
            counter["skipped"] += 1
        else:
            if result.record.problem:
                log.warning("indexed %s with a problem: %s", note.rel_path, result.record.problem)
                plan.problems.append((note.rel_path, result.record.problem))
            counter["secrets"] += result.secrets
            pending.append(result)
            pending_chunks += len(result.chunks)
            if pending_chunks >= EMBED_BATCH_CHUNKS:
                flush()
        if progress is not None:
            progress(done, len(candidates), note.rel_path)
    flush()
    return True
