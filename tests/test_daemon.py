"""`noteseek serve` and its client: same answers as the library, private socket, one daemon per
database, change detection, idle exit, and a client that stays silent and cheap without a daemon."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from noteseek import Index
from noteseek.agents.prompt_context import prompt_context
from noteseek.daemon import client as daemon_client
from noteseek.daemon.server import Daemon

from .conftest import WriteNotes, note, user_env

pytestmark = pytest.mark.skipif(not daemon_client.supported(), reason="needs Unix sockets")

NOTES = {
    "git/rebase.md": note(
        "Undo a rebase",
        ("Reflog", "Find the commit before the rebase with git reflog, then git reset --hard."),
        tags="git",
    ),
    "git/stash.md": note("Stash", ("Usage", "git stash keeps uncommitted work aside.")),
    "cooking/bread.md": note(
        "Banana bread", ("Recipe", "Mash three ripe bananas, add flour and bake for an hour.")
    ),
    "ops/tokens.md": note(
        "Token rotation",
        ("Steps", "Rotate the OAuth access token every 90 days; refresh tokens expire too."),
        tags="security",
    ),
}


@pytest.fixture
def runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "run"
    monkeypatch.setenv(daemon_client.ENV_RUNTIME_DIR, str(folder))
    return folder


@pytest.fixture
def db(tmp_path: Path, make_vault: WriteNotes) -> Path:
    """A small index built with the real bundled model (the daemon opens it as any reader would)."""
    path = tmp_path / "notes.db"
    with Index(path) as idx:
        idx.update(make_vault(NOTES))
    return path


@pytest.fixture
def daemon(db: Path, runtime: Path) -> Iterator[Daemon]:
    server = Daemon(db, idle_minutes=0)
    ready = threading.Event()
    thread = threading.Thread(target=server.serve, kwargs={"ready": ready}, daemon=True)
    thread.start()
    assert ready.wait(60), "daemon did not come up"
    yield server
    server.stop()
    thread.join(30)
    assert not thread.is_alive()


def _hits(idx: Index, query: str, **options: object) -> list[dict[str, object]]:
    hits = idx.search(query, **options)  # type: ignore[arg-type]
    return [hit.to_json() for hit in hits]  # the fields the daemon's reply carries


CASES: list[tuple[str, dict[str, object]]] = [
    ("how do I undo a rebase", {}),
    ("rotate tokens", {"mode": "vector", "limit": 2}),
    ("git", {"mode": "bm25"}),
    ("bananas", {"max_tokens": 20}),
    ("token", {"folders": ["ops"], "explain": True}),
    ("git", {"tags": ["git"]}),
    ('"; DROP TABLE chunks; -- NEAR(', {}),
]


@pytest.mark.parametrize(("query", "options"), CASES)
def test_daemon_search_equals_the_library(
    daemon: Daemon, db: Path, query: str, options: dict[str, object]
) -> None:
    answer = daemon_client.request(db, {"op": "search", "query": query, **options})
    assert answer is not None and answer["ok"], answer
    with Index(db, create=False) as idx:
        assert answer["hits"] == _hits(idx, query, **options)


def test_daemon_context_equals_the_library(daemon: Daemon, db: Path) -> None:
    prompt = "How do I undo a git rebase that went wrong?"
    answer = daemon_client.request(db, {"op": "context", "prompt": prompt, "max_tokens": 200})
    assert answer is not None and answer["ok"], answer
    with Index(db, create=False) as idx:
        expected = prompt_context(idx, prompt, max_tokens=200)
    assert answer["text"] == expected.text
    assert answer["reason"] == expected.reason


def test_daemon_sees_index_changes(daemon: Daemon, db: Path, make_vault: WriteNotes) -> None:
    query = {"op": "search", "query": "sourdough starter feeding", "limit": 1}
    before = daemon_client.request(db, query)
    assert before is not None and before["hits"][0]["path"] != "cooking/sourdough.md"
    vault = make_vault(
        {"cooking/sourdough.md": note("Sourdough", ("Starter", "Feed the sourdough starter."))}
    )
    with Index(db) as idx:
        idx.update(vault)
    after = daemon_client.request(db, query)
    assert after is not None and after["hits"][0]["path"] == "cooking/sourdough.md"
    with Index(db, create=False) as idx:  # vectors re-read too: the vector-only answer agrees
        vector = {"op": "search", "query": "sourdough starter", "mode": "vector"}
        assert daemon_client.request(db, vector)["hits"] == _hits(  # type: ignore[index]
            idx, "sourdough starter", mode="vector"
        )


def test_bad_requests_get_errors_and_the_daemon_carries_on(daemon: Daemon, db: Path) -> None:
    for payload in (
        {"op": "nope"},
        {"op": "search"},
        {"op": "search", "query": "x", "mode": "fuzzy"},
        {"op": "search", "query": "x", "limit": 0},
    ):
        answer = daemon_client.request(db, payload)
        assert answer is not None and answer["ok"] is False and answer["error"], payload
    with socket.socket(socket.AF_UNIX) as sock:  # raw protocol: two lines on one connection
        sock.connect(str(daemon.paths.socket))
        sock.sendall(b"not json\n" + json.dumps({"op": "ping", "db": daemon.paths.db}).encode())
        sock.sendall(b"\n")
        reader = sock.makefile("rb")
        first, second = json.loads(reader.readline()), json.loads(reader.readline())
    assert first["ok"] is False and second["ok"] is True and second["pid"] == os.getpid()
    assert daemon.handle({"op": "ping", "db": "/some/other.db"})["ok"] is False


def test_socket_is_private(daemon: Daemon, runtime: Path) -> None:
    assert stat.S_IMODE(runtime.stat().st_mode) == 0o700
    assert stat.S_IMODE(daemon.paths.socket.stat().st_mode) & 0o077 == 0


def test_client_refuses_a_runtime_folder_others_can_enter(
    daemon: Daemon, db: Path, runtime: Path
) -> None:
    runtime.chmod(0o755)
    try:
        assert daemon_client.request(db, {"op": "ping"}) is None
        with pytest.raises(PermissionError):
            daemon_client.runtime_dir()
    finally:
        runtime.chmod(0o700)


def test_one_daemon_per_database(daemon: Daemon, db: Path) -> None:
    assert Daemon(db, idle_minutes=0).serve() == 1  # the lock is held: exits at once
    assert daemon_client.ensure_started(db) is False  # and no second one is spawned
    assert daemon_client.request(db, {"op": "ping"}) is not None


def test_no_daemon_means_none(db: Path, runtime: Path) -> None:
    assert daemon_client.request(db, {"op": "ping"}) is None  # no runtime folder yet
    paths = daemon_client.daemon_paths(db, create=True)
    with socket.socket(socket.AF_UNIX) as sock:  # a socket file left by a killed daemon
        sock.bind(str(paths.socket))
    assert daemon_client.request(db, {"op": "ping"}, timeout=5) is None


def test_idle_daemon_exits_and_cleans_up(db: Path, runtime: Path) -> None:
    server = Daemon(db, idle_minutes=0.02)  # 1.2 s
    assert server.serve() == 0  # returns by itself
    assert not server.paths.socket.exists()
    assert daemon_client.request(db, {"op": "ping"}) is None


def test_ensure_started_spawns_a_detached_daemon(db: Path, runtime: Path) -> None:
    assert daemon_client.ensure_started(db) is True
    assert daemon_client.ensure_started(db) is False  # starting: not launched twice
    answer = None
    deadline = time.monotonic() + 90
    while answer is None and time.monotonic() < deadline:
        time.sleep(0.2)
        answer = daemon_client.request(db, {"op": "ping"})
    assert answer is not None, daemon_client.daemon_paths(db).log.read_text()
    assert answer["pid"] != os.getpid()
    assert daemon_client.request(db, {"op": "shutdown"}) is not None
    deadline = time.monotonic() + 30
    while daemon_client.daemon_paths(db).socket.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert daemon_client.request(db, {"op": "ping"}) is None


def test_client_imports_only_the_standard_library(db: Path, runtime: Path) -> None:
    code = (
        "import sys\n"
        "from noteseek.daemon import client as daemon_client\n"
        f"assert daemon_client.request({str(db)!r}, {{'op': 'ping'}}) is None\n"
        "print(sorted(m for m in ('numpy', 'apsw', 'click', 'noteseek.engine.index', 'noteseek.storage.sqlite.store')"
        " if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.strip() == "[]"


def test_a_one_shot_hook_never_imports_numpy(db: Path, runtime: Path) -> None:
    """numpy's import alone (~65 ms) was a third of the cold hook; the query path works without."""
    code = (
        "import runpy, sys\n"
        f"sys.argv = ['noteseek', 'hook', 'prompt', '--db', {str(db)!r}]\n"
        "try:\n"
        "    runpy.run_module('noteseek', run_name='__main__')\n"
        "except SystemExit:\n"
        "    pass\n"
        "sys.stdout.flush()\n"
        "sys.stderr.write(repr(sorted(m for m in ('numpy', 'tokenizers', 'sqlite_vec', 'model2vec')"
        " if m in sys.modules)))\n"
    )
    env = user_env()
    env.update(NOTESEEK_RUNTIME_DIR=str(runtime), NOTESEEK_NO_DAEMON="1")
    out = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps(PROMPT).encode(),
        capture_output=True,
        env=env,
        timeout=120,
    )
    # The gate passes a hit only with its cosine, so a block in stdout means vectors were searched.
    assert b"ops/tokens" in out.stdout
    assert out.stderr.decode().strip().splitlines()[-1] == "[]"


