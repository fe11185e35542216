"""The long-running surfaces keep their index fresh: the daemon and the MCP server watch the vault,
answer queries while an update holds a file transaction open, and share one index with
`noteseek watch` and `noteseek index` (real processes) without corrupting it or deadlocking.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from noteseek import Index
from noteseek.daemon import client as daemon_client
from noteseek.daemon.server import Daemon
from noteseek.mcp.server import VaultService, build_server

from .conftest import REPO, FakeEmbedder, note
from .test_targeted_update import rows

TIMEOUT = 60.0


def wait_until(condition: Callable[[], object], timeout: float = TIMEOUT, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not reached within {timeout} s: {what}")
        time.sleep(0.05)


def body(word: str, title: str = "Note") -> str:
    return note(title, ("Body", f"The word {word} is in a section long enough to be kept."))


def make_vault(root: Path, count: int = 6) -> Path:
    for i in range(count):
        path = root / "notes" / f"n{i}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body(f"zqstart{i}", f"Note {i}"))
    return root


class HeldWrites:
    """Patches a writing Index so that writing one note keeps its transaction open until released."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.inside, self.release = threading.Event(), threading.Event()

    def patch(self, index: Index) -> Index:
        store: Any = index._store
        real, real_many = store.replace_file, store.replace_files

        def hold(files: Any) -> None:
            if any(file.record.path.endswith(self.name) for file in files):
                self.inside.set()  # inside `with store.write()`: the row is not committed yet
                assert self.release.wait(TIMEOUT)

        def replace_file(file: Any) -> None:
            real(file)
            hold([file])

        def replace_files(files: Any) -> None:  # the update writes a batch's notes together
            real_many(files)
            hold(files)

        store.replace_file, store.replace_files = replace_file, replace_files
        return index


# -- the daemon -------------------------------------------------------------------------------------


@pytest.fixture
def runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "run"
    monkeypatch.setenv(daemon_client.ENV_RUNTIME_DIR, str(folder))
    return folder


@contextmanager
def serve(daemon: Daemon) -> Iterator[Daemon]:
    ready = threading.Event()
    thread = threading.Thread(target=daemon.serve, kwargs={"ready": ready}, daemon=True)
    thread.start()
    assert ready.wait(TIMEOUT), "daemon did not come up"
    try:
        yield daemon
    finally:
        daemon.stop()
        thread.join(TIMEOUT)
        assert not thread.is_alive()


def ask(db: Path, payload: dict[str, Any]) -> dict[str, Any]:
    answer = daemon_client.request(db, payload, timeout=30.0)
    assert answer is not None and answer["ok"], answer
    return answer


def daemon_paths_found(db: Path, word: str) -> list[str]:
    return [h["path"] for h in ask(db, {"op": "search", "query": word, "mode": "bm25"})["hits"]]


@pytest.mark.skipif(not daemon_client.supported(), reason="needs Unix sockets")
def test_the_daemon_watches_and_answers_while_an_update_holds_a_transaction(
    tmp_path: Path, runtime: Path
) -> None:
    vault, db = make_vault(tmp_path / "vault"), tmp_path / "i.db"
    with Index(db) as idx:
        idx.update(vault)
    held = HeldWrites("slow.md")
    daemon = Daemon(db, idle_minutes=0, watch=True, open_writer=lambda: held.patch(Index(db)))
    with serve(daemon) as server:
        wait_until(lambda: ask(db, {"op": "ping"})["watch"]["state"] == "watching", what="watch")
        watch = ask(db, {"op": "ping"})["watch"]
        assert watch["vault"] == str(vault.resolve()) and watch["runs"] == 1  # the catch-up
        (vault / "notes" / "n1.md").write_text(body("zqdaemonedit"))
        wait_until(lambda: daemon_paths_found(db, "zqdaemonedit") == ["notes/n1.md"])
        (vault / "notes" / "slow.md").write_text(body("zqslow"))
        assert held.inside.wait(TIMEOUT)
        # The update holds its write transaction open: queries answer from the last commit.
        assert ask(db, {"op": "ping"})["watch"]["state"] == "updating"
        assert daemon_paths_found(db, "zqdaemonedit") == ["notes/n1.md"]
        assert daemon_paths_found(db, "zqslow") == []
        hook = ask(db, {"op": "context", "prompt": "what is zqdaemonedit about"})
        # Answered during the update: the block, or the gate's reason when the made-up word's
        # section (or the list) scores below the hook's thresholds.
        assert "zqdaemonedit" in hook["text"] or "likely" in hook["reason"], hook
        held.release.set()
        wait_until(lambda: daemon_paths_found(db, "zqslow") == ["notes/slow.md"])
        assert server.refresher is not None
    with Index(db, create=False) as idx:
        assert idx.check() == []


