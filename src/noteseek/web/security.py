"""The web server's guards: where it may listen, which Host it answers, sizes, and the token.

Plain ASGI middleware rather than Starlette's `TrustedHostMiddleware`: that one answers a bad Host
in plain text, and every error here is JSON. CORS is Starlette's own `CORSMiddleware`
(set up in app.py), off unless origins are listed. The order, outermost first:

1. `GuardMiddleware`: Host header against an allow-list (a page on evil.example whose DNS name
   is rebound to 127.0.0.1 sends `Host: evil.example` and is refused, so it cannot read the
   notes), URL and body size limits, and headers on every reply (`nosniff`, no caching of notes,
   no referrer).
2. CORS (browser plugins such as `app://obsidian.md`; preflights are answered before auth,
   since browsers never send credentials on a preflight).
3. `BearerAuthMiddleware`: with a token, every `/api/` request needs `Authorization: Bearer
   <token>`, compared with `hmac.compare_digest` (constant time). The page, its assets and
   `/openapi.json` hold no notes and stay open, so the page can ask for the token.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
from collections.abc import Iterable
from dataclasses import dataclass

from starlette.datastructures import Headers
from starlette.middleware.cors import CORSMiddleware
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from noteseek import NoteseekError

__all__ = [
    "BearerAuthMiddleware",
    "GuardMiddleware",
    "JsonCORSMiddleware",
    "Limits",
    "UnsafeBindError",
    "allowed_hosts",
    "check_bind",
    "is_loopback",
    "json_reply",
]

log = logging.getLogger("noteseek.web")

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
WILDCARDS = frozenset({"0.0.0.0", "::", ""})
SECURITY_HEADERS = (
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
)
# Replies hold note text and searches: no browser or proxy cache may keep them.
NO_STORE = (b"cache-control", b"no-store")


class UnsafeBindError(NoteseekError):
    """The server was asked to listen beyond this machine without a token."""


@dataclass(frozen=True)
class Limits:
    """Request limits. The API takes no bodies, so any body over a few KB is refused."""

    max_body_bytes: int = 16 * 1024
    # A 10,000-character query in any script fits percent-encoded (≤ 12 bytes a character), with
    # room for filters; the schema's per-parameter limits mostly bite first, this bounds the rest.
    max_url_bytes: int = 128 * 1024
    # The request line plus every header: a browser's headers are a few KB; h11 refuses a head
    # that arrives in pieces past this (tests/test_web_connections.py), this bounds the rest.
    max_head_bytes: int = 136 * 1024


def is_loopback(host: str) -> bool:
    """Whether `host` (an address or 'localhost') only reaches this machine."""
    if host.strip("[]").lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name other than localhost may resolve anywhere


def check_bind(host: str, token: str | None) -> None:
    """Refuse to listen beyond loopback without a token (the index holds private notes)."""
    if token is not None and not token.strip():
        raise UnsafeBindError(
            "--token is empty; give a long random value (e.g. openssl rand -hex 32)"
        )
    if not is_loopback(host) and token is None:
        raise UnsafeBindError(
            f"--host {host} would serve your notes beyond this machine; add --token T (every API "
            "request then needs 'Authorization: Bearer T'), or keep the default 127.0.0.1"
        )


def allowed_hosts(bind_host: str, extra: Iterable[str] = ()) -> frozenset[str] | None:
    """Host header names the server answers: loopback names, the bound host, and `extra`
    (`--allow-host`); None (any Host) only when `extra` holds '*'."""
    names = {n.strip().lower().strip("[]") for n in extra}
    if "*" in names:
        return None
    if bind_host.lower() not in WILDCARDS:
        names.add(bind_host.lower().strip("[]"))
    return frozenset(names | LOOPBACK_NAMES)


def host_name(header: str) -> str:
    """The name part of a Host header: 'a:80' → 'a', '[::1]:80' → '::1'."""
    value = header.strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


async def json_reply(
    send: Send, status: int, message: str, headers: Iterable[tuple[bytes, bytes]] = ()
) -> None:
    """Send a complete JSON error reply: {"error": message}."""
    body = json.dumps({"error": message}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                NO_STORE,
                *SECURITY_HEADERS,
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _raw_header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return bytes(value)
    return None


def _header(scope: Scope, name: bytes) -> str | None:
    raw = _raw_header(scope, name)
    return None if raw is None else raw.decode("latin-1")


class GuardMiddleware:
    """Host allow-list, size limits and security headers (see the module docstring)."""

    def __init__(self, app: ASGIApp, *, hosts: frozenset[str] | None, limits: Limits) -> None:
        self.app, self.hosts, self.limits = app, hosts, limits

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        host = _header(scope, b"host")
        if self.hosts is not None and (host is None or host_name(host) not in self.hosts):
            await json_reply(
                send, 400, "unknown Host header; open the page at http://127.0.0.1:PORT/"
            )
            return
        url_bytes = len(scope.get("raw_path") or b"") + len(scope.get("query_string", b""))
        if url_bytes > self.limits.max_url_bytes:
            await json_reply(send, 414, f"URL longer than {self.limits.max_url_bytes} bytes")
            return
        head_bytes = url_bytes + sum(len(k) + len(v) + 4 for k, v in scope.get("headers", ()))
        if head_bytes > self.limits.max_head_bytes:
            await json_reply(send, 431, f"request headers over {self.limits.max_head_bytes} bytes")
            return
        length = _header(scope, b"content-length")
        if _header(scope, b"transfer-encoding") is not None:
            await json_reply(send, 411, "the API takes no chunked bodies; send Content-Length")
            return
        try:
            declared = int(length) if length is not None else 0
        except ValueError:
            await json_reply(send, 400, "Content-Length is not a number")
            return
        if declared > self.limits.max_body_bytes:
            await json_reply(
                send,
                413,
                f"request body over {self.limits.max_body_bytes} bytes; the API takes none",
            )
            return

        api = scope["path"].startswith("/api/") or scope["path"] == "/openapi.json"
        started = False

        async def send_with_headers(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                headers = list(message.get("headers", ()))
                names = {name.lower() for name, _ in headers}
                if api:  # whatever an inner layer said: API replies are never cached
                    headers = [h for h in headers if h[0].lower() != b"cache-control"]
                    headers.append(NO_STORE)
                headers += [h for h in SECURITY_HEADERS if h[0] not in names]
                message = {**message, "headers": headers}
            await send(message)

        try:
            await self.app(scope, receive, send_with_headers)
        except Exception as exc:
            # Caught here rather than by Starlette's outermost error handler, whose reply would
            # miss the headers above.
            log.error("request %s failed", scope["path"][:200], exc_info=exc)
            if started:
                raise
            await json_reply(
                send,
                500,
                f"internal error ({type(exc).__name__}); the server is still running, see its log",
            )


class JsonCORSMiddleware(CORSMiddleware):
    """Starlette's CORS, with preflight replies in JSON like every other reply."""

    def preflight_response(self, request_headers: Headers) -> Response:
        plain = super().preflight_response(request_headers)
        headers = {
            k: v for k, v in plain.headers.items() if k not in ("content-length", "content-type")
        }
        if plain.status_code == 200:
            return JSONResponse({"allowed": True}, headers=headers)
        refused = bytes(plain.body).decode()  # "Disallowed CORS origin, method"
        return JSONResponse(
            {
                "error": f"{refused}: only the --cors-origin origins may call this API, with GET "
                "and an Authorization header"
            },
            status_code=plain.status_code,
            headers={**headers, "cache-control": "no-store"},
        )


class BearerAuthMiddleware:
    """With a token, `/api/` requests need `Authorization: Bearer <token>` (constant-time check)."""

    def __init__(self, app: ASGIApp, *, token: str | None) -> None:
        self.app = app
        self._token = token.encode("utf-8") if token is not None else None

    def authorised(self, header: bytes | None) -> bool:
        """Whether an Authorization header value (raw bytes) carries the token."""
        if self._token is None:
            return True
        scheme, _, value = (header or b"").partition(b" ")
        if scheme.lower() != b"bearer":
            return False
        return hmac.compare_digest(value.strip(), self._token)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] == "http"
            and self._token is not None
            and scope["path"].startswith("/api/")
            and not self.authorised(_raw_header(scope, b"authorization"))
        ):
            await json_reply(
                send,
                401,
                "this server needs its token: send 'Authorization: Bearer <token>'",
                headers=[(b"www-authenticate", b'Bearer realm="noteseek"')],
            )
            return
        await self.app(scope, receive, send)
