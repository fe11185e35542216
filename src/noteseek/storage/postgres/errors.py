"""Where a PostgreSQL URL points, shown without its password, and connection failures explained.

A failed connection surfaces as a libpq message ("connection to server at ... failed: Connection
refused", "password authentication failed for user ...") or a SQLSTATE; `connection_error` turns
it into a `DatabaseConnectionError` whose message names host, port, user and database and says
what to check next. The password never appears: not in the message (the libpq detail is scrubbed
of it, and of anything shaped like `password=` or `user:secret@`); a URL is shown only through
`core.locator.redact_url`, the one redaction every surface uses.

Pure: no psycopg import (the error is read by duck typing, `sqlstate` and `str()`), no I/O; the
environment is passed in. Only the URL form is parsed (`postgresql://` or `postgres://`, the form
`--db` and `NOTESEEK_DB` accept); libpq reads the same URL, so this agrees with where it connects.
"""

from __future__ import annotations

import getpass
import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import parse_qs, unquote

from ...errors import DatabaseConnectionError

__all__ = ["Target", "connection_error", "is_postgres_url", "parse_target"]

SCHEMES = ("postgresql://", "postgres://")
DEFAULT_PORT = "5432"
SOCKET = "the local Unix socket"


@dataclass(frozen=True)
class Target:
    """What a URL (plus libpq's environment defaults) connects to; never the password itself."""

    hosts: tuple[tuple[str, str], ...]  # (host or socket folder, port), in libpq's order
    user: str
    dbname: str
    has_password: bool  # in the URL; PGPASSWORD / PGPASSFILE are libpq's business

    @property
    def where(self) -> str:
        """`host:port` (several joined by ', '); a socket folder is named as such."""
        return ", ".join(
            f"{SOCKET} (port {port})" if host == SOCKET
            else f"{SOCKET} in {host} (port {port})" if host.startswith("/")
            else f"{host}:{port}"
            for host, port in self.hosts
        )  # fmt: skip


def is_postgres_url(text: str) -> bool:
    """Whether `--db` text names a PostgreSQL database rather than an index file."""
    return text.strip().lower().startswith(SCHEMES)


def _split_netloc(url: str) -> tuple[str, str, str, dict[str, list[str]]]:
    """(userinfo, host list, path, query) of a postgresql:// URL; libpq allows h1:p1,h2:p2."""
    rest = url.strip().split("://", 1)[1]
    rest, _, query = rest.partition("?")
    netloc, _, path = rest.partition("/")
    userinfo, _, hostlist = netloc.rpartition("@")
    return userinfo, hostlist, unquote(path), parse_qs(query, keep_blank_values=True)


def _hosts(hostlist: str) -> list[tuple[str, str | None]]:
    out: list[tuple[str, str | None]] = []
    for item in hostlist.split(","):
        if not item:
            continue
        if item.startswith("["):  # [ipv6]:port
            host, _, tail = item[1:].partition("]")
            out.append((host, tail[1:] or None))
        else:
            host, _, port = item.partition(":")
            out.append((unquote(host), port or None))
    return out


def parse_target(url: str, *, env: Mapping[str, str] | None = None) -> Target:
    """Host(s), port(s), user and database a URL reaches, with libpq's PG* defaults from `env`."""
    env = env or {}
    if not is_postgres_url(url):
        raise ValueError("not a postgresql:// URL")
    userinfo, hostlist, path, query = _split_netloc(url)
    user_part, colon, _ = userinfo.partition(":")
    first = {key: values[0] for key, values in query.items() if values}
    user = unquote(user_part) or first.get("user") or env.get("PGUSER") or _os_user()
    dbname = path or first.get("dbname") or env.get("PGDATABASE") or user
    hosts = _hosts(hostlist) or [
        (h, None) for h in (first.get("host") or env.get("PGHOST") or "").split(",") if h
    ]
    default_port = first.get("port") or env.get("PGPORT") or DEFAULT_PORT
    resolved = tuple((host or SOCKET, port or default_port) for host, port in hosts) or (
        (SOCKET, default_port),
    )
    return Target(
        resolved,
        user=user,
        dbname=dbname,
        has_password=bool(colon) or "password" in first,
    )


def _os_user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no passwd entry, no LOGNAME: libpq would fail the same way
        return "(your login name)"


# --- translating a failure ------------------------------------------------------------------

