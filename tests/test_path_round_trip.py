"""A path search returns reads back exactly: a name with surrounding spaces, a folder named `a\\b`
(a legal name on Linux and macOS) beside a folder `a/b`. Through the CLI, the web API over HTTP
and the MCP server over stdio."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import anyio
import pytest

from noteseek import Index

from .web_support import LOOPBACK_HOSTS, make_pool, serve

NOTES = {
    " leading space.md": "# Leading\n\nA note whose name starts with a space, about walruses.\n",
    "trailing space .md": "# Trailing\n\nA note whose name ends with a space, about walruses.\n",
    "a\\b/x.md": "# Backslash\n\nA note in a folder named a-backslash-b, about walruses.\n",
    "a/b/y.md": "# Slash\n\nA note in the folder a/b, about walruses.\n",
}


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("roundtrip")
    vault = root / "vault"
    for rel, text in NOTES.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
    db = root / "i.db"
    with Index(db) as idx:
        idx.update(vault)
        assert sorted(idx.note_paths()) == sorted(NOTES)
    return db


def cli(db: Path, *args: str) -> Any:
    result = subprocess.run(
        [sys.executable, "-m", "noteseek", "search", "walruses", "--db", str(db), "--json", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    return sorted(hit["path"] for hit in json.loads(result.stdout)["hits"])


def test_the_cli_filters_by_the_names_search_returns(indexed: Path) -> None:
    assert cli(indexed) == sorted(NOTES)
    assert cli(indexed, "--folder", "a\\b") == ["a\\b/x.md"]  # the folder named so, not a/b
    assert cli(indexed, "--folder", "a/b") == ["a/b/y.md"]
    assert cli(indexed, "--file", " leading space.md") == [" leading space.md"]
    assert cli(indexed, "--file", "trailing space ") == ["trailing space .md"]
    assert cli(indexed, "--file", "a\\b/x") == ["a\\b/x.md"]
    # A Windows spelling of a folder no name has a backslash in still finds it.
    assert cli(indexed, "--file", "a\\b\\y.md") == ["a/b/y.md"]


def test_the_web_api_reads_every_path_its_search_returns(indexed: Path) -> None:
    from noteseek.web.app import create_app

    pool = make_pool(indexed)
    try:
        with serve(create_app(pool, hosts=LOOPBACK_HOSTS)) as base:

            def fetch(path: str) -> tuple[int, Any]:
                try:
                    with urllib.request.urlopen(base + path, timeout=60) as reply:
                        return reply.status, json.load(reply)
                except urllib.error.HTTPError as exc:
                    return exc.code, json.load(exc)

            status, found = fetch("/api/search?q=walruses&limit=10")
            assert status == 200
            paths = [hit["path"] for hit in found["hits"]]
            assert sorted(paths) == sorted(NOTES)
            for path in paths:
                status, note = fetch("/api/notes/" + urllib.parse.quote(path))
                assert status == 200, (path, note)
                assert note["path"] == path and "walruses" in note["text"]
            status, scoped = fetch("/api/search?q=walruses&folder=" + urllib.parse.quote("a\\b"))
            assert [hit["path"] for hit in scoped["hits"]] == ["a\\b/x.md"]
            status, missing = fetch("/api/notes/" + urllib.parse.quote("leading space.md"))
            assert status == 404 and "not an indexed note" in missing["error"]
    finally:
        pool.close()


def test_the_mcp_server_reads_every_path_its_search_returns(indexed: Path, tmp_path: Path) -> None:
    mcp = pytest.importorskip("mcp")
    params = mcp.StdioServerParameters(
        command=sys.executable,
        args=["-m", "noteseek", "mcp", "--db", str(indexed)],
        cwd=str(tmp_path),
        # Every hit: this is about paths, not the relevance thresholds (the SDK starts the server
        # with a minimal environment of its own).
        env={**os.environ, "NOTESEEK_MIN_SCORE": "0", "NOTESEEK_MIN_ANSWER": "0"},
    )

    def text(result: Any) -> str:
        return "\n".join(block.text for block in result.content)

    async def main() -> dict[str, Any]:
        async with mcp.Client(params, mode="legacy") as client:
            notes = {}
            for path in NOTES:
                notes[path] = await client.call_tool("get_note", {"path": path})
            scoped = await client.call_tool("search", {"query": "walruses", "folders": ["a\\b"]})
            return {"notes": notes, "scoped": scoped}

    replies = anyio.run(main)
    for path, reply in replies["notes"].items():
        assert not reply.is_error, (path, text(reply))
        assert text(reply).startswith(path) and "walruses" in text(reply)
    scoped = text(replies["scoped"])
    assert "a\\b/x.md" in scoped and "a/b/y.md" not in scoped