@pytest.mark.skipif(not daemon_client.supported(), reason="needs Unix sockets")
def test_the_daemon_says_why_it_does_not_watch(tmp_path: Path, runtime: Path) -> None:
    vault, db = make_vault(tmp_path / "vault"), tmp_path / "i.db"
    with Index(db) as idx:
        idx.update(vault)
    with serve(Daemon(db, idle_minutes=0, watch=False)):
        assert ask(db, {"op": "ping"})["watch"] == {
            "state": "off",
            "reason": "not asked to watch (--no-watch)",
        }
    shutil.rmtree(vault)
    with serve(Daemon(db, idle_minutes=0, watch=True)):
        watch = ask(db, {"op": "ping"})["watch"]
        assert watch["state"] == "off" and "is not there" in watch["reason"]


# -- the MCP server ---------------------------------------------------------------------------------


class Opener:
    """Opens the index with a fake embedder; the second Index opened (the writer) is held."""

    def __init__(self, held: HeldWrites) -> None:
        self.held, self.opened = held, 0
        self.embedder = FakeEmbedder()

    def __call__(self, db: Path) -> Index:
        self.opened += 1
        index = Index(db, create=False, embedder=self.embedder)
        return self.held.patch(index) if self.opened == 2 else index


def text_of(result: Any) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def test_the_mcp_server_watches_and_answers_while_an_update_holds_a_transaction(
    tmp_path: Path,
) -> None:
    from mcp import Client

    vault, db = make_vault(tmp_path / "vault"), tmp_path / "i.db"
    with Index(db, embedder=FakeEmbedder()) as idx:
        idx.update(vault)
    held = HeldWrites("slow.md")
    opener = Opener(held)
    service = VaultService(db=str(db), opener=opener)

    def paths(word: str) -> list[str]:
        hits = service.search(word, limit=5, mode="bm25", folders=[], tags=[]).hits
        return [h.path for h in hits]

    assert paths("zqstart0") == ["notes/n0.md"]  # the reading Index is the first one opened
    service.start_watch()
    refresher = service.wait_watch_started(TIMEOUT)
    assert refresher is not None and refresher.wait_ready(TIMEOUT)
    wait_until(lambda: refresher.state().runs >= 1, what="catch-up")
    (vault / "notes" / "n2.md").write_text(body("zqmcpedit"))
    wait_until(lambda: paths("zqmcpedit") == ["notes/n2.md"], what="edit")
    (vault / "notes" / "slow.md").write_text(body("zqslowmcp"))
    assert held.inside.wait(TIMEOUT)

    async def body_(client: Client) -> None:
        status = text_of(await client.call_tool("status", {}))
        assert "Watching the vault: updating" in status and "searches use the last commit" in status
        assert "Background refresh" not in status
        found = text_of(await client.call_tool("search", {"query": "zqmcpedit", "mode": "bm25"}))
        assert "notes/n2.md" in found
        none = text_of(await client.call_tool("search", {"query": "zqslowmcp", "mode": "bm25"}))
        assert "No notes match" in none
        files = text_of(await client.call_tool("status", {"files": "problems"}))
        assert "[pending] notes/slow.md: new since the last update" in files

    asyncio.run(_with_client(build_server(service), body_))
    held.release.set()
    wait_until(lambda: paths("zqslowmcp") == ["notes/slow.md"], what="after release")
    service.close()
    assert not refresher.running
    with Index(db, create=False, embedder=FakeEmbedder()) as idx:
        assert idx.check() == []


async def _with_client(server: Any, fn: Callable[[Any], Any]) -> None:
    from mcp import Client

    async with Client(server, mode="legacy") as client:
        await fn(client)


def test_the_mcp_server_with_a_vault_and_no_index_builds_it(tmp_path: Path) -> None:
    vault, db = make_vault(tmp_path / "vault"), tmp_path / "new.db"
    service = VaultService(db=str(db), vault=str(vault))
    service.start_watch()
    refresher = service.wait_watch_started(TIMEOUT)
    assert refresher is not None
    wait_until(lambda: refresher.state().runs >= 1, what="first build")
    hits = service.search("zqstart4", limit=3, mode="bm25", folders=[], tags=[]).hits
    assert [h.path for h in hits] == ["notes/n4.md"]
    service.close()


def test_a_long_lived_reader_learns_that_german_notes_arrived(tmp_path: Path) -> None:
    vault, db = make_vault(tmp_path / "vault"), tmp_path / "i.db"
    with Index(db, embedder=FakeEmbedder()) as writer, Index(db, embedder=FakeEmbedder()) as reader:
        writer.update(vault)
        reader.search("zqstart1", mode="bm25")
        assert not reader._store.conn.stem_options.german_queries  # type: ignore[attr-defined]
        (vault / "notes" / "steuer.md").write_text(
            note(
                "Steuererklärung",
                (
                    "Unterlagen",
                    "Für die Steuererklärung brauche ich die Belege und die Nachweise "
                    "der Krankenversicherung, die Rechnungen und die Bescheinigungen.",
                ),
            )
        )
        writer.update(vault, paths=["notes/steuer.md"])
        reader.search("Belege", mode="bm25")
        assert reader._store.conn.stem_options.german_queries  # type: ignore[attr-defined]


