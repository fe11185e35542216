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
import signal
from collections import deque
from collections.abc import Generator, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ...storage.records import FileState
from ..vault_walk import NoteFile
from .options import IndexOptions
from .prepare import Prepared, Skip, prepare_note

if TYPE_CHECKING:
    from ...embedding.embedder import Embedder

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
# imports, the model's memory map) costs more than the second core gives back: measured with
# bench/index_speed.py --crossover (the results file beside it has the figures).
POOL_MIN_NOTES = 150
BATCH_NOTES = 32  # notes per task: large enough that a task's pickling is noise
BATCH_BYTES = 1 << 20  # and at most this much note text per task (a few huge notes alone)
_MAX_DEFAULT_WORKERS = 2  # measured best on 2 cores (the writer is mostly idle meanwhile)


def default_workers() -> int:
    """Worker processes when none are asked for: one per core, at most two; none on one core."""
    cores = os.cpu_count() or 1
    return 0 if cores < 2 else min(_MAX_DEFAULT_WORKERS, cores)


def worker_count(options: IndexOptions, notes: int) -> int:
    """Worker processes for a run that prepares `notes` notes: 0 means in-process."""
    wanted = default_workers() if options.workers is None else options.workers
    if wanted <= 0 or notes < POOL_MIN_NOTES:
        return 0
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
        from ...embedding.embedder import Model2VecEmbedder

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
    from ...embedding.quantize import quantize

    texts = [t for item in items for t in item.embed_texts]
    if not texts:
        return
    vectors = quantize(embedder.embed(texts))
    start = 0
    for item in items:
        item.vectors = vectors[start : start + len(item.chunks)]
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
    from ...embedding.embedder import Model2VecEmbedder

    return embedder.source if isinstance(embedder, Model2VecEmbedder) else None


def prepare_in_pool(
    notes: Sequence[NoteFile],
    *,
    root: Path,
    known: dict[str, FileState],
    options: IndexOptions,
    force: bool,
    workers: int,
    model: str | None,
) -> Generator[tuple[NoteFile, Prepared | Skip | None], None, None]:
    """Each note with what preparing it gave, in the order of `notes`, prepared by `workers`
    processes (and embedded there when `model` is given). Leaving the loop early cancels what
    is queued and waits for the running tasks; a pool that breaks (a worker killed) leaves the
    rest to be prepared in-process."""
    setup = _Setup(root, options, force, model)
    level = logging.getLogger("noteseek").getEffectiveLevel()
    pool = ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_start,
        initargs=(setup, level),
    )
    batches = _batches(notes, known)
    running: deque[tuple[list[tuple[NoteFile, FileState | None]], Future[_Done]]] = deque()
    broken = False
    try:
        for batch in batches:
            running.append((batch, pool.submit(_work, batch)))
            if len(running) < 2 * workers:
                continue
            yield from _take(running)
        while running:
            yield from _take(running)
    except BrokenProcessPool:
        broken = True
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    if broken:
        log.warning("an indexing worker process died; preparing the remaining notes here")
        rest = [b for b, _ in running] + list(batches)
        for batch in rest:
            for note, old in batch:
                yield note, prepare_safely(note, root, old, options, force)


def _take(
    running: deque[tuple[list[tuple[NoteFile, FileState | None]], Future[_Done]]],
) -> Generator[tuple[NoteFile, Prepared | Skip | None], None, None]:
    """The oldest batch's results; it stays queued until they are there (a broken pool's
    batches are all prepared again in-process)."""
    batch, future = running[0]
    done = future.result()
    running.popleft()
    for record in done.records:
        logging.getLogger(record.name).handle(record)
    for (note, _), result in zip(batch, done.results):
        yield note, result
