"""Warm indexes for the web server: a fixed set of worker threads, each with its own `Index`.

Why this scheme. A `Store` (one SQLite connection plus the searcher's in-memory vector matrix)
must not be used by two threads at once, and a search spends most of its time in SQLite and the
int8 cosine kernel, which release the GIL, so two searches on two connections do run in
parallel on two cores. The choices were:

- one shared `Index` behind a lock (what the MCP server does): correct, but every request waits
  for the one before it;
- Starlette's own threadpool with an `Index` per thread: anyio may run a request on any of up
  to 40 threads, each of which would open an index and load its own vector matrix (~15 MB on
  MDN), and requests would block threads while they wait;
- this: `workers` dedicated threads (a `ThreadPoolExecutor`), each opening one `Index` the first
  time it runs a task and keeping it for its life (`threading.local`). A thread only ever runs
  one task at a time, so an `Index` is never shared; requests beyond `workers` wait in the
  executor's queue without holding a thread. `warm()` starts every thread at once (a barrier
  makes sure they are distinct) and runs one search on each, so the first real request finds
  the vectors and the query encoder loaded.

An event-loop coroutine awaits the task's future with a time limit. On timeout the request gets
503 and the future is cancelled: a queued task is dropped, a running one finishes (SQLite cannot
be interrupted safely from here) and its result is discarded. Each `Index` re-reads its vectors
when another process updated the index file, so a server keeps serving while `noteseek index`
runs (WAL: readers see whole files, old or new).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from noteseek import Index

__all__ = ["IndexPool", "PoolTimeoutError"]

T = TypeVar("T")

WARM_QUERY = "warm up the index"


class PoolTimeoutError(Exception):
    """A task did not finish within the pool's time limit."""


class IndexPool:
    """`workers` threads with one `Index` each; `run` executes a function on one of them."""

    def __init__(self, opener: Callable[[], Index], *, workers: int, timeout: float) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self.workers = workers
        self.timeout = timeout
        self._opener = opener
        self._local = threading.local()
        self._opened: list[Index] = []
        self._lock = threading.Lock()
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="noteseek-web")
        self._closed = False

    def _index(self) -> Index:
        index: Index | None = getattr(self._local, "index", None)
        if index is None:
            index = self._opener()
            self._local.index = index
            with self._lock:
                self._opened.append(index)
        return index

    def call(self, fn: Callable[[Index], T]) -> T:
        """Run `fn` with this thread's own index (only ever called on a pool thread)."""
        return fn(self._index())

    async def run(self, fn: Callable[[Index], T]) -> T:
        """Run `fn(index)` on a pool thread; PoolTimeoutError after `timeout` seconds."""
        future = self._executor.submit(self.call, fn)
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), self.timeout)
        except asyncio.TimeoutError:
            future.cancel()
            raise PoolTimeoutError(f"the request took longer than {self.timeout:g} s") from None

    def warm(self, *, timeout: float = 120.0) -> None:
        """Open every thread's index and run one search on each (raises what opening raises)."""
        barrier = threading.Barrier(self.workers, timeout=timeout)

        def task() -> None:
            try:
                index = self._index()
                # The first search loads the vectors and the query encoder; the second switches
                # the vector selection to numpy (vectors.py does so from a process's second
                # search on), whose import would otherwise cost the first real request ~200 ms.
                for _ in range(2):
                    index.search(WARM_QUERY, limit=1)
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
        """How many indexes the threads have opened (at most `workers`)."""
        with self._lock:
            return len(self._opened)

    def close(self) -> None:
        """Wait for running tasks, then close every index."""
        if self._closed:
            return
        self._closed = True
        self._executor.shutdown(wait=True, cancel_futures=True)
        with self._lock:
            for index in self._opened:
                index.close()
            self._opened.clear()
