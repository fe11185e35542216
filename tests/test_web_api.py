"""The web API in-process (FastAPI's TestClient, real index, bundled model): fields, filters,
note access and path safety, errors as JSON, and the OpenAPI schema."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the web tests need the web extra: pip install -e '.[web]'")

from click.testing import CliRunner
from fastapi.testclient import TestClient

from noteseek import SEARCH_LIMITS
from noteseek.cli.main import cli
from noteseek.web.app import create_app
from noteseek.web.pool import IndexPool

from .conftest import note
from .web_support import LOOPBACK_HOSTS, build_index, make_pool

TOKEN = "ghp_nSZwgNsFYrSj0Qf7Jn6elSZmGO0BOgztoKsm"  # a GitHub token shape the scrubber knows

NOTES = {
    "work/rebase.md": note(
        "Rebase recipes",
        ("Undo a rebase", "Use the reflog and git reset --hard ORIG_HEAD to undo a rebase."),
        ("Squash commits", "Interactive rebase with fixup commits squashes history."),
        tags="git, work",
    ),
    "work/deploy.md": note(
        "Deploy",
        ("Credentials", f"The deploy uses GITHUB_TOKEN={TOKEN} for rebase checks."),
        tags="work",
    ),
    "home/garden.md": note(
        "Garden", ("Tomatoes", "Tomatoes need sun; rebase the raised bed on gravel."), tags="home"
    ),
    "home/deep/bread.md": note("Bread", ("Sourdough", "Feed the starter before you rebase dough.")),
    "top.md": note("Top note", ("Rebase at the top", "A rebase note at the vault's root folder.")),
}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, Path, Path]]:
    base = tmp_path_factory.mktemp("webapi")
    vault = base / "vault"
    for rel, text in NOTES.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
    outside = base / "outside.md"
    outside.write_text(note("Outside", ("Private", "Outside the vault: never served.")))
    db = build_index(vault, base / "index.db")
    # Created after indexing, so the index holds the note; then it is swapped for a symlink
    # that leads out of the vault.
    (vault / "work" / "escape.md").write_text(
        note("Escape", ("X", "an indexed note, later swapped"))
    )
    build_index(vault, db)
    (vault / "work" / "escape.md").unlink()
    os.symlink(outside, vault / "work" / "escape.md")
    pool = make_pool(db)
    client = TestClient(create_app(pool, hosts=LOOPBACK_HOSTS))
    yield client, vault, db
    pool.close()


def get(client: TestClient, path: str, **params: Any) -> Any:
    reply = client.get(path, params=params)
    assert reply.headers["content-type"].startswith("application/json")
    return reply


def test_search_hits_have_the_fields_and_values_of_search_json(served: Any) -> None:
    client, _, db = served
    reply = get(client, "/api/search", q="undo a rebase", limit=4, explain="true")
    assert reply.status_code == 200
    printed = CliRunner().invoke(
        cli, ["search", "undo a rebase", "--db", str(db), "-n", "4", "--json", "--explain"]
    )
    assert printed.exit_code == 0, printed.output
    assert reply.json() == json.loads(printed.output)
    assert reply.json()["hits"][0]["path"] == "work/rebase.md"
    assert "explanation" in reply.json()["hits"][0]
    timing = dict(p.strip().split(";dur=") for p in reply.headers["server-timing"].split(","))
    assert set(timing) == {"queue", "search", "json"} and float(timing["search"]) > 0


def test_status_and_context_match_their_cli_json(served: Any) -> None:
    client, _, db = served
    status = CliRunner().invoke(cli, ["status", "--db", str(db), "--json"])
    assert get(client, "/api/status").json() == json.loads(status.output)
    context = CliRunner().invoke(
        cli, ["context", "undo a rebase with reflog", "--db", str(db), "--json"]
    )
    reply = get(client, "/api/context", q="undo a rebase with reflog").json()
    assert reply == json.loads(context.output)
    assert reply["reason"]  # the gate's decision is always given
    ungated = get(client, "/api/context", q="tomatoes", gate="false").json()
    assert ungated["reason"] == "gate off" and "## Relevant Memory Context" in ungated["text"]


def test_folder_tag_and_file_filters_repeat_and_combine(served: Any) -> None:
    client, _, _ = served

    def paths(**params: Any) -> set[str]:
        reply = get(client, "/api/search", q="rebase", limit=50, mode="bm25", **params)
        assert reply.status_code == 200, reply.text
        return {h["path"] for h in reply.json()["hits"]}

    everything = paths()
    assert {"work/rebase.md", "home/garden.md", "home/deep/bread.md", "top.md"} <= everything
    assert paths(folder="home") == {"home/garden.md", "home/deep/bread.md"}
    assert paths(folder=["home/deep", "work"]) == {
        "home/deep/bread.md",
        "work/rebase.md",
        "work/deploy.md",
    }
    assert paths(tag="work") == {"work/rebase.md", "work/deploy.md"}
    assert paths(tag=["work", "git"]) == {"work/rebase.md"}
    assert paths(file="home/garden.md") == {"home/garden.md"}
    assert paths(file=["top.md", "./home//deep/bread"]) == {"top.md", "home/deep/bread.md"}
    assert paths(file="home/garden.md", folder="work") == set()  # both must hold
    assert paths(file="home/garden.md", tag="home") == {"home/garden.md"}
    assert paths(file="no/such.md") == set()


def test_file_filter_keeps_the_token_budget(served: Any) -> None:
    client, _, _ = served
    files = ["top.md", "work/rebase.md"]
    both = get(client, "/api/search", q="rebase", file=files).json()["hits"]
    assert len(both) == 2
    first = -(-len(both[0]["text"]) // 4)  # its tokens at 4 characters each
    kept = get(client, "/api/search", q="rebase", file=files, max_tokens=first).json()["hits"]
    assert kept == both[:1]  # whole hits, best first, within the budget


def test_a_note_is_served_scrubbed_whole_or_by_section(served: Any) -> None:
    client, _, _ = served
    whole = get(client, "/api/notes/work/deploy.md").json()
    assert TOKEN not in whole["text"] and "[REDACTED:" in whole["text"] and whole["redacted"] == 1
    assert whole["sections"] == ["Deploy", "Credentials"]
    part = get(client, "/api/notes/work/rebase.md", section="Squash commits").json()
    assert (
        part["section"] == "Squash commits"
        and "fixup" in part["text"]
        and "reflog" not in part["text"]
    )
    missing = get(client, "/api/notes/work/rebase.md", section="Nope")
    assert missing.status_code == 404 and "Undo a rebase" in missing.json()["sections"]


@pytest.mark.parametrize(
    "raw",
    [
        "/api/notes/..%2f..%2fetc%2fpasswd",
        "/api/notes/%2e%2e/%2e%2e/etc/passwd",
        "/api/notes/work/%2e%2e/%2e%2e/outside.md",
        "/api/notes/%252e%252e%252foutside.md",  # double-encoded: a literal name, not indexed
        "/api/notes/%2Fetc%2Fpasswd",
        "/api/notes//etc/passwd",
        "/api/notes/C:%5CWindows%5Cwin.ini",
        "/api/notes/work%5C..%5C..%5Coutside.md",
        "/api/notes/~/.ssh/id_rsa",
        "/api/notes/work/rebase.md%00.txt",
        "/api/notes/work/escape.md",  # indexed, but now a symlink out of the vault
        "/api/notes/outside.md",
        "/api/notes/work",
        "/api/notes/.obsidian/workspace.json",
    ],
)
def test_unsafe_or_unindexed_note_paths_are_404_json(served: Any, raw: str) -> None:
    client, _, _ = served
    reply = client.get(raw)
    assert reply.status_code == 404, reply.text
    assert reply.headers["content-type"].startswith("application/json")
    assert "Outside the vault" not in reply.text and "root:" not in reply.text
    assert reply.json()["error"]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({}, "q"),
        ({"q": ""}, "q"),
        ({"q": "x" * 10_001}, "q"),
        ({"q": "x", "limit": 0}, "limit"),
        ({"q": "x", "limit": "ten"}, "limit"),
        ({"q": "x", "mode": "fuzzy"}, "mode"),
        ({"q": "x", "max_tokens": -1}, "max_tokens"),
        ({"q": "x", "explain": "maybe"}, "explain"),
        # The library's one table of search limits (engine/search/request.py), declared in the schema.
        ({"q": "x", "limit": SEARCH_LIMITS.limit + 1}, "limit"),
        ({"q": "x", "folder": ["f"] * (SEARCH_LIMITS.folders + 1)}, "folder"),
        ({"q": "x", "tag": ["t"] * (SEARCH_LIMITS.tags + 1)}, "tag"),
        ({"q": "x", "tag": "t" * (SEARCH_LIMITS.filter_chars + 1)}, "tag"),
        ({"q": "x", "file": "f" * (SEARCH_LIMITS.filter_chars + 1)}, "file"),
    ],
)
def test_bad_parameters_are_422_json_naming_the_parameter(
    served: Any, params: dict[str, Any], field: str
) -> None:
    client, _, _ = served
    reply = get(client, "/api/search", **params)
    assert reply.status_code == 422
    assert field in reply.json()["error"]


def test_any_query_text_is_searched(served: Any) -> None:
    client, _, _ = served
    for text in [
        '"unbalanced',
        "NEAR(a b)",
        "col:x",
        "-Math.floor",
        "§3 Absatz 2",
        "🙂",
        "\x01",
        "a" * 10_000,
    ]:
        assert get(client, "/api/search", q=text).status_code == 200


def test_unknown_endpoints_and_methods_are_json(served: Any) -> None:
    client, _, _ = served
    assert client.get("/api/nope").status_code == 404
    assert client.get("/api/nope").json()["error"]
    post = client.post("/api/search?q=x")
    assert post.status_code == 405 and post.json()["error"] and post.headers["allow"] == "GET"


def test_an_internal_error_is_json_without_a_traceback(
    served: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    client, _, _ = served

    def broken(self: Any, request: Any) -> Any:
        raise RuntimeError("secret internals /home/me/private")

    monkeypatch.setattr("noteseek.Index.run_search", broken)
    reply = TestClient(client.app, raise_server_exceptions=False).get("/api/search?q=x")
    assert reply.status_code == 500
    assert reply.json() == {
        "error": "internal error (RuntimeError); the server is still running, see its log"
    }
    assert "Traceback" not in reply.text and "private" not in reply.text
    # Answered inside the guard, so with the headers every reply carries, each once.
    headers = reply.headers.multi_items()
    for name in ("cache-control", "x-content-type-options", "referrer-policy", "x-frame-options"):
        assert len([v for k, v in headers if k == name]) == 1, (name, headers)
    assert reply.headers["cache-control"] == "no-store"


def test_openapi_schema_documents_every_endpoint(served: Any) -> None:
    client, _, _ = served
    schema = get(client, "/openapi.json").json()
    assert set(schema["paths"]) == {
        "/api/search",
        "/api/context",
        "/api/notes/{path}",
        "/api/status",
        "/api/folders",
        "/api/tags",
        "/api/links/{path}",
        "/api/related/{path}",
    }
    params = {p["name"] for p in schema["paths"]["/api/search"]["get"]["parameters"]}
    assert params == {
        "q", "limit", "mode", "folder", "tag", "file", "max_tokens", "explain",
        "since", "until", "sort", "time_parse", "all",
    }  # fmt: skip
    assert client.get("/docs").status_code == 404  # Swagger UI would load from a CDN


def test_folders_lists_every_folder_with_its_notes(served: Any) -> None:
    client, _, _ = served
    body = get(client, "/api/folders").json()
    assert body["vault_name"] == "vault"
    assert {f["path"]: f["notes"] for f in body["folders"]} == {
        "home": 2,
        "home/deep": 1,
        "work": 3,
    }


def test_tags_lists_every_tag_and_parent_with_its_notes(served: Any) -> None:
    client, _, _ = served
    body = get(client, "/api/tags").json()
    assert {t["tag"]: t["notes"] for t in body["tags"]} == {"git": 1, "home": 1, "work": 2}
    for tag in body["tags"]:  # each count is what the tag filter keeps
        reply = get(client, "/api/search", q="rebase garden deploy", tag=tag["tag"], limit=50)
        assert len(reply.json()["hits"]) == tag["notes"], tag


def test_one_index_per_worker_thread(served: Any) -> None:
    client, _, _ = served
    for _ in range(20):
        get(client, "/api/search", q="rebase")
    pool: IndexPool = client.app.state.pool  # type: ignore[attr-defined]
    assert pool.opened == pool.workers == 2  # warm() opened both; requests opened no more


def test_a_symlink_swapped_in_for_an_indexed_note_is_refused_as_a_symlink(served: Any) -> None:
    client, vault, _ = served
    assert (vault / "work" / "escape.md").is_symlink()
    reply = client.get("/api/notes/work/escape.md")
    assert reply.status_code == 404 and "symlink" in reply.json()["error"]
    assert "never served" not in reply.text


def test_search_dates_filter_and_report_the_range(served: Any) -> None:
    """Every note here was written just now (dated by its mtime): a recent range keeps them, an
    old one is an empty answer, a phrase in q becomes the range, a bad date is a 422."""
    from datetime import date, timedelta

    client, _, _ = served
    recent = get(client, "/api/search", q="rebase", since="7d").json()
    assert recent["hits"] and recent["time_range"]["phrase"] == ""
    week_ago = (date.today() - timedelta(days=7)).isoformat()
    assert recent["time_range"]["since"] == week_ago
    for hit in recent["hits"]:
        assert hit["date_source"] == "mtime" and hit["date"][:10] >= week_ago
    old = get(client, "/api/search", q="rebase", since="2000-01-01", until="2000-12-31")
    assert old.status_code == 200 and old.json()["hits"] == []
    phrase = get(client, "/api/search", q="rebase yesterday").json()
    assert phrase["searched"] == "rebase" and phrase["hits"] == []
    assert phrase["time_range"]["phrase"] == "yesterday"
    words = get(client, "/api/search", q="rebase yesterday", time_parse="false").json()
    assert words["time_range"] is None and words["hits"]
    newest = get(client, "/api/search", q="rebase", sort="date").json()["hits"]
    assert [h["date"] for h in newest] == sorted((h["date"] for h in newest), reverse=True)
    bad = get(client, "/api/search", q="rebase", since="whenever")
    assert bad.status_code == 422
    assert "'whenever' is not a date" in bad.json()["error"]
    assert "Traceback" not in bad.text


def test_a_request_the_library_refuses_is_a_422_naming_the_parameter(
    served: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the library's own limits (here a tighter table than the schema declares) the
    SearchRequestError becomes the same JSON 422 as a schema violation, never a 500."""
    from noteseek.engine.search import request

    monkeypatch.setattr(request, "SEARCH_LIMITS", request.SearchLimits(folders=1))
    client, _, _ = served
    reply = get(client, "/api/search", q="rebase", folder=["work", "home"])
    assert reply.status_code == 422
    body = reply.json()
    assert body["error"].startswith("bad parameter: folder: at most 1 folders per search")
    assert body["detail"] == [
        {"loc": ["query", "folder"], "msg": body["error"][len("bad parameter: folder: ") :]}
    ]
