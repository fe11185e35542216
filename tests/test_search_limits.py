"""One table of search limits (SEARCH_LIMITS) in the one request constructor: filters are
normalised, anything past a limit is a SearchRequestError naming the option, and every adapter
turns it into its own clean reply. 1,500 filters answer or fail cleanly on both backends, through
the library, the CLI and the MCP server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

import noteseek
from noteseek import SEARCH_LIMITS, SearchRequest, SearchRequestError

from .backends import Backend
from .conftest import FakeEmbedder, WriteNotes, note

NOTES = {
    "work/alpha.md": note("Alpha", ("Plan", "the alpha deploy plan"), tags="work, project/alpha"),
    "work/beta.md": note("Beta", ("Plan", "the beta deploy plan"), tags="work"),
    "home/bread.md": note("Bread", ("Dough", "a deploy of dough into the oven")),
}


def test_the_request_normalises_filters() -> None:
    request = SearchRequest(
        "x",
        folders=["work", "work", "home"],
        tags=(),
        files=iter(["a.md"]),  # type: ignore[arg-type]
    )
    assert request.folders == ("work", "home")  # order kept, repeats dropped
    assert request.tags is None  # an empty list is no filter
    assert request.files == ("a.md",)
    assert SearchRequest("x", folders="work").folders == ("work",)  # one value, not its letters
    assert hash(request)  # still a frozen, hashable value


@pytest.mark.parametrize(
    ("options", "option", "words"),
    [
        ({"folders": [f"f{i}" for i in range(1_500)]}, "folders", "at most 1,000 folders"),
        ({"tags": [f"t{i}" for i in range(1_001)]}, "tags", "at most 1,000 tags"),
        ({"files": [f"{i}.md" for i in range(10_001)]}, "files", "at most 10,000 files"),
        ({"folders": ["x" * 4_097]}, "folders", "4,097 characters"),
        ({"tags": [3]}, "tags", "must be strings"),
        ({"files": 3}, "files", "must be a list of strings"),
        ({"folders": {"a": 1}}, "folders", "must be a list of strings"),
        ({"limit": 0}, "limit", "between 1 and 1,000"),
        ({"limit": 1_001}, "limit", "between 1 and 1,000"),
        ({"limit": True}, "limit", "whole number"),
        ({"max_tokens": 1_000_001}, "max_tokens", "between 1 and 1,000,000"),
        ({"mode": "fuzzy"}, "mode", "mode must be one of"),
    ],
)
def test_the_request_refuses_past_the_limits_naming_the_option(
    options: dict[str, Any], option: str, words: str
) -> None:
    with pytest.raises(SearchRequestError, match=words) as caught:
        SearchRequest("x", **options)
    assert caught.value.option == option
    assert isinstance(caught.value, ValueError)  # as the request's checks always were
    assert len(str(caught.value)) < 200  # never an echo of the values


def test_a_long_query_is_refused_without_echoing_it() -> None:
    with pytest.raises(SearchRequestError) as caught:
        SearchRequest("q" * (SEARCH_LIMITS.query_chars + 1))
    assert caught.value.option == "query" and "10,001 characters" in str(caught.value)
    assert "qqqq" not in str(caught.value)


def test_many_filters_answer_through_the_index_on_both_backends(
    backend: Backend, make_vault: WriteNotes
) -> None:
    vault = make_vault(dict(NOTES))
    with noteseek.Index(backend.locator, embedder=FakeEmbedder()) as idx:
        idx.update(vault)
        many = [f"nowhere/{i}" for i in range(SEARCH_LIMITS.folders - 1)]
        hits = idx.search("deploy plan", folders=[*many, "work"], limit=10)
        assert {h.path for h in hits} == {"work/alpha.md", "work/beta.md"}
        tags = idx.search("deploy", tags=["work", "project"], limit=10)
        assert [h.path for h in tags] == ["work/alpha.md"]
        assert idx.search("deploy", tags=[*many[:999], "work"], limit=10) == []
        files = [f"missing/{i}.md" for i in range(5_000)] + ["home/bread"]
        assert [h.path for h in idx.search("deploy", files=files, limit=10)] == ["home/bread.md"]
        with pytest.raises(SearchRequestError, match="at most 1,000 tags"):
            idx.search("deploy", tags=[f"t{i}" for i in range(1_500)])


# -- through the adapters ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("limits")
    vault = root / "vault"
    for rel, text in NOTES.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
    db = root / "i.db"
    with noteseek.Index(db) as idx:  # the bundled model: the CLI and MCP server open it so
        idx.update(vault)
    return db


def cli(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "noteseek", "search", "deploy plan", "--db", str(db), *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_cli_answers_1000_folders_and_refuses_1500_with_exit_2(indexed: Path) -> None:
    folders = [arg for i in range(999) for arg in ("--folder", f"nowhere/{i}")]
    ok = cli(indexed, *folders, "--folder", "work", "--json")
    assert ok.returncode == 0, ok.stderr
    assert '"work/alpha.md"' in ok.stdout and "home/bread.md" not in ok.stdout
    for flag, count, words in (("--folder", 1_500, "folders"), ("--tag", 1_500, "tags")):
        args = [arg for i in range(count) for arg in (flag, f"v{i}")]
        refused = cli(indexed, *args)
        assert refused.returncode == 2, refused.stderr
        assert f"Invalid value for '{flag}': at most 1,000 {words} per search" in refused.stderr
        assert "Traceback" not in refused.stderr and refused.stdout == ""
    long_query = subprocess.run(
        [sys.executable, "-m", "noteseek", "search", "q" * 10_001, "--db", str(indexed)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert long_query.returncode == 2 and "Invalid value for QUERY" in long_query.stderr


def test_the_mcp_server_answers_1000_folders_and_refuses_1500_as_a_tool_error(
    indexed: Path, tmp_path: Path
) -> None:
    mcp = pytest.importorskip("mcp")
    params = mcp.StdioServerParameters(
        command=sys.executable,
        args=["-m", "noteseek", "mcp", "--db", str(indexed)],
        cwd=str(tmp_path),
        # Every hit: this is about the filter limits, not the relevance thresholds (the SDK
        # starts the server with a minimal environment of its own).
        env={**os.environ, "NOTESEEK_MIN_SCORE": "0", "NOTESEEK_MIN_ANSWER": "0"},
    )

    async def main() -> dict[str, Any]:
        async with mcp.Client(params, mode="legacy") as client:
            many = [f"nowhere/{i}" for i in range(999)]
            return {
                "ok": await client.call_tool(
                    "search", {"query": "deploy plan", "folders": [*many, "work"]}
                ),
                "folders": await client.call_tool(
                    "search", {"query": "deploy", "folders": [f"f{i}" for i in range(1_500)]}
                ),
                "tags": await client.call_tool(
                    "search", {"query": "deploy", "tags": [f"t{i}" for i in range(1_500)]}
                ),
                "after": await client.call_tool("search", {"query": "deploy plan"}),
            }

    replies = anyio.run(main)

    def text(name: str) -> str:
        return "\n".join(block.text for block in replies[name].content)

    assert not replies["ok"].is_error and "work/alpha.md" in text("ok")
    assert "home/bread.md" not in text("ok")
    for name in ("folders", "tags"):
        assert replies[name].is_error
        assert f"at most 1,000 {name} per search" in text(name)
        assert "unexpectedly" not in text(name) and len(text(name)) < 400
    assert not replies["after"].is_error  # the server keeps answering
