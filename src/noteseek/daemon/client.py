"""The one client of `noteseek serve`, the warm per-database daemon, for short-lived processes.

Two ways to ask it, both returning None (never raising) when no daemon answers, so the caller takes
the one-shot path:

- `answer(argv, raw)`: the hook fast path. The raw hook input goes over and the exact bytes the
  hook must print come back; the daemon parses the JSON and runs the same `run_hook` the one-shot
  path runs. A hook process starts on every prompt and every matched tool call, and the interpreter
  alone takes ~12 ms on a slow machine, so this path imports only builtin modules (`os`, `_socket`,
  `_sha256`): not `json` (which pulls in `re` and `enum`, ~10 ms here), `socket`, `pathlib` or
  `hashlib`. That is why everything else in this module imports its modules inside the functions.
- `request(db, payload)`: one JSON op (`ping`, `search`, `context`, `shutdown`; see daemon/server.py).

`ensure_started` starts a daemon in the background and never waits.

Where things live: one private folder per user (`$XDG_RUNTIME_DIR/noteseek`, else
`<tmp>/noteseek-<uid>`, mode 0700, refused if another user owns it or others can enter it;
`$NOTESEEK_RUNTIME_DIR` overrides), and in it, per database, `<key>.sock` (the socket, 0600),
`<key>.lock` (held by the running daemon), `<key>.log` (its stdout and stderr) and `<key>.spawn` (a
recent start attempt). `<key>` is a hash of the database's real path (for a server database, of
its URL without the password: `database_key`), so every spelling of one path meets the same
daemon. Unix sockets only: on platforms without AF_UNIX or fcntl (Windows) there is
no warm path; `answer` and `request` return None and `ensure_started` does nothing.

Hook wire format (one request per connection):
    request:  b"HOOK1 <version> <event> <max_tokens> <payload bytes> <db real path>\\n" + payload
    response: b"OK <n>\\n" + n bytes to print   |   b"ERR <n>\\n" + n bytes of message
"""

from __future__ import annotations

import os
import sys

from .. import __version__
from ..settings import (
    ENV_COLLECTION,
    ENV_DB,
    ENV_HOOK_LOG,
    ENV_NO_DAEMON,
    ENV_RUNTIME_DIR,
    TRUE_VALUES,
)

# Neither typing nor dataclasses at run time: together they cost a hook process ~5-10 ms, more
# than the request itself. Type checkers treat a constant named TYPE_CHECKING as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from ..core.locator import DatabaseUrl

# Deferred imports: `answer`, the hook's fast path, may load builtin modules only (see above), so
# every function imports what it needs itself.

__all__ = [
    "ENV_RUNTIME_DIR",
    "PROTOCOL_VERSION",
    "WIRE_TAG",
    "DaemonPaths",
    "answer",
    "daemon_paths",
    "database_key",
    "ensure_started",
    "lock_held",
    "request",
    "runtime_dir",
    "runtime_folder",
    "socket_key",
    "supported",
]

WIRE_TAG = b"HOOK1"
PROTOCOL_VERSION = 1
HOOK_TIMEOUT_SECONDS = 2.0
MAX_ANSWER_BYTES = 16 << 20
MAX_RESPONSE_BYTES = 64 << 20
SPAWN_GRACE_SECONDS = 15.0  # a start attempt younger than this is not repeated


# -- where daemons live ---------------------------------------------------------------------------


def runtime_folder() -> str:
    """Where daemons put their sockets (`runtime_dir` also checks and creates it)."""
    override = os.environ.get(ENV_RUNTIME_DIR)
    if override:
        return override
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg:
        return os.path.join(xdg, "noteseek")
    return os.path.join(os.environ.get("TMPDIR") or "/tmp", f"noteseek-{os.getuid()}")


def _sha256_hex(data: bytes) -> str:
    # The builtin module, not hashlib: hashlib loads OpenSSL, a few ms on every call.
    try:
        from _sha256 import sha256  # type: ignore[import-not-found]  # Python <= 3.11
    except ImportError:
        try:
            from _sha2 import sha256  # type: ignore[import-not-found]  # Python 3.12+
        except ImportError:
            from hashlib import sha256
    return str(sha256(data).hexdigest())


def socket_key(db_real_path: str) -> str:
    """The per-database file name stem of a daemon's socket, lock and log."""
    return _sha256_hex(db_real_path.encode("utf-8", "surrogatepass"))[:20]


