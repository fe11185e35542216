"""Watch a vault in a background thread and hand debounced `ChangeBatch`es to a callback.

Built on watchfiles (Rust `notify`: inotify, FSEvents, ReadDirectoryChangesW, or polling). Measured
against watchdog on the MDN vault (13,062 notes, 13,336 folders; `bench/watch_compare.py`): both
idle at ~0 % CPU with ~25 MB RSS, but with watchdog's default event mask its own walk of the tree
overflowed the inotify queue and every overflow started another walk (45 % of a core, no event
delivered), at the watch limit it started without an error and silently missed changes, and its
polling fallback cost more (17.6 % vs 13.4 % of a core at a 1 s interval). watchfiles raises a
clear `OSError` at the limit, which is what lets this module fall back to polling and say so.

The callback runs in the watcher's thread, one batch at a time; events that arrive while it runs
are collected and make the next batch, so a long update is followed by one batch, not many.
"""

from __future__ import annotations

import logging
import os
import stat
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from contextlib import closing
from pathlib import Path
from types import TracebackType

from ..core.vault_rules import IGNORE_MARKER, VaultRules
from ..errors import VaultGoneError, VaultNotFoundError, WatchError
from ..settings import DEFAULT_EXCLUDE
from .changes import ChangeBatch, PathChange, classify

__all__ = ["VaultWatcher"]

log = logging.getLogger("noteseek.watch")

OnBatch = Callable[[ChangeBatch], object]
OnNotice = Callable[[str], object]

# Backend restarts (events it could not report, e.g. a file name that is not UTF-8) allowed in a
# row before the watcher gives up: each one costs a full incremental pass.
_MAX_RESTARTS = 5
_RESTART_WINDOW_S = 60.0