def _hook_process(
    db: Path, runtime: Path, event: str, body: dict[str, object], **env_extra: str
) -> subprocess.CompletedProcess[bytes]:
    env = user_env()
    env.update(NOTESEEK_RUNTIME_DIR=str(runtime), NOTESEEK_HOME=str(runtime.parent / "home"))
    env.update(env_extra)
    return subprocess.run(
        [sys.executable, "-m", "noteseek", "hook", event, "--db", str(db)],
        input=json.dumps(body).encode(),
        capture_output=True,
        env=env,
        timeout=120,
    )


PROMPT = {
    "session_id": "s",
    "transcript_path": "/tmp/t.jsonl",
    "cwd": "/tmp",
    "hook_event_name": "UserPromptSubmit",
    "prompt": "how do I rotate the OAuth access token and refresh tokens?",
}


def test_hook_fast_path_prints_the_same_bytes_as_the_one_shot_path(
    daemon: Daemon, db: Path, runtime: Path
) -> None:
    served = daemon.served
    warm = _hook_process(db, runtime, "prompt", PROMPT)
    assert warm.returncode == 0 and warm.stderr == b""
    assert daemon.served == served + 1  # answered by the daemon, not by the process itself
    cold = _hook_process(db, runtime, "prompt", PROMPT, NOTESEEK_NO_DAEMON="1")
    assert daemon.served == served + 1
    assert warm.stdout == cold.stdout
    assert b"ops/tokens" in warm.stdout
    # A prompt the gate silences is silent on both paths.
    quiet = {**PROMPT, "prompt": "thanks"}
    assert _hook_process(db, runtime, "prompt", quiet).stdout == b""


