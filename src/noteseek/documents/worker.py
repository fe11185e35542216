"""The worker process: limits its own memory, then extracts files sent over a pipe until told to stop.

It runs `extract_file`, which turns every Python-level failure into a result; what it cannot catch
(a library that aborts the process, segfaults or loops) ends or stalls only this process, and the
pool sees the pipe close or the clock run out.
"""

from __future__ import annotations

import os
import signal
import sys
from dataclasses import dataclass
from multiprocessing.connection import Connection

from .extract import MEMORY_REASON_END, extract_file
from .model import ExtractionLimits, ExtractionResult, Outcome

__all__ = ["Request", "retires_after", "serve"]


@dataclass(frozen=True)
class Request:
    """One file for a worker."""

    path: str
    limits: ExtractionLimits
    fallback: bool = False


def _limit_memory(limit: int | None) -> None:
    """Cap the address space (POSIX); a failed allocation then raises MemoryError or aborts here."""
    if not limit:
        return
    try:
        import resource  # deferred: a POSIX-only module
    except ImportError:  # Windows: no rlimits; the timeout still applies
        return
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = limit if hard == resource.RLIM_INFINITY else min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))


def _silence_stderr() -> None:
    """Libraries write warnings and crash reports to fd 2; they would land in the indexer's output."""
    if os.environ.get("NOTESEEK_WORKER_STDERR"):
        return
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
        os.close(devnull)
    except OSError:
        pass


def retires_after(result: ExtractionResult) -> bool:
    """True when a worker exits after sending `result` (the pool replaces it at once).

    After a MemoryError the heap may be fragmented or a library half-initialised.
    """
    return result.outcome is Outcome.TOO_LARGE and result.reason.endswith(MEMORY_REASON_END)


def serve(conn: Connection, memory_bytes: int | None) -> None:
    """Answer `Request`s with `ExtractionResult`s; exit on None, EOF, or after running out of memory."""
    # Ctrl-C in a terminal reaches the whole process group: the indexer decides what it means
    # (finish the current file, then stop) and ends its workers itself, so they ignore it here.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _silence_stderr()
    _limit_memory(memory_bytes)
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):
            return
        if request is None:
            return
        result = extract_file(request.path, limits=request.limits, fallback=request.fallback)
        try:
            conn.send(result)
        except (OSError, ValueError):
            return
        if retires_after(result):
            conn.close()
            sys.exit(0)
