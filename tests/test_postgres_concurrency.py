"""Many writers and readers on one PostgreSQL database, replicas and a reader role.

- indexers of different collections run in parallel; two of one collection are serialised;
- an indexer killed with SIGKILL leaves a consistent collection, and the next run finishes it;
- a streaming standby serves searches; writes go to the primary (`--db` / $NOTESEEK_WRITE_DB),
  and a write attempted on the standby gets a message naming the primary;
- a role that may only SELECT searches, and is refused writes with a clear message.

Needs a PostgreSQL server (tests/postgres_fixtures.py): skips locally without one, fails in CI.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from noteseek import Index, open_index
from noteseek.core.locator import DatabaseUrl, with_collection
from noteseek.storage import meta
from noteseek.storage.open import open_storage
from noteseek.storage.postgres.store import PostgresStore
from noteseek.storage.records import ChunkRecord, FileRecord, FileWrite

from .conftest import SAMPLE_VAULT, FakeEmbedder, note, user_env
from .postgres_fixtures import fresh_schema, wait_for_replay, with_search_path


def run(*args: str, env: dict[str, str], check: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "-m", "noteseek", *args], capture_output=True, text=True, env=env,
        timeout=600,
    )  # fmt: skip
    if check and result.returncode != 0:
        raise AssertionError(f"exit {result.returncode}\n{result.stdout}\n{result.stderr}")
    return result


@pytest.fixture
def cli_env(tmp_path: Path) -> dict[str, str]:
    env = user_env()
    env.update(NOTESEEK_HOME=str(tmp_path / "home"), HF_HUB_OFFLINE="1")
    return env


def test_indexers_of_different_collections_do_not_wait_for_each_other(pg_schema: str) -> None:
    work = open_storage(with_collection(pg_schema, "work"))
    home = open_storage(with_collection(pg_schema, "home"))
    again = open_storage(with_collection(pg_schema, "work"))
    held, release = threading.Event(), threading.Event()

    def hold_work() -> None:
        with work.write():
            work.replace_file(FileWrite(FileRecord("a.md", 1, 1, "h", "A", "ok", None)))
            held.set()
            release.wait(20)

    holder = threading.Thread(target=hold_work)
    holder.start()
    try:
        assert held.wait(20)
        started = time.monotonic()
        with home.write():  # another collection: its own lock, free
            home.replace_file(
                FileWrite(
                    FileRecord("b.md", 1, 1, "h", "B", "ok", None),
                    [ChunkRecord(0, "S", "some words here", 7)],
                )
            )
        assert time.monotonic() - started < 3  # not the 10 s lock wait
        assert home.chunk_texts("b.md") == ["some words here"]
        assert "a.md" not in again.file_states()  # the work transaction is still open
    finally:
        release.set()
        holder.join(20)
    assert "a.md" in again.file_states()
    for store in (work, home, again):
        assert store.integrity_problems() == []
        store.close()


def big_vault(root: Path, notes: int) -> Path:
    words = [
        "rebase",
        "token",
        "rotation",
        "garden",
        "bread",
        "kernel",
        "socket",
        "schema",
        "replica",
        "vector",
    ]
    for i in range(notes):
        body = " ".join(words[(i + j) % len(words)] for j in range(60))
        (root / f"n{i // 100}").mkdir(parents=True, exist_ok=True)
        (root / f"n{i // 100}" / f"note{i}.md").write_text(
            note(f"Note {i}", ("First", f"{body} number {i}."), ("Second", f"{body[::-1]} {i}"))
        )
    return root


def files_in(url: str) -> int:
    import psycopg

    plain = with_collection(url, None)
    name = url.rsplit("collection=", 1)[1]
    with psycopg.connect(plain, autocommit=True) as conn:
        if conn.execute("SELECT to_regclass('files')").fetchone()[0] is None:
            return 0  # not migrated yet
        row = conn.execute(
            "SELECT count(*) FROM files f JOIN collections c ON c.id = f.collection_id "
            "WHERE c.name = %s",
            (name,),
        ).fetchone()
    return int(row[0]) if row else 0


@pytest.mark.slow
def test_an_indexer_killed_with_sigkill_leaves_a_consistent_collection(
    pg_schema: str, tmp_path: Path, cli_env: dict[str, str]
) -> None:
    vault = big_vault(tmp_path / "vault", 400)
    url = with_collection(pg_schema, "big")
    child = subprocess.Popen(
        [sys.executable, "-m", "noteseek", "index", str(vault), "--db", url, "-q"],
        env=cli_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 300
        while files_in(url) < 30 and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(60)
    killed_at = files_in(url)
    assert 0 < killed_at < 400, "the run should have been killed halfway"
    with Index(url, create=False) as idx:
        assert idx.check() == []  # every file whole: its transaction committed or rolled back
        assert idx.status().files == killed_at
    out = run("index", str(vault), "--db", url, "-q", env=cli_env).stdout
    assert "400 notes seen" in out
    clean = with_collection(pg_schema, "clean")
    run("index", str(vault), "--db", clean, "-q", env=cli_env)
    with Index(url, create=False) as finished, Index(clean, create=False) as fresh:
        assert finished.check() == [] and fresh.check() == []
        a, b = finished.status(), fresh.status()
        assert (a.files, a.chunks, a.vectors) == (b.files, b.chunks, b.vectors)
        for query in ("token rotation 17", "garden kernel 301"):
            left = [(h.path, h.bm25_score) for h in finished.search(query, mode="bm25")]
            right = [(h.path, h.bm25_score) for h in fresh.search(query, mode="bm25")]
            assert left == right


@pytest.mark.slow
def test_two_indexers_of_one_collection_are_serialised(
    pg_schema: str, tmp_path: Path, cli_env: dict[str, str]
) -> None:
    vault = big_vault(tmp_path / "vault", 200)
    url = with_collection(pg_schema, "shared")
    command = [sys.executable, "-m", "noteseek", "index", str(vault), "--db", url, "-q"]
    children = [
        subprocess.Popen(command, env=cli_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(2)
    ]
    outputs = [child.communicate(timeout=600) for child in children]
    assert [c.returncode for c in children] == [0, 0], outputs
    with Index(url, create=False) as idx:
        assert idx.check() == [] and idx.status().files == 200


@pytest.fixture
def replicas(pg_url: str, pg_standby_url: str) -> Iterator[tuple[str, str]]:
    """The same fresh schema on the primary and (replicated) on its standby."""
    with fresh_schema(pg_url) as primary:
        schema = primary.rsplit("search_path%3D", 1)[1].split("%2C", 1)[0]
        wait_for_replay(pg_url, pg_standby_url)
        yield primary, with_search_path(pg_standby_url, schema)


@pytest.mark.slow
def test_a_standby_serves_searches_and_writes_go_to_the_primary(
    replicas: tuple[str, str], pg_url: str, pg_standby_url: str, tmp_path: Path,
    cli_env: dict[str, str],
) -> None:  # fmt: skip
    primary, standby = replicas
    vault = tmp_path / "sample-vault"
    shutil.copytree(SAMPLE_VAULT, vault, symlinks=True)
    run("index", str(vault), "--db", primary, "-q", env=cli_env)
    wait_for_replay(pg_url, pg_standby_url)

    def search(db: str, query: str, env: dict[str, str] | None = None) -> list[str]:
        args = ["search", query, "--json"] + (["--db", db] if db else [])
        out = run(*args, env=env or cli_env).stdout
        return [h["path"] for h in json.loads(out)["hits"]]

    query = "how do I undo a rebase"
    assert search(standby, query) == search(primary, query)
    refused = run("index", str(vault), "--db", standby, env=cli_env, check=False)
    assert refused.returncode == 1
    assert "read-only standby" in refused.stderr and "primary" in refused.stderr
    assert "NOTESEEK_WRITE_DB" in refused.stderr and "Traceback" not in refused.stderr
    # The team set-up: reads from the standby, the writer named once in the environment.
    team = dict(
        cli_env,
        NOTESEEK_DB=standby,
        NOTESEEK_WRITE_DB=primary,
        NOTESEEK_COLLECTION="sample-vault",
    )
    (vault / "howto" / "zebra.md").write_text(
        note("Zebra crossing", ("Rules", "A zebra crossing gives pedestrians the right of way."))
    )
    out = run("index", str(vault), "-q", env=team).stdout
    assert "1 added" in out
    wait_for_replay(pg_url, pg_standby_url)
    assert search("", "zebra crossing pedestrians", team)[0] == "howto/zebra.md"


@pytest.fixture
def reader_url(pg_target: object, pg_schema: str) -> Iterator[tuple[str, str]]:
    """A role that may only SELECT noteseek's tables of `pg_schema`, and the writer's URL."""
    import psycopg

    admin = getattr(pg_target, "admin_url", None)
    if not admin:
        pytest.skip("needs NOTESEEK_TEST_PG_ADMIN (a superuser) to create a role")
    schema = pg_schema.rsplit("search_path%3D", 1)[1].split("%2C", 1)[0]
    role, password = f"reader_{secrets.token_hex(4)}", secrets.token_hex(12)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{password}'")
    tail = pg_schema.split("@", 1)[1]
    url = f"postgresql://{role}:{password}@{tail}"
    try:
        yield url, schema
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"DROP OWNED BY {role}")
            conn.execute(f"DROP ROLE {role}")


def test_a_reader_role_searches_and_is_refused_writes(
    reader_url: tuple[str, str], pg_schema: str, tmp_path: Path
) -> None:
    import psycopg

    url, schema = reader_url
    vault = tmp_path / "notes"
    vault.mkdir()
    (vault / "a.md").write_text(note("Tokens", ("Rotate", "Rotate the access tokens monthly.")))
    writer = with_collection(pg_schema, "notes")
    with open_index(writer, vault, create=True, embedder=FakeEmbedder(), write=True) as idx:
        idx.update(vault)
    role = url.split("://", 1)[1].split(":", 1)[0]
    # What docs/scale.md tells an administrator to run for a reader role.
    with psycopg.connect(pg_schema, autocommit=True) as conn:
        conn.execute(f'GRANT USAGE ON SCHEMA "{schema}" TO {role}')
        conn.execute(f'GRANT SELECT ON ALL TABLES IN SCHEMA "{schema}" TO {role}')
    reader = with_collection(url, "notes")
    with Index(reader, embedder=FakeEmbedder()) as idx:  # create=True: nothing to create
        assert [h.path for h in idx.search("rotate tokens")] == ["a.md"]
        assert idx.status().files == 1 and idx.check() == []
        with pytest.raises(Exception) as caught:
            idx.update(vault)
    message = str(caught.value)
    assert type(caught.value).__name__ == "IndexReadOnlyError"
    assert f"role {role!r} may only read" in message and "owns the noteseek schema" in message
    assert url.split(":", 2)[2].split("@")[0] not in message  # not the password


def test_a_long_lived_index_reconnects_after_its_connection_is_cut(
    pg_target: object, pg_schema: str, tmp_path: Path
) -> None:
    import psycopg

    from noteseek import DatabaseConnectionError

    admin = getattr(pg_target, "admin_url", None)
    if not admin:
        pytest.skip("needs NOTESEEK_TEST_PG_ADMIN (a superuser) to end another connection")
    vault = tmp_path / "notes"
    vault.mkdir()
    (vault / "a.md").write_text(note("Tokens", ("Rotate", "Rotate the access tokens monthly.")))
    url = with_collection(pg_schema, "notes")
    with Index(url, embedder=FakeEmbedder()) as idx:
        idx.update(vault)
        assert idx.search("rotate tokens")
        backend = idx._store.conn.db.info.backend_pid  # type: ignore[attr-defined]
        with psycopg.connect(admin, autocommit=True) as conn:  # a server restart, a failover
            conn.execute("SELECT pg_terminate_backend(%s)", (backend,))
        with pytest.raises(DatabaseConnectionError) as caught:
            idx.search("rotate tokens")
        assert "127.0.0.1" in str(caught.value) and password_of(url) not in str(caught.value)
        assert [h.path for h in idx.search("rotate tokens")] == ["a.md"]  # a new connection


def password_of(url: str) -> str:
    return url.split("://", 1)[1].split("@", 1)[0].split(":", 1)[1]


def test_a_read_snapshot_keeps_what_its_begin_read_and_forgets_it_after(pg_schema: str) -> None:
    """A read transaction's BEGIN reads the collections' rows and a search's meta values with
    it: later reads in it see them (repeatable read), reads after it see the writer's."""
    url = DatabaseUrl(with_collection(pg_schema, "snap"))
    reader, writer = PostgresStore(url), PostgresStore(url)
    try:
        with writer.write():
            writer.set_meta(meta.VECTOR_DIM, "8")
        before = reader.data_version()
        with reader.snapshot():
            assert reader.get_meta(meta.VECTOR_DIM) == "8"
            with writer.write():
                writer.set_meta(meta.VECTOR_DIM, "16")
                # What a file write does to the collection's row (files.py), without the file.
                writer.conn.run(
                    "UPDATE collections SET version = version + 1 WHERE id = %s",
                    (writer.conn.collections.only,),
                )
            assert reader.get_meta(meta.VECTOR_DIM) == "8"
            assert reader.data_version() == before
        assert reader.get_meta(meta.VECTOR_DIM) == "16"
        assert reader.data_version() != before
        with reader.snapshot():
            assert reader.get_meta(meta.VECTOR_DIM) == "16"
    finally:
        reader.close()
        writer.close()
