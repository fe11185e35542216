"""The connection guard: how many connections a client may hold, how long a connection may take
to send its request head, and a JSON reply for what never reaches the app.

uvicorn's own settings do not suffice. `limit_concurrency` counts open connections, so 128
sockets that never send a byte made every other request a plain-text 503; `timeout_keep_alive`
starts only after a first reply, so a connection that sends nothing (or one byte a second) was
never closed; and a request head h11 refuses (too long, not HTTP) got a plain-text 400 and a
close with unread data, which the client sees as a TCP reset. `GuardedH11Protocol` is uvicorn's
h11 protocol with four changes, each at the connection level, where an ASGI middleware cannot act:

1. **Timeouts.** A new connection gets `idle_seconds` for its first byte (uvicorn's keep-alive
   timer, armed at once instead of after a first reply) and `head_seconds` for a complete
   request head, counted again after every reply: a slow drip cannot hold a connection.
2. **Room by eviction.** When a client holds `max_per_client` connections, or the server
   `max_connections`, a new connection closes the oldest *idle* one (no request running: never
   sent one, between requests, or closing) instead of being refused: an attacker's idle sockets
   make room for a real request, never the other way round. Only when every connection is busy
   running a request (bounded by `--timeout`) is the new one refused, with a JSON 503.
3. **JSON for what h11 refuses.** A request line over the URL limit is 414, a head over
   `max_head_bytes` 431, anything else h11 cannot parse (bytes that are not HTTP, a non-ASCII
   request line) 400, each `{"error": ...}` with the security headers.
4. **Lingering close.** Closing sends FIN first and reads (and drops) what the client still
   sends, for up to `linger_seconds` and `linger_bytes`, so the client reads the reply instead
   of a reset.

It subclasses uvicorn's `H11Protocol` (the class `uvicorn.Config(http=...)` accepts) and relies
on its attributes `cycle`, `conn`, `transport`, `client`, `server_state.connections`; the tests
in tests/test_web_connections.py run a real `noteseek web` and fail if an uvicorn update moves
them.
"""

from __future__ import annotations

import array
import asyncio
import json
import time
from dataclasses import dataclass
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

try:  # POSIX: how many bytes wait unread in a socket
    import fcntl
    import termios

    _FIONREAD: int | None = termios.FIONREAD
except ImportError:  # Windows
    _FIONREAD = None

from .security import SECURITY_HEADERS

__all__ = ["ConnectionLimits", "GuardedH11Protocol", "guarded_protocol", "raw_json_reply"]

REASONS = {
    400: "Bad Request",
    414: "URI Too Long",
    431: "Request Header Fields Too Large",
    503: "Service Unavailable",
}


@dataclass(frozen=True)
class ConnectionLimits:
    """Connection-level limits (see the module docstring)."""

    max_connections: int = 512
    max_per_client: int = 64
    idle_seconds: int = 5  # uvicorn takes whole seconds for its keep-alive timer
    head_seconds: float = 10.0
    max_url_bytes: int = 128 * 1024
    max_head_bytes: int = 136 * 1024
    linger_seconds: float = 2.0
    linger_bytes: int = 4 * 1024 * 1024


def raw_json_reply(status: int, message: str) -> bytes:
    """A complete HTTP/1.1 reply, written to the socket directly (no request reached the app)."""
    body = json.dumps({"error": message}).encode()
    head = [
        f"HTTP/1.1 {status} {REASONS.get(status, 'Error')}".encode(),
        b"content-type: application/json",
        b"content-length: " + str(len(body)).encode(),
        b"connection: close",
        b"cache-control: no-store",
        *(name + b": " + value for name, value in SECURITY_HEADERS),
    ]
    return b"\r\n".join(head) + b"\r\n\r\n" + body


