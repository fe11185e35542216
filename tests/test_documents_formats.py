"""Known-item checks on real documents nobody here wrote: the text comes back at the right location."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from noteseek.documents import ExtractionLimits, Outcome, TextUnit, extract_file

from .documents_samples import sample


def _ok(name: str) -> tuple[TextUnit, ...]:
    result = extract_file(sample(name))
    assert result.outcome is Outcome.OK, result.reason
    assert result.document is not None
    return result.document.units


def _find(units: tuple[TextUnit, ...], needle: str) -> TextUnit:
    hits = [u for u in units if needle in u.text]
    assert hits, f"{needle!r} not in any unit"
    return hits[0]


def test_pdf_text_page_and_metadata() -> None:
    result = extract_file(sample("crazyones.pdf"))
    assert result.document is not None
    unit = _find(result.document.units, "The round pegs in the square holes")
    assert unit.location.page == 1
    assert (unit.location.slide, unit.location.sheet, unit.location.rows) == (None, None, None)
    assert result.document.page_count == 1


def test_pdf_bookmarks_become_breadcrumbs_on_their_page() -> None:
    # pdflatex-outline.pdf: nine bookmarks Foo/Bar/Baz over pages 2-4; the contents page has none.
    units = _ok("pdflatex-outline.pdf")
    assert units[0].location.page == 1 and units[0].section == ()
    sections = [(u.location.page, u.section) for u in units]
    assert (2, ("Foo",)) in sections and (2, ("Bar",)) in sections and (4, ("Baz",)) in sections
    # Each bookmark's unit starts at its own heading on the page.
    for unit in units[1:]:
        if unit.section and unit.text.startswith(unit.section[-1]):
            break
    else:
        pytest.fail("no unit starts at its bookmark title")


def test_pdf_multilingual_text() -> None:
    unit = _find(_ok("multilang.pdf"), "Привет, мир")
    for word in ("مرحبا بالعالم", "你好世界", "สวัสดีชาวโลก", "こんにちは世界"):
        assert word in unit.text


def test_pdf_ocr_layer_is_read_and_hyphenation_is_joined() -> None:
    units = _ok("Seige_of_Vicksburg_Sample_OCR.pdf")
    text = "\n".join(u.text for u in units)
    assert "SIEGE OF VICKSBURG" in text
    assert "dangerous" in text and "\ufffe" not in text  # PDFium's soft-hyphen mark removed
    assert {u.location.page for u in units} == set(range(1, 7))
    assert all(len(u.text) <= 1000 + 100 for u in units)  # long pages are split, keeping the page


def test_pdf_metadata_is_returned_separately() -> None:
    result = extract_file(sample("metadata.pdf"))
    assert result.document is not None
    meta = result.document.metadata
    assert meta.fields, "metadata.pdf has an info dictionary"
    assert all(
        value not in "\n".join(u.text for u in result.document.units)
        for _, value in meta.fields
        if len(value) > 12
    )


def test_pdf_encryption_outcomes() -> None:
    assert extract_file(sample("encrypted-file.pdf")).outcome is Outcome.ENCRYPTED
    assert extract_file(sample("r6-user-password.pdf")).outcome is Outcome.ENCRYPTED
    # An empty user password is no password: the text opens.
    assert "pdf encryption test" in _ok("r2-empty-password.pdf")[0].text


def test_pdf_image_only_pages_are_reported_not_guessed() -> None:
    off = ExtractionLimits(ocr=False)
    box = extract_file(sample("box.pdf"), limits=off)
    assert box.outcome is Outcome.NO_TEXT and "OCR is off" in box.reason and "box.pdf" in box.reason
    assert box.ocr_wanted
    mixed = extract_file(sample("imagemagick-images.pdf"), limits=off)
    assert mixed.outcome is Outcome.OK and mixed.document is not None
    assert mixed.document.image_only_pages == (4, 5)
    assert "4, 5" in mixed.reason


def test_pdf_image_only_pages_go_through_ocr() -> None:
    # box.pdf's one page is a drawing without letters: OCR runs and finds nothing.
    box = extract_file(sample("box.pdf"))
    assert box.outcome is Outcome.NO_TEXT_FOUND and "OCR read no text" in box.reason
    mixed = extract_file(sample("imagemagick-images.pdf"))
    assert mixed.outcome is Outcome.OK and mixed.document is not None
    # Pages 4 and 5 have no text layer; the others only the word "Background" over an image.
    assert {4, 5} <= set(mixed.document.ocr_pages) and mixed.document.image_only_pages == ()


def test_pptx_slide_title_group_table_and_notes() -> None:
    unit = _find(_ok("test_slides.pptx"), "Group test text")  # inside a group shape
    assert unit.location.slide == 1
    assert "Col head 1 | Col head 2" in unit.text and "Cell text 1 | Cell text 2" in unit.text
    units = _ok("ph-inherit-props.pptx")
    first = _find(units, "Notes in inherited position and size.")  # speaker notes
    assert first.location.slide == 1 and first.section == ("Title Text",)
    assert _find(units, "Notes in modified position and size.").location.slide == 2
    assert _find(_ok("tbl-cell.pptx"), "g | h | i").location.slide == 3


def test_docx_heading_sections_and_tables() -> None:
    unit = _find(_ok("test.docx"), "python-docx was here too!")
    assert unit.section == ("python-docx was here!",)
    assert "Table" in _find(_ok("blk-paras-and-tables.docx"), "Donec semper").text


def test_docx_breadcrumbs_nest(tmp_path: Path) -> None:
    import docx

    document = docx.Document()
    document.add_heading("Manual", level=1)
    document.add_paragraph("Intro text.")
    document.add_heading("Installing", level=2)
    document.add_paragraph("Run the installer.")
    document.add_heading("Usage", level=1)
    table = document.add_table(rows=2, cols=2)
    for r, row in enumerate(table.rows):
        for c, cell in enumerate(row.cells):
            cell.text = f"r{r}c{c}"
    path = tmp_path / "manual.docx"
    document.save(str(path))
    units = extract_file(path).document.units  # type: ignore[union-attr]
    assert [u.section for u in units] == [("Manual",), ("Manual", "Installing"), ("Usage",)]
    assert "r1c0 | r1c1" in units[2].text


def test_xlsx_sheets_and_rows() -> None:
    # datasets.xlsx: calamine rejects its 'quakes' sheet (a float it cannot parse); openpyxl reads it.
    result = extract_file(sample("datasets.xlsx"))
    assert result.ok and result.document is not None
    units = result.document.units
    assert [u.location.sheet for u in units[:1]] == ["iris"]
    assert {u.location.sheet for u in units} == {"iris", "mtcars", "chickwts", "quakes"}
    first = units[0]
    assert first.text.startswith("[Sheet: iris]\nSepal.Length | Sepal.Width")
    assert first.location.rows == (2, 21)
    # Every unit repeats the header; rows are spreadsheet rows (header = row 1).
    quakes = [u for u in units if u.location.sheet == "quakes"]
    assert all("lat | long | depth | mag | stations" in u.text for u in quakes)
    assert quakes[-1].location.rows == (982, 1001)


def test_xls_and_ods_read_with_calamine() -> None:
    result = extract_file(sample("deaths.xls"))
    assert result.document is not None and result.document.engine.startswith("python-calamine")
    unit = _find(result.document.units, "David Bowie")
    assert unit.location.sheet == "arts" and unit.section == ("arts",)
    # The header is the widest of the first rows, not the note above the table.
    assert unit.text.split("\n")[1].startswith("Name | Profession | Age")
    vera = _find(result.document.units, "Vera Rubin")
    assert vera.location.sheet == "other"
    ods = extract_file(sample("calamine-base.ods"))
    assert ods.ok and ods.document is not None and ods.document.units[0].location.sheet == "Sheet1"


def test_spreadsheet_passwords() -> None:
    for name in ("calamine-password.xlsx", "calamine-password.xls", "calamine-password.ods"):
        result = extract_file(sample(name))
        assert result.outcome is Outcome.ENCRYPTED, (name, result.reason)
        assert name in result.reason


def test_csv_batches_with_header_and_record_rows() -> None:
    units = _ok("mtcars.csv")
    assert all(u.text.startswith("mpg | cyl | disp") for u in units)
    assert units[0].location.rows == (2, 21) and units[0].location.sheet is None
    assert units[-1].location.rows[1] == 33  # type: ignore[index]  # 32 cars + header
    challenge = _ok("challenge.csv")
    assert challenge[-1].location.rows[1] == 2001  # type: ignore[index]


def test_csv_legacy_encoding_and_semicolons(tmp_path: Path) -> None:
    path = tmp_path / "export.csv"
    # What a German Excel writes for "CSV (Trennzeichen-getrennt)": cp1252 and semicolons.
    names = ["Müller", "Bäcker", "Schäfer", "Größmann", "Köhler", "Weiß"]
    rows = ["Name;Straße;Verwendungszweck;Betrag"] + [
        f"{names[i % 6]};Hauptstraße {i};Überweisung für März, Nr. {i};{i},50 €" for i in range(30)
    ]
    path.write_bytes("\r\n".join(rows).encode("cp1252"))
    units = extract_file(path).document.units  # type: ignore[union-attr]
    assert units[0].text.startswith(
        "Name | Straße | Verwendungszweck | Betrag\nMüller | Hauptstraße 0 | Überweisung für März, Nr. 0 | 0,50 €"
    )
    assert [u.location.rows for u in units] == [(2, 21), (22, 31)]


def test_csv_is_read_as_a_stream_that_stops_at_the_character_limit(tmp_path: Path) -> None:
    from noteseek.documents import ExtractionLimits

    path = tmp_path / "big.csv"
    rows = ["id,name,comment"] + [f"{i},row {i},some words in row number {i}" for i in range(50_000)]
    path.write_text("\n".join(rows), encoding="utf-8")
    result = extract_file(path, limits=ExtractionLimits(max_chars=100_000))
    assert result.outcome is Outcome.TOO_LARGE, result.reason
    assert "has more than the 100,000 characters of text the limit allows" in result.reason
    # Reading stopped near the limit, not after the 50,001 rows were all read.
    stopped = int(result.reason.rsplit("row ", 1)[1].rstrip(")").replace(",", ""))
    assert 2_000 < stopped < 5_000, result.reason
    # A UTF-8 file whose first non-ASCII byte is past the detection sample stays UTF-8.
    late = tmp_path / "late.csv"
    late.write_text("a,b\n" + "x,y\n" * 100_000 + "Müller,Straße\n", encoding="utf-8")
    units = extract_file(late).document.units  # type: ignore[union-attr]
    assert units[-1].text.endswith("Müller | Straße")


def test_html_sections_without_scripts() -> None:
    result = extract_file(sample("sheet-geometry.html"))
    assert result.document is not None
    units = result.document.units
    assert result.document.metadata.title == "Sheet Geometry"
    text = "\n".join(u.text for u in units)
    assert "function(" not in text and "<script" not in text  # the page embeds kilobytes of JS
    unit = _find(units, "Little known Excel facts")
    assert unit.section == ("Sheet Geometry", "Little known Excel facts")


def test_txt_is_split_with_every_word_kept() -> None:
    units = _ok("crazyones.txt")
    original = sample("crazyones.txt").read_text(encoding="utf-8")
    assert set(original.split()) <= set(" ".join(u.text for u in units).split())


def test_canvas_groups_cards_and_links() -> None:
    units = _ok("sample.canvas")
    grouped = _find(units, "Learn more:")
    assert grouped.section == ("JSON Canvas",)
    assert "_site/logo.svg" in grouped.text
    # The file card (not the link to it inside the text card) lies outside the group.
    file_card = [u for u in units if "spec/1.0.md" in u.text.split("\n")]
    assert [u.section for u in file_card] == [()]


def test_canvas_edge_labels_and_nested_groups(tmp_path: Path) -> None:
    path = tmp_path / "board.canvas"
    path.write_text(
        '{"nodes":[{"id":"g1","type":"group","label":"Outer","x":0,"y":0,"width":1000,"height":1000},'
        '{"id":"g2","type":"group","label":"Inner","x":100,"y":100,"width":300,"height":300},'
        '{"id":"t1","type":"text","text":"inside card","x":150,"y":150,"width":100,"height":50},'
        '{"id":"l1","type":"link","url":"https://example.org/x","x":2000,"y":0,"width":10,"height":10}],'
        '"edges":[{"id":"e","fromNode":"t1","toNode":"l1","label":"depends on"}]}',
        encoding="utf-8",
    )
    units = extract_file(path).document.units  # type: ignore[union-attr]
    inner = _find(units, "inside card")
    assert inner.section == ("Outer", "Inner") and "depends on" in inner.text
    assert _find(units, "https://example.org/x").section == ()


def test_excalidraw_text_elements_only(tmp_path: Path) -> None:
    # The layout the Obsidian Excalidraw plugin writes, including a text element that holds a
    # Markdown heading (seen in real drawings) and the compressed drawing after it.
    path = tmp_path / "flow.excalidraw.md"
    path.write_text(
        "---\nexcalidraw-plugin: parsed\ntags: [excalidraw]\n---\n"
        "==⚠  Switch to EXCALIDRAW VIEW in the MORE OPTIONS menu of this document. ⚠==\n\n"
        "# Excalidraw Data\n\n## Text Elements\nSelect Template ^IZAHIiat\n\n"
        "### 2) Notification Content\nUsers want deep links ^QuJYOiD9\n\n"
        "## Element Links\nabc: [[Other note]]\n\n%%\n## Drawing\n```compressed-json\nN4KAkARALgngDgUwgLgAQQQDwMYEMA2AlgCYBOuA7hADTgQBuCpAzoQPYB2KqATLZMzYBXUtiRoIACyhQ4zZAHoFAc0JRJQgEYA6bGwC2CgF7N6hbEcK4OCtptbErHALRCjhLE9RxIA\n```\n%%\n",
        encoding="utf-8",
    )
    units = extract_file(path).document.units  # type: ignore[union-attr]
    assert len(units) == 1
    text = units[0].text
    assert "Select Template" in text and "Users want deep links" in text
    assert "### 2) Notification Content" in text
    assert "^IZAHIiat" not in text and "N4KAkAR" not in text and "Switch to EXCALIDRAW" not in text
    assert "Other note" not in text


def test_missing_library_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pypdfium2", None)  # `import pypdfium2` now raises ImportError
    result = extract_file(sample("crazyones.pdf"))
    assert result.outcome is Outcome.UNSUPPORTED
    assert "pip install 'noteseek[documents]'" in result.reason and "crazyones.pdf" in result.reason


def test_unknown_kind_is_unsupported(tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.write_text("# a note", encoding="utf-8")
    assert extract_file(path).outcome is Outcome.UNSUPPORTED


def test_a_canvas_suffix_that_is_not_json_canvas_is_unsupported(tmp_path: Path) -> None:
    # gnuplot's HTML canvas terminal writes `.canvas` files that are HTML pages.
    path = tmp_path / "index.canvas"
    path.write_text("<!DOCTYPE HTML>\n<html><body>plot</body></html>\n", encoding="utf-8")
    result = extract_file(path)
    assert result.outcome is Outcome.UNSUPPORTED and "JSON Canvas" in result.reason


@pytest.mark.parametrize("fallback", [False, True])
def test_formulas_come_back_as_cached_values(fallback: bool) -> None:
    # C1 holds =SUM(A1:B1) with its cached result 25; both readers return the value, not the formula.
    from noteseek.documents import ExtractionLimits
    from noteseek.documents.sheets import extract_spreadsheet

    doc = extract_spreadsheet(
        sample("calamine-formula.xlsx"), ExtractionLimits(), kind="xlsx", fallback=fallback
    )
    assert doc.engine.startswith("openpyxl" if fallback else "python-calamine")
    assert doc.units[0].text == "[Sheet: Sheet1]\n10 | 15 | 25"
    assert "SUM" not in doc.units[0].text
