"""Several processes on one index file: searchers beside an indexer, and two indexers at once."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from pathlib import Path

import apsw
import pytest

import noteseek.storage.sqlite.connection as store_module
from noteseek import Index, IndexLockedError

from .conftest import REPO, FakeEmbedder
from .test_crash import TOPICS, clean_results, indexer_process, results, write_vault

pytestmark = pytest.mark.slow

STABLE = 40  # notes 0..39 are never edited or deleted, so a searcher must always find them

WRITER = """
import random, sys, time
from pathlib import Path
sys.path.insert(0, {repo!r})
from tests.conftest import FakeEmbedder
from tests.test_crash import note_text
import noteseek
vault, rng = Path({vault!r}), random.Random(7)
with noteseek.Index({db!r}, embedder=FakeEmbedder()) as idx:
    for round in range({rounds}):
        notes = sorted(p for p in vault.rglob("*.md") if int(p.stem.split("-")[1]) >= {stable})
        if round % 3 == 1:  # edits
            for path in rng.sample(notes, 40):
                path.write_text(note_text(rng, int(path.stem.split("-")[1]), round))
        elif round % 3 == 2:  # deletions and new notes
            for path in rng.sample(notes, 10):
                path.unlink()
            for i in range(10):
                path = vault / "inbox" / f"note-{{5000 + 10 * round + i}}.md"
                path.parent.mkdir(exist_ok=True)
                path.write_text(note_text(rng, 5000 + 10 * round + i))
        idx.update(vault, full=round % 3 == 0)
print("done", flush=True)
"""

READER = """
import json, sys, time, traceback
from pathlib import Path
sys.path.insert(0, {repo!r})
import apsw
from tests.conftest import FakeEmbedder
from tests.test_crash import QUERIES
import noteseek
stop, deadline = Path({stop!r}), time.monotonic() + {limit}
def search(query, mode):
    # What Searcher.search should do itself (see test_search_reads_one_snapshot below): without
    # it, a full run that rewrites a note between search's statements drops that note.
    with idx._store.snapshot():
        return idx.search(query, mode=mode)
report = {{"searches": 0, "checks": 0, "busy": 0, "errors": [], "inconsistent": []}}
idx = noteseek.Index({db!r}, embedder=FakeEmbedder())
if True:
    n = 0
    while not stop.exists() and time.monotonic() < deadline:
        n += 1
        k = n % {stable}
        try:
            for mode in ("hybrid", "bm25", "vector"):
                for query in QUERIES:
                    hits = search(query, mode)
                    report["searches"] += 1
                    if any(not h.path or h.chunk_id <= 0 for h in hits):
                        report["inconsistent"].append(f"empty hit for {{query!r}}")
            # A note that is rewritten (full runs) but never removed must always be found.
            probes = {{
                ("zq%04d" % k, "bm25"): "note-%04d.md" % k,
                ("Topic %d" % k, "hybrid"): "note-%04d.md" % k,
            }}
            for (query, mode), wanted in probes.items():
                hits = search(query, mode)
                report["searches"] += 1
                if not hits or not hits[0].path.endswith("/" + wanted):
                    got = [h.path for h in hits[:3]]
                    report["inconsistent"].append(f"{{mode}} {{query!r}}: {{got}}")
            if n % 5 == 0:
                problems = idx.check()
                report["checks"] += 1
                if problems:
                    report["inconsistent"].append(f"check(): {{problems}}")
        except apsw.BusyError as exc:
            report["busy"] += 1
            report["errors"].append(f"BusyError: {{exc}}")
        except Exception:
            report["errors"].append(traceback.format_exc())
