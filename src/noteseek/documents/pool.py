"""Worker processes that extract documents under a memory limit and a wall-clock timeout.

Workers are started with "spawn" (a fresh interpreter, no inherited threads or locks from the
indexer, and the same on every platform) and reused: starting one costs about 0.1 s of imports,
while a reused worker adds well under a millisecond per file (bench/documents_extract.py). A worker
that overruns its timeout is killed and replaced; one that dies (a library aborting on a hostile
file) is replaced, and the file is retried once with the format's fallback reader where it has one.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import sys
import time
import types
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import wait
from pathlib import Path
from typing import Any

from ..core.file_kinds import format_of
from .formats import document_kind
from .model import ExtractionLimits, ExtractionResult, Outcome
from .worker import Request, retires_after, serve

__all__ = ["ExtractionPool", "PoolStats"]

_MIB = 1024 * 1024


def _has_fallback(kind: str | None) -> bool:
    """Whether a kind has a second reader (openpyxl for .xlsx) to retry a crashed file with."""
    record = format_of(kind) if kind else None
    return record is not None and "fallback" in record.options


@dataclass(frozen=True)
class PoolStats:
    """What the pool did: files done, workers started, killed on timeout, found dead."""

    files: int
    started: int
    timed_out: int
    crashed: int


@dataclass
class _Task:
    path: str
    limits: ExtractionLimits
    fallback: bool = False
    retried: bool = False


@contextlib.contextmanager
def _without_main_module() -> Iterator[None]:
    """Hide the caller's `__main__` while a worker starts.

    "spawn" makes the child import the parent's main script again (to find the pickled target),
    and the worker needs nothing from it: a script that calls `Index.update` without an
    `if __name__ == "__main__"` guard would run again in every worker, and a main read from
    stdin cannot be imported at all. With a bare `__main__`, multiprocessing passes no main to
    the child; the worker's code lives in this package.
    """
    main = sys.modules.get("__main__")
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        if main is not None:
            sys.modules["__main__"] = main


class _Worker:
    def __init__(self, ctx: Any, memory_bytes: int | None) -> None:
        self.conn, child = ctx.Pipe(duplex=True)
        self.process = ctx.Process(target=serve, args=(child, memory_bytes), daemon=True)
        with _without_main_module():
            self.process.start()
        child.close()
        self.task: _Task | None = None
        self.deadline = 0.0

    def alive(self) -> bool:
        return bool(self.process.is_alive())

    def stop(self, *, kill: bool = False) -> None:
        if kill:
            self.process.kill()
        else:
            with contextlib.suppress(OSError, ValueError):
                self.conn.send(None)
        self.process.join(timeout=None if kill else 2.0)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        self.conn.close()


class ExtractionPool:
    """Extract documents in `workers` reusable processes; use as a context manager or `close()`."""

    def __init__(self, *, workers: int = 1, limits: ExtractionLimits | None = None) -> None:
        if workers < 1:
            raise ValueError("workers must be at least 1")
        self.limits = limits or ExtractionLimits()
        self._ctx = multiprocessing.get_context("spawn")
        self._size = workers
        self._workers: list[_Worker] = []
        self._files = self._started = self._timed_out = self._crashed = 0

    def __enter__(self) -> ExtractionPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def stats(self) -> PoolStats:
        """Counters since the pool was made."""
        return PoolStats(self._files, self._started, self._timed_out, self._crashed)

    def close(self) -> None:
        """Stop every worker (idle ones finish at once; none is left running)."""
        for worker in self._workers:
            worker.stop(kill=worker.task is not None)
        self._workers.clear()

    def extract(self, path: str | Path) -> ExtractionResult:
        """Extract one file in a worker."""
        return next(iter(self.extract_many([path])))

    def extract_many(
        self, paths: Iterable[str | Path], *, limits: ExtractionLimits | None = None
    ) -> Iterator[ExtractionResult]:
        """Extract every path, yielding each result as it finishes (not in input order);
        `limits` replaces the pool's for these files (the worker memory limit excepted).

        Leaving the loop early (break, an exception, Ctrl-C) kills the workers still busy, so a
        later call never receives a result that belongs to this one.
        """
        use = limits or self.limits
        try:
            yield from self._run(deque(_Task(str(p), use) for p in paths))
        finally:
            for worker in [w for w in self._workers if w.task is not None]:
                worker.stop(kill=True)
                self._workers.remove(worker)

    def _run(self, pending: deque[_Task]) -> Iterator[ExtractionResult]:
        while self._workers and len(self._workers) > self._size:
            self._workers.pop().stop()
        while len(self._workers) < min(self._size, max(len(pending), 1)):
            self._workers.append(self._spawn())
        while pending or any(w.task for w in self._workers):
            for i, worker in enumerate(self._workers):
                if worker.task is None and pending:
                    if not worker.alive():
                        worker.stop(kill=True)
                        worker = self._workers[i] = self._spawn()
                    self._assign(worker, pending.popleft())
            busy = [w for w in self._workers if w.task is not None]
            timeout = max(0.0, min(w.deadline for w in busy) - time.monotonic())
            ready = set(wait([w.conn for w in busy] + [w.process.sentinel for w in busy], timeout))
            for i, worker in enumerate(self._workers):
                task = worker.task
                if task is None:
                    continue
                result: ExtractionResult | None = None
                if worker.conn in ready or worker.process.sentinel in ready:
                    result = self._receive(worker, task)
                    if result is None:  # died: replace it; maybe retry with the fallback reader
                        worker.task = None
                        worker.process.join(timeout=2.0)  # the pipe closes before it is reaped
                        code = worker.process.exitcode
                        worker.stop(kill=True)
                        self._workers[i] = self._spawn()
                        if code == 0 and not task.retried:
                            # A clean exit is no crash on this file (it died between jobs).
                            pending.appendleft(
                                _Task(task.path, task.limits, task.fallback, retried=True)
                            )
                            continue
                        self._crashed += 1
                        if not task.fallback and _has_fallback(document_kind(task.path)):
                            pending.appendleft(_Task(task.path, task.limits, fallback=True))
                            continue
                        result = self._crash_result(task, code)
                elif time.monotonic() >= worker.deadline:
                    worker.task = None
                    worker.stop(kill=True)
                    self._workers[i] = self._spawn()
                    self._timed_out += 1
                    result = ExtractionResult(
                        path=task.path,
                        outcome=Outcome.TIMED_OUT,
                        reason=f"'{task.path}' took longer than {task.limits.timeout_seconds:g} s "
                        "to extract and was stopped",
                        seconds=task.limits.timeout_seconds,
                    )
                if result is not None:
                    worker.task = None
                    self._files += 1
                    if retires_after(result):  # it exits now; replace it before the next file
                        worker.stop()
                        self._workers[i] = self._spawn()
                    yield result

    def _spawn(self) -> _Worker:
        self._started += 1
        return _Worker(self._ctx, self.limits.memory_bytes)

    def _assign(self, worker: _Worker, task: _Task) -> None:
        worker.task = task
        worker.deadline = time.monotonic() + task.limits.timeout_seconds
        # If it died between jobs, its sentinel reports it and the task ends as a crash.
        with contextlib.suppress(OSError, ValueError):
            worker.conn.send(Request(task.path, task.limits, task.fallback))

    def _receive(self, worker: _Worker, task: _Task) -> ExtractionResult | None:
        try:
            if worker.conn.poll():
                result = worker.conn.recv()
                if isinstance(result, ExtractionResult):
                    return result
        except (EOFError, OSError):
            pass
        return None

    def _crash_result(self, task: _Task, exitcode: int | None) -> ExtractionResult:
        how = (
            f"signal {-exitcode}"
            if exitcode is not None and exitcode < 0
            else f"exit code {exitcode}"
        )
        memory = self.limits.memory_bytes
        limit = f" or needs more than the {memory / _MIB:,.0f} MiB memory limit" if memory else ""
        return ExtractionResult(
            path=task.path,
            outcome=Outcome.CORRUPT,
            reason=f"'{task.path}' made its reader crash ({how}): the file is malformed{limit}",
        )
