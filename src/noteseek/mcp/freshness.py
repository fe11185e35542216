"""The MCP server's refresher: started in the background, described by the status tool.

A thread opens the writing index and starts `noteseek.watch.refresh.IndexRefresher`, so the
server answers `initialize` and the first tool calls at once however long that takes.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from .. import NoteseekError
from ..watch.refresh import IndexRefresher, describe

if TYPE_CHECKING:
    from .. import Index

__all__ = ["Freshness"]

log = logging.getLogger("noteseek.mcp")


class Freshness:
    """Watching the vault for one MCP server: `start()`, `line()` for status, `close()`."""

    def __init__(
        self, *, vault: str | os.PathLike[str] | None, open_writer: Callable[[], Index]
    ) -> None:
        self._vault = vault
        self._open_writer = open_writer
        self._refresher: IndexRefresher | None = None
        self._note = ""  # why the vault is not watched ("" while not asked to)
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Open the writing index and start watching, in a background thread."""
        self._thread = threading.Thread(
            target=self._begin, name="noteseek-watch-start", daemon=True
        )
        self._thread.start()

    def wait_started(self, timeout: float | None = None) -> IndexRefresher | None:
        """The refresher once started, or None when the vault is not watched."""
        if self._thread is not None:
            self._thread.join(timeout)
        return self._refresher

    def line(self) -> str | None:
        """What keeping the index fresh does now (None: not asked to)."""
        if self._refresher is not None:
            return describe(self._refresher.state(), now=time.time())
        if self._thread is not None and self._thread.is_alive():
            return "starting"
        return f"off ({self._note})" if self._note else None

    def close(self) -> None:
        """Stop watching; an update in progress stops after its current file."""
        if self._thread is not None:
            self._thread.join(60)
        if self._refresher is not None:
            self._refresher.close()

    def _begin(self) -> None:
        try:
            writer = self._open_writer()
        except NoteseekError as exc:
            self._note = str(exc)
            return
        if writer.built_with_other_options():
            vault = self._vault or writer.vault_root
            writer.close()
            # A refresh with default options would re-process (and re-scrub) every note.
            self._note = (
                "the index was built with other options (--allow-file, chunking) or an older "
                f"noteseek; run 'noteseek watch {vault}' with your options instead"
            )
            return
        refresher = IndexRefresher(
            lambda: writer,
            open_deep=self._open_writer,  # the lane's filler needs a connection of its own
            vault=self._vault,
            on_notice=lambda message: log.warning("watch: %s", message),
            on_run=lambda run: log.info("watch: %s", run.summary()),
        )
        try:
            refresher.start()
        except Exception as exc:  # the tools keep answering from the index as it is
            writer.close()
            self._note = f"cannot watch the vault: {exc}"
            return
        self._refresher = refresher