idx.close()
print(json.dumps(report), flush=True)
"""


def _python(code: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def test_searchers_never_see_locks_or_half_written_files(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    write_vault(vault, random.Random(11), 250)
    db, stop = tmp_path / "index.db", tmp_path / "stop"
    with Index(db, embedder=FakeEmbedder()) as idx:
        idx.update(vault)

    readers = [
        _python(READER.format(repo=str(REPO), db=str(db), stop=str(stop), limit=90, stable=STABLE))
        for _ in range(3)
    ]
    writer = _python(
        WRITER.format(repo=str(REPO), db=str(db), vault=str(vault), rounds=9, stable=STABLE)
    )
    started = time.monotonic()
    try:
        out, err = writer.communicate(timeout=120)
        assert writer.returncode == 0 and out.strip() == "done", err
    finally:
        stop.touch()
    writer_seconds = time.monotonic() - started
    reports = []
    for reader in readers:
        out, err = reader.communicate(timeout=120)
        assert reader.returncode == 0, err
        reports.append(json.loads(out))

    summary = {key: sum(r[key] for r in reports) for key in ("searches", "checks", "busy")} | {
        "errors": sum(len(r["errors"]) for r in reports),
        "writer_seconds": writer_seconds,
    }
    print(f"\n3 readers beside one indexer: {summary}")
    for report in reports:
        assert report["errors"] == [], report["errors"][:3]
        assert report["inconsistent"] == [], report["inconsistent"][:5]
        assert report["searches"] > 0 and report["checks"] > 0
    with Index(db, embedder=FakeEmbedder()) as idx:
        assert idx.check() == []
        after = results(idx)
    assert after == clean_results(vault, tmp_path / "reference.db")


@pytest.mark.parametrize("existing", [False, True], ids=["new-file", "existing-file"])
def test_two_indexers_at_once_interleave_safely(tmp_path: Path, existing: bool) -> None:
    """The second indexer waits for the first's run (the update lock; before it, for each file
    transaction); both finish, nothing is corrupted, and the index equals a single run's."""
    vault = tmp_path / "vault"
    write_vault(vault, random.Random(5), 200)
    db = tmp_path / "index.db"
    if existing:
        with Index(db, embedder=FakeEmbedder()) as idx:
            idx.update(vault)
    for trial in range(3):
        with (
            indexer_process(db, vault, full=existing) as first,
            indexer_process(db, vault, full=existing) as second,
        ):
            outputs = [proc.communicate(timeout=120) for proc in (first, second)]
            codes = [first.returncode, second.returncode]
        assert codes == [0, 0], (trial, [err[-2000:] for _, err in outputs])
        assert all(out.split()[-4] == "done" for out, _ in outputs), outputs
        with Index(db, embedder=FakeEmbedder()) as idx:
            assert idx.check() == []
            counts = idx._store.counts()
            assert counts["files"] == 200
            assert counts["chunks"] == counts["fts"] == counts["vectors"] == counts["embedded"]
            got = results(idx)
        assert got == clean_results(vault, tmp_path / "reference.db"), trial
        if not existing:
            for suffix in ("", "-wal", "-shm"):
                Path(f"{db}{suffix}").unlink(missing_ok=True)


def test_a_writer_held_past_the_busy_timeout_is_refused_clearly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = tmp_path / "vault"
    write_vault(vault, random.Random(3), 5)
    db = tmp_path / "index.db"
    with Index(db, embedder=FakeEmbedder()) as idx:
        idx.update(vault)
        before = idx._store.counts()
    monkeypatch.setattr(store_module, "BUSY_TIMEOUT_MS", 200)
    holder = apsw.Connection(str(db))
    holder.execute("BEGIN IMMEDIATE")  # another process in the middle of a long write
    try:
        with Index(db, embedder=FakeEmbedder()) as idx:
            hits = idx.search("zq0001", mode="bm25")  # searching still works
            assert hits and hits[0].path.endswith("note-0001.md")
            with pytest.raises(IndexLockedError, match=r"locked by another writer for over 0.2 s"):
                idx.update(vault, full=True)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    with Index(db, embedder=FakeEmbedder()) as idx:
        assert idx._store.counts() == before
        assert idx.check() == []
        assert idx.update(vault, full=True).changed == 5


def test_search_reads_one_snapshot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = tmp_path / "vault"
    write_vault(vault, random.Random(3), 5)
    db = tmp_path / "index.db"
    with Index(db, embedder=FakeEmbedder()) as idx:
        idx.update(vault)
    reader = Index(db, embedder=FakeEmbedder())
    lookup = reader._store.chunk_rows

    def rewrite_then_lookup(ids: list[int]) -> object:
        # Another process re-indexes every note (as `--full` does) right between two of
        # search's statements.
        with Index(db, embedder=FakeEmbedder()) as writer:
            writer.update(vault, full=True)
        return lookup(ids)

    monkeypatch.setattr(reader._store, "chunk_rows", rewrite_then_lookup)
    try:
        hits = reader.search("zq0001", mode="bm25")
    finally:
        reader.close()
    assert [h.path for h in hits][:1] == [f"{sorted(TOPICS)[1]}/note-0001.md"]
