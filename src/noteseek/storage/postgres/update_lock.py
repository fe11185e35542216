"""One update run at a time per collection: a session-level advisory lock held for a whole run.

The writer lock of `write()` is transaction-level (one per file), so without this two update runs
of one collection would interleave file by file: safe, but both would walk, read and embed the
same changed notes, and a watcher could not tell that a manual `noteseek index` is running. A
session-level advisory lock is the PostgreSQL form of the SQLite backend's `flock`: the server
releases it when the holder's connection ends in any way (a killed process, a cut network), so
there is never a stale lock; its key space (`RUN_LOCK_SPACE`) differs from `write()`'s, so
single writes outside a run (a migration, meta) still wait a transaction at most. Runs of
different collections do not wait for each other. The holder is recorded in the collection's meta
(`update_holder`) for the message a waiting writer shows. Searches never take it. The wait itself
is the shared `storage.store.Store.update_lock`; this part takes, announces and releases the lock.

A connection that breaks during a run loses the lock with it; the next write then reconnects
(connection.py) and carries on without it, as the SQLite backend does where `fcntl` is missing:
runs may interleave file by file, which is safe.
"""

from __future__ import annotations

import os
from contextlib import suppress

import psycopg

from ..store import holder_record
from .connection import LOCK_SPACE, PostgresConnection

__all__ = ["RUN_LOCK_SPACE", "UpdateLock"]

# First key of the update-run locks (the second is the collection id): `write()`'s space + 1.
RUN_LOCK_SPACE = LOCK_SPACE + 1
HOLDER_KEY = "update_holder"


class UpdateLock:
    """The run-level writer lock of one collection (`storage.store.UpdateLockPart`)."""

    def __init__(self, conn: PostgresConnection) -> None:
        self.conn = conn
        # Holds of this session (session-level advisory locks stack: one unlock per lock).
        self._depth = 0

    def try_lock(self) -> bool:
        key = (RUN_LOCK_SPACE, self.conn.collections.only)
        if not self.conn.scalar("SELECT pg_try_advisory_lock(%s, %s)", key):
            return False
        self._depth += 1
        return True

    def announce(self, holder: str) -> None:
        # A database is reached from several machines: the holder's host is part of who it is.
        record = holder_record(holder, host=os.uname().nodename)
        with self.conn.write():
            self.conn.set_meta(HOLDER_KEY, record)

    def holder(self) -> str | None:
        return self.conn.get_meta(HOLDER_KEY)

    def unlock(self) -> None:
        if not self._depth:
            return
        self._depth -= 1
        with suppress(psycopg.Error):  # a broken connection released it already
            if not self.conn.db.broken and not self.conn.db.closed:
                key = (RUN_LOCK_SPACE, self.conn.collections.only)
                self.conn.scalar("SELECT pg_advisory_unlock(%s, %s)", key)
