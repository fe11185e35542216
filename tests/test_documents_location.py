"""How places in documents are named (pure), and how a document's stored chunks read back."""

from __future__ import annotations

import pytest

from noteseek.core.document_location import breadcrumb, location_label, outcome_summary
from noteseek.engine.document_access import DocumentPart, document_text
from noteseek.errors import SectionNotFoundError
from noteseek.storage.records import StoredChunk


def test_location_labels() -> None:
    assert location_label() == ""
    assert location_label(page=12) == "p. 12"
    assert location_label(page=12, page_label="xii") == "p. xii"
    assert location_label(page=12, page_label="xii", numbered=True) == "p. xii (12)"
    assert location_label(page=12, page_label="12", numbered=True) == "p. 12"
    assert location_label(slide=3) == "slide 3"
    assert location_label(sheet="Data", rows=(2, 21)) == "sheet Data, rows 2–21"
    assert location_label(rows=(5, 5)) == "row 5"


def test_breadcrumbs_leave_out_a_section_that_repeats_the_place() -> None:
    assert breadcrumb("a.md", "Setup", "") == "a.md › Setup"
    assert breadcrumb("m.pdf", "Installing", "p. 12") == "m.pdf › p. 12 › Installing"
    assert breadcrumb("m.pdf", "", "p. 12") == "m.pdf › p. 12"
    assert breadcrumb("d.pptx", "Slide 3", "slide 3") == "d.pptx › slide 3"
    assert breadcrumb("s.xlsx", "Data", "sheet Data, rows 2–21", sheet="Data") == (
        "s.xlsx › sheet Data, rows 2–21"
    )


def test_outcome_summary_counts_outcomes_and_kinds() -> None:
    summary = outcome_summary([("pdf", "ok", 3), ("pdf", "encrypted", 1), ("csv", "ok", 2)])
    assert summary == "6: 5 ok, 1 encrypted (pdf 4, csv 2)"


def _chunk(
    seq: int,
    text: str,
    *,
    page: int | None = None,
    section: str = "",
    overlap: int = 0,
    sheet: str | None = None,
) -> StoredChunk:
    return StoredChunk(seq, section, text, page, None, None, sheet, None, None, overlap)


def test_a_split_unit_reads_back_once_with_page_markers() -> None:
    chunks = [
        _chunk(0, "First page text.", page=1),
        _chunk(1, "Second page starts here and goes on", page=2),
        _chunk(2, "goes on and ends here.", page=2, overlap=len("goes on ")),
        _chunk(3, "Under a bookmark.", page=2, section="Install"),
    ]
    whole = document_text(chunks, part=DocumentPart())
    assert whole.text == (
        "[p. 1]\n\nFirst page text.\n\n[p. 2]\n\nSecond page starts here and goes on and ends "
        "here.\n\nUnder a bookmark."
    )
    assert whole.locations == ("p. 1", "p. 2") and whole.sections == ("Install",)
    page = document_text(chunks, part=DocumentPart(page=2), section="install")
    assert page.text == "Under a bookmark." and page.section == "Install"
    with pytest.raises(SectionNotFoundError) as missing:
        document_text(chunks, part=DocumentPart(sheet="Data"))
    assert missing.value.available == ("p. 1", "p. 2")
