"""One update run at a time per index file: an advisory lock held for a whole run.

SQLite's own lock is per transaction (one per file), so without this two update runs would
interleave file by file: safe, but both walk, read and embed the same changed notes, and a watcher
could not tell that a manual `noteseek index` is running. The lock is `flock` on a file beside the
index (`<index>.lock`): the kernel releases it when its holder dies, so a killed process never leaves
a stale lock, and two `SqliteStore`s in one process exclude each other too (each opens its own file
description). The holder writes who it is into the file, for the message a waiting writer shows.
Searches never take it. The wait itself is the shared `storage.store.Store.update_lock`; this
part takes, announces and releases the lock.

Hand-written rather than `filelock` (4.3.1, already installed as a dependency of model2vec's hub
client): importing it took 152 ms here, against ~0 for `fcntl`, for the one call used below, and it
would add nothing on Linux and macOS, the platforms `noteseek watch` and the daemon run on. Where
`fcntl` does not exist (Windows), runs are not serialised and interleave file by file as before.
"""

from __future__ import annotations

import os
from contextlib import suppress

from ..store import holder_record
from .connection import SqliteConnection

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["UpdateLock"]


class UpdateLock:
    """The run-level writer lock of one index file (`storage.store.UpdateLockPart`)."""

    def __init__(self, conn: SqliteConnection) -> None:
        self.path = f"{conn.path}.lock"
        self._fd: int | None = None
        # Holds of this store: nested ones share the first's lock, as PostgreSQL's session locks.
        self._depth = 0

    def try_lock(self) -> bool:
        if self._depth:
            self._depth += 1
            return True
        if fcntl is None:  # pragma: no cover - Windows: runs interleave file by file
            return True
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        self._depth = 1
        return True

    def announce(self, holder: str) -> None:
        if self._fd is None:  # pragma: no cover - Windows
            return
        with suppress(OSError):  # only the message of a waiting writer depends on it
            os.ftruncate(self._fd, 0)
            os.pwrite(self._fd, holder_record(holder).encode(), 0)

    def holder(self) -> bytes | None:
        if self._fd is None:  # pragma: no cover - Windows
            return None
        with suppress(OSError):
            return os.pread(self._fd, 4096, 0)
        return None

    def unlock(self) -> None:
        if self._depth > 1:
            self._depth -= 1
            return
        fd, self._fd = self._fd, None
        if fd is None:
            self._depth = 0
            return
        try:
            if self._depth:
                with suppress(OSError):
                    os.ftruncate(fd, 0)
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            self._depth = 0
            os.close(fd)
