"""Where the real sample documents are, and generators for hostile ones (written into a tmp folder)."""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path

SAMPLES = Path(__file__).parent / "data" / "documents"


def sample(name: str) -> Path:
    """A committed real sample (see tests/data/documents/ATTRIBUTION.md)."""
    path = SAMPLES / name
    assert path.exists(), f"missing sample {path}"
    return path


def small_xlsx() -> bytes:
    """A valid one-sheet workbook made with openpyxl: header + two rows."""
    import openpyxl

    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Data"
    sheet.append(["name", "value"])
    sheet.append(["alpha", 1])
    sheet.append(["beta", 2])
    buffer = io.BytesIO()
    workbook.save(buffer)
    return buffer.getvalue()


def _rewrite_sheet(data: bytes, change: object) -> bytes:
    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            content = source.read(info.filename)
            if info.filename == "xl/worksheets/sheet1.xml":
                content = change(content)  # type: ignore[operator]
            target.writestr(info.filename, content)
    return out.getvalue()


def _far_cell_ods() -> bytes:
    """An OpenDocument sheet whose one far cell (row 1,048,572, column 16,384) spans a huge grid."""
    ns = (
        'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
        'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
        'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"'
    )
    content = (
        f'<?xml version="1.0" encoding="UTF-8"?><office:document-content {ns} office:version="1.2">'
        '<office:body><office:spreadsheet><table:table table:name="Data">'
        '<table:table-row><table:table-cell office:value-type="string"><text:p>name</text:p>'
        "</table:table-cell></table:table-row>"
        '<table:table-row table:number-rows-repeated="1048570"><table:table-cell/></table:table-row>'
        '<table:table-row><table:table-cell table:number-columns-repeated="16383"/>'
        '<table:table-cell office:value-type="string"><text:p>farthest</text:p></table:table-cell>'
        "</table:table-row></table:table></office:spreadsheet></office:body></office:document-content>"
    )
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("mimetype", "application/vnd.oasis.opendocument.spreadsheet")
        archive.writestr("content.xml", content, compress_type=zipfile.ZIP_DEFLATED)
        archive.writestr(
            "META-INF/manifest.xml",
            '<?xml version="1.0"?><manifest:manifest '
            'xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"/>',
        )
    return out.getvalue()


def write_hostile(folder: Path) -> dict[str, Path]:
    """Every generated hostile file, by a short name."""
    folder.mkdir(parents=True, exist_ok=True)
    pdf = sample("crazyones.pdf").read_bytes()
    files: dict[str, bytes] = {}
    files["truncated.pdf"] = pdf[: len(pdf) // 2]
    # Point startxref at garbage: the cross-reference table cannot be found where it is declared.
    files["broken-xref.pdf"] = re.sub(rb"startxref\s+\d+", b"startxref\n999999", pdf)
    files["html-named.pdf"] = b"<!DOCTYPE html><html><body><h1>404 Not Found</h1></body></html>"
    files["empty.pdf"] = b""
    files["empty.xlsx"] = b""
    files["empty.txt"] = b""
    files["zip-named.docx"] = small_xlsx()  # a workbook with a Word document's name
    files["huge-dimension.xlsx"] = _rewrite_sheet(
        small_xlsx(),
        lambda d: re.sub(rb'<dimension ref="[^"]*"', b'<dimension ref="A1:XFD1048576"', d),
    )
    # One real cell at the last row and column: calamine allocates the dense grid and aborts.
    files["far-cell.xlsx"] = _rewrite_sheet(
        small_xlsx(),
        lambda d: d.replace(
            b"</sheetData>",
            b'<row r="1048576"><c r="XFD1048576" t="inlineStr"><is><t>farthest</t></is></c></row></sheetData>',
        ),
    )
    files["zip-bomb.xlsx"] = _rewrite_sheet(
        small_xlsx(),
        lambda d: d.replace(b"</worksheet>", b" " * (64 * 1024 * 1024) + b"</worksheet>"),
    )
    files["binary.csv"] = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
    files["bad.canvas"] = b'{"nodes": [ {"id": "a", "type": "text", "text": "unterminated'
    files["deep.html"] = (
        b"<html><body>"
        + b"<div>" * 100_000
        + b"deep text"
        + b"</div>" * 100_000
        + b"</body></html>"
    )
    files["far-cell.ods"] = _far_cell_ods()
    paths = {}
    for name, content in files.items():
        path = folder / name
        path.write_bytes(content)
        paths[name] = path
    return paths