def test_hook_fast_path_falls_back_when_the_daemon_cannot_answer(
    daemon: Daemon, db: Path, runtime: Path
) -> None:
    # Not JSON: the daemon refuses, the one-shot path runs, stays silent and logs the error.
    served = daemon.served
    env = user_env()
    env.update(NOTESEEK_RUNTIME_DIR=str(runtime), NOTESEEK_HOME=str(runtime.parent / "home"))
    broken = subprocess.run(
        [sys.executable, "-m", "noteseek", "hook", "prompt", "--db", str(db)],
        input=b"not json",
        capture_output=True,
        env=env,
        timeout=120,
    )
    assert broken.returncode == 0 and broken.stdout == b""
    assert daemon.served == served  # the failed request did not count as served
    log = (runtime.parent / "home" / "hook.log").read_text()
    assert "error" in log


def test_hook_client_answer_without_daemon_is_none(db: Path, runtime: Path) -> None:
    from noteseek.daemon.client import answer

    assert answer(["prompt", "--db", str(db)], json.dumps(PROMPT).encode()) is None
    assert answer(["prompt"], json.dumps(PROMPT).encode()) is None  # no explicit index: one-shot


def test_tool_hooks_take_the_fast_path_with_the_same_output(
    daemon: Daemon, db: Path, runtime: Path
) -> None:
    lines = [f"tests/test_m{i}.py::test_{i} PASSED" for i in range(400)]
    lines += ["E   AssertionError: token expired", "===== 1 failed, 399 passed ====="]
    post = {
        "session_id": "s",
        "transcript_path": "/t",
        "cwd": "/tmp",
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "pytest -q", "description": "Run the tests"},
        "tool_response": {"stdout": "\n".join(lines), "stderr": "", "interrupted": False},
    }
    served = daemon.served
    warm = _hook_process(db, runtime, "post-tool", post)
    cold = _hook_process(db, runtime, "post-tool", post, NOTESEEK_NO_DAEMON="1")
    assert daemon.served == served + 1
    assert warm.stdout == cold.stdout and b"updatedToolOutput" in warm.stdout
    pre = {
        "session_id": "s",
        "transcript_path": "/t",
        "cwd": "/tmp",
        "hook_event_name": "PreToolUse",
        "tool_name": "Agent",
        "tool_input": {"description": "tokens", "prompt": "How do we rotate the OAuth access token?"},
    }
    warm = _hook_process(db, runtime, "pre-tool", pre)
    cold = _hook_process(db, runtime, "pre-tool", pre, NOTESEEK_NO_DAEMON="1")
    # The same bytes both ways; on this three-note vault the subagent context may stay below the
    # hook's score threshold (tests/test_relevance.py checks what the threshold lets through).
    assert warm.stdout == cold.stdout