def _is_private(info: os.stat_result) -> bool:
    # A folder others can write to could hold their socket, and they would see the queries.
    return (
        (info.st_mode & 0o170000) == 0o040000
        and info.st_uid == os.getuid()
        and not info.st_mode & 0o077
    )


def _private(folder: str) -> bool:
    try:
        return _is_private(os.lstat(folder))
    except OSError:
        return False


def supported() -> bool:
    """Whether this platform has what the daemon needs (Unix sockets and file locks)."""
    import _socket

    if not hasattr(_socket, "AF_UNIX"):
        return False
    try:
        import fcntl  # noqa: F401
    except ImportError:
        return False
    return True


def runtime_dir(*, create: bool = False) -> Path:
    """The per-user folder for sockets, locks and logs; with `create`, made 0700 if missing.

    Raises PermissionError when the folder exists but is not private to this user.
    """
    from pathlib import Path

    folder = Path(runtime_folder())
    if create:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    if not _is_private(folder.lstat()):
        raise PermissionError(
            f"{folder} must be a folder owned by you with mode 0700: fix or remove it"
        )
    return folder


class DaemonPaths:
    """The files of one database's daemon (a plain class: see the imports)."""

    __slots__ = ("db", "lock", "log", "socket", "spawn")

    def __init__(self, db: str, folder: Path, key: str) -> None:
        self.db = db  # the database's real path, as the daemon reports it
        self.socket = folder / f"{key}.sock"
        self.lock = folder / f"{key}.lock"
        self.log = folder / f"{key}.log"
        self.spawn = folder / f"{key}.spawn"

    def __repr__(self) -> str:
        return f"DaemonPaths(db={self.db!r}, socket={str(self.socket)!r})"


def database_key(db: str | os.PathLike[str] | DatabaseUrl) -> str:
    """What names a database's daemon: a file's real path; for a server URL, the URL without
    its password (core/locator.py), with the collection $NOTESEEK_COLLECTION adds when the URL
    names none, as `locate_index` resolves it. Never a password: the key is in file names, the
    wire and the daemon's log."""
    if hasattr(db, "key"):  # a DatabaseUrl (its collection already resolved)
        return str(db.key)
    text = os.fspath(db)
    if "://" not in text:
        return os.path.realpath(os.path.expanduser(text))
    from ..core.locator import locator_key, url_collection

    return locator_key(text, url_collection(text) or os.environ.get(ENV_COLLECTION) or None)


def daemon_paths(
    db_path: str | os.PathLike[str] | DatabaseUrl, *, create: bool = False
) -> DaemonPaths:
    """Socket, lock, log and spawn-marker paths for a database (the folder made with `create`)."""
    real = database_key(db_path)
    return DaemonPaths(real, runtime_dir(create=create), socket_key(real))


# -- the hook fast path ---------------------------------------------------------------------------


def _db_option(argv: list[str]) -> str | None:
    for i, arg in enumerate(argv[:-1]):
        if arg == "--db":
            return argv[i + 1]
    return os.environ.get(ENV_DB) or None


def _max_tokens(argv: list[str]) -> int:
    for i, arg in enumerate(argv[:-1]):
        if arg == "--max-tokens":
            return int(argv[i + 1])
    return 0  # the daemon's default


def answer(argv: list[str], raw: bytes) -> bytes | None:
    """The bytes the hook should print, from the warm daemon; None to take the one-shot path."""
    if not argv or os.environ.get(ENV_NO_DAEMON, "") in TRUE_VALUES:
        return None
    if os.environ.get(ENV_HOOK_LOG) == "all":
        return None  # the one-shot path logs every call; keep that debugging mode simple
    try:
        import _socket

        event = argv[0]
        db = _db_option(argv)
        if db is None or not hasattr(_socket, "AF_UNIX") or " " in event:
            return None
        real = database_key(db)
        folder = runtime_folder()
        if not _private(folder):
            return None
        path = os.path.join(folder, socket_key(real) + ".sock")
        header = b"%s %s %s %d %d " % (
            WIRE_TAG,
            __version__.encode(),
            event.encode(),
            _max_tokens(argv),
            len(raw),
        )
        sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        try:
            sock.settimeout(HOOK_TIMEOUT_SECONDS)
            sock.connect(path)
            sock.sendall(header + real.encode("utf-8", "surrogatepass") + b"\n" + raw)
            data = b""
            while b"\n" not in data:
                chunk = sock.recv(65536)
                if not chunk:
                    return None
                data += chunk
            head, _, body = data.partition(b"\n")
            status, _, size_text = head.partition(b" ")
            size = int(size_text)
            if size > MAX_ANSWER_BYTES:
                return None
            while len(body) < size:
                chunk = sock.recv(65536)
                if not chunk:
                    return None
                body += chunk
        finally:
            sock.close()
    except (OSError, ValueError):
        return None
    return body if status == b"OK" else None


