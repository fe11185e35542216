"""End to end, as tests/test_secrets_in_db.py does for notes: FAKE secrets in documents' text, in
their metadata (Office core properties, HTML title and meta), in headings and sheet names, and
in a document's file name never reach the database, its WAL, the logs, status or a hit.

The documents are written here with the same libraries that read them (python-docx,
python-pptx, openpyxl), so each secret sits exactly where the test says it does.
"""

from __future__ import annotations

import json
import logging
import string
from pathlib import Path

import pytest

import noteseek
from tests.conftest import FakeEmbedder
from tests.test_scrubber import TOKENS, fake
from tests.test_secrets_in_db import NAME_SECRET, SecretVault, _index_and_snapshot, _leaks

SECRETS = [t.secret for t in TOKENS]
# A sheet name holds at most 31 characters: an AWS access key id (20) fits.
SHEET_SECRET = next(s for s in SECRETS if s.startswith("AKIA"))
# Caught only with the keyword "mailgun" somewhere in the same text: it sits on another slide
# than that word, so the document must be scrubbed as one text, not unit by unit.
MAILGUN_KEY = "key-" + fake(string.hexdigits.lower()[:16], 32, 77)


def _docx(path: Path, s: list[str]) -> None:
    import docx

    document = docx.Document()
    document.add_heading(f"Rotate {s[0]} before Friday", level=1)
    document.add_paragraph(f"The deploy token of the billing service is {s[1]} since Monday.")
    table = document.add_table(rows=1, cols=2)
    table.rows[0].cells[0].text = "credential"
    table.rows[0].cells[1].text = s[2]
    props = document.core_properties
    props.title, props.author, props.subject = f"Runbook {s[3]}", s[4], f"about {s[5]}"
    props.keywords, props.comments, props.last_modified_by = s[6], f"pasted {s[7]}", s[8]
    document.save(str(path))


def _pptx(path: Path, s: list[str]) -> None:
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    first = deck.slides.add_slide(deck.slide_layouts[1])
    first.shapes.title.text = f"Keys {s[9]}"
    first.placeholders[1].text = "Our Mailgun account sends the release mails."
    first.notes_slide.notes_text_frame.text = f"speaker note: {s[10]}"
    second = deck.slides.add_slide(deck.slide_layouts[5])
    second.shapes.title.text = "Sending"
    box = second.shapes.add_textbox(Inches(1), Inches(2), Inches(6), Inches(1))
    box.text_frame.text = f"The sending key is {MAILGUN_KEY} for the release quarter."
    deck.core_properties.author = s[11]
    deck.core_properties.title = f"Deck {s[12]}"
    deck.save(str(path))


def _xlsx(path: Path, s: list[str]) -> None:
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = SHEET_SECRET
    sheet.append(["service", "credential"])
    sheet.append(["search", s[13]])
    sheet.append(["quarterly inventory of credentials", "none"])
    book.properties.creator, book.properties.title = s[14], f"Inventory {s[15]}"
    book.properties.keywords = s[16]
    book.save(str(path))


def build_document_vault(root: Path) -> SecretVault:
    """Documents with planted secrets under `root` (and the secrets, the file-name one apart)."""
    s = SECRETS[:20]
    (root / "docs").mkdir(parents=True)
    _docx(root / "docs" / "runbook.docx", s)
    _pptx(root / "docs" / "keys.pptx", s)
    _xlsx(root / "docs" / "inventory.xlsx", s)
    (root / "docs" / "page.html").write_text(
        f"<html><head><title>Portal {s[17]}</title><meta name='author' content='{s[18]}'>"
        f"</head><body><h1>Access {s[19]}</h1><p>The portal lists every quarterly credential."
        "</p></body></html>",
        encoding="utf-8",
    )
    (root / "docs" / "export.csv").write_text(
        f"name,token\nbilling,{SECRETS[20]}\nsearch,none\n", encoding="utf-8"
    )
    (root / "docs" / f"pasted {NAME_SECRET}.txt").write_text("A file whose name is a token.\n")
    (root / "clean.md").write_text("# Sync\n\nThe quarterly rotation of the deploy token.\n")
    return SecretVault(root, (*s, SHEET_SECRET, MAILGUN_KEY, SECRETS[20]))


