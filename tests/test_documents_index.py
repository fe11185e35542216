"""Documents through the real indexer and search: known items on a page, slide, sheet or row range
come back with that location; every hostile file ends with a named reason while everything else
stays searchable; reading one page, slide or sheet back; filters; the CLI's and JSON's views.

One vault (the committed real samples, the generated hostile files and a few notes) is indexed
once with the bundled model; the tests read that index.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from noteseek import DatabaseUrl, Index
from noteseek.errors import SectionNotFoundError

from .backends import pg_locator
from .conftest import REPO, note
from .documents_samples import SAMPLES, write_hostile

# (query, document, where it is), each checked by hand against the sample's text.
KNOWN_ITEMS = [
    ("ten yoke of oxen to haul the guns", "docs/Seige_of_Vicksburg_Sample_OCR.pdf", {"page": 4}),
    ("detailed to guard rebel prisoners", "docs/Seige_of_Vicksburg_Sample_OCR.pdf", {"page": 6}),
    ("expect to be paid off soon pay-roll", "docs/Seige_of_Vicksburg_Sample_OCR.pdf", {"page": 2}),
    ("Привет, мир", "docs/multilang.pdf", {"page": 1}),
    ("merged cell", "docs/tbl-cell.pptx", {"slide": 2}),
    ("Group test text Box 1 Box 2", "docs/test_slides.pptx", {"slide": 1}),
    ("chickwts meatmeal weight", "docs/datasets.xlsx", {"sheet": "chickwts", "rows": [42, 61]}),
    ("Vera Rubin scientist", "docs/deaths.xls", {"sheet": "other"}),
    ("David Bowie musician", "docs/deaths.xls", {"sheet": "arts"}),
]
HOSTILE_OUTCOMES = {
    "truncated.pdf": "corrupt",
    "html-named.pdf": "corrupt",
    "empty.pdf": "corrupt",
    "empty.xlsx": "corrupt",
    "zip-named.docx": "corrupt",
    "zip-bomb.xlsx": "too large",
    "binary.csv": "corrupt",
    "bad.canvas": "corrupt",
    "deep.html": "too large",
    "far-cell.ods": "too large",
}
SAMPLE_OUTCOMES = {
    "encrypted-file.pdf": "encrypted",
    "r6-user-password.pdf": "encrypted",
    "calamine-password.xlsx": "encrypted",
    "calamine-password.xls": "encrypted",
    "calamine-password.ods": "encrypted",
    "box.pdf": "no text found",  # a drawing: OCR runs on its one page and reads nothing
}
EXCALIDRAW = """---
excalidraw-plugin: parsed
tags: [excalidraw]
---
==⚠  Switch to EXCALIDRAW VIEW in the MORE OPTIONS menu of this document. ⚠==

# Excalidraw Data

## Text Elements
Quarterly roadmap whiteboard ^k3Jd9sLq

Migrate the billing queue to kafka ^Zx81KkPa

%%
## Drawing
```compressed-json
N4KAkARALgngDgUwgLgAQQQDwMYEMA2AlgCYBOuA7hADTgQBuCpAzoQPYB2KAQhZAWEWZ8QeASGOwZ0
```
%%
"""


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("docs") / "vault"
    shutil.copytree(SAMPLES, root / "docs", ignore=shutil.ignore_patterns("*.md"))
    write_hostile(root / "hostile")
    (root / "notes").mkdir()
    (root / "notes" / "kafka.md").write_text(
        note("Kafka", ("Consumers", "Consumer groups rebalance when a member leaves.")),
        encoding="utf-8",
    )
    (root / "drawings").mkdir()
    (root / "drawings" / "roadmap.excalidraw.md").write_text(EXCALIDRAW, encoding="utf-8")
    (root / ".obsidian").mkdir()
    shutil.copy(SAMPLES / "crazyones.pdf", root / ".obsidian" / "hidden.pdf")
    return root


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def index(
    vault: Path, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[Index]:
    """The vault's index on each storage backend in turn (PostgreSQL: tests/backends.py)."""
    if request.param == "sqlite":
        where: Path | DatabaseUrl = tmp_path_factory.mktemp("db") / "docs.db"
    else:
        where = pg_locator(request.getfixturevalue("pg_module_schema"), "docs")
    with Index(where) as idx:  # the bundled model
        idx.update(vault)
        yield idx


def _db(index: Index) -> str:
    """The index's --db argument (a database URL with its password: the CLI must log in)."""
    return index.db_path.url if isinstance(index.db_path, DatabaseUrl) else str(index.db_path)


@pytest.mark.parametrize(("query", "path", "where"), KNOWN_ITEMS)
def test_known_items_come_back_with_their_location(
    index: Index, query: str, path: str, where: dict[str, object]
) -> None:
    hits = index.search(query, limit=5)
    assert hits and hits[0].path == path, [(h.path, h.section) for h in hits]
    data = hits[0].to_json()
    for key, value in where.items():
        assert data[key] == value, (key, data)
    applicable = {"page", "slide", "sheet"} & set(where)
    for key in {"page", "slide", "sheet"} - applicable:
        assert data[key] is None
    if "sheet" in where:
        first, last = data["rows"]
        assert 1 <= first <= last


def test_known_items_are_found_in_keyword_and_vector_mode_too(index: Index) -> None:
    bm25 = index.search("meatmeal", mode="bm25", limit=3)
    assert bm25[0].path == "docs/datasets.xlsx" and bm25[0].sheet == "chickwts"
    vector = index.search("siege of vicksburg guns oxen", mode="vector", limit=3)
    assert vector[0].path == "docs/Seige_of_Vicksburg_Sample_OCR.pdf"
    assert vector[0].page is not None