class _LingeringTransport:
    """The socket transport, whose `close()` half-closes and drains before it really closes.

    uvicorn closes the transport on every error path; a close with unread bytes in the kernel's
    receive buffer makes the kernel send RST, and the client may lose the reply it was sent."""

    def __init__(self, transport: asyncio.Transport, limits: ConnectionLimits) -> None:
        self._transport = transport
        self._limits = limits
        self.lingering = False
        self._drained = 0
        self._timer: asyncio.TimerHandle | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)

    def is_closing(self) -> bool:
        return self.lingering or self._transport.is_closing()

    def close(self) -> None:
        if self.lingering or self._transport.is_closing():
            return
        self.lingering = True
        if not self._transport.can_write_eof():
            self._transport.close()
            return
        self._transport.write_eof()  # sends what is buffered, then FIN
        self._transport.resume_reading()
        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(self._limits.linger_seconds, self.abort_linger)

    def really_closing(self) -> bool:
        """Whether the socket itself is closing (not merely lingering)."""
        return self._transport.is_closing()

    def drain(self, data: bytes) -> None:
        """Drop bytes that arrive while lingering; close at once past the byte limit."""
        self._drained += len(data)
        if self._drained > self._limits.linger_bytes:
            self.abort_linger()

    def abort_linger(self) -> None:
        """Close now (the linger time or byte limit is over, or the slot is needed)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._transport.is_closing():
            self._transport.close()


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with the connection guard (see the module docstring)."""

    limits = ConnectionLimits()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self.opened_at = time.monotonic()
        self._head_timer: asyncio.TimerHandle | None = None
        self._lingering = _LingeringTransport(transport, self.limits)
        super().connection_made(self._lingering)  # type: ignore[arg-type]
        if not self._make_room():
            self._refuse(503, "too many connections from your address are busy; try again")
            return
        # uvicorn arms its keep-alive timer only after a reply; a first byte gets as long.
        self.timeout_keep_alive_task = self.loop.call_later(
            self.limits.idle_seconds, self.timeout_keep_alive_handler
        )
        self._arm_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_head_timer()
        self._lingering.abort_linger()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._lingering.lingering:
            self._lingering.drain(data)
            return
        super().data_received(data)
        if self.busy:
            self._cancel_head_timer()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and not self.busy:
            self._arm_head_timer()

    def send_400_response(self, msg: str) -> None:
        """h11 refused the bytes: say why in JSON (uvicorn's own reply is plain text)."""
        buffered = self.conn.trailing_data[0]
        if len(buffered) > self.limits.max_head_bytes:
            line_end = buffered.find(b"\r\n")
            if line_end == -1 or line_end > self.limits.max_url_bytes:
                self._refuse(414, f"URL longer than {self.limits.max_url_bytes} bytes")
            else:
                self._refuse(431, f"request headers over {self.limits.max_head_bytes} bytes")
        else:
            self._refuse(400, "malformed HTTP request: not a valid HTTP/1.1 request line or header")

    @property
    def busy(self) -> bool:
        """Whether a request is running on this connection (its head arrived, no reply yet)."""
        return (
            not self._lingering.is_closing()
            and self.cycle is not None
            and not self.cycle.response_complete
        )

    def _make_room(self) -> bool:
        """Close the oldest idle connection if this one is over a cap; False if none is idle."""
        # Connections already closed for good are on their way out; lingering ones still count.
        guarded = [
            c
            for c in self.server_state.connections
            if isinstance(c, GuardedH11Protocol) and c is not self and not c.closed
        ]
        host = self.client[0] if self.client else None
        mine = [c for c in guarded if (c.client[0] if c.client else None) == host]
        for pool, cap in ((mine, self.limits.max_per_client), (guarded, self.limits.max_connections)):
            if len(pool) + 1 <= cap:
                continue
            idle = sorted((c for c in pool if not c.busy), key=lambda c: c.opened_at)
            if not idle:
                return False
            # Under a flood, connections are accepted in batches: one whose request head is
            # already in its socket buffer, unread, is about to be busy; close a silent one.
            oldest = next((c for c in idle if not c.has_unread_bytes()), idle[0])
            oldest.evict()
            if pool is mine:
                guarded.remove(oldest)
        return True

    @property
    def closed(self) -> bool:
        """Whether the socket is closed or closing for good (not merely lingering)."""
        return self._lingering.really_closing()

    def has_unread_bytes(self) -> bool:
        """Whether bytes wait in this connection's socket buffer (False where it cannot tell)."""
        sock = self._lingering.get_extra_info("socket")
        if sock is None or _FIONREAD is None:
            return False
        waiting = array.array("i", [0])
        try:
            fcntl.ioctl(sock.fileno(), _FIONREAD, waiting)
        except OSError:
            return False
        return waiting[0] > 0

    def evict(self) -> None:
        """Close this idle connection now to make room for a new one."""
        self._cancel_head_timer()
        self._lingering.abort_linger()

    def _refuse(self, status: int, message: str) -> None:
        self._cancel_head_timer()
        if not self._lingering.is_closing():
            self._lingering.write(raw_json_reply(status, message))
        self._lingering.close()

    def _arm_head_timer(self) -> None:
        self._cancel_head_timer()
        self._head_timer = self.loop.call_later(self.limits.head_seconds, self._head_timed_out)

    def _cancel_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if not self.busy and not self._lingering.is_closing():
            self._lingering.abort_linger()


def guarded_protocol(limits: ConnectionLimits) -> type[GuardedH11Protocol]:
    """The protocol class for `uvicorn.Config(http=...)` with these limits."""
    return type("GuardedH11Protocol", (GuardedH11Protocol,), {"limits": limits})
