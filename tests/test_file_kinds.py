"""The `Format` registry (core/file_kinds.py): every record complete, and true to its reader.

A record that names a sniffer, reader or extra that does not exist would make every file of that
kind fail at extraction time as "corrupt" (the generic handler catches the KeyError); these tests
make it fail here instead.
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import fields, replace
from pathlib import Path

import pytest

from noteseek import extras
from noteseek.core.file_kinds import (
    DOCUMENT_SUFFIXES,
    FORMATS,
    LOCATION_FIELDS,
    Format,
    document_kind,
    format_of,
)
from noteseek.documents import Location, Outcome, extract_file
from noteseek.documents.sniff import SNIFFERS

from .documents_samples import sample

# One real file of each kind: a committed sample, or text written here for the kinds without one.
_SAMPLES = {
    "pdf": "crazyones.pdf",
    "pptx": "test_slides.pptx",
    "docx": "test.docx",
    "xlsx": "datasets.xlsx",
    "xls": "deaths.xls",
    "ods": "calamine-base.ods",
    "csv": "mtcars.csv",
    "html": "sheet-geometry.html",
    "txt": "crazyones.txt",
    "canvas": "sample.canvas",
}
_WRITTEN = {
    "tsv": ("table.tsv", "name\tvalue\nalpha\t1\nbeta\t2\n"),
    "excalidraw": (
        "flow.excalidraw.md",
        "---\nexcalidraw-plugin: parsed\n---\n# Excalidraw Data\n\n## Text Elements\n"
        "Select Template ^IZAHIiat\n\n%%\n## Drawing\n```json\n{}\n```\n%%\n",
    ),
}


def problems(record: Format) -> list[str]:
    """What is missing or wrong in one record (empty when it is complete)."""
    found: list[str] = []
    if record.sniff not in SNIFFERS:
        found.append(f"sniffer {record.sniff!r} is not in documents.sniff.SNIFFERS")
    if (record.sniff == "zip") != (record.zip_member is not None):
        found.append("a zip kind names the member that proves it (and only a zip kind does)")
    module, _, function = record.reader.partition(":")
    try:
        reader = getattr(importlib.import_module(f"noteseek.documents.{module}"), function)
    except (ImportError, AttributeError) as exc:
        found.append(f"reader {record.reader!r} does not exist ({exc})")
    else:
        params = inspect.signature(reader).parameters
        found.extend(
            f"reader {record.reader!r} takes no {option!r} option"
            for option in record.options
            if option not in params
        )
    if record.extra is not None and record.extra not in extras.EXTRAS:
        found.append(f"extra {record.extra!r} is not an extra of pyproject.toml")
    if bool(record.modules) != (record.extra is not None):
        found.append("a reader that needs an extra names its modules, and only then")
    found.extend(
        f"module {m!r} is not installed by the {record.extra!r} extra"
        for m in record.modules
        if m not in extras.EXTRAS.get(record.extra or "", ())
    )
    found.extend(
        f"location field {f!r} unknown" for f in record.location if f not in LOCATION_FIELDS
    )
    if not record.suffixes or any(s != s.lower() or not s.startswith(".") for s in record.suffixes):
        found.append("suffixes are lower case and start with '.'")
    return found


@pytest.mark.parametrize("record", FORMATS, ids=lambda f: f.kind)
def test_every_record_is_complete(record: Format) -> None:
    assert problems(record) == []


def test_an_incomplete_record_is_caught() -> None:
    # The EPUB case: a new kind whose sniffer and reader were never written.
    epub = Format("epub", (".epub",), "epub", "epub:extract_epub")  # type: ignore[arg-type]
    found = problems(epub)
    assert any("sniffer 'epub'" in p for p in found)
    assert any("reader 'epub:extract_epub' does not exist" in p for p in found)
    pdf = format_of("pdf")
    assert pdf is not None
    assert problems(replace(pdf, extra="pdf"))  # no such extra
    assert problems(replace(pdf, zip_member="x.xml"))  # not a zip kind
    assert problems(replace(pdf, options=("kind",)))  # extract_pdf takes no kind


def test_kinds_and_suffixes_are_unique() -> None:
    kinds = [f.kind for f in FORMATS]
    assert len(kinds) == len(set(kinds))
    assert len(DOCUMENT_SUFFIXES) == len(set(DOCUMENT_SUFFIXES))
    for record in FORMATS:
        for suffix in record.suffixes:
            assert document_kind(f"x{suffix}") == record.kind
            assert document_kind(f"Folder/X{suffix.upper()}") == record.kind
    assert document_kind("x.md") is None and document_kind(".pdf") is None


def _file_of(kind: str, tmp_path: Path) -> Path:
    if kind in _SAMPLES:
        return sample(_SAMPLES[kind])
    if kind == "image":
        from .ocr_images import screenshot

        path = tmp_path / "shot.png"
        screenshot(path, ["Quarterly revenue grew"])
        return path
    name, text = _WRITTEN[kind]
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("record", FORMATS, ids=lambda f: f.kind)
def test_a_real_file_of_each_kind_reads_with_the_records_locations(
    record: Format, tmp_path: Path
) -> None:
    result = extract_file(_file_of(record.kind, tmp_path))
    assert result.outcome is Outcome.OK, result.reason
    assert result.document is not None and result.document.units
    assert result.document.kind == record.kind
    allowed = set(record.location)
    used = {
        field.name
        for unit in result.document.units
        for field in fields(Location)
        if getattr(unit.location, field.name) is not None
    }
    assert used <= allowed, f"{record.kind} units set {used - allowed}, not in its record"
