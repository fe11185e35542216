"""Phase 3 of an update on several cores: notes prepared (read, scrubbed, chunked) and embedded in
worker processes, handed back in the order they were given, for the one writer.

The work per note is pure (`prepare_note`: bytes in, rows out) and the embedding of a note's
chunks depends only on their texts (each vector is pooled and quantised on its own), so a note
prepared in a worker gives exactly the rows and vectors it gives in the indexer's own process;
tests/test_parallel_index.py compares both builds chunk for chunk. The writer stays single: SQLite
has one writer, and one process keeps the transactions in the serial order.

Workers are started with `spawn` (the indexer may run beside threads — the watcher, the daemon —
and a forked child of a threaded process can inherit a held lock). A start costs a fresh
interpreter and the imports (bench/index_speed.py measures the crossover), so a run with fewer
notes than `POOL_MIN_NOTES` to prepare is prepared in-process, as the watcher's small updates are.
At most `2 × workers` batches are in flight, each of at most `BATCH_NOTES` notes and
`BATCH_BYTES` bytes, which bounds the memory held by results the writer has not taken yet.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import queue
import signal
import sys
import threading
from collections.abc import Generator, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...embedding.embedder import Embedder, Model2VecEmbedder
from ...embedding.quantize import quantize
from ...storage.records import FileState
from ..vault_walk import NoteFile
from .options import IndexOptions
from .prepare import Prepared, Skip, prepare_note

__all__ = [
    "BATCH_BYTES",
    "BATCH_NOTES",
    "POOL_MIN_NOTES",
    "default_workers",
    "prepare_in_pool",
    "prepare_safely",
    "worker_count",
]

log = logging.getLogger("noteseek.indexer")

# Below this many notes to prepare, a pool's start-up (a fresh interpreter per worker, the
# imports, the model's memory map: ~0.8 CPU-s each) costs more than the second core gives back.
# bench/index_speed.py --crossover: on a loaded 2-core machine the pool cost 0.8-1.3 CPU-s more
# at 50-200 notes and broke even in wall time near 200 (bench/results/index_speed_first_parallel.txt).
POOL_MIN_NOTES = 150
BATCH_NOTES = 32  # notes per task: large enough that a task's pickling is noise
BATCH_BYTES = 1 << 20  # and at most this much note text per task (a few huge notes alone)
_MAX_DEFAULT_WORKERS = 2  # measured best on 2 cores (the writer is mostly idle meanwhile)
# How often a wait for the next batch looks at the stop event and at the workers' health: a
# batch takes up to a second or so, and Ctrl-C must not wait for it.
_POLL_SECONDS = 0.1
# How often an idle worker looks whether the indexer still lives.
_PARENT_CHECK_SECONDS = 1.0


def default_workers() -> int:
    """Worker processes when none are asked for: one per core, at most two; none on one core."""
    cores = os.cpu_count() or 1
    return 0 if cores < 2 else min(_MAX_DEFAULT_WORKERS, cores)


def worker_count(options: IndexOptions, notes: int) -> int:
    """Worker processes for a run that prepares `notes` notes: 0 means in-process."""
    wanted = default_workers() if options.workers is None else options.workers
    if wanted <= 0 or notes < POOL_MIN_NOTES:
        return 0
    if multiprocessing.current_process().daemon:
        return 0  # a daemonic process (a multiprocessing pool's worker) may have no children
    return min(wanted, max(1, notes // BATCH_NOTES))


def prepare_safely(
    note: NoteFile, root: Path, old: FileState | None, options: IndexOptions, force: bool
) -> Prepared | Skip | None:
    """`prepare_note`, with a failure turned into a Skip: one note must never abort the run."""
    try:
        return prepare_note(note, root, old, options, force)
    except Exception as exc:
        log.exception("failed to index %s", note.rel_path)
        return Skip(
            f"could not be indexed ({type(exc).__name__}: {exc}); "
            "this is a bug in noteseek, please report it",
            recheck=True,
        )


@dataclass(frozen=True)
class _Setup:
    root: Path
    options: IndexOptions
    force: bool
    model: str | None  # a Model2Vec folder or id to embed with in the worker; None: not there


@dataclass(frozen=True)
class _Done:
    results: list[Prepared | Skip | None]
    records: list[logging.LogRecord]  # what the worker logged, re-emitted by the indexer


_setup: _Setup | None = None
_embedder: Embedder | None = None


class _Keep(logging.Handler):
    """Holds a worker's log records for the task that made them."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        record.msg, record.args = record.getMessage(), None  # plain text pickles
        if record.exc_info:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
            record.exc_info = None
        self.records.append(record)


