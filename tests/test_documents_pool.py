"""The worker pool: reuse, timeouts that kill, memory limits, dead workers replaced."""

from __future__ import annotations

import os
import signal
import sys
import threading
from pathlib import Path

import pytest

from noteseek.documents import ExtractionLimits, ExtractionPool, Outcome

from .documents_samples import sample, write_hostile

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="rlimits are POSIX")


def test_workers_are_reused_across_files() -> None:
    names = [
        "crazyones.pdf",
        "mtcars.csv",
        "test.docx",
        "tbl-cell.pptx",
        "deaths.xls",
        "sample.canvas",
    ]
    with ExtractionPool(workers=1) as pool:
        results = list(pool.extract_many([sample(n) for n in names * 2]))
        assert pool.stats.started == 1 and pool.stats.files == 12
    assert all(r.ok for r in results), [r.reason for r in results if not r.ok]
    # The pool is closed: no worker process is left behind.
    assert pool.stats.started == 1


def test_timeout_kills_the_worker_and_the_next_file_still_runs(tmp_path: Path) -> None:
    slow = tmp_path / "slow.csv"
    slow.write_bytes(b"a,b,c\n" + b"1,2,3\n" * 3_000_000)  # ~18 MB: seconds of csv parsing
    limits = ExtractionLimits(timeout_seconds=0.5)
    with ExtractionPool(workers=1, limits=limits) as pool:
        first = pool.extract(slow)
        second = pool.extract(sample("crazyones.pdf"))
        stats = pool.stats
    assert first.outcome is Outcome.TIMED_OUT
    assert "slow.csv" in first.reason and "0.5 s" in first.reason
    assert second.ok
    assert stats.timed_out == 1 and stats.started == 2


def test_memory_limit_turns_a_runaway_file_into_too_large(tmp_path: Path) -> None:
    # 300 MB of text under a 400 MiB address-space limit: reading and decoding it cannot fit.
    big = tmp_path / "big.txt"
    with big.open("wb") as handle:
        for _ in range(300):
            handle.write(b"lorem ipsum dolor sit amet " * 38_000 + b"\n")
    limits = ExtractionLimits(memory_bytes=400 * 1024 * 1024, max_file_bytes=1 << 30)
    with ExtractionPool(workers=1, limits=limits) as pool:
        result = pool.extract(big)
        after = pool.extract(sample("crazyones.pdf"))
    assert result.outcome is Outcome.TOO_LARGE, result.reason
    assert "memory" in result.reason and "big.txt" in result.reason
    assert after.ok


def test_a_worker_killed_mid_file_is_replaced_and_the_file_named(tmp_path: Path) -> None:
    # What a library that aborts or segfaults looks like to the pool: the process vanishes.
    slow = tmp_path / "slow.csv"
    slow.write_bytes(b"a,b,c\n" + b"1,2,3\n" * 3_000_000)
    with ExtractionPool(workers=1, limits=ExtractionLimits(timeout_seconds=60)) as pool:
        pool.extract(sample("mtcars.csv"))  # start the worker
        pid = pool._workers[0].process.pid
        assert pid is not None
        killer = threading.Timer(0.5, os.kill, args=(pid, signal.SIGKILL))
        killer.start()
        result = pool.extract(slow)
        killer.join()
        after = pool.extract(sample("crazyones.pdf"))
        stats = pool.stats
    assert result.outcome is Outcome.CORRUPT, result.reason
    assert "crash" in result.reason and "signal 9" in result.reason and "slow.csv" in result.reason
    assert stats.crashed == 1 and stats.started == 2 and after.ok


def test_a_calamine_abort_is_retried_with_openpyxl(tmp_path: Path) -> None:
    hostile = write_hostile(tmp_path)
    with ExtractionPool(workers=1) as pool:
        result = pool.extract(hostile["far-cell.xlsx"])
        stats = pool.stats
    assert result.ok and result.document is not None
    assert result.document.engine.startswith("openpyxl")
    assert stats.crashed == 1 and stats.started == 2


def test_leaving_the_loop_early_never_leaks_results_into_the_next_call(tmp_path: Path) -> None:
    slow = tmp_path / "slow.csv"
    slow.write_bytes(b"a,b,c\n" + b"1,2,3\n" * 300_000)
    with ExtractionPool(workers=2) as pool:
        for _ in pool.extract_many([sample("crazyones.pdf"), slow, slow]):
            break  # one result taken; the others are still running
        later = list(pool.extract_many([sample("mtcars.csv")]))
    assert [Path(r.path).name for r in later] == ["mtcars.csv"] and later[0].ok


def test_ctrl_c_in_the_terminal_does_not_kill_a_busy_worker(tmp_path: Path) -> None:
    slow = tmp_path / "slow.csv"
    slow.write_bytes(b"a,b,c\n" + b"1,2,3\n" * 300_000)
    with ExtractionPool(workers=1) as pool:
        pool.extract(sample("mtcars.csv"))
        pid = pool._workers[0].process.pid
        assert pid is not None
        interrupt = threading.Timer(0.3, os.kill, args=(pid, signal.SIGINT))
        interrupt.start()
        result = pool.extract(slow)
        interrupt.join()
        stats = pool.stats
    assert result.ok, result.reason
    assert stats.crashed == 0 and stats.started == 1
