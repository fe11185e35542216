"""Notes prepared and embedded in worker processes give the serial build's index, row for row."""

from __future__ import annotations

import multiprocessing
import os
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from noteseek import Index, IndexOptions
from noteseek.engine.update import workers
from noteseek.engine.update.workers import POOL_MIN_NOTES, worker_count
from noteseek.engine.vault_walk import walk_vault

from .test_targeted_update import rows

SAMPLE = Path(__file__).resolve().parent.parent / "examples" / "sample-vault"
# Two planted values the scrubber must remove wherever they land (a worker's note included).
TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
PASSWORD = "hunter2-Xy9!correct-horse"


def _vault(root: Path, notes: int) -> Path:
    shutil.copytree(SAMPLE, root)
    topics = ["kubernetes rollout", "sqlite wal", "Umzug nach Berlin", "git rebase", "tls certs"]
    for i in range(notes):
        topic = topics[i % len(topics)]
        body = [
            "---",
            f"title: {topic.title()} {i}",
            f"aliases: [{topic} note {i}]",
            f"tags: [t{i % 7}, shared]",
            "---",
            f"# {topic} {i}",
            "",
            f"Links to [[Home]] and [[{topics[(i + 1) % 5]} {i + 1}]] with some words {i}.",
            "",
        ]
        for s in range(i % 4 + 1):
            body += [f"## Section {s} of {topic}", "", f"Paragraph {s} about {topic}. " * 30, ""]
        if i % 17 == 0:
            body += ["```bash", f"export GITHUB_TOKEN={TOKEN}", "```", ""]
        if i % 23 == 0:
            body += [f"password: {PASSWORD}", ""]
        if i % 29 == 0:
            body += ["Die Kündigung des Mietvertrags muss schriftlich erfolgen. " * 10, ""]
        folder = root / f"f{i % 9}"
        folder.mkdir(exist_ok=True)
        (folder / f"note {i}.md").write_text("\n".join(body), encoding="utf-8")
    (root / "f0" / "latin1.md").write_bytes("# caf\xe9\n\nnot utf-8 \xff\xfe".encode("latin-1"))
    (root / "f0" / "empty.md").write_text("")
    return root


def _order(index: Index) -> list[tuple[Any, ...]]:
    """Files and chunks in the order they were written (their ids)."""
    db = index._store.conn.db  # type: ignore[attr-defined]
    files = db.execute("SELECT id, path FROM files ORDER BY id").fetchall()
    chunks = db.execute(
        "SELECT c.id, f.path, c.seq FROM chunks c JOIN files f ON f.id = c.file_id ORDER BY c.id"
    ).fetchall()
    terms = db.execute(
        "SELECT f.path, t.* FROM note_terms t JOIN files f ON f.id = t.file_id ORDER BY 1"
    ).fetchall()
    return [*files, *chunks, *terms]


def _build(db: Path, vault: Path, workers_: int, **kwargs: Any) -> Index:
    index = Index(db, options=IndexOptions(workers=workers_))
    index.update(vault, **kwargs)
    return index


