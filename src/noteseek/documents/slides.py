"""PowerPoint .pptx with python-pptx: one unit per slide, title first, then every shape's text.

Group shapes are walked recursively (a grouped text box is ordinary slide text), tables give one line
per row, charts their title, and the speaker notes come last. python-pptx is the only maintained
reader of the format for Python (MIT).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .errors import CorruptDocumentError, DocumentTooLargeError
from .formats import library_version, require
from .model import DocumentMetadata, ExtractedDocument, ExtractionLimits, Location, TextUnit
from .office import core_metadata

__all__ = ["extract_pptx"]


def _frame_text(shape: Any) -> str:
    return "\n".join(p.text for p in shape.text_frame.paragraphs).strip()


def _shape_texts(shapes: Any, skip: int | None, depth: int = 0) -> Iterator[str]:
    for shape in shapes:
        if skip is not None and shape.shape_id == skip and depth == 0:
            continue
        if getattr(shape, "shape_type", None) == 6 or hasattr(shape, "shapes"):  # 6: GROUP
            if depth < 32:
                yield from _shape_texts(shape.shapes, skip, depth + 1)
            continue
        if getattr(shape, "has_text_frame", False) and shape.has_text_frame:
            text = _frame_text(shape)
            if text:
                yield text
        if getattr(shape, "has_table", False) and shape.has_table:
            lines = []
            for row in shape.table.rows:
                # A merged cell's spanned neighbours repeat its text; only the origin counts.
                cells = [" ".join(c.text.split()) for c in row.cells if not c.is_spanned]
                line = " | ".join(c for c in cells if c)
                if line:
                    lines.append(line)
            if lines:
                yield "\n".join(lines)
        if getattr(shape, "has_chart", False) and shape.has_chart:
            chart = shape.chart
            if chart.has_title and chart.chart_title.has_text_frame:
                text = _frame_text(chart.chart_title)
                if text:
                    yield text


def extract_pptx(path: Path, limits: ExtractionLimits) -> ExtractedDocument:
    """Slides in order, each one unit located by its 1-based number."""
    pptx = require("pptx", what="PowerPoint files")
    try:
        prs = pptx.Presentation(str(path))
        slides = list(prs.slides)
    except (KeyError, ValueError, AttributeError) as exc:
        raise CorruptDocumentError(f"cannot be read as a PowerPoint deck ({exc})") from exc
    if len(slides) > limits.max_pages:
        raise DocumentTooLargeError(
            f"has {len(slides):,} slides (the limit is {limits.max_pages:,})"
        )
    units: list[TextUnit] = []
    for number, slide in enumerate(slides, start=1):
        title_shape = slide.shapes.title
        title = ""
        if title_shape is not None and title_shape.has_text_frame:
            title = " ".join(_frame_text(title_shape).split())
        parts = [title] if title else []
        parts.extend(_shape_texts(slide.shapes, title_shape.shape_id if title_shape else None))
        if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
            notes = slide.notes_slide.notes_text_frame.text.strip()
            if notes:
                parts.append(notes)
        text = "\n\n".join(parts)
        if text.strip():
            section = (title,) if title else (f"Slide {number}",)
            units.append(TextUnit(text, section, Location(slide=number)))
    try:
        metadata = core_metadata(prs.core_properties)
    except Exception:  # missing or broken docProps/core.xml: the slides still count
        metadata = DocumentMetadata()
    return ExtractedDocument(
        kind="pptx",
        engine=library_version("python-pptx"),
        units=tuple(units),
        metadata=metadata,
        page_count=len(slides),
    )
