"""`noteseek serve`: one warm `Index` per database behind a Unix socket, for the per-prompt hook.

A hook is a fresh process per prompt: importing numpy, opening the index and reading 60,000 vectors
costs it far more than the search. The daemon pays that once and answers over a socket in the
caller's private runtime folder (see daemon/client.py for paths and security).

Protocol: JSON lines. A client connects, writes one request object per line and reads one answer
line per request. Every request names `db` (the real path of the database it means) and `op`:

- `ping` → `{"ok": true, "pid", "version", "uptime", "served"}`
- `search` (`query`, optional `limit`, `mode`, `max_tokens`, `folders`, `tags`, `files`,
  `explain`, `all`) →
  `{"ok": true, "hits": [...], "degraded": ..., "hidden": N}`, hits as `noteseek search --json`
  prints them (only those above the relevance threshold unless `all`; `hidden` counts the others)
- `context` (`prompt`, optional `max_tokens`) → `{"ok": true, "text", "reason", "considered",
  "hits"}` from `noteseek.prompt_context`
- `shutdown` → `{"ok": true}`, then the daemon exits

Every answer carries `db`; a failure is `{"ok": false, "error": "..."}`. Requests are answered one
at a time (a search takes milliseconds; one lock keeps the single SQLite connection simple).
The daemon exits after `--idle-minutes` without requests, on SIGTERM/SIGINT, or when its database
file disappears. It notices changes: the searcher re-reads the vectors when SQLite's data_version
moves, BM25 reads the live tables, and a database file replaced under it (new inode) or indexed
with another model is reopened.

With `watch` (the default of `noteseek serve` when the index knows its vault), it also keeps the
index fresh: an `IndexRefresher` (watch/refresh.py) with a writing `Index` of its own runs a
targeted update for every change in the vault, in the watcher's thread. Requests never wait for it:
they use the searching `Index` and read the last committed state. `ping` says what it is doing.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import socket
import socketserver
import threading
import time
import traceback
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from .. import DatabaseUrl, LazyIndex, SearchRequest, __version__, open_index, scrub
from ..agents import hook_log
from ..agents.hook_protocol import cosine_rank, render, run_hook
from ..agents.prompt_context import prompt_context
from ..settings import DEFAULT_CONTEXT_TOKENS
from . import freshness
from .client import PROTOCOL_VERSION, WIRE_TAG, DaemonPaths, daemon_paths

if TYPE_CHECKING:
    from collections.abc import Callable

    from .. import Index
    from ..watch.refresh import IndexRefresher

__all__ = ["Daemon", "trim_log"]

log = logging.getLogger("noteseek.daemon")

MAX_REQUEST_BYTES = 1 << 20  # a prompt is cut to 2,000 characters anyway
CLIENT_TIMEOUT_SECONDS = 5.0  # a client that stops mid-line is dropped, not waited for
LOG_MAX_BYTES = 1 << 20
LOG_TRACE_CHARS = 4_000  # of one failed request's traceback


class Daemon:
    """Answers requests for one database; `serve()` blocks until idle, stopped or signalled."""

    def __init__(
        self,
        db: str | os.PathLike[str] | DatabaseUrl,
        *,
        idle_minutes: float,
        watch: bool = False,
        vault: str | os.PathLike[str] | None = None,
        open_writer: Callable[[], Index] | None = None,
    ) -> None:
        self.paths = daemon_paths(db, create=True)
        self._is_file = not isinstance(db, DatabaseUrl) and "://" not in os.fspath(db)
        # A server URL keeps its password here, in memory only; paths.db never has one.
        where = self.paths.db if self._is_file else db
        self.watch = watch
        self._vault = vault
        self._open_writer = open_writer or (lambda: open_index(where, write=True))
        self.refresher: IndexRefresher | None = None
        self.not_watching = "not asked to watch (--no-watch)" if not watch else ""
        self.idle_seconds = max(0.0, idle_minutes * 60.0)
        self.started = time.monotonic()
        self.last_request = self.started
        self.served = 0
        self._lock = threading.Lock()  # one request at a time on the one connection
        self._index = LazyIndex(db=where)
        self._server: _Server | None = None
        self._stop = threading.Event()

    # -- the index -------------------------------------------------------------------------

    def index(self) -> Index:
        """The warm index, reopened if the file was replaced or re-indexed with another model."""
        if self._index.replaced():
            log.info("index file replaced or model changed: reopening")
            self._index.close()
        return self._index.get(track_identity=True)

    def warm_up(self) -> None:
        """Load the vectors and the query encoder before the first request."""
        index = self.index()
        # A long-lived process: numpy's one-off import buys the faster top-k selection (same hits).
        with contextlib.suppress(ImportError):
            import numpy  # noqa: F401
        problem = index.warm_up()
        if problem is not None:  # the searcher degrades to BM25 and says why; keep serving
            log.warning("query encoder unavailable: %s", problem)

    # -- requests --------------------------------------------------------------------------

    @contextlib.contextmanager
    def _serving(self) -> Iterator[None]:
        """One request at a time (the Index is not shared between threads), counted for idle exit."""
        with self._lock:
            self.last_request = time.monotonic()
            self.served += 1
            yield

    def handle(self, message: Any) -> dict[str, Any]:
        """The answer to one decoded request line."""
        if not isinstance(message, dict):
            return {"ok": False, "error": "a request is a JSON object"}
        if message.get("db") != self.paths.db:
            return {"ok": False, "error": f"this daemon serves {self.paths.db}"}
        op = message.get("op")
        try:
            with self._serving():
                answer = self._dispatch(op, message)
        except Exception as exc:  # one bad request must not end the daemon
            log.error("request failed: %s", _loggable(exc))
            return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        return {"ok": True, **answer}

    def _dispatch(self, op: Any, message: dict[str, Any]) -> dict[str, Any]:
        if op == "ping":
            return {
                "pid": os.getpid(),
                "version": __version__,
                "protocol": PROTOCOL_VERSION,
                "uptime": time.monotonic() - self.started,
                "served": self.served,
                "watch": self.watch_state(),
            }
        if op == "search":
            return self._search(message)
        if op == "context":
            return self._context(message)
        if op == "shutdown":
            self._stop.set()
            return {}
        raise ValueError(f"unknown op {op!r} (ping, search, context, shutdown)")

    def _search(self, message: dict[str, Any]) -> dict[str, Any]:
        index = self.index()
        request = SearchRequest(
            _text(message, "query"),
            limit=int(message.get("limit", 10)),
            mode=message.get("mode", "hybrid"),
            max_tokens=_optional_int(message.get("max_tokens")),
            explain=bool(message.get("explain", False)),
            folders=message.get("folders"),
            tags=message.get("tags"),
            files=message.get("files"),
            since=message.get("since") or None,
            until=message.get("until") or None,
            sort=message.get("sort", "relevance"),
            time_parse=bool(message.get("time_parse", True)),
        )
        if message.get("all"):
            request = dataclasses.replace(request, min_score=0.0, min_answer=0.0)
        result = index.run_search(request)
        window = result.time_range
        return {
            "degraded": result.degraded,
            "time_range": window.to_json() if window is not None else None,
            "searched": result.searched,
            "hits": result.hits_json(),
            "hidden": result.hidden,
            "answered": round(result.answered, 4),
        }

    def _context(self, message: dict[str, Any]) -> dict[str, Any]:
        options: dict[str, Any] = {}
        max_tokens = _optional_int(message.get("max_tokens"))
        if max_tokens is not None:
            options["max_tokens"] = max_tokens
        return prompt_context(self.index(), _text(message, "prompt"), **options).to_json()

    def hook(self, event: str, raw: bytes, max_tokens: int) -> str:
        """The stdout of `noteseek hook EVENT` for this raw input, as the one-shot path prints it."""
        payload = json.loads(raw)
        if not isinstance(payload, dict):
            raise ValueError("hook input is not a JSON object")
        reasons: list[str] = []

        def context(query: str, tokens: int) -> str:
            found = prompt_context(index, query, max_tokens=tokens)
            if not found.text:
                reasons.append(found.reason)
            return found.text

        with self._serving():
            index = self.index()
            result = run_hook(
                event,
                payload,
                context=context,
                rank=lambda query, segments: cosine_rank(index, query, segments),
                max_tokens=max_tokens or DEFAULT_CONTEXT_TOKENS,
            )
        if result is None and reasons:
            # The gate's reason is built from our own words and scores, never the prompt's text.
            hook_log.append(f"{event[:20]!r} warm silent: {reasons[-1]}")
        return render(result)

    # -- keeping the index fresh -------------------------------------------------------------

    def start_watching(self) -> None:
        """Start the refresher when asked to and the vault is known; log why not otherwise."""
        if self.watch:
            self.refresher, self.not_watching = freshness.start_refresher(
                self.index(), vault=self._vault, open_writer=self._open_writer
            )

    def watch_state(self) -> dict[str, Any]:
        """What the refresher does, for `ping` (`serve --status`)."""
        return freshness.watch_state(self.refresher, self.not_watching)

    # -- lifetime --------------------------------------------------------------------------

    def serve(self, *, ready: threading.Event | None = None) -> int:
        """Hold the lock, listen, answer until stopped; 1 if another daemon already serves."""
        import fcntl  # deferred: POSIX only, as in client.py; this module imports without it

        lock_fd = os.open(self.paths.lock, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            try:
                fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                log.info("another daemon already serves %s", self.paths.db)
                return 1
            self.warm_up()
            self._listen()
            self.start_watching()
            with contextlib.suppress(OSError):
                self.paths.spawn.unlink()
            if ready is not None:
                ready.set()
            watchdog = threading.Thread(target=self._watch, name="idle-watch", daemon=True)
            watchdog.start()
            assert self._server is not None
            self._server.serve_forever(poll_interval=0.5)
            return 0
        finally:
            self._close()
            os.close(lock_fd)  # releases the lock: the next ensure_started may start a new one

    def _listen(self) -> None:
        # Only the lock holder gets here, so a socket file left by a killed daemon is stale.
        with contextlib.suppress(FileNotFoundError):
            self.paths.socket.unlink()
        old_umask = os.umask(0o177)  # the socket file is created 0600
        try:
            server = _Server(str(self.paths.socket), _Handler)
        finally:
            os.umask(old_umask)
        server.owner = self
        self._server = server

    def _watch(self) -> None:
        """Stop when asked, when idle too long, or when the database file is gone."""
        while not self._stop.wait(1.0):
            idle = time.monotonic() - self.last_request
            if self.idle_seconds and idle > self.idle_seconds:
                log.info("idle for %.0f s: exiting", idle)
                break
            if self._is_file and not os.path.exists(self.paths.db):
                log.info("database file removed: exiting")
                break
        if self._server is not None:
            self._server.shutdown()

    def stop(self) -> None:
        """Ask `serve()` to return (from a signal handler or another thread)."""
        self._stop.set()

    def _close(self) -> None:
        if self.refresher is not None:
            self.refresher.close()  # an update in progress stops after its current file
        if self._server is not None:
            self._server.server_close()
            with contextlib.suppress(OSError):
                self.paths.socket.unlink()
        self._index.close()


if TYPE_CHECKING or hasattr(socket, "AF_UNIX"):  # the class does not exist on Windows

    class _Server(socketserver.ThreadingUnixStreamServer):
        """A thread per connection; closing waits for them (at most CLIENT_TIMEOUT_SECONDS), so
        the answer to `shutdown` is written before the process exits."""

        daemon_threads = False
        block_on_close = True
        owner: Daemon


class _Handler(socketserver.StreamRequestHandler):
    """One client connection: answer each request line until the client closes."""

    timeout = CLIENT_TIMEOUT_SECONDS

    def handle(self) -> None:
        assert isinstance(self.server, _Server)
        daemon = self.server.owner
        while True:
            try:
                line = self.rfile.readline(MAX_REQUEST_BYTES + 1)
            except OSError:
                return
            if not line:
                return
            if line.startswith(WIRE_TAG + b" "):
                self._hook(daemon, line)
                return
            if len(line) > MAX_REQUEST_BYTES:
                answer: dict[str, Any] = {"ok": False, "error": "request too large"}
            else:
                try:
                    answer = daemon.handle(json.loads(line))
                except ValueError:
                    answer = {"ok": False, "error": "a request is one line of JSON"}
            answer["db"] = daemon.paths.db
            try:
                self.wfile.write(json.dumps(answer, ensure_ascii=False).encode("utf-8") + b"\n")
                self.wfile.flush()
            except OSError:
                return


    def _hook(self, daemon: Daemon, line: bytes) -> None:
        """One request from the import-light hook client (wire format in daemon/client.py)."""
        try:
            _, version, event, tokens, size, db = line.rstrip(b"\n").split(b" ", 5)
            if version.decode() != __version__:
                # A noteseek upgrade while this daemon ran: make way, so the caller's one-shot path
                # starts a daemon of the new version; answering with old code could differ.
                daemon.stop()
                raise ValueError(f"daemon {__version__} is stopping for client {version.decode()}")
            length = int(size)
            if length > MAX_REQUEST_BYTES:
                raise ValueError("hook input too large")
            if db.decode("utf-8", "surrogatepass") != daemon.paths.db:
                raise ValueError(f"this daemon serves {daemon.paths.db}")
            raw = self.rfile.read(length)
            if len(raw) != length:
                raise ValueError("hook input cut short")
            body, status = daemon.hook(event.decode(), raw, int(tokens)).encode("utf-8"), b"OK"
        except Exception as exc:  # the client falls back to the one-shot path, which logs
            log.warning("hook request failed: %s", type(exc).__name__)
            body, status = f"{type(exc).__name__}".encode(), b"ERR"
        with contextlib.suppress(OSError):
            self.wfile.write(b"%s %d\n" % (status, len(body)) + body)
            self.wfile.flush()


def _loggable(exc: BaseException) -> str:
    """A failed request's traceback as the log file may keep it: its message quotes what the
    request sent (a query, a date, the op), which may hold a secret and be a megabyte long, so it
    is scrubbed like everything else noteseek stores, then cut (a cut first could leave half a
    token the scrubber no longer knows)."""
    trace = scrub("".join(traceback.format_exception(exc)).rstrip()).text
    if len(trace) > LOG_TRACE_CHARS:
        return f"{trace[:LOG_TRACE_CHARS]}… ({len(trace):,} characters)"
    return trace


def _text(message: dict[str, Any], key: str) -> str:
    value = message.get(key)
    if not isinstance(value, str):
        raise ValueError(f"{key!r} must be a string")
    return value


def _optional_int(value: Any) -> int | None:
    return None if value is None else int(value)


def trim_log(paths: DaemonPaths) -> None:
    """Empty the daemon's log file once it passed LOG_MAX_BYTES."""
    # The log is stdout/stderr of every daemon run; keep it from growing without bound.
    with contextlib.suppress(OSError):
        if paths.log.stat().st_size > LOG_MAX_BYTES:
            os.truncate(paths.log, 0)
