"""The daemon's refresher: started when the vault is known, described for `ping`.

Kept apart from server.py so the request path reads on its own; the refresher itself is
`noteseek.watch.refresh.IndexRefresher`.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..watch.refresh import IndexRefresher

if TYPE_CHECKING:
    from .. import Index

__all__ = ["start_refresher", "watch_state"]

log = logging.getLogger("noteseek.daemon")


def start_refresher(
    index: Index,
    *,
    vault: str | os.PathLike[str] | None,
    open_writer: Callable[[], Index],
) -> tuple[IndexRefresher | None, str]:
    """A started refresher for the vault (`vault`, else the index's own), or None and why not."""
    folder = vault if vault is not None else index.vault_root
    if folder is None:
        reason = "the index has no vault yet"
    elif not os.path.isdir(folder):
        reason = f"the vault folder {str(folder)!r} is not there"
    elif index.built_with_other_options():
        # A refresh with the stored folders but default options would re-process (and re-scrub)
        # every note differently from how the user built the index.
        reason = (
            "the index was built with other options (--allow-file, chunking) or an older "
            f"noteseek; run 'noteseek watch {folder}' with your options instead"
        )
    else:
        refresher = IndexRefresher(
            open_writer,
            vault=folder,
            on_notice=lambda message: log.warning("watch: %s", message),
            on_run=lambda run: log.info("watch: %s", run.summary()),
        )
        try:
            refresher.start()
        except Exception as exc:  # serving queries matters more than freshness
            reason = f"cannot watch {str(folder)!r}: {exc}"
        else:
            return refresher, ""
    log.warning("not watching the vault: %s", reason)
    return None, reason


def watch_state(refresher: IndexRefresher | None, reason: str) -> dict[str, Any]:
    """The refresher's state as `ping` answers it."""
    if refresher is None:
        return {"state": "off", "reason": reason}
    state = refresher.state()
    last = state.last_run
    return {
        "state": state.state,
        "vault": state.vault,
        "polling": state.polling,
        "runs": state.runs,
        "last_update": None if last is None else last.finished_at,
        "last_summary": None if last is None else last.summary(),
        "error": state.error,
        "waiting_for": state.locked_by,
    }
