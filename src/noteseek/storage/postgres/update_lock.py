"""One update run at a time per collection: a session-level advisory lock held for a whole run.

The writer lock of `write()` is transaction-level (one per file), so without this two update runs
of one collection would interleave file by file: safe, but both would walk, read and embed the
same changed notes, and a watcher could not tell that a manual `noteseek index` is running. A
session-level advisory lock is the PostgreSQL form of the SQLite backend's `flock`: the server
releases it when the holder's connection ends in any way (a killed process, a cut network), so
there is never a stale lock; its key space (`RUN_LOCK_SPACE`) differs from `write()`'s, so
single writes outside a run (a migration, meta) still wait a transaction at most. Runs of
different collections do not wait for each other. The holder is recorded in the collection's meta
(`update_holder`) for the message a waiting writer shows. Searches never take it.

A connection that breaks during a run loses the lock with it; the next write then reconnects
(connection.py) and carries on without it, as the SQLite backend does where `fcntl` is missing:
runs may interleave file by file, which is safe.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress

import psycopg

from ...errors import IndexLockedError
from .connection import LOCK_SPACE, PgConnection

__all__ = ["RUN_LOCK_SPACE", "UpdateLocking"]

# First key of the update-run locks (the second is the collection id): `write()`'s space + 1.
RUN_LOCK_SPACE = LOCK_SPACE + 1
HOLDER_KEY = "update_holder"
_RETRY_SECONDS = 0.05


class UpdateLocking(PgConnection):
    """`update_lock()`: the run-level writer lock of one collection."""

    @contextmanager
    def update_lock(
        self,
        *,
        wait: float | None,
        holder: str,
        cancel: Callable[[], bool] | None = None,
    ) -> Iterator[None]:
        """Hold the update lock of the collection for the block; wait up to `wait` seconds for
        another run to end (None: as long as it takes, 0: not at all), then raise
        IndexLockedError naming the holder. `cancel()` turning true while waiting raises it."""
        cid = self.collections.only
        deadline = None if wait is None else time.monotonic() + wait
        while not self.scalar("SELECT pg_try_advisory_lock(%s, %s)", (RUN_LOCK_SPACE, cid)):
            now = time.monotonic()
            if (deadline is not None and now >= deadline) or (cancel and cancel()):
                raise IndexLockedError(self._locked_message())
            time.sleep(_RETRY_SECONDS if deadline is None else min(_RETRY_SECONDS, deadline - now))
        try:
            record = {"pid": os.getpid(), "host": os.uname().nodename, "holder": holder,
                      "since": time.time()}  # fmt: skip
            with self.write():
                self.set_meta(HOLDER_KEY, json.dumps(record))
            yield
        finally:
            with suppress(psycopg.Error):  # a broken connection released it already
                if not self.conn.broken and not self.conn.closed:
                    self.scalar("SELECT pg_advisory_unlock(%s, %s)", (RUN_LOCK_SPACE, cid))

    def _locked_message(self) -> str:
        """Who holds the lock, as the holder recorded it."""
        who = "another noteseek process"
        with suppress(ValueError, TypeError, KeyError, AttributeError):
            data = json.loads(self.get_meta(HOLDER_KEY) or "{}")
            since = time.strftime("%H:%M:%S", time.localtime(float(data["since"])))
            who = f"{data['holder']} (pid {int(data['pid'])} on {data['host']}, since {since})"
        return f"{self.location} is being updated by {who}"