class _CallbackError(Exception):
    """What `on_batch` raised, carried past the handlers meant for the backend's own errors."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


def _limit_hint(exc: BaseException) -> str:
    """What limit was reached and how to raise it."""
    name, value = (
        ("max_user_instances", "1024")
        if "Too many open files" in str(exc)
        else ("max_user_watches", "524288")
    )
    try:
        limit = Path(f"/proc/sys/fs/inotify/{name}").read_text().strip()
    except OSError:
        return f"the operating system's limit on watched folders was reached ({exc})"
    return (
        f"the inotify limit fs.inotify.{name} = {limit} was reached; raise it with "
        f"'sudo sysctl fs.inotify.{name}={value}' to get instant updates"
    )


def _is_limit(exc: BaseException) -> bool:
    """Whether OS events failed for want of watches (inotify's per-user watch or instance limit)."""
    text = str(exc)
    return any(
        sign in text
        for sign in (
            "MaxFilesWatch",
            "watch limit",
            "No space left on device",
            "Too many open files",
        )
    )


class VaultWatcher:
    """Watches one vault folder and calls `on_batch` with what changed, in its own thread.

    `quiet`: a batch is handed over once no new event came for this long (seconds); `max_delay`: the
    longest a batch keeps collecting while events keep coming. `force_polling` skips OS events;
    `poll_interval` is the polling period (also used when the OS watch limit forces polling); each
    poll stats every file and folder, so on MDN (29,000 entries) it cost 8.3 % of a core at 2 s and
    3.4 % at 5 s, the default (`bench/watch_latency.py --process-only --polling`).
    `catch_up`: the first batch, once the watches are set up, is a whole-vault pass, so nothing
    changed between the caller's last update and the start is missed. `on_notice` gets messages a
    user should see (falling back to polling, a restart); the default logs them as warnings.

    `on_batch` returning False (rather than None or True) keeps the batch: it is handed over again,
    merged with whatever came since, at the next event or idle tick (`check_interval`), e.g.
    when another process holds the index's write lock. A long callback can poll `stop_requested`
    to stop between files. (`quiet` is a lower bound: the batch is handed over between `quiet` and
    twice `quiet` after its last event, at the backend's tick.)

    Errors end the watcher and are raised by `join()`: `VaultGoneError` when the vault folder is
    deleted, replaced or unmounted (no batch is handed over for that vanishing), `WatchError`
    when it cannot be watched at all, and whatever `on_batch` raised.
    """

    def __init__(
        self,
        vault: str | os.PathLike[str],
        on_batch: OnBatch,
        *,
        include: Sequence[str] = (),
        exclude: Sequence[str] = DEFAULT_EXCLUDE,
        documents: bool = True,
        quiet: float = 0.2,
        max_delay: float = 5.0,
        force_polling: bool = False,
        poll_interval: float = 5.0,
        catch_up: bool = False,
        on_notice: OnNotice | None = None,
        check_interval: float = 1.0,
    ) -> None:
        root = Path(vault).expanduser()
        if not root.is_dir():
            raise VaultNotFoundError(
                f"vault folder {str(root)!r} does not exist or is not a folder"
            )
        self.root = root.resolve()
        self._prefix = str(self.root).rstrip(os.sep) + os.sep
        self._identity = self._stat_root()
        self._rules = VaultRules(include=include, exclude=exclude, documents=documents)
        self._on_batch = on_batch
        self._on_notice: OnNotice = on_notice or (lambda message: log.warning("%s", message))
        self._quiet_ms = max(1, round(quiet * 1000))
        self._max_delay_ms = max(self._quiet_ms, round(max_delay * 1000))
        self._poll_ms = max(1, round(poll_interval * 1000))
        self._check_ms = max(1, round(check_interval * 1000))
        self._polling = force_polling
        self._pending = ChangeBatch.whole_vault("catching up at start") if catch_up else None
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self.batches = 0

    # --- the caller's side ---------------------------------------------------------------------

    @property
    def polling(self) -> bool:
        """Whether the vault is watched by polling (forced, or because OS events are unavailable)."""
        return self._polling

    @property
    def stop_requested(self) -> threading.Event:
        """Set once `stop()` was called: a long `on_batch` may check it between files."""
        return self._stop

    @property
    def pending(self) -> ChangeBatch | None:
        """The batch kept for the next hand-over (a catch-up pass, a refused batch), if any."""
        return self._pending

    @property
    def running(self) -> bool:
        """Whether the watcher thread is alive."""
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> VaultWatcher:
        """Start watching in a background thread; returns at once (see `wait_ready`)."""
        if self._thread is not None:
            raise RuntimeError("this watcher was already started")
        self._thread = threading.Thread(target=self._run, name="noteseek-watch", daemon=True)
        self._thread.start()
        return self

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Wait until the watches are set up (events from then on are seen) or the watcher ended."""
        return self._ready.wait(timeout)

    def stop(self) -> None:
        """Ask the watcher to stop; a batch being handled is finished first (see `join`)."""
        self._stop.set()

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the watcher to end; True when it has. Raises the error that ended it."""
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                return False
        if self._error is not None:
            error, self._error = self._error, None
            raise error
        return True

    def __enter__(self) -> VaultWatcher:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
        if exc is None:
            self.join()
        elif self._thread is not None:
            self._thread.join()

    # --- the watcher thread --------------------------------------------------------------------

    def _run(self) -> None:
        try:
            restarts: list[float] = []
            while not self._stop.is_set():
                try:
                    self._watch()
                    return
                except _CallbackError:
                    raise
                except (OSError, RuntimeError) as exc:
                    self._check_vault()
                    if self._stop.is_set():
                        return
                    if not self._polling and _is_limit(exc):
                        self._polling = True
                        self._on_notice(
                            f"{_limit_hint(exc)}: watching {str(self.root)!r} by polling every "
                            f"{self._poll_ms / 1000:g} s instead"
                        )
                        reason = "switched to polling: changes may have been missed"
                    else:
                        now = time.monotonic()
                        restarts = [t for t in restarts if now - t < _RESTART_WINDOW_S] + [now]
                        if len(restarts) > _MAX_RESTARTS:
                            raise WatchError(
                                f"cannot keep watching {str(self.root)!r}: {exc}"
                            ) from exc
                        self._on_notice(f"the file watcher failed ({exc}); restarting it")
                        reason = "watcher restarted: changes may have been missed"
                    self._pending = ChangeBatch.whole_vault(reason)
        except _CallbackError as exc:
            self._error = exc.error
        except BaseException as exc:
            self._error = exc
        finally:
            self._ready.set()

    def _watch(self) -> None:
        import watchfiles  # imported here: a process that never watches does not load it

        changes = watchfiles.watch(
            self.root,
            watch_filter=None,
            debounce=self._max_delay_ms,
            step=self._quiet_ms,
            stop_event=self._stop,
            # Wakes up this often when idle, to notice a vault that was deleted or unmounted.
            rust_timeout=self._check_ms,
            yield_on_timeout=True,
            raise_interrupt=False,
            force_polling=self._polling,
            poll_delay_ms=self._poll_ms,
        )
        with closing(changes):  # closing it removes the OS watches
            for raw in changes:  # the first item (a change or an idle tick): the watches are set
                self._ready.set()
                self._check_vault()
                if self._stop.is_set():
                    return
                batch = self._batch(raw) if raw else ChangeBatch()
                if self._pending is not None:
                    batch, self._pending = self._pending.merged(batch), None
                if batch:
                    self.batches += 1
                    try:
                        handled = self._on_batch(batch)
                    except BaseException as exc:
                        raise _CallbackError(exc) from exc
                    if handled is False:
                        self._pending = batch
                if self._stop.is_set():
                    return

    def _stat_root(self) -> tuple[int, int]:
        st = os.stat(self.root)
        return st.st_dev, st.st_ino

    def _check_vault(self) -> None:
        """Raise `VaultGoneError` when the vault folder is gone or is no longer the same folder."""
        try:
            identity = self._stat_root()
            is_dir = self.root.is_dir()
        except OSError:
            identity, is_dir = (-1, -1), False
        if not is_dir:
            raise VaultGoneError(
                f"the vault folder {str(self.root)!r} was deleted or moved; the index was left "
                "as it was. Run 'noteseek watch' again once the folder is back"
            )
        if identity != self._identity:
            raise VaultGoneError(
                f"the vault folder {str(self.root)!r} was replaced or unmounted; the index was "
                "left as it was. Run 'noteseek watch' again once the vault is back"
            )

    def _batch(self, raw: Iterable[tuple[object, str]]) -> ChangeBatch:
        changes: list[PathChange] = []
        for kind, path in raw:
            if not path.startswith(self._prefix):
                continue  # the vault folder itself (or a path outside it)
            rel = path[len(self._prefix) :].replace(os.sep, "/")
            try:
                st = os.lstat(path)
            except OSError:
                changes.append(PathChange(rel, gone=True))
                continue
            is_dir = stat.S_ISDIR(st.st_mode)
            modified = getattr(kind, "name", "") == "modified"
            changes.append(PathChange(rel, gone=False, is_dir=is_dir, modified=modified))
        cache: dict[str, bool] = {}
        return classify(changes, self._rules, marked=lambda folder: self._marked(folder, cache))

    def _marked(self, folder: str, cache: dict[str, bool]) -> bool:
        """Whether `folder` or a folder above it (not the vault itself) holds the ignore marker."""
        if not folder:
            return False
        if folder not in cache:
            parent = folder.rpartition("/")[0]
            cache[folder] = self._marked(parent, cache) or os.path.lexists(
                os.path.join(self.root, folder, IGNORE_MARKER)
            )
        return cache[folder]
