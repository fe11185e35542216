"""End to end over PostgreSQL: the real CLI and bundled model index the sample vault into a
collection, and every command that takes --db (search, context, status, eval, mcp, serve, web)
answers as it does from an SQLite file of the same vault. Nothing shows the URL's password.

Needs a PostgreSQL server (tests/postgres_fixtures.py): skips locally without one, fails in CI.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from noteseek import DatabaseUrl, Index
from noteseek.core.locator import with_collection
from noteseek.daemon import client as daemon_client
from noteseek.daemon.server import Daemon

from .conftest import SAMPLE_VAULT, user_env

QUERIES = ["how do I undo a rebase", "rotate api tokens", "§3 Absatz 2", "Kündigung Mietvertrag"]


def run(*args: str, env: dict[str, str], check: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "-m", "noteseek", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    if check and result.returncode != 0:
        raise AssertionError(f"exit {result.returncode}\n{result.stdout}\n{result.stderr}")
    return result


def password(url: str) -> str:
    return url.split("://", 1)[1].split("@", 1)[0].split(":", 1)[1]


class Setup:
    def __init__(self, env: dict[str, str], url: str, sqlite: Path, vault: Path) -> None:
        self.env, self.url, self.sqlite, self.vault = env, url, sqlite, vault
        self.secret = password(url)


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory, pg_module_schema: str) -> Setup:
    base = tmp_path_factory.mktemp("pg-e2e")
    vault = base / "sample-vault"
    shutil.copytree(SAMPLE_VAULT, vault, symlinks=True)
    env = user_env()
    env.update(NOTESEEK_HOME=str(base / "home"), HF_HUB_OFFLINE="1")
    # No collection named: `index` names it after the vault folder ("sample-vault").
    out = run("index", str(vault), "--db", pg_module_schema, "-q", env=env).stdout
    assert "42 added" in out and "collection=sample-vault" in out
    assert password(pg_module_schema) not in out
    run("index", str(vault), "--db", str(base / "s.db"), "-q", env=env)
    return Setup(env, pg_module_schema, base / "s.db", vault)


def search_json(setup: Setup, db: str, query: str, *extra: str) -> dict[str, Any]:
    out = run("search", query, "--db", db, "--json", *extra, env=setup.env).stdout
    return dict(json.loads(out))


def same_hits(pg: dict[str, Any], lite: dict[str, Any]) -> None:
    assert pg["degraded"] is None and lite["degraded"] is None
    key = ("path", "section", "bm25_rank", "vec_rank", "text")
    assert [[h[k] for k in key] for h in pg["hits"]] == [[h[k] for k in key] for h in lite["hits"]]
    for a, b in zip(pg["hits"], lite["hits"]):
        for field in ("score", "bm25_score", "cosine"):
            if a[field] is None or b[field] is None:
                assert a[field] == b[field]
            else:  # BM25 bit for bit; cosines float16 vs simsimd's float64 of the same int8
                assert a[field] == pytest.approx(b[field], rel=1e-6, abs=1e-6)


@pytest.mark.parametrize("mode", ["hybrid", "bm25", "vector"])
def test_search_equals_sqlite(setup: Setup, mode: str) -> None:
    for query in QUERIES:
        pg = search_json(setup, setup.url, query, "--mode", mode, "-n", "8")
        lite = search_json(setup, str(setup.sqlite), query, "--mode", mode, "-n", "8")
        assert pg["hits"], query
        same_hits(pg, lite)


def test_filters_context_status_and_eval_equal_sqlite(setup: Setup, tmp_path: Path) -> None:
    env = setup.env
    for extra in (["--folder", "howto"], ["--tag", "security"], ["--max-tokens", "80"]):
        pg = search_json(setup, setup.url, "token rotation", *extra)
        same_hits(pg, search_json(setup, str(setup.sqlite), "token rotation", *extra))
    ctx = [
        json.loads(run("context", QUERIES[1], "--db", db, "--json", env=env).stdout)
        for db in (setup.url, str(setup.sqlite))
    ]
    assert ctx[0]["text"] == ctx[1]["text"] and ctx[0]["text"]
    same_hits({**ctx[0], "degraded": None}, {**ctx[1], "degraded": None})
    status = [
        json.loads(run("status", "--db", db, "--json", env=env).stdout)
        for db in (setup.url, str(setup.sqlite))
    ]
    for key in ("files", "chunks", "vectors", "model_fingerprint", "vault_root", "problems"):
        assert status[0][key] == status[1][key], key
    assert "collection=sample-vault" in status[0]["db_path"]
    human = run("status", "--db", setup.url, env=env).stdout
    assert "pgvector loaded" in human and setup.secret not in human
    queries, qrels = tmp_path / "q.jsonl", tmp_path / "qrels.tsv"
    queries.write_text(
        "\n".join(json.dumps({"_id": str(i), "text": q}) for i, q in enumerate(QUERIES)) + "\n"
    )
    qrels.write_text(
        "query-id\tcorpus-id\tscore\n0\thowto/git-rebase-recipes.md\t1\n"
        "1\tprojects/auth-service-token-rotation.md\t1\n"
    )
    judged = ["--queries", str(queries), "--qrels", str(qrels), "--json"]
    reports = [
        json.loads(run("eval", *judged, "--db", db, env=env).stdout)
        for db in (setup.url, str(setup.sqlite))
    ]
    assert reports[0]["modes"] == reports[1]["modes"]


def test_env_locator_and_a_second_run_is_incremental(setup: Setup) -> None:
    env = dict(setup.env, NOTESEEK_DB=setup.url, NOTESEEK_COLLECTION="sample-vault")
    out = run("index", str(setup.vault), "-q", env=env).stdout
    # 43: the 42 sample notes and documents and its diagram image (read by OCR).
    assert "0 added, 0 changed, 0 removed, 43 unchanged" in out
    hits = json.loads(run("search", QUERIES[0], "--json", env=env).stdout)["hits"]
    assert hits[0]["path"] == "howto/git-rebase-recipes.md"


def test_library_index_on_a_url_creates_no_file(
    setup: Setup, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with Index(with_collection(setup.url, "sample-vault"), create=False) as idx:
        assert idx.search(QUERIES[0])[0].path == "howto/git-rebase-recipes.md"
        assert setup.secret not in str(idx.db_path) and setup.secret not in repr(idx.db_path)
        note = idx.read_note("howto/git-rebase-recipes.md")
        assert note.text.startswith("# ") or note.sections
    assert list(tmp_path.iterdir()) == []  # not ./postgresql:/… as before


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_connection_failures_name_where_and_never_the_password(setup: Setup) -> None:
    port = closed_port()
    down = f"postgresql://alice:s3cr3t-Pw@127.0.0.1:{port}/notes"
    out = run("search", "x", "--db", down, env=setup.env, check=False)
    assert out.returncode == 1 and "s3cr3t-Pw" not in out.stdout + out.stderr
    assert f"127.0.0.1:{port}" in out.stderr and "'alice'" in out.stderr
    assert "pg_isready" in out.stderr and "Traceback" not in out.stderr
    wrong = setup.url.replace(setup.secret, "not-the-password")
    out = run("status", "--db", wrong, env=setup.env, check=False)
    assert out.returncode == 1 and "refused the password" in out.stderr
    assert "not-the-password" not in out.stderr and setup.secret not in out.stderr
    out = run("search", "x", "--db", setup.url, "--collection", "nope", env=setup.env, check=False)
    assert "no collection 'nope'" in out.stderr and "sample-vault" in out.stderr
    assert setup.secret not in out.stderr


def test_mcp_service_over_a_url(setup: Setup) -> None:
    from noteseek.mcp.server import VaultService

    service = VaultService(db=setup.url, collection="sample-vault")
    try:
        found = service.search(QUERIES[0], limit=3, mode="hybrid", folders=[], tags=[])
        hits, degraded = found.hits, found.degraded
        assert degraded is None and hits[0].path == "howto/git-rebase-recipes.md"
        assert service.get_note(hits[0].path, section=None).path == hits[0].path
        status, _ = service.status()
        assert status.chunks == 207 and setup.secret not in status.db_path
    finally:
        service.close()


@pytest.fixture
def runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "run"
    monkeypatch.setenv(daemon_client.ENV_RUNTIME_DIR, str(folder))
    return folder


@pytest.fixture
def pg_daemon(setup: Setup, runtime: Path) -> Iterator[tuple[Daemon, DatabaseUrl]]:
    url = DatabaseUrl(with_collection(setup.url, "sample-vault"))
    server = Daemon(url, idle_minutes=0)
    ready = threading.Event()
    thread = threading.Thread(target=server.serve, kwargs={"ready": ready}, daemon=True)
    thread.start()
    assert ready.wait(60), "daemon did not come up"
    yield server, url
    server.stop()
    thread.join(30)


def test_daemon_over_a_url_keeps_the_password_out_of_its_files(
    setup: Setup, pg_daemon: tuple[Daemon, DatabaseUrl], runtime: Path
) -> None:
    server, url = pg_daemon
    answer = daemon_client.request(url, {"op": "search", "query": QUERIES[0], "limit": 3})
    assert answer is not None and answer["ok"], answer
    with Index(url, create=False) as idx:
        assert [h["path"] for h in answer["hits"]] == [
            h.path for h in idx.search(QUERIES[0], limit=3)
        ]
    assert setup.secret not in server.paths.db and "sample-vault" in server.paths.db
    # The same daemon whatever the password's spelling; its key, socket, log: no password.
    assert daemon_client.daemon_paths(setup.url + "&collection=sample-vault").db == server.paths.db
    for path in runtime.iterdir():
        assert setup.secret not in path.name
        if path.is_file():
            assert setup.secret.encode() not in path.read_bytes()


def test_a_spawned_daemon_gets_the_url_by_environment_not_argv(
    setup: Setup, runtime: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in setup.env.items():
        monkeypatch.setenv(key, value)
    url = DatabaseUrl(with_collection(setup.url, "sample-vault"))
    assert daemon_client.ensure_started(url) is True
    answer = None
    deadline = time.monotonic() + 90
    while answer is None and time.monotonic() < deadline:
        time.sleep(0.2)
        answer = daemon_client.request(url, {"op": "ping"})
    paths = daemon_client.daemon_paths(url)
    try:
        assert answer is not None, paths.log.read_text()
        argv = Path(f"/proc/{answer['pid']}/cmdline").read_bytes()
        assert setup.secret.encode() not in argv and b"serve" in argv
        assert setup.secret.encode() not in paths.log.read_bytes()
    finally:
        daemon_client.request(url, {"op": "shutdown"})


def test_web_api_over_a_url(setup: Setup) -> None:
    from fastapi.testclient import TestClient

    from noteseek import locate_index
    from noteseek.web.app import create_app
    from noteseek.web.pool import IndexPool

    locator = locate_index(db=setup.url, collection="sample-vault")
    pool = IndexPool(locator, workers=1, timeout=30)
    try:
        pool.warm()
        client = TestClient(create_app(pool, hosts=frozenset({"testserver"})))
        reply = client.get("/api/search", params={"q": QUERIES[0], "limit": 3})
        assert reply.status_code == 200
        assert reply.json()["hits"][0]["path"] == "howto/git-rebase-recipes.md"
        status = client.get("/api/status").json()
        assert setup.secret not in json.dumps(status)
    finally:
        pool.close()