# -- every writer at once, as real processes --------------------------------------------------------


def _env(runtime: Path) -> dict[str, str]:
    return dict(
        os.environ,
        PYTHONPATH=str(REPO / "src"),
        **{daemon_client.ENV_RUNTIME_DIR: str(runtime)},
    )


@pytest.mark.slow
@pytest.mark.skipif(not daemon_client.supported(), reason="needs Unix sockets")
def test_watch_index_daemon_and_mcp_share_one_index_safely(tmp_path: Path, runtime: Path) -> None:
    vault, db = make_vault(tmp_path / "vault", 40), tmp_path / "i.db"
    env = _env(runtime)
    noteseek = [sys.executable, "-m", "noteseek"]
    subprocess.run([*noteseek, "index", str(vault), "--db", str(db), "-q"], env=env, check=True)
    logs = {name: (tmp_path / f"{name}.log").open("wb") for name in ("watch", "serve", "mcp")}
    procs = {
        "watch": subprocess.Popen(
            [*noteseek, "watch", str(vault), "--db", str(db)], env=env, stderr=logs["watch"]
        ),
        "serve": subprocess.Popen(
            [*noteseek, "serve", "--db", str(db), "--idle-minutes", "0"],
            env=env,
            stderr=logs["serve"],
            stdout=logs["serve"],
        ),
        # stdio: it waits for a client on stdin and watches meanwhile.
        "mcp": subprocess.Popen(
            [*noteseek, "mcp", "--db", str(db)],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=logs["mcp"],
        ),
    }

    def log(name: str) -> str:
        return (tmp_path / f"{name}.log").read_text("utf-8", "replace")

    try:
        wait_until(lambda: "caught up" in log("watch"), what=log("watch"))
        wait_until(
            lambda: (
                (daemon_client.request(db, {"op": "ping"}, timeout=5) or {})
                .get("watch", {})
                .get("runs", 0)
                >= 1
            ),
            what=log("serve"),
        )
        rng = random.Random(9)
        index_runs = []
        waits: list[str] = []
        for round_ in range(6):
            notes = sorted(vault.rglob("*.md"))
            for path in rng.sample(notes, 5):
                path.write_text(body(f"zqround{round_}x{rng.randrange(10**6)}"))
            for path in rng.sample(notes, 2):
                path.unlink()
            for i in range(3):
                new = vault / f"r{round_}" / f"new{i}.md"
                new.parent.mkdir(exist_ok=True)
                new.write_text(body(f"zqnew{round_}x{i}"))
            index_runs.append(
                subprocess.Popen(
                    [*noteseek, "index", str(vault), "--db", str(db), "-q"],
                    env=env,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
            )
            time.sleep(rng.uniform(0.05, 0.6))  # edits land during and between runs
        for run in index_runs:
            _, err = run.communicate(timeout=120)
            assert run.returncode == 0, err
            waits.append(err)
        (vault / "sentinel.md").write_text(body("zqsentinel"))

        def settled() -> bool:
            with Index(db, create=False, embedder=FakeEmbedder()) as idx:
                coverage = idx.file_coverage()
                return coverage.counts()["pending"] == 0 and any(
                    f.path == "sentinel.md" for f in coverage.files
                )

        wait_until(settled, what="every change indexed")
        # Every process is alive and stops cleanly (no deadlock), each in its own way.
        assert all(p.poll() is None for p in procs.values()), {n: log(n) for n in procs}
        procs["watch"].send_signal(signal.SIGINT)
        assert daemon_client.request(db, {"op": "shutdown"}, timeout=10) is not None
        assert procs["mcp"].stdin is not None
        procs["mcp"].stdin.close()
        codes = {name: proc.wait(TIMEOUT) for name, proc in procs.items()}
        assert codes == {"watch": 0, "serve": 0, "mcp": 0}, {n: log(n) for n in procs}
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
        for handle in logs.values():
            handle.close()
    everything = "".join(log(n) for n in procs) + "".join(waits)
    assert "Traceback" not in everything, everything
    fresh = tmp_path / "fresh.db"
    subprocess.run([*noteseek, "index", str(vault), "--db", str(fresh), "-q"], env=env, check=True)
    with Index(db, create=False) as shared, Index(fresh, create=False) as clean:
        assert shared.check() == []
        got, want = rows(shared), rows(clean)
        for key in ("files", "chunks", "names", "tags", "fts"):
            assert got[key] == want[key], key
    # How often a writer found the index busy: they waited or skipped, and said so.
    counts = {n: log(n).count("is being updated by") for n in procs}
    counts["index"] = sum(w.count("is being updated by") for w in waits)
    print("\n" + json.dumps(counts))