# -- JSON requests and start-up -------------------------------------------------------------------


def request(
    db_path: str | os.PathLike[str] | DatabaseUrl, payload: dict[str, Any], *, timeout: float = 2.0
) -> dict[str, Any] | None:
    """Send one request to the database's daemon and return its answer; None if none answers.

    `payload` is an op such as `{"op": "search", "query": "..."}`. The answer is the daemon's JSON
    object: `{"ok": true, ...}` or `{"ok": false, "error": "..."}`. None (never an exception) when
    no daemon runs, it serves another database, or it does not answer within `timeout` seconds.
    """
    if not supported():
        return None
    try:
        paths = daemon_paths(db_path)
    except OSError:
        return None  # no runtime folder yet (no daemon ever ran) or an unsafe one
    if not paths.socket.exists():
        return None
    import json
    import socket
    import time

    message = dict(payload, db=paths.db, v=PROTOCOL_VERSION)
    deadline = time.monotonic() + timeout
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout)
            sock.connect(str(paths.socket))
            sock.sendall(json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\n")
            buffer = bytearray()
            while not buffer.endswith(b"\n"):
                remaining = deadline - time.monotonic()
                if remaining <= 0 or len(buffer) > MAX_RESPONSE_BYTES:
                    return None
                sock.settimeout(remaining)
                data = sock.recv(1 << 16)
                if not data:
                    break
                buffer += data
        reply = json.loads(buffer)
    except (OSError, ValueError):
        return None
    # The socket name is a hash of the path; the daemon also says which file it serves.
    if not isinstance(reply, dict) or reply.get("db") != paths.db:
        return None
    return reply


def ensure_started(
    db_path: str | os.PathLike[str] | DatabaseUrl, *, idle_minutes: float | None = None
) -> bool:
    """Start a daemon for this database in the background unless one runs or is starting.

    Returns True when a start was launched. Never waits for the daemon: the caller answers this
    request itself, and the next one finds the daemon warm. Two callers racing here may both
    launch one; the daemon's lock lets only the first serve, and the other exits at once.
    """
    # A server database (a DatabaseUrl, or its text): whether it exists, the daemon finds out.
    url = getattr(db_path, "url", None)
    if url is None:
        text = os.fspath(db_path)  # type: ignore[arg-type]  # not a DatabaseUrl here
        url = text if "://" in text else None
        if url is None and not os.path.exists(os.path.expanduser(text)):
            return False
    if not supported():
        return False
    import time

    paths = daemon_paths(db_path, create=True)
    # A running daemon holds the lock for its whole life (a stopping one until its process
    # ends): if it is taken, nothing to do.
    if lock_held(paths):
        return False
    # The daemon needs a moment to import and load before it takes the lock; the marker keeps
    # every prompt in that moment from launching another one.
    try:
        if time.time() - paths.spawn.stat().st_mtime < SPAWN_GRACE_SECONDS:
            return False
    except OSError:
        pass
    paths.spawn.touch(mode=0o600)
    _spawn(paths, idle_minutes, url)
    return True


def lock_held(paths: DaemonPaths) -> bool:
    """Whether a daemon holds these paths' lock: it runs, or its process is ending."""
    import fcntl

    fd = os.open(paths.lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def _spawn(paths: DaemonPaths, idle_minutes: float | None, url: str | None) -> None:
    import subprocess

    command = [sys.executable, "-m", "noteseek", "serve"]
    env = None
    if url is None:
        command += ["--db", paths.db]
    else:
        # Not on the command line, which `ps` shows to everyone: the URL may hold a password.
        # The environment is readable only by this user (and root).
        env = dict(os.environ)
        env[ENV_DB] = url
    if idle_minutes is not None:
        command += ["--idle-minutes", str(idle_minutes)]
    log = os.open(paths.log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        # A new session: the daemon outlives the hook and its terminal, and no signal sent to
        # the hook's process group (Ctrl-C in the agent) reaches it.
        subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            close_fds=True,
            start_new_session=True,
            cwd="/",
            env=env,
        )
    finally:
        os.close(log)
