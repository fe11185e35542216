"""Talk to `noteseek serve`, the warm per-database daemon, from a short-lived process (the hook).

Standard library only, and nothing heavy from it: this runs in the per-prompt hook before anything
else is imported, and its whole job is to be cheaper than opening the index. `request` returns None
at once when no daemon answers; `ensure_started` starts one in the background and never waits.

Where things live: one private folder per user (`$XDG_RUNTIME_DIR/noteseek`, else
`<tmp>/noteseek-<uid>`, mode 0700, refused if another user owns it or others can enter it), and in
it, per database, `<key>.sock` (the socket, 0600), `<key>.lock` (held by the running daemon),
`<key>.log` (its stdout and stderr) and `<key>.spawn` (a recent start attempt). `<key>` is a hash of
the database's real path, so every spelling of one path meets the same daemon. Unix sockets only:
on platforms without AF_UNIX or fcntl (Windows) there is no warm path; `request` returns None and
`ensure_started` does nothing, so callers simply stay on the one-shot path.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import sys
import time
from pathlib import Path

from ..hook_client import ENV_RUNTIME_DIR as ENV_RUNTIME_DIR  # re-exported for callers
from ..hook_client import runtime_folder, socket_key

# Neither typing nor dataclasses at run time: together they cost a hook process ~5-10 ms, more
# than the request itself. Type checkers treat a constant named TYPE_CHECKING as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "PROTOCOL_VERSION",
    "DaemonPaths",
    "daemon_paths",
    "ensure_started",
    "request",
    "runtime_dir",
    "supported",
]

PROTOCOL_VERSION = 1
SPAWN_GRACE_SECONDS = 15.0  # a start attempt younger than this is not repeated
MAX_RESPONSE_BYTES = 64 << 20


def supported() -> bool:
    """Whether this platform has what the daemon needs (Unix sockets and file locks)."""
    if not hasattr(socket, "AF_UNIX"):
        return False
    try:
        import fcntl  # noqa: F401
    except ImportError:
        return False
    return True


def runtime_dir(*, create: bool = False) -> Path:
    """The per-user folder for sockets, locks and logs; with `create`, made 0700 if missing.

    Raises PermissionError when the folder exists but is not private to this user: a socket in a
    folder someone else controls could be replaced by theirs, and they would see the queries.
    """
    folder = Path(runtime_folder())
    if create:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = folder.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
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


def daemon_paths(db_path: str | os.PathLike[str], *, create: bool = False) -> DaemonPaths:
    """Socket, lock, log and spawn-marker paths for a database (the folder made with `create`)."""
    real = os.path.realpath(os.path.expanduser(os.fspath(db_path)))
    return DaemonPaths(real, runtime_dir(create=create), socket_key(real))


def request(
    db_path: str | os.PathLike[str], payload: dict[str, Any], *, timeout: float = 2.0
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
        answer = json.loads(buffer)
    except (OSError, ValueError):
        return None
    # The socket name is a hash of the path; the daemon also says which file it serves.
    if not isinstance(answer, dict) or answer.get("db") != paths.db:
        return None
    return answer


def ensure_started(db_path: str | os.PathLike[str], *, idle_minutes: float | None = None) -> bool:
    """Start a daemon for this database in the background unless one runs or is starting.

    Returns True when a start was launched. Never waits for the daemon: the caller answers this
    request itself, and the next one finds the daemon warm. Two callers racing here may both
    launch one; the daemon's lock lets only the first serve, and the other exits at once.
    """
    if not supported() or not Path(db_path).expanduser().exists():
        return False
    import fcntl

    paths = daemon_paths(db_path, create=True)
    # A running daemon holds the lock for its whole life: if it is taken, nothing to do.
    fd = os.open(paths.lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
    # The daemon needs a moment to import and load before it takes the lock; the marker keeps
    # every prompt in that moment from launching another one.
    try:
        if time.time() - paths.spawn.stat().st_mtime < SPAWN_GRACE_SECONDS:
            return False
    except OSError:
        pass
    paths.spawn.touch(mode=0o600)
    _spawn(paths, idle_minutes)
    return True


def _spawn(paths: DaemonPaths, idle_minutes: float | None) -> None:
    import subprocess

    command = [sys.executable, "-m", "noteseek", "serve", "--db", paths.db]
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
        )
    finally:
        os.close(log)
