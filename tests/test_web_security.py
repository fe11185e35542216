"""The web server's guards: bind refusal, Host check (DNS rebinding), bearer token (constant
time), CORS allow-list, size and time limits, and the headers every reply carries."""

from __future__ import annotations

import hmac
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("fastapi", reason="the web tests need the web extra: pip install -e '.[web]'")

from click.testing import CliRunner
from fastapi.testclient import TestClient

from noteseek.cli.main import cli
from noteseek.web import security
from noteseek.web.app import create_app
from noteseek.web.pool import IndexPool
from noteseek.web.security import (
    Limits,
    UnsafeBindError,
    allowed_hosts,
    check_bind,
    host_name,
    is_loopback,
)

from .conftest import SAMPLE_VAULT
from .web_support import LOOPBACK_HOSTS, build_index, make_pool, serve

SECRET = "s3cret-token-value-0123456789"


@pytest.fixture(scope="module")
def pool(tmp_path_factory: pytest.TempPathFactory) -> Iterator[IndexPool]:
    db = build_index(SAMPLE_VAULT, tmp_path_factory.mktemp("websec") / "index.db")
    pool = make_pool(db, workers=1)
    yield pool
    pool.close()


def client(pool: IndexPool, **options: Any) -> TestClient:
    options.setdefault("hosts", LOOPBACK_HOSTS)
    return TestClient(create_app(pool, **options))


# -- where it listens ----------------------------------------------------------------------------


@pytest.mark.parametrize("host", ["127.0.0.1", "127.8.9.10", "localhost", "::1", "[::1]"])
def test_loopback_hosts_need_no_token(host: str) -> None:
    assert is_loopback(host)
    check_bind(host, None)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.5", "example.org", "my-laptop"])
def test_other_hosts_are_refused_without_a_token(host: str) -> None:
    with pytest.raises(UnsafeBindError, match="--token"):
        check_bind(host, None)
    check_bind(host, SECRET)  # with a token they are allowed
    with pytest.raises(UnsafeBindError, match="empty"):
        check_bind(host, "  ")


def test_the_command_refuses_a_public_host_before_opening_anything(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["web", "--host", "0.0.0.0", "--db", str(tmp_path / "x.db")])
    assert result.exit_code != 0
    assert "--token" in str(result.exception)
    assert not (tmp_path / "x.db").exists()


def test_the_command_names_a_missing_index(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["web", "--db", str(tmp_path / "none.db")])
    assert result.exit_code != 0 and "noteseek index" in str(result.exception)