_keep = _Keep()


def _start(setup: _Setup, level: int) -> None:
    global _setup, _embedder
    # Ctrl-C reaches the whole process group; the indexer decides what a stop means.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _setup = setup
    root = logging.getLogger("noteseek")
    root.handlers[:] = [_keep]
    root.setLevel(level)
    root.propagate = False
    if setup.model is not None:
        _embedder = Model2VecEmbedder(setup.model)


def _work(batch: list[tuple[NoteFile, FileState | None]]) -> _Done:
    assert _setup is not None
    _keep.records = []
    results = [
        prepare_safely(note, _setup.root, old, _setup.options, _setup.force) for note, old in batch
    ]
    if _embedder is not None:
        _embed(_embedder, [r for r in results if isinstance(r, Prepared) and r.chunks])
    return _Done(results, _keep.records)


def _embed(embedder: Embedder, items: list[Prepared]) -> None:
    """Every chunk's int8 vector, one embedding call for the batch (each row is its own text's)."""
    texts = [t for item in items for t in item.embed_texts]
    if not texts:
        return
    vectors = quantize(embedder.embed(texts))
    start = 0
    for item in items:
        item.vectors = vectors[start : start + len(item.chunks)]
        # The writer needs the vectors, not the texts they came from: sending these back too
        # would pickle each chunk's text twice (MDN: 40 MB more per build through the pipes).
        item.embed_texts = []
        start += len(item.chunks)


def _batches(
    notes: Sequence[NoteFile], known: dict[str, FileState]
) -> Iterator[list[tuple[NoteFile, FileState | None]]]:
    batch: list[tuple[NoteFile, FileState | None]] = []
    size = 0
    for note in notes:
        if batch and (len(batch) >= BATCH_NOTES or size + note.size > BATCH_BYTES):
            yield batch
            batch, size = [], 0
        batch.append((note, known.get(note.rel_path)))
        size += note.size
    if batch:
        yield batch


def worker_model(embedder: Embedder | None) -> str | None:
    """The model a worker can load to embed as `embedder` does; None: embed in the indexer."""
    return embedder.source if isinstance(embedder, Model2VecEmbedder) else None


@contextmanager
def _main_module_hidden() -> Iterator[None]:
    """Start processes without the caller's main module: `spawn` runs a main script again in
    each child (to find functions defined there), so a script that calls `Index.update`
    without an `if __name__ == "__main__":` guard would index again in every worker. The
    workers need nothing from it; hiding its file and spec while they start skips that."""
    main = sys.modules.get("__main__")
    if main is None:
        yield
        return
    saved: dict[str, Any] = {
        k: main.__dict__[k] for k in ("__file__", "__spec__") if k in main.__dict__
    }
    main.__dict__.pop("__file__", None)
    main.__dict__["__spec__"] = None
    try:
        yield
    finally:
        main.__dict__.pop("__spec__", None)
        main.__dict__.update(saved)


Batch = list[tuple[NoteFile, FileState | None]]


def _serve(tasks: Any, results: Any, setup: _Setup, level: int) -> None:
    """A worker process: batches in (sequence number, batch), results out, until None, or until
    the indexer is gone: one killed (SIGKILL, the OOM killer) never sends None, and the task
    queue never reports its end (every worker holds its write end too), so a worker that only
    waited would wait for ever."""
    _start(setup, level)
    parent = multiprocessing.parent_process()
    while True:
        try:
            task = tasks.get(timeout=_PARENT_CHECK_SECONDS)
        except queue.Empty:
            if parent is not None and not parent.is_alive():
                # Nobody reads what is still queued: leave without waiting to flush it.
                results.cancel_join_thread()
                return
            continue
        if task is None:
            return
        seq, batch = task
        try:
            results.put((seq, _work(batch)))
        except BaseException as exc:  # reported, and the batch prepared again in the indexer
            results.put((seq, f"{type(exc).__name__}: {exc}"))


