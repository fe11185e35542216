"""Keep one index fresh with its vault: a `VaultWatcher` whose batches run targeted updates.

`IndexRefresher` is what `noteseek watch`, the daemon (`noteseek serve`) and the MCP server run. It
owns a writing `Index` of its own (its own connection), used only in the watcher's thread, so a
process that also answers queries keeps its searching `Index` apart: queries read the last
committed state (WAL) and never wait for an update. Each batch becomes one
`Index.update(vault, paths=batch.notes, folders=batch.folders, stop=…, wait=0)`:

- the first batch is the catch-up (a whole incremental pass, set up once the watches are, so a
  change between the two is never missed);
- another writer holding the index (`noteseek index`, another watcher, a daemon) makes the update
  refuse at once (IndexLockedError); the batch is kept and handed over again, merged with newer
  changes, at the next event or idle tick (about a second), and one notice says so;
- `stop()` (a signal handler, another thread) ends the update after the current file;
- an index file deleted or replaced under it (a restored backup, `rm` to start afresh) is opened
  again before the next batch, which becomes a whole pass: a connection kept on the old file
  would write every later change into a file nothing else can open.

Errors that end the watcher (the vault deleted or unmounted: VaultGoneError; an index that cannot
be written) are raised by `join()` and shown by `state()`.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from ..errors import IndexLockedError, VaultNotFoundError
from .changes import ChangeBatch
from .deep_fill import DeepLaneFiller, filler_wanted
from .watcher import VaultWatcher

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..engine.index import Index
    from ..engine.update.options import IndexStats

__all__ = ["IndexRefresher", "RefreshRun", "WatchState", "describe", "vault_of"]

log = logging.getLogger("noteseek.watch")

OnNotice = Callable[[str], object]


@dataclass(frozen=True)
class RefreshRun:
    """One update run the refresher made: for which batch, what it did, when it ended."""

    batch: ChangeBatch
    stats: IndexStats
    finished_at: float

    def summary(self) -> str:
        """One line: what changed (counts only: a path may hold what must not be shown)."""
        s = self.stats
        paths = len(self.batch.notes) + len(self.batch.folders)
        what = "whole vault" if not s.targeted else f"{paths} changed path(s)"
        line = (
            f"{what}: {s.added} added, {s.changed} changed, {s.removed} removed, "
            f"{s.skipped} skipped in {s.seconds:.2f} s"
        )
        if s.interrupted:
            line += " (stopped early; the rest is indexed on the next start)"
        if s.problems:
            line += (
                f"; {len(s.problems)} file(s) with problems ('noteseek status --files --problems')"
            )
        return line


@dataclass(frozen=True)
class WatchState:
    """What a refresher is doing, for status replies."""

    state: str  # starting | catching up | watching | updating | waiting for the index | stopped | failed
    vault: str
    polling: bool
    since: float | None  # when the watches were set up
    runs: int
    last_run: RefreshRun | None
    error: str | None
    locked_by: str | None  # the other writer the kept changes wait for


class IndexRefresher:
    """Watches `vault` and keeps the index `open_writer()` opens up to date with it.

    `include`/`exclude` default to the folders the writer's index was last built with (so a
    background refresh never indexes a folder the user excluded). `on_notice` gets the messages a
    user should see (polling, a locked index, the vault gone); `on_run` every finished run.
    """

    def __init__(
        self,
        open_writer: Callable[[], Index],
        *,
        vault: str | os.PathLike[str] | None = None,
        include: tuple[str, ...] | None = None,
        exclude: tuple[str, ...] | None = None,
        quiet: float = 0.2,
        max_delay: float = 5.0,
        force_polling: bool = False,
        poll_interval: float = 5.0,
        catch_up: bool = True,
        on_notice: OnNotice | None = None,
        on_run: Callable[[RefreshRun], object] | None = None,
        progress: Callable[[int, int, str], None] | None = None,
        deep: bool | None = None,
        open_deep: Callable[[], Index] | None = None,
    ) -> None:
        self._open_writer = open_writer
        # The deep lane's background filler (watch/deep_fill.py): `deep` None follows the
        # setting; it opens its own index with `open_deep` (default: `open_writer`).
        self._deep = deep
        self._open_deep = open_deep or open_writer
        self._filler: DeepLaneFiller | None = None
        self._vault = vault
        self._include, self._exclude = include, exclude
        self._watch_options = {
            "quiet": quiet,
            "max_delay": max_delay,
            "force_polling": force_polling,
            "poll_interval": poll_interval,
            "catch_up": catch_up,
        }
        self._on_notice: OnNotice = on_notice or (lambda message: log.warning("%s", message))
        self._on_run = on_run
        self._progress = progress
        self._index: Index | None = None
        # The writer's file and model (Index.identity) after its last run: another one under it
        # means the file was deleted or replaced, or re-indexed with another model, meanwhile.
        self._identity: object = None
        self._watcher: VaultWatcher | None = None
        self._state = "starting"
        self._root = ""
        self._runs = 0
        self._last: RefreshRun | None = None
        self._locked_by: str | None = None
        self._error: BaseException | None = None
        self._since: float | None = None

    # -- the caller's side ------------------------------------------------------------------------

    @property
    def vault(self) -> str:
        """The vault folder watched ('' before `start`)."""
        return self._root

    def start(self) -> IndexRefresher:
        """Open the writing index and start watching (the catch-up pass runs in the background).

        Raises VaultNotFoundError when no vault is known or it is not a folder.
        """
        index = self._open_writer()
        try:
            vault = self._vault if self._vault is not None else index.vault_root
            if vault is None:
                raise VaultNotFoundError(
                    f"{index.db_path} has no vault yet: run 'noteseek index VAULT' (or pass the vault)"
                )
            options = index.options
            watcher = VaultWatcher(
                vault,
                self._handle,
                include=options.include if self._include is None else self._include,
                exclude=options.exclude if self._exclude is None else self._exclude,
                documents=options.documents,
                on_notice=self._on_notice,
                **self._watch_options,  # type: ignore[arg-type]
            )
        except BaseException:
            index.close()
            raise
        self._index, self._watcher = index, watcher
        self._identity = _identity(index)
        self._root = str(watcher.root)
        self._state = "catching up" if self._watch_options["catch_up"] else "watching"
        watcher.start()
        if filler_wanted(self._deep, index):
            index.deep_in_update = False  # the filler embeds the changed chunks
            self._filler = DeepLaneFiller(self._open_deep, self._updating).start()
        return self

    def _updating(self) -> bool:
        """Whether an update runs or waits (the filler yields then)."""
        watcher = self._watcher
        return self._state != "watching" or (watcher is not None and watcher.pending is not None)

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Until the watches are set up (changes from then on are seen) or the watcher ended."""
        return self._watcher is not None and self._watcher.wait_ready(timeout)

    def stop(self) -> None:
        """Stop watching; a running update stops after its current file (any thread)."""
        if self._filler is not None:
            self._filler.stop()
        if self._watcher is not None:
            self._watcher.stop()

    @property
    def running(self) -> bool:
        """Whether the watcher thread is alive."""
        return self._watcher is not None and self._watcher.running

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the watcher to end (True when it has), then close the writing index. Raises
        what ended it: VaultGoneError, an error of the index, once."""
        if self._watcher is None:
            return True
        try:
            if not self._watcher.join(timeout):
                return False
        except BaseException as exc:
            self._error = exc
            self._state = "failed"
            raise
        finally:
            if not self._watcher.running:
                self._close()
        if self._state != "failed":
            self._state = "stopped"
        return True

    def close(self) -> None:
        """Stop and wait (for a server shutting down); errors were reported by `state()`."""
        self.stop()
        try:
            self.join(60)
        except BaseException as exc:  # the process is ending: say it, never raise here
            log.info("the watcher had ended: %s", exc)

    def state(self) -> WatchState:
        """What the refresher is doing now (an ended watcher is joined here to get its error)."""
        if (
            self._watcher is not None
            and not self._watcher.running
            and self._state
            not in (
                "failed",
                "stopped",
            )
        ):
            try:
                self.join(0)
            except BaseException as exc:  # kept for the state; raised once, shown every time
                log.warning("watching %s ended: %s", self._root, exc)
        polling = self._watcher.polling if self._watcher is not None else False
        return WatchState(
            state=self._state,
            vault=self._root,
            polling=polling,
            since=self._since,
            runs=self._runs,
            last_run=self._last,
            error=None if self._error is None else str(self._error),
            locked_by=self._locked_by,
        )

    def __enter__(self) -> IndexRefresher:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- the watcher's thread ---------------------------------------------------------------------

    def _handle(self, batch: ChangeBatch) -> bool | None:
        assert self._index is not None and self._watcher is not None
        if self._since is None:
            self._since = time.time()
        previous = self._state
        self._state = "updating" if previous != "catching up" else previous
        if _identity(self._index) != self._identity:
            self._reopen()
            batch = batch.merged(ChangeBatch.whole_vault("the index file was replaced"))
        assert self._index is not None
        try:
            stats = self._index.update(
                self._root,
                paths=batch.notes,
                folders=batch.folders,
                stop=self._watcher.stop_requested,
                wait=0,
                progress=self._progress,
            )
        except IndexLockedError as exc:
            message = str(exc)
            if self._locked_by is None:
                self._on_notice(
                    f"{message}; the changes seen meanwhile are indexed once it is done"
                )
            self._locked_by = message
            self._state = "waiting for the index"
            return False  # the watcher hands the batch over again, with what came since
        except BaseException:
            self._state = "failed"
            raise
        if self._locked_by is not None:
            self._locked_by = None
        # After our own run: a first build records the model, which is part of the identity.
        self._identity = _identity(self._index)
        run = RefreshRun(batch, stats, time.time())
        self._runs += 1
        self._last = run
        self._state = "watching"
        if self._on_run is not None:
            self._on_run(run)
        return None

    def _reopen(self) -> None:
        """Close the writer (and the deep lane's filler) on the old file, open the file now there."""
        self._on_notice(
            "the index file was deleted or replaced while watching: opening it again and "
            "checking the whole vault"
        )
        filler, self._filler = self._filler, None
        if filler is not None:
            filler.stop()
            filler.join(30)
        if self._index is not None:
            self._index.close()
            self._index = None
        index = self._open_writer()
        self._index, self._identity = index, _identity(index)
        if filler is not None and filler_wanted(self._deep, index):
            index.deep_in_update = False
            self._filler = DeepLaneFiller(self._open_deep, self._updating).start()

    def _close(self) -> None:
        if self._filler is not None:
            self._filler.stop()
            self._filler.join(30)  # at most one batch: a few seconds
        if self._index is not None:
            self._index.close()
            self._index = None


def _identity(index: Index) -> object:
    """Which file the index has open; None once its file is gone (then it differs from any)."""
    try:
        return index.identity()
    except OSError:
        return None


def describe(state: WatchState, *, now: float) -> str:
    """One line for a status reply: what is watched, how, and what the last update did."""
    how = "polling" if state.polling else "file events"
    head = f"{state.state} {state.vault} ({how})"
    if state.error:
        return f"{head}: {state.error}"
    if state.locked_by:
        head += f"; {state.locked_by}"
    if state.last_run is not None:
        ago = max(0.0, now - state.last_run.finished_at)
        head += f"; last update {ago:.0f} s ago: {state.last_run.summary()}"
    return head


def vault_of(index_vault: str | None, given: str | os.PathLike[str] | None) -> Path | None:
    """The vault to watch: the one given, else the one the index was built from, when it exists."""
    folder = given if given is not None else index_vault
    if folder is None:
        return None
    path = Path(folder).expanduser()
    return path if path.is_dir() else None
