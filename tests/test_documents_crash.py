"""Crash safety with documents (the style of tests/test_crash.py): an indexer killed with SIGKILL,
or stopped with Ctrl-C, while its workers extract leaves a consistent index, no worker behind,
and the next run ends with what a clean build gives."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from noteseek import Index

from .conftest import REPO, FakeEmbedder
from .documents_samples import SAMPLES, write_hostile
from .test_crash import indexer_process, kill_after, note_text

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL (POSIX)"),
]

QUERIES = (
    "ten yoke of oxen",
    "merged cell",
    "chickwts meatmeal",
    "crazy ones misfits",
    "sourdough hydration",
    "zq0007",
    "password",
)


def write_vault(root: Path, rng: random.Random) -> list[Path]:
    """Notes, the real samples (each twice, in two folders) and the hostile files."""
    for number in range(40):
        path = root / "notes" / f"note-{number:04}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(note_text(rng, number), encoding="utf-8")
    for folder in ("docs", "copies"):
        shutil.copytree(SAMPLES, root / folder, ignore=shutil.ignore_patterns("*.md"))
    write_hostile(root / "hostile")
    return sorted(p for p in (root / "copies").iterdir())


def results(idx: Index) -> dict[tuple[str, str], list[tuple[str, object]]]:
    """Each query's hits (path and location) in two modes, compared as sets (ties)."""
    out = {}
    for query in QUERIES:
        for mode in ("bm25", "hybrid"):
            hits = idx.search(query, limit=10, mode=mode)
            out[(query, mode)] = sorted((h.path, h.location) for h in hits)
    return out


def clean(vault: Path, db: Path) -> dict[tuple[str, str], list[tuple[str, object]]]:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    with Index(db, embedder=FakeEmbedder()) as idx:
        idx.update(vault)
        return results(idx)


def _children(pid: int) -> set[int]:
    """Every descendant of `pid` (Linux /proc); empty where /proc is not there."""
    found: set[int] = set()
    todo = [pid]
    while todo:
        current = todo.pop()
        for task in Path(f"/proc/{current}/task").glob("*/children"):
            try:
                kids = {int(k) for k in task.read_text().split()}
            except OSError:
                continue
            todo += sorted(kids - found)
            found |= kids
    return found


def _watch_children(proc: subprocess.Popen[str], seen: set[int]) -> None:
    while proc.poll() is None:
        seen |= _children(proc.pid)
        time.sleep(0.02)


def _alive(pids: set[int]) -> set[int]:
    alive = set()
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().split()[2]
        except OSError:
            continue
        if state != "Z":
            alive.add(pid)
    return alive


def test_sigkill_during_extraction_leaves_a_consistent_index(tmp_path: Path) -> None:
    rng = random.Random(20250114)
    vault = tmp_path / "vault"
    copies = write_vault(vault, rng)
    db, reference = tmp_path / "index.db", tmp_path / "reference.db"
    started = time.perf_counter()
    clean(vault, reference)
    full = time.perf_counter() - started
    outcomes = {"killed": 0, "finished": 0}
    workers_seen = 0
    for trial in range(6):
        if trial:
            # Change documents as a user would: edit a CSV, replace one file by another kind.
            (vault / "copies" / "mtcars.csv").write_text(
                (SAMPLES / "mtcars.csv").read_text() + f"{trial},1,2,3,4,5,6,7,8,9,10\n"
            )
            victim = rng.choice([p for p in copies if p.suffix == ".pdf" and p.exists()])
            shutil.copy(SAMPLES / "crazyones.pdf", victim)
        delay = rng.uniform(0.2, 1.1 * full) if trial == 0 else rng.uniform(0.05, 1.5)
        workers: set[int] = set()
        with indexer_process(db, vault) as proc:
            watcher = threading.Thread(target=_watch_children, args=(proc, workers))
            watcher.start()
            outcome, _ = kill_after(proc, delay)
            watcher.join()
        workers_seen += len(workers)
        outcomes[outcome] += 1
        # A killed indexer's workers see their pipe close and exit.
        end = time.monotonic() + 10
        while _alive(workers) and time.monotonic() < end:
            time.sleep(0.05)
        assert _alive(workers) == set(), f"trial {trial}: workers left behind"
        with Index(db, embedder=FakeEmbedder()) as idx:
            assert idx.check() == [], f"trial {trial} ({outcome} after {delay:.2f}s)"
            idx.update(vault)
            assert idx.check() == []
            counts = idx._store.counts()
            assert counts["chunks"] == counts["fts"] == counts["vectors"] == counts["embedded"]
            recovered = results(idx)
        assert recovered == clean(vault, reference), f"trial {trial} ({outcome})"
    assert outcomes["killed"] >= 3, outcomes
    assert workers_seen, "no extraction worker was ever running when the indexer was killed"
    print(
        f"\nkill trials: {outcomes}, worker processes seen: {workers_seen}, full run {full:.1f} s"
    )


def test_ctrl_c_during_extraction_stops_cleanly_and_the_next_run_finishes(
    tmp_path: Path,
) -> None:
    vault = tmp_path / "vault"
    write_vault(vault, random.Random(7))
    slow = vault / "slow" / "big.csv"
    slow.parent.mkdir()
    slow.write_bytes(b"a,b,c\n" + b"1,2,3\n" * 1_500_000)  # seconds of parsing in a worker
    db = tmp_path / "index.db"
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "noteseek", "index", str(vault), "--db", str(db), "-q"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,  # its own process group, as a terminal gives it
    )
    try:
        # Wait until workers run, then press Ctrl-C once (the whole group gets it).
        deadline = time.monotonic() + 60
        while not _children(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)
        workers = _children(proc.pid)
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "stopped early (Ctrl-C)" in out and "the index is consistent" in err, (out, err)
    end = time.monotonic() + 10
    while _alive(workers) and time.monotonic() < end:
        time.sleep(0.05)
    assert _alive(workers) == set()
    slow.unlink()  # read next run, it would only take time
    with Index(db, embedder=FakeEmbedder()) as idx:
        assert idx.check() == []
        stats = idx.update(vault)
        assert not stats.interrupted and idx.check() == []
        assert idx.search("ten yoke of oxen", mode="bm25")[0].page == 4
