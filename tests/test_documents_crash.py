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


def write_vault(root: Path, rng: random.Random) -> None:
    """Notes, the real samples (each twice, in two folders) and the hostile files."""
    for number in range(40):
        path = root / "notes" / f"note-{number:04}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(note_text(rng, number), encoding="utf-8")
    for folder in ("docs", "copies"):
        shutil.copytree(SAMPLES, root / folder, ignore=shutil.ignore_patterns("*.md"))
    write_hostile(root / "hostile")


def results(idx: Index) -> dict[tuple[str, str], list[tuple[str, str, float]]]:
    """Each query's hits (path, location, score) in two modes. The limit passes the number of
    files, so no tie group is cut (the sample copies tie), and hits are compared as sets: files
    with equal scores come in chunk-id order, which depends on the order files were written."""
    out = {}
    for query in QUERIES:
        for mode in ("bm25", "hybrid"):
            hits = idx.search(query, limit=500, mode=mode)
            out[(query, mode)] = sorted((h.path, h.location, round(h.score, 6)) for h in hits)
    return out


def clean(
    vault: Path, db: Path
) -> tuple[dict[tuple[str, str], list[tuple[str, str, float]]], float]:
    """A new index of the vault built from scratch: its results and how long the update took."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    with Index(db, embedder=FakeEmbedder()) as idx:
        started = time.perf_counter()
        idx.update(vault)
        return results(idx), time.perf_counter() - started


def edit_documents(vault: Path, rng: random.Random, trial: int) -> None:
    """Change documents as a user would: rewrite CSVs and texts, swap PDFs for other PDFs."""
    copies = vault / "copies"
    for path in sorted(copies.glob("*.csv")) + sorted(copies.glob("*.txt")):
        path.write_text((SAMPLES / path.name).read_text() + f"\nedit {trial} {rng.random()}\n")
    pdfs = sorted(p.name for p in SAMPLES.glob("*.pdf"))
    for name in rng.sample(pdfs, 4):
        shutil.copy(SAMPLES / rng.choice(pdfs), copies / name)


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
    write_vault(vault, rng)
    db, reference = tmp_path / "index.db", tmp_path / "reference.db"
    _, first = clean(vault, reference)
    # How long the last uninterrupted run of each kind took (a guess until one finishes).
    duration = {"first": first, "edit": first / 2}
    outcomes = {"killed": 0, "finished": 0}
    workers_seen = 0
    for trial in range(6):
        kind = "edit" if trial else "first"
        if trial:
            edit_documents(vault, rng, trial)
        # Anywhere in the run: set-up, hashing, extraction, the final bookkeeping.
        delay = rng.uniform(0.0, 1.1 * duration[kind])
        workers: set[int] = set()
        with indexer_process(db, vault) as proc:
            watcher = threading.Thread(target=_watch_children, args=(proc, workers))
            watcher.start()
            outcome, elapsed = kill_after(proc, delay)
            watcher.join()
        if outcome == "finished":
            duration[kind] = elapsed
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
        assert recovered == clean(vault, reference)[0], f"trial {trial} ({outcome})"
    assert outcomes["killed"] >= 3, outcomes
    assert workers_seen, "no extraction worker was ever running when the indexer was killed"
    print(f"\nkill trials: {outcomes}, worker processes seen: {workers_seen}, runs: {duration}")


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
