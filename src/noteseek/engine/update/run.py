"""Bring an index up to date with a vault: full or incremental, one atomic transaction per file.

`run_update` runs the phases in order: plan (plan.py: model, pipeline, vault walk, candidates),
delete (delete.py: notes gone from the vault), then per note prepare (prepare.py: read, scrub,
chunk) and, per batch of prepared notes, embed (embed.py) and write each file in its own
transaction; then the vector backfill (embed.py) and finish (finish.py: statistics, text-index
upkeep, meta). Ctrl-C stops after the current file; every transaction already committed stays.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from ...embedding.embedder import Embedder
from ...storage.records import FileRecord
from .delete import delete_gone
from .embed import backfill_vectors, embed_batch
from .finish import finish_update
from .options import EMBED_BATCH_CHUNKS, IndexOptions, IndexStats, Progress
from .plan import UpdatePlan, plan_update
from .prepare import Prepared, Skip, prepare_note

if TYPE_CHECKING:
    from ...storage.protocol import Storage

__all__ = ["IndexOptions", "IndexStats", "Progress", "run_update"]

log = logging.getLogger("noteseek.indexer")


@contextmanager
def _stop_on_first_interrupt() -> Iterator[threading.Event]:
    """First Ctrl-C: finish the current file, then stop. Second Ctrl-C: abort at once (rolled back)."""
    stop = threading.Event()
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


def run_update(
    store: Storage,
    embedder: Embedder | None,
    vault: str,
    *,
    full: bool = False,
    options: IndexOptions | None = None,
    progress: Progress | None = None,
) -> IndexStats:
    """Index new and changed notes, drop deleted ones, and embed what lacks a vector."""
    started = time.perf_counter()
    deleted_before = store.chunks_deleted
    counter: Counter[str] = Counter()
    plan = plan_update(
        store, embedder, Path(vault).resolve(), options=options or IndexOptions(), full=full
    )
    counter["unchanged"] = plan.unchanged
    with _stop_on_first_interrupt() as stop:
        delete_gone(store, plan, counter)
        _write_notes(store, embedder, plan, counter, stop=stop, progress=progress, full=full)
        if plan.use_vectors and embedder is not None and not stop.is_set():
            backfill_vectors(store, embedder, stop=stop, counter=counter)
    return finish_update(
        store,
        plan,
        counter,
        started=started,
        deleted_before=deleted_before,
        interrupted=stop.is_set(),
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
) -> None:
    """Prepare every candidate note; write unchanged and skipped ones at once, the others a batch
    at a time once their vectors are known (each file in its own transaction)."""
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
            break
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