@pytest.fixture
def doc_vault(tmp_path: Path) -> SecretVault:
    return build_document_vault(tmp_path / "vault")


def test_no_document_secret_reaches_the_database_wal_logs_or_status(
    doc_vault: SecretVault, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="noteseek")
    db = tmp_path / "docs.db"
    snapshots, stats = _index_and_snapshot(doc_vault, db, FakeEmbedder())
    secrets = (*doc_vault.secrets, NAME_SECRET)
    assert stats.documents == 5 and stats.secrets_scrubbed >= len(doc_vault.secrets)
    for data in snapshots:
        assert _leaks(data, secrets) == []
    for record in caplog.records:
        assert _leaks(record.getMessage().encode(), secrets) == []
    with noteseek.Index(db, embedder=FakeEmbedder()) as idx:
        status = json.dumps(idx.status().to_json(), ensure_ascii=False)
        assert _leaks(status.encode(), secrets) == []
        assert "file name contains a secret" in json.dumps(stats.problems)
        hits = idx.search("deploy token credential quarterly release keys", limit=20)
        assert {h.path for h in hits} >= {"docs/runbook.docx", "docs/keys.pptx"}
        shown = json.dumps([h.to_json() for h in hits], ensure_ascii=False)
        assert _leaks(shown.encode(), secrets) == []
        assert "[REDACTED:" in shown
        for path in ("docs/runbook.docx", "docs/keys.pptx", "docs/inventory.xlsx"):
            text = idx.read_note(path).text
            assert _leaks(text.encode(), secrets) == [], path
        sheet = idx.read_note("docs/inventory.xlsx", sheet="[REDACTED:aws-access-key-id]")
        assert "quarterly inventory" in sheet.text


def test_a_keyword_on_another_slide_still_redacts_the_key(
    doc_vault: SecretVault, tmp_path: Path
) -> None:
    with noteseek.Index(tmp_path / "mail.db", embedder=FakeEmbedder()) as idx:
        idx.update(doc_vault.root)
        slide = idx.read_note("docs/keys.pptx", slide=2).text
    assert MAILGUN_KEY not in slide and "[REDACTED:mailgun-api-key]" in slide


def test_the_documents_with_secrets_are_indexed_not_dropped(
    doc_vault: SecretVault, tmp_path: Path
) -> None:
    with noteseek.Index(tmp_path / "kept.db", embedder=FakeEmbedder()) as idx:
        stats = idx.update(doc_vault.root)
        paths = set(idx.note_paths())
        assert stats.added == 6  # five documents and the note; the file-name one is only named
        hit = idx.search("billing service since Monday", mode="bm25")[0]
    assert hit.path == "docs/runbook.docx"
    assert not [p for p in paths if NAME_SECRET in p]


def test_status_counts_the_secrets_scrubbed_in_each_document(
    doc_vault: SecretVault, tmp_path: Path
) -> None:
    # Issue 13's left-out counts hold for documents too: no scrubbed word goes uncounted.
    with noteseek.Index(tmp_path / "count.db", embedder=FakeEmbedder()) as idx:
        stats = idx.update(doc_vault.root)
        left_out = {path: secrets for path, _, secrets in idx.status().left_out}
    assert set(left_out) == {
        "docs/runbook.docx",
        "docs/keys.pptx",
        "docs/inventory.xlsx",
        "docs/page.html",
        "docs/export.csv",
    }
    assert left_out["docs/export.csv"] == 1
    # Once per place, as for notes: the title, the author, and the heading both as the section
    # and in the text.
    assert left_out["docs/page.html"] == 4
    assert sum(left_out.values()) == stats.secrets_scrubbed >= len(doc_vault.secrets)
