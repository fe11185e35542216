"""Warm indexes for the web server: a fixed set of worker threads, each with its own `Index`.

Why this scheme. An `Index` (one SQLite connection plus the searcher's in-memory vector matrix)
must not be used by two threads at once, and a search spends most of its time in SQLite and the
int8 cosine kernel, which release the GIL, so two searches on two connections do run in
parallel on two cores. The choices were:

- one shared `Index` behind a lock (what the MCP server does): correct, but every request waits
  for the one before it;
- Starlette's own threadpool with an `Index` per thread: anyio may run a request on any of up
  to 40 threads, each of which would open an index and load its own vector matrix (~15 MB on
  MDN), and requests would block threads while they wait;
- this: `workers` dedicated threads (a `ThreadPoolExecutor`), each holding one `LazyIndex` (the
  holder every long-lived adapter keeps) for its life (`threading.local`). A thread only ever
  runs one task at a time, so an `Index` is never shared; requests beyond `workers` wait in the
  executor's queue without holding a thread. `warm()` starts every thread at once (a barrier
  makes sure they are distinct) and opens and warms each index, so the first real request finds
  the vectors and the query encoder loaded.

An event-loop coroutine awaits the task's future with a time limit. On timeout the request gets
503 and the future is cancelled: a queued task is dropped, a running one finishes (SQLite cannot
be interrupted safely from here) and its result is discarded.

Changes underneath, as the daemon handles them: each `Index` re-reads its vectors when another
process updated the index file (a server keeps serving while `noteseek index` runs; WAL: readers
see whole files, old or new), and before every task a thread asks its `LazyIndex` whether the
file was replaced (a new inode: an index rebuilt elsewhere and moved into place, a restored
backup) or re-indexed with another model; then every thread's index is closed, once no task runs
(`_reopen_all` says why all at once), and each thread opens and warms the new file on its next
task. The check is a `stat` and one meta read. A file that is gone makes a task fail with
IndexNotFoundError (503, naming the command that builds it); once it is back, it is opened again.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from noteseek import Index, LazyIndex

__all__ = ["IndexPool", "PoolTimeoutError"]

T = TypeVar("T")

log = logging.getLogger("noteseek.web")

WARM_QUERY = "warm up the index"


class PoolTimeoutError(Exception):
    """A task did not finish within the pool's time limit."""


def _warm(index: Index) -> None:
    """Load the vectors and the query encoder before a request needs them."""
    index.warm_up()
    # The second search switches the vector selection to numpy (vectors.py does so from a
    # process's second search on), whose import would otherwise cost a first request ~200 ms.
    for _ in range(2):
        index.search(WARM_QUERY, limit=1)


class IndexPool:
    """`workers` threads with one `LazyIndex` each; `run` executes a function on one of them.

    `opener` replaces `open_index` for each thread's `LazyIndex` (tests give a fake model)."""

    def __init__(
        self,
        db: str | Path,
        *,
        workers: int,
        timeout: float,
        opener: Callable[[Path], Index] | None = None,
    ) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self.db = Path(db)
        self.workers = workers
        self.timeout = timeout
        self._opener = opener
        self._local = threading.local()
        self._held: list[LazyIndex] = []
        # Guards `_held`, `_busy` (tasks running now) and `_reopening` (see `_reopen_all`).
        self._cond = threading.Condition()
        self._busy = 0
        self._reopening = False
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="noteseek-web")
        self._closed = False
        self.reopened = 0  # how often the indexes were closed for a replaced file

    def _held_here(self) -> LazyIndex:
        held: LazyIndex | None = getattr(self._local, "held", None)
        if held is None:
            held = LazyIndex(db=self.db, opener=self._opener)
            self._local.held = held
            with self._cond:
                self._held.append(held)
        return held

    @staticmethod
    def _stale(held: LazyIndex) -> bool:
        try:
            return held.replaced()
        except OSError:  # the file is gone: get() will say which command makes it
            return True

    def _reopen_all(self, mine: LazyIndex) -> None:
        """Close every thread's index once no task runs (called holding `_cond`, this thread's
        task not counted). All at once, because SQLite finds a database's write-ahead log and
        shared memory by the file's name: a connection opened on the new file while another
        still has the old one open could read the old file's log as its own."""
        while self._reopening:  # another thread is at it; it closes this thread's index too
            self._cond.wait()
        if not (mine.opened and self._stale(mine)):  # only this thread's own index is asked
            return
        self._reopening = True
        try:
            while self._busy:
                self._cond.wait()
            log.info("index file replaced or model changed: reopening")
            for held in self._held:
                held.close()  # idle: their threads wait for `_reopening` to end
            self.reopened += 1
        finally:
            self._reopening = False
            self._cond.notify_all()

    def _index(self) -> Index:
        held = self._held_here()
        if held.opened and self._stale(held):
            with self._cond:
                self._busy -= 1
                try:
                    self._reopen_all(held)
                finally:
                    self._busy += 1
        if not held.opened:
            _warm(held.get(track_identity=True))
        return held.get(track_identity=True)

    def call(self, fn: Callable[[Index], T]) -> T:
        """Run `fn` with this thread's own index (only ever called on a pool thread)."""
        with self._cond:
            while self._reopening:
                self._cond.wait()
            self._busy += 1
        try:
            return fn(self._index())
        finally:
            with self._cond:
                self._busy -= 1
                self._cond.notify_all()

    async def run(self, fn: Callable[[Index], T]) -> T:
        """Run `fn(index)` on a pool thread; PoolTimeoutError after `timeout` seconds."""
        future = self._executor.submit(self.call, fn)
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), self.timeout)
        except asyncio.TimeoutError:
            future.cancel()
            raise PoolTimeoutError(f"the request took longer than {self.timeout:g} s") from None

    def warm(self, *, timeout: float = 120.0) -> None:
        """Open and warm every thread's index (raises what opening raises)."""
        barrier = threading.Barrier(self.workers, timeout=timeout)

        def task() -> None:
            try:
                self.call(lambda index: None)
            except BaseException:
                barrier.abort()  # the other workers stop waiting for this one
                raise
            barrier.wait()  # keeps this thread busy until every worker thread has started

        futures = [self._executor.submit(task) for _ in range(self.workers)]
        errors = [e for e in (f.exception() for f in futures) if e is not None]
        # The worker that failed says why; the others only saw the barrier break.
        errors.sort(key=lambda e: isinstance(e, threading.BrokenBarrierError))
        if errors:
            raise errors[0]

    @property
    def opened(self) -> int:
        """How many indexes the threads hold open (at most `workers`)."""
        with self._cond:
            return sum(held.opened for held in self._held)

    def close(self) -> None:
        """Wait for running tasks, then close every index."""
        if self._closed:
            return
        self._closed = True
        self._executor.shutdown(wait=True, cancel_futures=True)
        with self._cond:
            for held in self._held:
                held.close()
            self._held.clear()
