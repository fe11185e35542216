"""Connection failures become messages naming host, port, user and database — never a password."""

from __future__ import annotations

import socket
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from noteseek.core.locator import redact_url
from noteseek.errors import DatabaseConnectionError, NoteseekError
from noteseek.storage.postgres.errors import (
    connection_error,
    is_postgres_url,
    parse_target,
)

SECRET = "s3cr:et@/pa ss?"
URL = f"postgresql://alice:{quote(SECRET, safe='')}@db.example.test:6543/notes"


@dataclass
class FakeError(Exception):
    """Shaped like psycopg.OperationalError: a message and an optional SQLSTATE."""

    text: str
    sqlstate: str | None = None

    def __str__(self) -> str:
        return self.text


def _no_secret(message: str, *secrets: str) -> None:
    for secret in (SECRET, quote(SECRET, safe=""), *secrets):
        assert secret not in message


LIBPQ = {
    "refused": (
        'connection failed: connection to server at "db.example.test" (192.0.2.7), port 6543 '
        "failed: Connection refused\n\tIs the server running on that host and accepting TCP/IP "
        "connections?",
        None,
    ),
    "login": (
        'connection failed: connection to server at "db.example.test", port 6543 failed: '
        'FATAL:  password authentication failed for user "alice"',
        "28P01",
    ),
    "not-allowed": (
        'FATAL:  no pg_hba.conf entry for host "192.0.2.1", user "alice", database "notes", '
        "no encryption",
        "28000",
    ),
    "no-database": ('FATAL:  database "notes" does not exist', "3D000"),
    "busy": ("FATAL:  sorry, too many clients already", "53300"),
    "starting": ("FATAL:  the database system is starting up", "57P03"),
    "timeout": ("connection failed: timeout expired", None),
    "unknown-host": (
        "failed to resolve host 'db.example.test': [Errno -2] Name or service not known",
        None,
    ),
    "tls": ("connection failed: SSL error: certificate verify failed", None),
    "bad-url": ('connection is bad: invalid integer value "x" for connection option "port"', None),
}


@pytest.mark.parametrize("reason", sorted(LIBPQ))
def test_each_failure_gets_its_reason_and_names_the_target(reason: str) -> None:
    text, state = LIBPQ[reason]
    error = connection_error(FakeError(text, state), URL, env={})
    assert isinstance(error, DatabaseConnectionError)
    assert isinstance(error, NoteseekError)
    assert error.reason == reason
    message = str(error)
    assert "db.example.test:6543" in message
    assert "'alice'" in message
    assert "'notes'" in message
    _no_secret(message)


def test_advice_says_what_to_check() -> None:
    refused = str(connection_error(FakeError(*LIBPQ["refused"]), URL, env={}))
    assert "pg_isready -h db.example.test -p 6543" in refused
    login = str(connection_error(FakeError(*LIBPQ["login"]), URL, env={}))
    assert "PGPASSFILE" in login and "PGPASSWORD" in login
    missing = str(connection_error(FakeError(*LIBPQ["no-database"]), URL, env={}))
    assert "createdb notes" in missing


def test_password_echoed_by_libpq_is_scrubbed() -> None:
    # libpq does not echo passwords today; if a message ever carries one it must not pass.
    env = {"PGPASSWORD": "envpass-123"}
    text = (
        f"invalid connection option: password={SECRET} host=x; also postgresql://bob:hunter2@h/db"
        " and envpass-123"
    )
    message = str(connection_error(FakeError(text), URL, env=env))
    _no_secret(message, "hunter2", "envpass-123")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40).filter(lambda s: "\x00" not in s))
def test_no_password_ever_in_a_message(tail: str) -> None:
    password = "Zq§" + tail  # a prefix the fixed wording never contains
    url = f"postgresql://u:{quote(password, safe='')}@127.0.0.1:5999/db"
    for text, state in LIBPQ.values():
        message = str(connection_error(FakeError(f"{text} {password}", state), url, env={}))
        assert password not in message
        assert quote(password, safe="") not in message
    assert redact_url(url) == "postgresql://u:***@127.0.0.1:5999/db"