@pytest.fixture
def pool_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many notes each run handed to the worker pool (the real pool still runs)."""
    calls: list[int] = []
    real = workers.prepare_in_pool

    def counting(notes: Any, **kwargs: Any) -> Any:
        calls.append(len(notes))
        return real(notes, **kwargs)

    monkeypatch.setattr(workers, "prepare_in_pool", counting)
    return calls


def test_parallel_build_equals_serial_build(tmp_path: Path, pool_calls: list[int]) -> None:
    vault = _vault(tmp_path / "vault", POOL_MIN_NOTES + 60)
    serial = _build(tmp_path / "serial.db", vault, 0)
    assert pool_calls == []
    parallel = _build(tmp_path / "parallel.db", vault, 2)
    assert len(pool_calls) == 1 and pool_calls[0] > POOL_MIN_NOTES
    try:
        want, got = rows(serial), rows(parallel)
        assert len(want["chunks"]) > 400
        assert all(r[-1] is not None for r in want["chunks"])  # every chunk has its vector
        for table in want:
            assert got[table] == want[table], table
        assert _order(parallel) == _order(serial)
        flat = repr(got)
        assert TOKEN not in flat and PASSWORD not in flat
        for query in ("kubernetes rollout section", "Kündigung Mietvertrag", "note 42"):
            a = [(h.path, h.score) for h in serial.search(query)]
            b = [(h.path, h.score) for h in parallel.search(query)]
            assert a == b and a
    finally:
        serial.close()
        parallel.close()


def test_full_rebuild_and_changes_in_parallel_equal_serial(
    tmp_path: Path, pool_calls: list[int]
) -> None:
    """A --full run (embedded in the workers) and an incremental run with many changes (vectors
    reused by the writer) leave the rows a serial index gets from the same runs."""
    vault = _vault(tmp_path / "vault", POOL_MIN_NOTES + 40)
    serial = _build(tmp_path / "serial.db", vault, 0)
    parallel = _build(tmp_path / "parallel.db", vault, 2)
    try:
        for i in range(0, POOL_MIN_NOTES + 40, 1):
            path = vault / f"f{i % 9}" / f"note {i}.md"
            path.write_text(path.read_text() + f"\n\nAn added line {i}.\n")
        for idx in (serial, parallel):
            stats = idx.update(vault)
            assert stats.changed == POOL_MIN_NOTES + 40 and stats.vectors_reused > 0
        assert rows(parallel) == rows(serial)
        for idx in (serial, parallel):
            idx.update(vault, full=True)
        assert rows(parallel) == rows(serial)
        assert len(pool_calls) == 3
    finally:
        serial.close()
        parallel.close()


def test_a_stop_in_a_parallel_run_keeps_whole_files(tmp_path: Path) -> None:
    vault = _vault(tmp_path / "vault", POOL_MIN_NOTES + 100)
    stop = threading.Event()
    seen: list[str] = []

    def progress(done: int, total: int, path: str) -> None:
        seen.append(path)
        if done == 40:
            stop.set()

    index = Index(tmp_path / "p.db", options=IndexOptions(workers=2))
    try:
        stats = index.update(vault, progress=progress, stop=stop)
        assert stats.interrupted and 40 <= stats.added < POOL_MIN_NOTES
        assert len(seen) == stats.added
        index.update(vault)
        serial = _build(tmp_path / "s.db", vault, 0)
        try:
            assert rows(index)["chunks"] == rows(serial)["chunks"]
        finally:
            serial.close()
    finally:
        index.close()


def test_a_stop_ends_the_pool_at_once_without_draining_its_queue(tmp_path: Path) -> None:
    """A stop set while batches are out ends the generator at its next wait, and its workers
    with it: nothing more is yielded, and no worker prepares its queued batches first."""
    vault = _vault(tmp_path / "vault", POOL_MIN_NOTES + 200)
    notes = [n for n in walk_vault(vault, documents=False)[0] if not n.is_document]
    stop = threading.Event()
    results = workers.prepare_in_pool(
        notes,
        root=vault.resolve(),
        known={},
        options=IndexOptions(),
        force=False,
        workers=2,
        model=None,
        stop=stop,
    )
    first = next(results)
    assert first[0] == notes[0]
    stop.set()
    # The first batch was taken whole; the stop is seen before the next one is awaited.
    rest = list(results)
    assert len(rest) < workers.BATCH_NOTES
    assert not [p for p in multiprocessing.active_children() if p.name == "noteseek-prep"]


def test_small_runs_stay_in_process(tmp_path: Path, pool_calls: list[int]) -> None:
    """A watcher's batch (a handful of notes) never starts a pool."""
    assert worker_count(IndexOptions(workers=2), POOL_MIN_NOTES - 1) == 0
    assert worker_count(IndexOptions(workers=0), 10_000) == 0
    assert worker_count(IndexOptions(workers=3), 10_000) == 3
    assert worker_count(IndexOptions(), 10_000) == workers.default_workers()
    vault = _vault(tmp_path / "vault", 10)
    with Index(tmp_path / "i.db", options=IndexOptions(workers=2)) as idx:
        assert idx.update(vault).added > 10
    assert pool_calls == []