_SECRETISH = (
    re.compile(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", re.IGNORECASE),
    re.compile(r"(://[^:/@\s]*:)[^@\s]*(@)"),
)


def _scrubbed_detail(text: str, secrets: list[str]) -> str:
    """libpq's first line, without the password or anything shaped like one."""
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    line = re.sub(r"^(connection failed|connection is bad):\s*", "", line)
    for secret in secrets:
        if secret:
            line = line.replace(secret, "***")
    line = _SECRETISH[0].sub(r"\1***", line)
    return _SECRETISH[1].sub(r"\1***\2", line)


def _passwords(url: str, env: Mapping[str, str]) -> list[str]:
    found: list[str] = []
    if is_postgres_url(url):
        userinfo, _, _, query = _split_netloc(url)
        if ":" in userinfo:
            raw = userinfo.split(":", 1)[1]
            found += [raw, unquote(raw)]
        found += query.get("password", [])
    if env.get("PGPASSWORD"):
        found.append(env["PGPASSWORD"])
    # Longest first, so a password that contains another is replaced whole.
    return sorted({s for s in found if s}, key=len, reverse=True)


def _explain(state: str, text: str, t: Target) -> tuple[str, str]:
    """(reason, what happened and what to check) for a SQLSTATE and a lower-cased libpq text."""
    first = t.hosts[0]
    probe = f"pg_isready -h {first[0]} -p {first[1]}" if first[0] != SOCKET else "pg_isready"
    user, db = t.user, t.dbname
    if state == "28P01" or "password authentication failed" in text:
        return "login", (
            f"the server refused the password of user {user!r}. Check the user name and its "
            "password: in the URL, in $PGPASSWORD or in the password file ($PGPASSFILE, "
            "default ~/.pgpass)"
        )
    if "no password supplied" in text:
        return "login", (
            f"the server asks for a password for user {user!r} and none was given. Put it in "
            "the password file ($PGPASSFILE, default ~/.pgpass) or $PGPASSWORD"
        )
    if "pg_hba.conf" in text:
        return "not-allowed", (
            f"the server's pg_hba.conf has no rule that lets user {user!r} reach database "
            f"{db!r} from this machine (or the rule demands TLS: try sslmode=require). Ask "
            "its administrator to allow this host, user and database"
        )
    if state == "28000" or ("role" in text and "does not exist" in text):
        return "login", (
            f"user {user!r} does not exist on the server or may not log in. Check the user "
            "name in the URL (or $PGUSER)"
        )
    if state == "3D000" or ("database" in text and "does not exist" in text):
        return "no-database", (
            f"database {db!r} does not exist there. Create it (createdb {db}) or fix the "
            "name in the URL"
        )
    if state == "53300" or "too many clients" in text or "connection slots" in text:
        return "busy", (
            "the server has no free connection slots. Lower the pool size of the clients, "
            "use a connection pooler, or raise max_connections"
        )
    if state == "57P03" or "starting up" in text or "shutting down" in text:
        return "starting", (
            "the server is starting up, shutting down or recovering. Try again in a moment; "
            f"`{probe}` says when it accepts connections"
        )
    if "connection refused" in text or "no such file or directory" in text:
        return "refused", (
            f"nothing accepts connections there. Check that the server is running ({probe}), "
            "that it listens on that address and port (listen_addresses, port) and that "
            "the host and port in the URL are right"
        )
    if "timeout" in text or "timed out" in text:
        return "timeout", (
            "the server did not answer in time. Check the host name, the network and any "
            "firewall between here and the server (connect_timeout sets the wait)"
        )
    if "resolve host" in text or "translate host name" in text or "name or service" in text:
        return "unknown-host", "the host name is unknown. Check its spelling in the URL"
    if "ssl" in text or "certificate" in text or "tls" in text:
        return "tls", (
            "the TLS set-up failed. Check sslmode (require, verify-full, ...), sslrootcert "
            "and the server's certificate; libpq reads them from the URL or $PGSSLMODE, ..."
        )
    if "invalid" in text and ("option" in text or "uri" in text or "dsn" in text):
        return "bad-url", (
            "the database URL is malformed. Expected postgresql://user@host:port/database"
        )
    return "other", "check that the server runs and the URL (host, port, user, database) is right"


def connection_error(
    exc: BaseException, url: str, *, env: Mapping[str, str] | None = None
) -> DatabaseConnectionError:
    """A `DatabaseConnectionError` for a failed connect to `url`: where, as whom, what to check."""
    env = env or {}
    text = str(exc)
    state = str(getattr(exc, "sqlstate", None) or "")
    try:
        target = parse_target(url, env=env)
    except ValueError:
        target = Target(((SOCKET, DEFAULT_PORT),), user="?", dbname="?", has_password=False)
    reason, advice = _explain(state, text.lower(), target)
    detail = _scrubbed_detail(text, _passwords(url, env))
    message = (
        f"cannot connect to PostgreSQL at {target.where} as user {target.user!r} "
        f"(database {target.dbname!r}): {advice}."
    )
    if detail:
        message += f" (libpq: {detail})"
    return DatabaseConnectionError(message, reason=reason)
