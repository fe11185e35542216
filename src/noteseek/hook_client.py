"""The hook's warm fast path: hand the raw hook input to a running `noteseek serve`, print its answer.

A hook process starts on every prompt and every matched tool call, and on a slow machine the
interpreter alone takes ~12 ms. This module is what such a process runs first, so it imports only
builtin modules (`os`, `sys`, `_socket`, `_sha256`): not `json` (which pulls in `re` and `enum`, ~10
ms here), not `socket`, `pathlib` or `hashlib`. It does not even parse the hook's JSON; the daemon
does, runs the same `hooks.run_hook` the one-shot path runs, and sends back the exact stdout bytes.

When anything is missing — no explicit index path, no daemon, a daemon for another file, an error
answer, a timeout — `answer` returns None and the caller takes the one-shot path with the input it
already read; that path also starts the daemon for the next call.

Wire format (one request per connection):
    request:  b"HOOK1 <version> <event> <max_tokens> <payload bytes> <db real path>\\n" + payload
    response: b"OK <n>\\n" + n bytes to print   |   b"ERR <n>\\n" + n bytes of message
"""

from __future__ import annotations

import os

from . import __version__

__all__ = ["WIRE_TAG", "answer", "runtime_folder", "socket_key"]

WIRE_TAG = b"HOOK1"
ENV_RUNTIME_DIR = "NOTESEEK_RUNTIME_DIR"
TIMEOUT_SECONDS = 2.0
MAX_ANSWER_BYTES = 16 << 20


def runtime_folder() -> str:
    """Where daemons put their sockets (see `daemon_client.runtime_dir`, which also creates it)."""
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


def _private(folder: str) -> bool:
    # Same rule as daemon_client.runtime_dir: a folder others can write to could hold their socket.
    try:
        info = os.lstat(folder)
    except OSError:
        return False
    return (info.st_mode & 0o170000) == 0o040000 and info.st_uid == os.getuid() and not (
        info.st_mode & 0o077
    )


def _db_option(argv: list[str]) -> str | None:
    for i, arg in enumerate(argv[:-1]):
        if arg == "--db":
            return argv[i + 1]
    return os.environ.get("NOTESEEK_DB") or None


def _max_tokens(argv: list[str]) -> int:
    for i, arg in enumerate(argv[:-1]):
        if arg == "--max-tokens":
            return int(argv[i + 1])
    return 0  # the daemon's default


def answer(argv: list[str], raw: bytes) -> bytes | None:
    """The bytes the hook should print, from the warm daemon; None to take the one-shot path."""
    if not argv or os.environ.get("NOTESEEK_NO_DAEMON", "") in ("1", "true", "yes"):
        return None
    if os.environ.get("NOTESEEK_HOOK_LOG") == "all":
        return None  # the one-shot path logs every call; keep that debugging mode simple
    try:
        import _socket

        event = argv[0]
        db = _db_option(argv)
        if db is None or not hasattr(_socket, "AF_UNIX") or " " in event:
            return None
        real = os.path.realpath(os.path.expanduser(db))
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
            sock.settimeout(TIMEOUT_SECONDS)
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
