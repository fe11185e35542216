"""One file cannot inflate the index: a huge title, alias list or PDF /Title is stored once per
file and capped (core/field_caps.py), and the file's status says what was cut. Through the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import apsw
import pytest

from noteseek.core.field_caps import FIELD_CHARS, LIST_ITEMS, NAME_CHARS, FieldCaps, cap_text

from .conftest import user_env

WORDS = [
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
    "mike",
]


def run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "-m", "noteseek", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert result.returncode == 0, f"exit {result.returncode}\n{result.stdout}\n{result.stderr}"
    return result


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    clean = user_env()
    # Every hit: these tests are about index size, not the relevance thresholds.
    clean.update(
        NOTESEEK_HOME=str(tmp_path / "home"), HF_HUB_OFFLINE="1",
        NOTESEEK_MIN_SCORE="0", NOTESEEK_MIN_ANSWER="0",
    )
    return clean


def long_title(chars: int) -> str:
    """`chars` characters of distinct words: `alpha0 bravo1 charlie2 …`."""
    return " ".join(f"{WORDS[i % len(WORDS)]}{i}" for i in range(chars // 4))[:chars]


def _db_bytes(db: Path) -> int:
    conn = apsw.Connection(str(db))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return sum(p.stat().st_size for p in db.parent.glob(db.name + "*"))


def _empty_index_bytes(tmp_path: Path, env: dict[str, str]) -> int:
    """The size of an index of one small note: the tables and pages every index has."""
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "plain.md").write_text("# Plain\n\nA plain note about rebasing.\n", encoding="utf-8")
    db = tmp_path / "e.db"
    run("index", str(empty), "--db", str(db), "-q", env=env)
    return _db_bytes(db)


def test_cap_text_cuts_at_a_space_and_keeps_short_text() -> None:
    assert cap_text("short title", 300) == "short title"
    assert cap_text("aaaa bbbb cccc", 11) == "aaaa bbbb"
    assert cap_text("x" * 50, 10) == "x" * 10  # no space: cut at the limit
    caps = FieldCaps()
    assert caps.name("title", "t" * (NAME_CHARS + 7)) == "t" * NAME_CHARS
    assert caps.items("tags", [f"t{i}" for i in range(LIST_ITEMS + 5)]) == [
        f"t{i}" for i in range(LIST_ITEMS)
    ]
    assert caps.field("title field", "w " * FIELD_CHARS).startswith("w w")
    assert caps.warning() == (
        f"indexed with its metadata cut (title cut to {NAME_CHARS} of {NAME_CHARS + 7:,} "
        f"characters; tags: the first {LIST_ITEMS} of {LIST_ITEMS + 5} kept; "
        f"title field cut to {FIELD_CHARS - 1:,} of {2 * FIELD_CHARS:,} characters)"
    )
    assert FieldCaps().warning() is None


def test_a_150_kb_title_over_200_sections_stays_a_small_index(
    tmp_path: Path, env: dict[str, str]
) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    title = long_title(150_000)
    sections = "\n\n".join(
        f"## Section {i}\n\nShort text number {i} about {WORDS[i % len(WORDS)]} things here."
        for i in range(200)
    )
    aliases = "\n".join(f"  - alias number {i} {'x' * 40}" for i in range(2_000))
    note = f"---\ntitle: {title}\naliases:\n{aliases}\n---\n\n{sections}\n"
    (vault / "huge.md").write_text(note, encoding="utf-8")
    (vault / "plain.md").write_text("# Plain\n\nA plain note about rebasing.\n", encoding="utf-8")
    size = len(note.encode())
    assert size > 250_000  # the title alone is 150 KB, the aliases 100 KB more
    db = tmp_path / "i.db"
    run("index", str(vault), "--db", str(db), "-q", env=env)
    stored = _db_bytes(db)
    # Before the caps: 70.8 MB for a 140 KB note (a long title + 200 short sections). What an
    # index of one small note takes anyway (tables, the vector table's first block) is left out.
    grown = stored - _empty_index_bytes(tmp_path, env)
    assert grown < size, (size, stored, grown)  # measured: 131 KB for this 287 KB note
    conn = apsw.Connection(str(db))
    title_field, context, stored_title = conn.execute(
        "SELECT title_field, heading_context, title FROM files WHERE path = 'huge.md'"
    ).fetchone()
    assert len(stored_title) <= NAME_CHARS and title.startswith(stored_title)
    assert len(title_field) <= FIELD_CHARS and len(context) <= FIELD_CHARS
    assert conn.execute("SELECT count(*) FROM chunks").fetchone()[0] >= 200
    conn.close()
    # Still searchable by its title's first words and its sections, and the cut is reported.
    hits = json.loads(run("search", "alpha0 bravo1", "--db", str(db), "--json", env=env).stdout)
    assert hits["hits"][0]["path"] == "huge.md"
    status = run("status", "--db", str(db), "--files", env=env).stdout
    assert "huge.md" in status and "title cut to" in status and "aliases: the first 100" in status


def hostile_pdf(title: str, pages: list[str]) -> bytes:
    """A minimal PDF with one line of text per page (Helvetica) and an /Info /Title."""
    objects: list[bytes] = [b"", b""]  # 1: catalog, 2: pages (filled below)
    kids = []
    font = 3
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    for text in pages:
        stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
        content = len(objects)
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
            b"/Resources << /Font << /F1 %d 0 R >> >> >>" % (content, font)
        )
        kids.append(len(objects))
    objects[0] = b"<< /Type /Catalog /Pages 2 0 R >>"
    objects[1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (
        b" ".join(b"%d 0 R" % k for k in kids),
        len(kids),
    )
    objects.append(b"<< /Title (" + title.encode("latin-1") + b") >>")
    info = len(objects)
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for n, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % n + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R /Info %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        info,
        xref,
    )
    return bytes(out)


def test_a_pdf_with_a_142_kb_title_over_200_pages_stays_a_small_index(
    tmp_path: Path, env: dict[str, str]
) -> None:
    pytest.importorskip("pypdfium2")
    vault = tmp_path / "vault"
    vault.mkdir()
    pages = [f"Page {i} talks about {WORDS[i % len(WORDS)]} and nothing else." for i in range(200)]
    data = hostile_pdf(long_title(142_000), pages)
    (vault / "big-title.pdf").write_bytes(data)
    db = tmp_path / "i.db"
    run("index", str(vault), "--db", str(db), "-q", env=env)
    conn = apsw.Connection(str(db))
    status, problem, title_field, chunks = conn.execute(
        "SELECT status, problem, title_field, chunk_count FROM files WHERE path = 'big-title.pdf'"
    ).fetchone()
    conn.close()
    assert chunks == 200 and status == "warning"
    assert "title cut to" in problem and len(title_field) <= FIELD_CHARS
    # Before the caps: 74 MB. Now the pages' text, 200 small chunks and their vectors.
    grown = _db_bytes(db) - _empty_index_bytes(tmp_path, env)
    assert grown < len(data), (len(data), grown)
    hits = json.loads(run("search", "page 17 kilo", "--db", str(db), "--json", env=env).stdout)
    assert hits["hits"] and hits["hits"][0]["path"] == "big-title.pdf"