def test_libpq_defaults_come_from_the_environment() -> None:
    env = {"PGHOST": "pg.internal", "PGPORT": "6000", "PGUSER": "svc", "PGDATABASE": "kb"}
    target = parse_target("postgresql://", env=env)
    assert target.hosts == (("pg.internal", "6000"),)
    assert (target.user, target.dbname, target.has_password) == ("svc", "kb", False)
    bare = parse_target("postgresql:///vaults", env={"PGUSER": "me"})
    assert bare.where == "the local Unix socket (port 5432)"  # named once, not twice
    assert (bare.user, bare.dbname) == ("me", "vaults")


def test_multi_host_ipv6_and_query_parameters() -> None:
    target = parse_target("postgres://u@h1:5001,[::1]:5002,h3/db?sslmode=require", env={})
    assert target.hosts == (("h1", "5001"), ("::1", "5002"), ("h3", "5432"))
    assert target.where == "h1:5001, ::1:5002, h3:5432"
    query = parse_target("postgresql:///?host=/run/pg&port=7&user=x&dbname=y", env={})
    assert query.hosts == (("/run/pg", "7"),)
    assert query.where == "the local Unix socket in /run/pg (port 7)"
    assert (query.user, query.dbname) == ("x", "y")


def test_redact_url() -> None:
    assert redact_url(URL) == "postgresql://alice:***@db.example.test:6543/notes"
    assert redact_url("postgresql://a@h/db?password=p1&sslmode=require") == (
        "postgresql://a@h/db?password=***&sslmode=require"
    )
    assert redact_url("postgresql://a@h/db?sslmode=require&sslpassword=keypass") == (
        "postgresql://a@h/db?sslmode=require&sslpassword=***"
    )
    assert redact_url("postgresql://h/db") == "postgresql://h/db"
    assert redact_url("/tmp/index.db") == "/tmp/index.db"
    assert is_postgres_url(" PostgreSQL://x") and is_postgres_url("postgres://x")
    assert not is_postgres_url("./postgresql.db")


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # closed again when the block ends


def _psycopg() -> Any:
    return pytest.importorskip(
        "psycopg", reason="psycopg is not installed (pip install -e '.[postgres]')"
    )


def test_real_refused_connection_on_loopback() -> None:
    psycopg = _psycopg()
    port = _closed_port()
    url = f"postgresql://alice:{quote(SECRET, safe='')}@127.0.0.1:{port}/notes"
    with pytest.raises(psycopg.OperationalError) as caught:
        psycopg.connect(url, connect_timeout=5)
    error = connection_error(caught.value, url, env={})
    assert error.reason == "refused"
    assert f"127.0.0.1:{port}" in str(error) and "'alice'" in str(error)
    _no_secret(str(error))


def _with(url: str, *, password: str | None = None, dbname: str | None = None) -> str:
    parts = urlsplit(url)
    netloc = parts.netloc
    if password is not None:
        user = netloc.split(":", 1)[0]
        netloc = f"{user}:{quote(password, safe='')}@{netloc.rsplit('@', 1)[1]}"
    return urlunsplit(parts._replace(netloc=netloc, path=f"/{dbname}" if dbname else parts.path))


def test_real_wrong_password_and_missing_database(pg_url: str) -> None:
    import psycopg

    wrong = _with(pg_url, password=SECRET)
    with pytest.raises(psycopg.OperationalError) as caught:
        psycopg.connect(wrong, connect_timeout=10)
    error = connection_error(caught.value, wrong, env={})
    assert error.reason == "login", str(error)
    _no_secret(str(error))
    real_password = urlsplit(pg_url).password or ""
    assert real_password and real_password not in str(error)

    missing = _with(pg_url, dbname="no_such_db_here")
    with pytest.raises(psycopg.OperationalError) as caught:
        psycopg.connect(missing, connect_timeout=10)
    error = connection_error(caught.value, missing, env={})
    assert error.reason == "no-database", str(error)
    assert "'no_such_db_here'" in str(error)
    assert real_password not in str(error)