def test_the_command_serves_loopback_port_8765_by_default(
    pool: IndexPool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import uvicorn

    seen: list[uvicorn.Config] = []
    monkeypatch.setattr(uvicorn.Server, "run", lambda self: seen.append(self.config))
    db = build_index(SAMPLE_VAULT, tmp_path / "index.db")
    result = CliRunner().invoke(cli, ["web", "--db", str(db), "--workers", "1"])
    assert result.exit_code == 0, result.output
    assert (seen[0].host, seen[0].port) == ("127.0.0.1", 8765)
    assert "http://127.0.0.1:8765/" in result.output
    result = CliRunner().invoke(
        cli, ["web", "--db", str(db), "--workers", "1", "--host", "0.0.0.0", "--token", SECRET]
    )
    assert result.exit_code == 0, result.output
    assert seen[1].host == "0.0.0.0" and SECRET not in result.output


# -- Host header (DNS rebinding) -----------------------------------------------------------------


def test_host_names_parse_with_ports_and_ipv6() -> None:
    assert host_name("127.0.0.1:8765") == "127.0.0.1"
    assert host_name("[::1]:8765") == "::1"
    assert host_name("LocalHost") == "localhost"
    assert allowed_hosts("0.0.0.0") == frozenset({"127.0.0.1", "localhost", "::1"})
    assert "nas.lan" in (allowed_hosts("nas.lan") or ())
    assert allowed_hosts("0.0.0.0", ["*"]) is None


def test_a_rebound_dns_name_is_refused(pool: IndexPool) -> None:
    app = create_app(pool)  # the default allow-list: loopback names only
    with serve(app) as base:
        ok = httpx.get(f"{base}/api/status")
        assert ok.status_code == 200
        for host in ["evil.example", "evil.example:8765", "127.0.0.1.evil.example", ""]:
            reply = httpx.get(f"{base}/api/status", headers={"Host": host})
            assert reply.status_code == 400, host
            assert reply.json()["error"].startswith("unknown Host header")
        page = httpx.get(f"{base}/", headers={"Host": "evil.example"})
        assert page.status_code == 400 and "<html" not in page.text
        assert httpx.get(f"{base}/api/status", headers={"Host": "localhost:1"}).status_code == 200


# -- the token ------------------------------------------------------------------------------------


def test_with_a_token_every_api_request_needs_it(pool: IndexPool) -> None:
    c = client(pool, token=SECRET)
    for path in ["/api/search?q=rebase", "/api/status", "/api/notes/Home.md", "/api/nope"]:
        assert c.get(path).status_code == 401, path
        denied = c.get(path, headers={"Authorization": f"Bearer {SECRET}x"})
        assert denied.status_code == 401 and denied.json()["error"].startswith("this server needs")
        assert denied.headers["www-authenticate"].startswith("Bearer")
        assert c.get(path, headers={"Authorization": f"Basic {SECRET}"}).status_code == 401
    good = {"Authorization": f"Bearer {SECRET}"}
    assert c.get("/api/search?q=rebase", headers=good).status_code == 200
    assert c.get("/api/status", headers={"Authorization": f"bearer {SECRET}"}).status_code == 200
    assert SECRET not in c.get("/api/status", headers=good).text  # never echoed
    # The page and the schema hold no notes; the page asks for the token itself.
    assert c.get("/").status_code == 200 and c.get("/openapi.json").status_code == 200


def test_the_token_is_compared_in_constant_time(
    pool: IndexPool, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[bytes, bytes]] = []
    real = hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(security.hmac, "compare_digest", spy)
    c = client(pool, token=SECRET)
    assert c.get("/api/status", headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert c.get("/api/status", headers={"Authorization": f"Bearer {SECRET}"}).status_code == 200
    assert calls == [(b"wrong", SECRET.encode()), (SECRET.encode(), SECRET.encode())]


# -- CORS ------------------------------------------------------------------------------------------


def test_cors_is_off_by_default(pool: IndexPool) -> None:
    c = client(pool)
    reply = c.get("/api/status", headers={"Origin": "https://evil.example"})
    assert "access-control-allow-origin" not in reply.headers
    preflight = c.options(
        "/api/search",
        headers={"Origin": "app://obsidian.md", "Access-Control-Request-Method": "GET"},
    )
    assert "access-control-allow-origin" not in preflight.headers


def test_cors_allows_only_the_listed_origins(pool: IndexPool) -> None:
    c = client(pool, cors_origins=["app://obsidian.md"], token=SECRET)
    preflight = c.options(
        "/api/search",
        headers={
            "Origin": "app://obsidian.md",
            "Access-Control-Request-Method": "GET",
            "Access-Control-Request-Headers": "authorization",
        },
    )
    assert preflight.status_code == 200  # answered before the token check
    assert preflight.headers["access-control-allow-origin"] == "app://obsidian.md"
    assert "authorization" in preflight.headers["access-control-allow-headers"].lower()
    auth = {"Authorization": f"Bearer {SECRET}"}
    ok = c.get("/api/status", headers={"Origin": "app://obsidian.md", **auth})
    assert ok.headers["access-control-allow-origin"] == "app://obsidian.md"
    other = c.get("/api/status", headers={"Origin": "https://evil.example", **auth})
    assert "access-control-allow-origin" not in other.headers
    bad = c.options(
        "/api/search",
        headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "GET"},
    )
    assert bad.status_code == 400 and "access-control-allow-origin" not in bad.headers


# -- limits ---------------------------------------------------------------------------------------


def test_bodies_and_long_urls_are_refused(pool: IndexPool) -> None:
    c = client(pool, limits=Limits(max_body_bytes=1024, max_url_bytes=2048))
    big = c.request("GET", "/api/status", content=b"x" * 2000)
    assert big.status_code == 413 and big.json()["error"]
    assert c.request("GET", "/api/status", content=b"x" * 100).status_code == 200
    chunked = c.request("GET", "/api/status", content=iter([b"x" * 10]))
    assert chunked.status_code == 411
    assert c.get("/api/search", params={"q": "a" * 3000}).status_code == 414
    assert c.get("/api/status", headers={"Content-Length": "many"}).status_code == 400


def test_a_slow_request_gets_503_and_the_server_keeps_answering(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from noteseek import Index

    db = build_index(SAMPLE_VAULT, tmp_path / "index.db")
    slow = make_pool(db, workers=1, timeout=0.3)
    release = threading.Event()
    original = Index.run_search
    try:
        c = client(slow)

        def stuck(self: Any, request: Any) -> Any:
            release.wait(10)
            raise AssertionError("unreachable: its reply was already sent")

        monkeypatch.setattr(Index, "run_search", stuck)
        try:
            reply = c.get("/api/search?q=rebase")
        finally:
            monkeypatch.setattr(Index, "run_search", original)
            release.set()
        assert reply.status_code == 503 and "longer than 0.3 s" in reply.json()["error"]
        assert c.get("/api/search?q=rebase").status_code == 200
    finally:
        slow.close()


def test_every_reply_carries_the_security_headers(pool: IndexPool) -> None:
    c = client(pool)
    for path in ["/", "/api/status", "/api/nope", "/static/app.js"]:
        headers = c.get(path).headers
        assert headers["x-content-type-options"] == "nosniff", path
        assert headers["referrer-policy"] == "no-referrer"
    csp = c.get("/").headers["content-security-policy"]
    assert "script-src 'self'" in csp and "default-src 'none'" in csp
    assert "unsafe-inline" not in csp