def prepare_in_pool(
    notes: Sequence[NoteFile],
    *,
    root: Path,
    known: dict[str, FileState],
    options: IndexOptions,
    force: bool,
    workers: int,
    model: str | None,
    stop: threading.Event | None = None,
) -> Generator[tuple[NoteFile, Prepared | Skip | None], None, None]:
    """Each note with what preparing it gave, in the order of `notes`, prepared by `workers`
    processes (and embedded there when `model` is given). Leaving the loop early, or `stop`
    (looked at before each batch and while one is awaited), ends the workers at once (the
    batches they are in the middle of are dropped: nothing of them was written); a worker that
    dies or fails leaves the batches still out to be prepared in-process."""
    ctx = multiprocessing.get_context("spawn")
    tasks, results = ctx.Queue(), ctx.Queue()
    setup = _Setup(root, options, force, model)
    level = logging.getLogger("noteseek").getEffectiveLevel()
    procs = [
        ctx.Process(
            target=_serve, args=(tasks, results, setup, level), daemon=True, name="noteseek-prep"
        )
        for _ in range(workers)
    ]
    with _main_module_hidden():
        for proc in procs:
            proc.start()
    batches = _batches(notes, known)
    out: dict[int, Batch] = {}  # sent, not yet yielded
    done: dict[int, _Done | str] = {}
    sent = taken = 0
    broken = complete = False
    stopped = stop.is_set if stop is not None else lambda: False
    try:
        while True:
            while len(out) < 2 * workers and not broken:
                batch = next(batches, None)
                if batch is None:
                    break
                out[sent] = batch
                tasks.put((sent, batch))
                sent += 1
            if taken not in out:
                complete = True
                break
            if stopped():
                return  # before each batch, and after each wait for one
            while taken not in done and not broken:
                try:
                    seq, value = results.get(timeout=_POLL_SECONDS)
                    done[seq] = value
                except queue.Empty:
                    broken = not all(p.is_alive() for p in procs)
                if stopped():
                    return
            value = done.pop(taken, "a worker process died")
            batch = out.pop(taken)
            taken += 1
            if isinstance(value, str):
                log.warning("an indexing worker failed (%s); preparing its notes here", value)
                for note, old in batch:
                    yield note, prepare_safely(note, root, old, options, force)
            else:
                for record in value.records:
                    logging.getLogger(record.name).handle(record)
                for (note, _), result in zip(batch, value.results):
                    yield note, result
            if broken:
                # The rest in order, here: what was out, then what was never sent.
                for seq in sorted(out):
                    for note, old in out.pop(seq):
                        yield note, prepare_safely(note, root, old, options, force)
                for rest in batches:
                    for note, old in rest:
                        yield note, prepare_safely(note, root, old, options, force)
                complete = True
                return
    finally:
        _stop(procs, tasks, results, at_once=not complete)


def _stop(procs: list[Any], tasks: Any, results: Any, *, at_once: bool) -> None:
    """Stop the workers. After the last batch each is idle and ends at its None. Stopped early
    (Ctrl-C), they are terminated at once: each still had up to two queued batches before its
    None, and waiting for them (2 s per worker, then a terminate) made Ctrl-C on a large vault
    take ~4 s; what they would prepare is dropped anyway, and they hold no index state."""
    if not at_once:
        for _ in procs:
            with suppress(OSError, ValueError):
                tasks.put(None)
    for proc in procs:
        if at_once:
            proc.terminate()
        proc.join(timeout=2.0)
        if proc.is_alive():
            proc.terminate()
            proc.join()
    for q in (tasks, results):
        q.cancel_join_thread()  # a result no one reads must not keep the indexer waiting
        q.close()
