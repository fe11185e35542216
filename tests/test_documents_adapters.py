"""Document locations through the adapters: MCP search and get_note(page=/slide=/sheet=), the web
API's hits and /api/notes parameters, and the daemon's JSON (the same `Hit.to_json`)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from noteseek import Index
from noteseek.core.budget import estimate_tokens

from .conftest import note
from .documents_samples import sample

mcp = pytest.importorskip("mcp")
from mcp import Client  # noqa: E402

from noteseek.mcp.server import VaultService, build_server, format_note  # noqa: E402

from .test_mcp_server import run, text_of  # noqa: E402


@pytest.fixture(scope="module")
def docs_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("docadapters")
    vault = base / "vault"
    (vault / "docs").mkdir(parents=True)
    for name in ("Seige_of_Vicksburg_Sample_OCR.pdf", "tbl-cell.pptx", "datasets.xlsx"):
        shutil.copy(sample(name), vault / "docs" / name)
    (vault / "rebase.md").write_text(note("Rebase", ("Undo", "git reset --hard ORIG_HEAD")))
    db = base / "docs.db"
    with Index(db) as idx:  # the bundled model, which the adapters open the index with
        idx.update(vault)
    return db


def test_mcp_search_names_the_page_and_get_note_returns_it(docs_db: Path) -> None:
    service = VaultService(db=str(docs_db))

    async def body(client: Client) -> None:
        found = await client.call_tool("search", {"query": "yoke of oxen", "mode": "bm25"})
        assert "1. docs/Seige_of_Vicksburg_Sample_OCR.pdf › p. 4" in text_of(found)
        page = await client.call_tool(
            "get_note", {"path": "docs/Seige_of_Vicksburg_Sample_OCR.pdf", "page": 4}
        )
        reply = text_of(page)
        assert not page.is_error and reply.startswith(
            "docs/Seige_of_Vicksburg_Sample_OCR.pdf › p. 4"
        )
        assert "yoke of oxen" in reply and "rebel prisoners" not in reply
        slide = await client.call_tool("get_note", {"path": "docs/tbl-cell.pptx", "slide": 3})
        assert "a | b | c" in text_of(slide) and "merged cell" not in text_of(slide)
        sheet = await client.call_tool("get_note", {"path": "docs/datasets.xlsx", "sheet": "iris"})
        assert "Sepal.Length" in text_of(sheet) and "chickwts" not in text_of(sheet)
        missing = await client.call_tool("get_note", {"path": "docs/tbl-cell.pptx", "slide": 9})
        assert missing.is_error and "slide 1; slide 2; slide 3" in text_of(missing)
        bad = await client.call_tool("get_note", {"path": "docs/tbl-cell.pptx", "slide": 0})
        assert bad.is_error

    run(Client(build_server(service), mode="legacy"), body)
    service.close()


def test_a_long_document_is_cut_with_its_pages_listed(docs_db: Path) -> None:
    with Index(docs_db) as idx:
        whole = idx.read_note("docs/datasets.xlsx")
    reply = format_note(whole, max_tokens=400)
    assert estimate_tokens(reply) <= 400
    assert 'get_note(path="docs/datasets.xlsx", sheet="…")' in reply
    assert "Parts: sheet iris; sheet mtcars; sheet chickwts; sheet quakes." in reply


web = pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

from noteseek.web.app import create_app  # noqa: E402

from .web_support import LOOPBACK_HOSTS, make_pool  # noqa: E402


@pytest.fixture(scope="module")
def client(docs_db: Path) -> Iterator[TestClient]:
    pool = make_pool(docs_db)
    yield TestClient(create_app(pool, hosts=LOOPBACK_HOSTS))
    pool.close()


def _json(client: TestClient, path: str, **params: Any) -> Any:
    reply = client.get(path, params=params)
    return reply.status_code, reply.json()


def test_web_hits_carry_the_location_and_notes_take_a_page(client: TestClient) -> None:
    status, body = _json(client, "/api/search", q="chickwts meatmeal", mode="bm25", limit=3)
    assert status == 200
    first = body["hits"][0]
    assert (first["path"], first["sheet"], first["page"]) == (
        "docs/datasets.xlsx",
        "chickwts",
        None,
    )
    assert first["rows"] == [42, 61]
    hits = _json(client, "/api/search", q="rebase intro paragraph", mode="bm25")[1]["hits"]
    note_hit = next(h for h in hits if h["path"] == "rebase.md")
    assert {
        k: note_hit[k] for k in ("page", "page_label", "slide", "sheet", "rows")
    } == dict.fromkeys(("page", "page_label", "slide", "sheet", "rows"))
    status, page = _json(client, "/api/notes/docs/Seige_of_Vicksburg_Sample_OCR.pdf", page=6)
    assert status == 200 and page["kind"] == "pdf" and page["page"] == 6
    assert "rebel prisoners" in page["text"] and page["locations"][-1] == "p. 6"
    status, missing = _json(client, "/api/notes/docs/datasets.xlsx", sheet="nope")
    assert status == 404 and missing["sections"] == [
        "sheet iris",
        "sheet mtcars",
        "sheet chickwts",
        "sheet quakes",
    ]
    assert _json(client, "/api/notes/docs/tbl-cell.pptx", slide=0)[0] == 422
    status, note_reply = _json(client, "/api/notes/rebase.md")
    assert status == 200 and note_reply["kind"] is None and note_reply["locations"] == []
