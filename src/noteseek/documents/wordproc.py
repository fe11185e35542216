"""Word .docx with python-docx: paragraphs styled "Heading N" (and "Title") open sections.

Body paragraphs and tables come in document order (`iter_inner_content`); a table gives one line per
row, a merged cell once, nested tables inside their cell. Text boxes and footnotes are not reached by
python-docx and are not read.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .errors import CorruptDocumentError
from .formats import library_version, require
from .model import DocumentMetadata, ExtractedDocument, ExtractionLimits, TextUnit
from .office import core_metadata

__all__ = ["extract_docx"]

_HEADING = re.compile(r"^heading\s*([1-9])$", re.I)


def _heading_level(paragraph: Any) -> int | None:
    try:
        name = (paragraph.style.name or "") if paragraph.style is not None else ""
    except (KeyError, AttributeError):
        return None
    if name.lower() == "title":
        return 0
    match = _HEADING.match(name.strip())
    return int(match.group(1)) if match else None


def _table_lines(table: Any, depth: int = 0) -> Iterator[str]:
    for row in table.rows:
        seen: set[int] = set()
        cells: list[str] = []
        for cell in row.cells:
            if id(cell._tc) in seen:  # a merged cell is returned once per grid column it spans
                continue
            seen.add(id(cell._tc))
            text = " ".join(" ".join(p.text for p in cell.paragraphs).split())
            if text:
                cells.append(text)
            if depth < 8:
                for inner in cell.tables:
                    cells.extend(_table_lines(inner, depth + 1))
        if cells:
            yield " | ".join(cells)


def extract_docx(path: Path, limits: ExtractionLimits) -> ExtractedDocument:
    """One unit per heading section, the breadcrumb being the headings above it."""
    docx = require("docx", what="Word files")
    try:
        document = docx.Document(str(path))
        blocks = list(document.iter_inner_content())
    except (KeyError, ValueError, AttributeError) as exc:
        raise CorruptDocumentError(f"cannot be read as a Word document ({exc})") from exc
    units: list[TextUnit] = []
    stack: list[tuple[int, str]] = []
    lines: list[str] = []

    def flush() -> None:
        text = "\n".join(lines).strip()
        if text:
            units.append(TextUnit(text, tuple(t for _, t in stack)))
        lines.clear()

    for block in blocks:
        if hasattr(block, "rows"):
            lines.extend(_table_lines(block))
            continue
        text = block.text.strip()
        level = _heading_level(block)
        if level is not None and text:
            flush()
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, " ".join(text.split())))
            lines.append(text)  # the heading stays in the text too, as it does for notes
        elif text:
            lines.append(text)
    flush()
    try:
        metadata = core_metadata(document.core_properties)
    except Exception:  # a missing docProps/core.xml costs the properties, not the text
        metadata = DocumentMetadata()
    return ExtractedDocument(
        kind="docx", engine=library_version("python-docx"), units=tuple(units), metadata=metadata
    )
