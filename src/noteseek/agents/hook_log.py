"""The hook log (`hook.log` in noteseek's data folder): one line per failure or silent prompt.

Written by the one-shot hook and by the warm daemon, so the log says why a prompt got no block
whichever path answered it. It never holds prompt text, only what happened. Imported only by a
hook that has a line to write.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from ..engine.locations import data_dir

__all__ = ["LOG_MAX_BYTES", "LOG_NAME", "append", "log_path"]

LOG_NAME = "hook.log"
LOG_MAX_BYTES = 1 << 20


def log_path() -> Path:
    """Where the hook log is."""
    return data_dir() / LOG_NAME


def append(line: str, *, untrusted: bool = False) -> None:
    """Append one line to the hook log; never raises (the hook must stay silent).

    `untrusted` lines (error messages, which can quote input) are scrubbed like everything else
    noteseek stores; the others are built from our own words and numbers only, and skip the
    scrubber's start-up cost on the per-prompt path.
    """
    try:
        if untrusted:
            from ..secrets.scrubber import scrub  # deferred: ~40 ms, for untrusted lines only

            line = scrub(line).text
        path = log_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() and path.stat().st_size > LOG_MAX_BYTES:
            os.replace(path, path.with_name(LOG_NAME + ".1"))
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
        with path.open("a", encoding="utf-8") as fh:
            fh.write(f"{stamp} {line}\n")
    except Exception:  # a failing log must not make the hook fail
        pass
