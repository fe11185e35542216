"""One update run at a time per index file: an advisory lock held for a whole run.

SQLite's own lock is per transaction (one per file), so without this two update runs would
interleave file by file: safe, but both walk, read and embed the same changed notes, and a watcher
could not tell that a manual `noteseek index` is running. The lock is `flock` on a file beside the
index (`<index>.lock`): the kernel releases it when its holder dies, so a killed process never leaves
a stale lock, and two `SqliteStore`s in one process exclude each other too (each opens its own file
description). The holder writes who it is into the file, for the message a waiting writer shows.
Searches never take it.

Hand-written rather than `filelock` (4.3.1, already installed as a dependency of model2vec's hub
client): importing it took 152 ms here, against ~0 for `fcntl`, for the one call used below, and it
would add nothing on Linux and macOS, the platforms `noteseek watch` and the daemon run on. Where
`fcntl` does not exist (Windows), runs are not serialised and interleave file by file as before.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress

from ...errors import IndexLockedError
from .connection import SqliteConnection

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["UpdateLocking"]

# How often a waiting writer tries the lock again.
_RETRY_SECONDS = 0.05


class UpdateLocking(SqliteConnection):
    """`update_lock()`: the run-level writer lock of one index file."""

    @property
    def lock_path(self) -> str:
        """The file whose lock an update run holds."""
        return f"{self.path}.lock"

    @contextmanager
    def update_lock(
        self,
        *,
        wait: float | None,
        holder: str,
        cancel: Callable[[], bool] | None = None,
    ) -> Iterator[None]:
        """Hold the update lock for the block; wait up to `wait` seconds for another run to end
        (None: as long as it takes, 0: not at all), then raise IndexLockedError naming the
        holder. `cancel()` turning true while waiting raises it at once."""
        if fcntl is None:  # pragma: no cover - Windows
            yield
            return
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            deadline = None if wait is None else time.monotonic() + wait
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    now = time.monotonic()
                    if (deadline is not None and now >= deadline) or (cancel and cancel()):
                        raise IndexLockedError(self._locked_message(fd)) from None
                    time.sleep(
                        _RETRY_SECONDS if deadline is None else min(_RETRY_SECONDS, deadline - now)
                    )
            record = {"pid": os.getpid(), "holder": holder, "since": time.time()}
            with suppress(OSError):  # only the message of a waiting writer depends on it
                os.ftruncate(fd, 0)
                os.pwrite(fd, json.dumps(record).encode(), 0)
            try:
                yield
            finally:
                with suppress(OSError):
                    os.ftruncate(fd, 0)
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def _locked_message(self, fd: int) -> str:
        """Who holds the lock, as the holder wrote it (it may be writing it right now)."""
        who = "another noteseek process"
        with suppress(OSError, ValueError, TypeError, AttributeError):
            data = json.loads(os.pread(fd, 4096, 0) or b"{}")
            since = time.strftime("%H:%M:%S", time.localtime(float(data["since"])))
            who = f"{data['holder']} (pid {int(data['pid'])}, since {since})"
        return f"{self.path} is being updated by {who}"