def test_every_hostile_file_ends_with_a_named_reason(index: Index) -> None:
    status = index.status()
    problems = {path: (state, why) for path, state, why in status.problems}
    expected = {f"hostile/{name}": label for name, label in HOSTILE_OUTCOMES.items()}
    expected |= {f"docs/{name}": label for name, label in SAMPLE_OUTCOMES.items()}
    for path, label in expected.items():
        state, why = problems[path]
        assert state == "skipped" and why.startswith(label + ": "), (path, why)
        assert len(why) > len(label) + 10  # a reason, not just the outcome's name
    # Read after all: the pool retried far-cell.xlsx with openpyxl; PDFium rebuilt the xref.
    for path in ("hostile/far-cell.xlsx", "hostile/huge-dimension.xlsx", "hostile/broken-xref.pdf"):
        assert path not in problems
    # Its pages without a text layer (4, 5) are read by OCR now: no warning left.
    assert "docs/imagemagick-images.pdf" not in problems
    outcomes = {(kind, outcome) for kind, outcome, _ in status.documents}
    assert {("pdf", "encrypted"), ("pdf", "no_text_found"), ("xlsx", "too_large")} <= outcomes


def test_everything_else_stays_searchable(index: Index) -> None:
    assert index.search("consumer groups rebalance", limit=3)[0].path == "notes/kafka.md"
    assert index.search("crazy ones misfits rebels", limit=5, mode="bm25")
    assert index.search("farthest", mode="bm25")[0].path == "hostile/far-cell.xlsx"
    assert index.search("python-docx was here", mode="bm25")[0].path == "docs/test.docx"
    assert not [h for h in index.search("crazy ones", limit=50) if h.path.startswith(".obsidian")]


def test_excalidraw_text_elements_are_indexed_never_the_drawing(index: Index) -> None:
    hits = index.search("migrate the billing queue to kafka", mode="bm25", limit=3)
    assert hits[0].path == "drawings/roadmap.excalidraw.md"
    assert "Quarterly roadmap whiteboard" in hits[0].text and "^k3Jd9sLq" not in hits[0].text
    stored = index.note_text("drawings/roadmap.excalidraw.md")
    assert "billing queue" in stored
    assert "N4KAk" not in stored and "Switch to EXCALIDRAW" not in stored
    assert "excalidraw-plugin" not in stored
    drawing = "N4KAkARALgngDgUwgLgAQQQDwMYEMA2AlgCYBOuA7hADTgQBuCpAzoQPYB2KAQhZAWEWZ8QeASGOwZ0"
    assert index.search(drawing, mode="bm25") == []


def test_a_page_a_slide_and_a_sheet_can_be_read_back(index: Index) -> None:
    page = index.read_note("docs/Seige_of_Vicksburg_Sample_OCR.pdf", page=4)
    assert page.kind == "pdf" and page.page == 4 and "yoke of oxen" in page.text
    assert page.text.count("yoke of oxen") == 1  # the split parts are joined without overlap
    assert "rebel prisoners" not in page.text
    assert page.locations == tuple(f"p. {n}" for n in range(1, 7))
    whole = index.read_note("docs/Seige_of_Vicksburg_Sample_OCR.pdf")
    assert whole.text.startswith("[p. 1]") and "[p. 6]" in whole.text
    slide = index.read_note("docs/tbl-cell.pptx", slide=3)
    assert slide.text == "a | b | c\nd | e | f\ng | h | i"
    sheet = index.read_note("docs/datasets.xlsx", sheet="Chickwts")
    assert sheet.text.startswith("[Sheet: chickwts]") and "casein" in sheet.text
    assert "Sepal.Length" not in sheet.text
    with pytest.raises(SectionNotFoundError, match="no page 99") as missing:
        index.read_note("docs/multilang.pdf", page=99)
    assert missing.value.available == ("p. 1",)
    with pytest.raises(SectionNotFoundError, match="Markdown note"):
        index.read_note("notes/kafka.md", page=1)


def test_folder_and_tag_filters_apply_to_documents(index: Index) -> None:
    in_docs = index.search("text", folders=["docs"], limit=50, mode="bm25")
    assert in_docs and all(h.path.startswith("docs/") for h in in_docs)
    assert index.search("merged cell", folders=["notes"], mode="bm25") == []
    # Documents carry no tags: a tag filter keeps only the notes that have it.
    tagged = index.search("excalidraw kafka consumer", tags=["excalidraw"], limit=10)
    assert [h.path for h in tagged] == []


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "noteseek", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )


def test_cli_names_the_location_and_status_the_outcomes(index: Index) -> None:
    db = _db(index)
    plain = _cli("search", "--db", db, "-n", "1", "ten yoke of oxen")
    assert plain.returncode == 0, plain.stderr
    assert "docs/Seige_of_Vicksburg_Sample_OCR.pdf › p. 4" in plain.stdout
    data = json.loads(_cli("search", "--db", db, "--json", "-n", "3", "merged cell").stdout)
    first = data["hits"][0]
    assert (first["slide"], first["page"], first["sheet"], first["rows"]) == (2, None, None, None)
    status = _cli("status", "--db", db)
    assert status.returncode == 0
    assert "[skipped] docs/encrypted-file.pdf: encrypted: is password-protected" in status.stdout
    assert "documents" in status.stdout and "5 encrypted" in status.stdout
    documents = json.loads(_cli("status", "--db", db, "--json").stdout)["documents"]
    assert documents["pdf"]["encrypted"] == 2 and documents["pdf"]["no_text_found"] == 1


def test_context_block_names_the_location(index: Index) -> None:
    from noteseek import prompt_context

    block = prompt_context(index, "ten yoke of oxen haul the guns", gated=False).text
    assert "(docs/Seige_of_Vicksburg_Sample_OCR.pdf, p. 4; relevance " in block