def test_a_worker_killed_mid_run_leaves_the_serial_rows(tmp_path: Path) -> None:
    vault = _vault(tmp_path / "vault", POOL_MIN_NOTES + 100)
    killed: list[int] = []

    def progress(done: int, total: int, path: str) -> None:
        if done == 40 and not killed:
            children = [p for p in multiprocessing.active_children() if p.name == "noteseek-prep"]
            assert children
            os.kill(children[0].pid or 0, signal.SIGKILL)
            killed.append(children[0].pid or 0)

    with Index(tmp_path / "p.db", options=IndexOptions(workers=2)) as parallel:
        stats = parallel.update(vault, progress=progress)
        assert killed and not stats.interrupted
        serial = _build(tmp_path / "s.db", vault, 0)
        try:
            assert rows(parallel) == rows(serial)
        finally:
            serial.close()


def test_the_workers_of_an_indexer_killed_mid_run_end_too(tmp_path: Path) -> None:
    import psutil

    vault = _vault(tmp_path / "vault", POOL_MIN_NOTES + 400)
    code = (
        "import sys\n"
        f"sys.path.insert(0, {str(Path(__file__).resolve().parent.parent)!r})\n"
        "from tests.conftest import FakeEmbedder\n"
        "from noteseek import Index, IndexOptions\n"
        "def progress(done, total, path):\n"
        "    if done == 1:\n"
        "        print('started', flush=True)\n"
        "        import time; time.sleep(60)  # killed meanwhile, with its workers started\n"
        f"with Index({str(tmp_path / 'k.db')!r}, embedder=FakeEmbedder(),\n"
        "           options=IndexOptions(workers=2)) as idx:\n"
        f"    idx.update({str(vault)!r}, progress=progress)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "started"
        workers = psutil.Process(proc.pid).children()
        assert len(workers) >= 2
        proc.kill()
        proc.wait(timeout=30)
        # They look once a second; 30 s is far more than any machine needs, and a leak is for ever.
        _, alive = psutil.wait_procs(workers, timeout=30)
        assert alive == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
        if proc.stdout is not None:
            proc.stdout.close()


def test_a_script_without_a_main_guard_is_not_run_again_by_the_workers(tmp_path: Path) -> None:
    """spawn re-runs a main script in each child unless it is hidden while they start."""
    vault = _vault(tmp_path / "vault", POOL_MIN_NOTES + 10)
    marker = tmp_path / "runs.txt"
    script = tmp_path / "unguarded.py"
    script.write_text(
        "import sys\n"
        "from noteseek import Index, IndexOptions\n"
        f"open({str(marker)!r}, 'a').write('run\\n')\n"
        f"with Index({str(tmp_path / 'u.db')!r}, options=IndexOptions(workers=2)) as idx:\n"
        f"    s = idx.update({str(vault)!r})\n"
        "print(s.added)\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=600, check=True
    )
    assert marker.read_text() == "run\n"
    assert int(done.stdout.split()[-1]) > POOL_MIN_NOTES
    assert "worker" not in done.stderr, done.stderr


def test_the_cli_takes_a_worker_count(tmp_path: Path) -> None:
    vault = _vault(tmp_path / "vault", 5)
    cli = [sys.executable, "-m", "noteseek", "index", str(vault), "--db", str(tmp_path / "c.db")]
    done = subprocess.run([*cli, "--workers", "0", "-q"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    bad = subprocess.run([*cli, "--workers", "-1"], capture_output=True, text=True)
    assert bad.returncode == 2 and "--workers" in bad.stderr and "Traceback" not in bad.stderr
