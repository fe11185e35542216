"""Bring an index up to date with a vault: full or incremental, every file written whole.

`run_update` holds the index's update lock (one run at a time) and runs the phases in order: plan
(plan.py: model, pipeline, vault walk or the named paths, candidates), delete (delete.py: notes
gone from the vault), then per note prepare (prepare.py: read, scrub, chunk) and, per batch of
prepared notes, embed (embed.py) and write the batch's files in one transaction (each file whole);
a large run prepares and embeds its notes in worker processes (workers.py); then the vector
backfill (embed.py) and finish (finish.py: statistics, text-index upkeep, meta). Documents go
through the same phases, with extraction (documents.py, in worker processes) in place of
chunking (document_chunks.py turns a document's units into chunks). A stop (the caller's event,
from any thread, or Ctrl-C in the main thread) ends the run after the current file; every
transaction already committed stays.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import sys
import threading
import time
from collections import Counter
from collections.abc import Generator, Iterator, Sequence
from contextlib import closing, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from ...core.file_kinds import IMAGE_KIND
from ...embedding.embedder import Embedder
from ...storage import meta
from ...storage.records import FileRecord, FileWrite, StoredChunk
from ..vault_walk import NoteFile
from .delete import delete_gone
from .embed import backfill_vectors, embed_batch
from .finish import finish_update
from .options import EMBED_BATCH_CHUNKS, IndexOptions, IndexStats, Progress
from .plan import UpdatePlan, check_vault, plan_update
from .stored_reads import MISSING, OCR_OFF

if TYPE_CHECKING:
    from ...storage.protocol import Storage
    from .documents import Reusable
    from .prepare import Prepared, Skip

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
            reusable = _ocr_sources(store, plan)  # before the delete: a moved image's text
            delete_gone(store, plan, counter)
            writer = _Writer(store, embedder, plan, counter, full=full)
            finished = _write_files(writer, stop=stopping, progress=progress, reusable=reusable)
            writer.ocr_finished()
            if finished and plan.use_vectors and embedder is not None:
                finished = backfill_vectors(store, embedder, stop=stopping, counter=counter)
        # A stop that came once every file and vector was written cut nothing short: the run
        # finished (a server stopped right after its watcher's catch-up is not "interrupted").
        return finish_update(
            store,
            plan,
            counter,
            started=started,
            deleted_before=deleted_before,
            interrupted=not finished,
            missing_libraries=tuple(sorted(writer.missing)),
        )


class _Writer:
    """Writes prepared files: unchanged and skipped ones at once, the others a batch at a time
    once their vectors are known (one transaction per batch, each file whole). Notes and
    documents share it, so a run embeds both in the same batches."""

    def __init__(
        self,
        store: Storage,
        embedder: Embedder | None,
        plan: UpdatePlan,
        counter: Counter[str],
        *,
        full: bool,
    ) -> None:
        self.store, self.embedder, self.plan, self.counter = store, embedder, plan, counter
        self.full = full
        self.pending: list[Prepared] = []
        self.pending_chunks = 0
        self.missing: set[str] = set()  # packages a document needed and did not find
        self.ocr_total: int | None = None  # files in the OCR phase, once it started
        self.ocr_done = 0  # of those: read by OCR (with or without text found)
        self.ocr_with_text = 0  # ... and OCR found text in
        self.ocr_pages = 0  # pages (an image is one) OCR found text on

    def ocr_started(self, total: int) -> None:
        """The text is all taken: store it (searchable now), then count the OCR phase."""
        self.flush()
        self.ocr_total = total
        self._ocr_progress(running=True)

    def ocr_finished(self) -> None:
        if self.ocr_total is not None:
            self._ocr_progress(running=False)

    def _ocr_progress(self, *, running: bool) -> None:
        value = {
            "total": self.ocr_total,
            "done": self.ocr_done,
            "running": running,
            "with_text": self.ocr_with_text,
            "pages": self.ocr_pages,
            "finished_at": None if running else time.time(),
        }
        with self.store.write():
            self.store.set_meta(meta.OCR_PROGRESS, json.dumps(value))

    def flush(self) -> None:
        if not self.pending:
            return
        plan, counter = self.plan, self.counter
        all_vectors = (
            embed_batch(
                self.store, self.embedder, self.pending, reuse=not self.full, counter=counter
            )
            if plan.use_vectors and self.embedder is not None
            else [None] * len(self.pending)
        )
        # One transaction per batch, not per file: a file is still all or nothing (a killed run
        # leaves whole files), and FTS5 writes its pending terms once per commit, so one commit
        # per file made a segment per file for automerge to merge again (measured:
        # bench/index_speed.py, the results file beside it).
        with self.store.write():
            self.store.replace_files(
                [
                    FileWrite(item.record, item.chunks, vectors)
                    for item, vectors in zip(self.pending, all_vectors)
                ]
            )
        for item in self.pending:
            counter["added" if item.is_new else "changed"] += 1
            counter["chunks_written"] += len(item.chunks)
        self.pending.clear()
        self.pending_chunks = 0

    def take(self, note: NoteFile, result: Prepared | Skip | None) -> None:
        """Store what preparing one file gave."""
        # deferred: as in _take, loaded by the first file to write
        from .prepare import Prepared

        self._take(note, result)
        if self.ocr_total is not None and note.is_document:
            engine = (result.record.engine or "") if isinstance(result, Prepared) else ""
            if engine.startswith((OCR_OFF, MISSING)):
                # Not read by OCR: a PDF's text layer kept when the run stopped before its OCR,
                # or a file whose OCR engine is not installed.
                return
            self.ocr_done += 1
            if isinstance(result, Prepared) and result.ocr_pages:
                self.ocr_with_text += 1
                self.ocr_pages += result.ocr_pages
            self.flush()  # an OCR'd file is seconds of work: searchable as soon as it is read
            self._ocr_progress(running=True)

    def _take(self, note: NoteFile, result: Prepared | Skip | None) -> None:
        # deferred: preparing notes (chunker, scrubber, YAML) is loaded by the first file to write
        from .prepare import Skip

        plan, counter = self.plan, self.counter
        if result is None:
            with self.store.write():
                self.store.touch_file(note.rel_path, note.mtime_ns, note.size)
            counter["unchanged"] += 1
        elif isinstance(result, Skip):
            if result.recheck:
                check_vault(plan)  # a file that vanished with its vault is not a skipped file
            # mtime 0 never matches a real stat, so a problem that may clear up by itself
            # (permissions, the size limit, a file being written) is looked at again next run.
            mtime_ns = 0 if result.recheck else note.mtime_ns
            kind = note.kind if note.is_document else None
            with self.store.write():
                self.store.replace_file(
                    FileWrite(
                        FileRecord(
                            note.rel_path,
                            mtime_ns,
                            note.size,
                            None,
                            None,
                            "skipped",
                            result.reason,
                            kind=kind,
                        )
                    )
                )
            log.warning("skipped %s: %s", note.rel_path, result.reason)
            plan.problems.append((note.rel_path, result.reason))
            counter["skipped"] += 1
        elif result.record.status == "skipped":  # a document whose extraction gave no text
            with self.store.write():
                self.store.replace_file(FileWrite(result.record))
            problem = result.record.problem or ""
            log.warning("skipped %s: %s", note.rel_path, problem)
            plan.problems.append((note.rel_path, problem))
            counter["skipped"] += 1
            counter["documents_extracted"] += 1
            if result.record.engine and result.record.engine.startswith(MISSING):
                self.missing.add(result.record.engine.split(":", 1)[1])
        else:
            if result.record.problem:
                log.warning("indexed %s with a problem: %s", note.rel_path, result.record.problem)
                plan.problems.append((note.rel_path, result.record.problem))
            if note.is_document:
                counter["documents_extracted"] += 1
                counter["ocr_pages"] += result.ocr_pages
                counter["ocr_files"] += 1 if result.ocr_pages else 0
                counter["ocr_reused"] += 1 if result.ocr_reused else 0
            counter["secrets"] += result.secrets
            self.pending.append(result)
            self.pending_chunks += len(result.chunks)
            if self.pending_chunks >= EMBED_BATCH_CHUNKS:
                self.flush()


def _ocr_sources(store: Storage, plan: UpdatePlan) -> Reusable:
    """Where an image's OCR text is already stored, by content hash: a copy's, or (read now,
    before the delete) that of an image gone from its old path, so a moved one is not read."""
    by_hash: dict[str, str] = {}
    for path, state in plan.known.items():
        engine = state.engine or ""
        if (
            state.kind == IMAGE_KIND
            and state.content_hash
            and state.status != "skipped"
            and not engine.startswith((MISSING, OCR_OFF))
        ):
            by_hash.setdefault(state.content_hash, path)
    gone = set(plan.gone)
    saved = {h: (p, store.file_chunks(p)) for h, p in by_hash.items() if p in gone}

    def find(content_hash: str) -> tuple[str, list[StoredChunk]] | None:
        if content_hash in saved:
            return saved[content_hash] if saved[content_hash][1] else None
        path = by_hash.get(content_hash)
        chunks = store.file_chunks(path) if path is not None else []
        return (path, chunks) if path is not None and chunks else None

    return find


def _prepared_notes(
    writer: _Writer, notes: list[NoteFile], stop: threading.Event
) -> Generator[tuple[NoteFile, Prepared | Skip | None], None, None]:
    """Each note with what preparing it gave, in order: in worker processes for a large run
    (embedded there too when no stored vector can be reused: a first or --full build), else
    here."""
    if not notes:
        return
    # deferred: the preparing stage and its pool (chunker, scrubber, YAML, multiprocessing) only
    # when some note changed; a no-op run or a watcher's deletion needs none of it
    from .workers import prepare_in_pool, prepare_safely, worker_count, worker_model

    plan = writer.plan
    workers = worker_count(plan.options, len(notes))
    if workers == 0:
        for note in notes:
            yield (
                note,
                prepare_safely(
                    note, plan.root, plan.known.get(note.rel_path), plan.options, plan.force
                ),
            )
        return
    embed_there = plan.use_vectors and (writer.full or plan.no_chunks)
    with closing(
        prepare_in_pool(
            notes,
            root=plan.root,
            known=plan.known,
            options=plan.options,
            force=plan.force,
            workers=workers,
            model=worker_model(writer.embedder) if embed_there else None,
            stop=stop,
        )
    ) as results:
        yield from results


def _write_files(
    writer: _Writer,
    *,
    stop: threading.Event,
    progress: Progress | None,
    reusable: Reusable | None = None,
) -> bool:
    """Prepare every candidate: the notes, then the documents (hashed, then extracted in one
    pool, which is opened only when some document's content changed). False when the stop came
    before the last candidate."""
    plan = writer.plan
    candidates = plan.candidates
    notes = [c for c in candidates if not c.is_document]
    documents = [c for c in candidates if c.is_document]
    done = 0

    def step(note: NoteFile) -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, len(candidates), note.rel_path)

    with closing(_prepared_notes(writer, notes, stop)) as prepared:  # a pool stops with the loop
        for note, result in prepared:
            if stop.is_set():
                break
            writer.take(note, result)
            step(note)
    if documents and not stop.is_set():
        # deferred: the document readers and their pool, only when a document changed
        from .documents import document_results

        for note, result in document_results(
            documents,
            root=plan.root,
            known=plan.known,
            options=plan.options,
            force=plan.force,
            retry=plan.retry,
            stop=stop,
            reusable=reusable,
            before_ocr=writer.ocr_started,
        ):
            writer.take(note, result)
            step(note)
    writer.flush()
    return done == len(candidates)