def test_a_client_of_another_version_makes_the_daemon_step_down(
    db: Path, runtime: Path
) -> None:
    from noteseek.daemon.client import socket_key

    server = Daemon(db, idle_minutes=0)
    ready = threading.Event()
    thread = threading.Thread(target=server.serve, kwargs={"ready": ready}, daemon=True)
    thread.start()
    assert ready.wait(60)
    real = os.path.realpath(db)
    raw = json.dumps(PROMPT).encode()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        sock.connect(str(runtime / f"{socket_key(real)}.sock"))
        sock.sendall(b"HOOK1 0.0.0-old prompt 0 %d %s\n" % (len(raw), real.encode()) + raw)
        answer = sock.recv(65536)
    assert answer.startswith(b"ERR ")
    # It stops, so the caller's one-shot path can start a daemon of its own version.
    thread.join(30)
    assert not thread.is_alive()


def test_a_secret_in_a_bad_request_never_reaches_the_daemon_log(db: Path, runtime: Path) -> None:
    """The real daemon process (`ensure_started`), its log file read after it exits."""
    token = "ghp_" + "Zq8Lm3Nx7Rt2Vb9Kc4Wd6Fh1Jp5Ys0Ae3Gu8"
    assert daemon_client.ensure_started(db) is True
    deadline = time.monotonic() + 90
    while daemon_client.request(db, {"op": "ping"}) is None and time.monotonic() < deadline:
        time.sleep(0.2)
    for payload in (
        {"op": "search", "query": "x", "limit": token},
        {"op": "search", "query": "x", "mode": token},
        {"op": "search", "query": "x", "since": token},
        {"op": "context", "prompt": "x", "max_tokens": token},
        {"op": token},
        {"op": "x" * 500_000},
    ):
        answer = daemon_client.request(db, payload)
        assert answer is not None and answer["ok"] is False, payload
    assert daemon_client.request(db, {"op": "shutdown"}) is not None
    log = daemon_client.daemon_paths(db).log
    deadline = time.monotonic() + 30
    while daemon_client.daemon_paths(db).socket.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    text = log.read_text()
    assert "request" in text and "failed" in text  # the failures are logged ...
    assert token[4:] not in text  # ... without what the request held
    assert len(text) < 100_000  # and a 500,000-character op is not copied in
