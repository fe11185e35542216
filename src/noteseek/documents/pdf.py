"""PDF text with pypdfium2 (PDFium, Apache-2.0/BSD): one stream per page, bookmarks as breadcrumbs.

Measured on the 311-page gnuplot manual (bench/documents_libraries.py, three runs on a shared
machine): PDFium 0.6-1.7 s, pypdf 9.5-26 s (12-21x slower) for the same 158k words; pypdf leaves 88
words cut at a line-end hyphen ("isosur-" / "face") where PDFium marks the 94 soft hyphens with
U+FFFE, which `_page_text` removes to give the word back. PyMuPDF is AGPL. A page with image objects
and an empty or garbage text layer is rendered (`ocr_dpi`) and read by OCR, up to `max_ocr_pages`
per document; the pages left (past the limit, OCR off or not installed) are listed as image-only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import (
    CorruptDocumentError,
    DocumentTooLargeError,
    EncryptedDocumentError,
    NoTextFoundError,
    NoTextLayerError,
)
from .formats import library_version, require
from .model import DocumentMetadata, ExtractedDocument, ExtractionLimits, Location, TextUnit
from .ocr import ocr_missing, recognise

__all__ = ["extract_pdf"]

_METADATA_KEYS = (
    "Title",
    "Author",
    "Subject",
    "Keywords",
    "Creator",
    "Producer",
    "CreationDate",
    "ModDate",
)


@dataclass(frozen=True)
class _Mark:
    page: int  # 0-based
    level: int
    title: str


def _outline(doc: Any) -> list[_Mark]:
    """Bookmarks with a valid destination, in page order (a stable sort keeps the outline's order)."""
    marks: list[_Mark] = []
    try:
        for item in doc.get_toc(max_depth=15):
            dest = item.get_dest()
            index = dest.get_index() if dest is not None else None
            title = " ".join((item.get_title() or "").split())
            if index is not None and title:
                marks.append(_Mark(index, item.level, title))
    except Exception:  # a broken outline must not cost the text; the pages still read
        return []
    return sorted(marks, key=lambda m: m.page)


def _title_at(text: str, title: str, start: int) -> int | None:
    """Where a bookmark's title starts in the page text (whitespace and case insensitive)."""
    words = [re.escape(w) for w in title.split()]
    if not words:
        return None
    match = re.compile(r"\s+".join(words), re.I).search(text, start)
    return match.start() if match else None


def _page_text(page: Any) -> str:
    textpage = page.get_textpage()
    try:
        text = str(textpage.get_text_range())
    finally:
        textpage.close()
    # PDFium marks a word hyphenated across a line break with U+FFFE and drops the break:
    # "isosur\ufffeface". Removing the mark gives the word back ("isosurface"), which search needs.
    text = text.replace("\ufffe", "")
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")


def _has_images(page: Any, image_type: int) -> bool:
    return any(obj.type == image_type for obj in page.get_objects(max_depth=3))


def _needs_ocr(text: str) -> bool:
    """A text layer too thin or too broken to stand for the page: under 20 visible characters
    (a scan with only a page number or a stamp), or less than half letters and digits, or
    replacement characters (a font without a Unicode map)."""
    visible = [c for c in text if not c.isspace()]
    if len(visible) < 20:
        return True
    good = sum(c.isalnum() for c in visible)
    broken = sum(c in "\ufffd\x00" or (c < " ") for c in visible)
    return good < len(visible) / 2 or broken > len(visible) / 10


@dataclass(frozen=True)
class _Wanted:
    index: int  # 0-based page
    section: tuple[str, ...]
    location: Location
    layer: str  # the page's own text layer (kept when OCR reads less)


def _render(page: Any, limits: ExtractionLimits) -> tuple[Any, int]:
    """The page as a Pillow image at `ocr_dpi` (and that resolution), smaller when that would
    pass `ocr_max_side`."""
    width, height = page.get_size()  # points (1/72 inch)
    scale = limits.ocr_dpi / 72
    longest = max(width, height) * scale
    if longest > limits.ocr_max_side:
        scale *= limits.ocr_max_side / longest
    bitmap = page.render(scale=scale)
    try:
        return bitmap.to_pil(), max(1, round(scale * 72))
    finally:
        bitmap.close()


def _ocr_pages(doc: Any, wanted: list[_Wanted], limits: ExtractionLimits) -> list[TextUnit]:
    units = []
    for want in wanted[: limits.max_ocr_pages]:
        page = doc[want.index]
        try:
            image, dpi = _render(page, limits)
        finally:
            page.close()
        text = recognise(image, limits, dpi=dpi)
        best = text if len(text.strip()) >= len(want.layer.strip()) else want.layer
        if best.strip():
            units.append(TextUnit(best, want.section, want.location))
    return units


def _metadata(doc: Any) -> DocumentMetadata:
    try:
        info = doc.get_metadata_dict(skip_empty=True)
    except Exception:
        return DocumentMetadata()
    fields = tuple(
        (k, str(info[k]).strip()) for k in _METADATA_KEYS if str(info.get(k, "")).strip()
    )
    values = dict(fields)
    return DocumentMetadata(title=values.get("Title"), author=values.get("Author"), fields=fields)


def _label(doc: Any, index: int) -> str | None:
    try:
        label = doc.get_page_label(index)
    except Exception:
        return None
    return label or None


def extract_pdf(path: Path, limits: ExtractionLimits) -> ExtractedDocument:
    """Every page's text as units located by page (and page label), under the bookmark path."""
    pdfium = require("pypdfium2", what="PDF files")
    raw = require("pypdfium2.raw", what="PDF files")
    try:
        doc = pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as exc:
        if "password" in str(exc).lower():
            raise EncryptedDocumentError("is password-protected") from exc
        raise CorruptDocumentError(f"cannot be read as a PDF ({exc})") from exc
    try:
        count = len(doc)
        if count > limits.max_pages:
            raise DocumentTooLargeError(f"has {count:,} pages (the limit is {limits.max_pages:,})")
        marks = _outline(doc)
        units: list[TextUnit] = []
        wanted: list[_Wanted] = []
        stack: list[tuple[int, str]] = []  # (level, title) of the open bookmarks
        mark_i = chars = 0
        for index in range(count):
            page = doc[index]
            try:
                text = _page_text(page)
                scan = _needs_ocr(text) and _has_images(page, raw.FPDF_PAGEOBJ_IMAGE)
            finally:
                page.close()
            chars += len(text)
            if chars > limits.max_chars:
                raise DocumentTooLargeError(
                    f"has more than {limits.max_chars:,} characters of text (by page {index + 1})"
                )
            location = Location(page=index + 1, page_label=_label(doc, index))
            start, pos = 0, 0
            section = tuple(t for _, t in stack)
            if scan:
                # Its bookmarks still open sections for the pages after it.
                while mark_i < len(marks) and marks[mark_i].page <= index:
                    mark = marks[mark_i]
                    mark_i += 1
                    while stack and stack[-1][0] >= mark.level:
                        stack.pop()
                    stack.append((mark.level, mark.title))
                wanted.append(_Wanted(index, tuple(t for _, t in stack), location, text))
                continue
            while mark_i < len(marks) and marks[mark_i].page <= index:
                mark = marks[mark_i]
                mark_i += 1
                found = _title_at(text, mark.title, pos) if mark.page == index else None
                # A few characters before the first heading (a running head, a page number) stay
                # with the text that follows instead of becoming a unit of their own.
                before = text[start:found].strip() if found is not None else ""
                if found is not None and len(before) >= limits.min_unit_chars:
                    units.append(TextUnit(text[start:found], section, location))
                    start = found
                if found is not None:
                    pos = found + len(mark.title)
                while stack and stack[-1][0] >= mark.level:
                    stack.pop()
                stack.append((mark.level, mark.title))
                section = tuple(t for _, t in stack)
            if text[start:].strip():
                units.append(TextUnit(text[start:], section, location))
        missing = ocr_missing() if wanted and limits.ocr else None
        read = wanted[: limits.max_ocr_pages] if wanted and limits.ocr and not missing else []
        left = wanted[len(read) :]
        if read:
            units.extend(_ocr_pages(doc, read, limits))
        # Pages not read by OCR keep whatever text layer they have.
        units.extend(TextUnit(w.layer, w.section, w.location) for w in left if w.layer.strip())
        units.sort(key=lambda u: u.location.page or 0)  # stable: a page keeps its order
        image_only = tuple(w.index + 1 for w in left if not w.layer.strip())
        if not units and read and not image_only:
            raise NoTextFoundError(
                "has no text layer, and OCR read no text on its image pages "
                f"({', '.join(str(w.index + 1) for w in read[:20])})"
            )
        if not units and image_only:
            raise NoTextLayerError(
                "has only images on its pages, no text"
                + (" (OCR is off)" if not limits.ocr else " (reading them needs OCR)"),
                image_only,
                missing_package=missing,
                ocr_wanted=not limits.ocr,
            )
        return ExtractedDocument(
            kind="pdf",
            engine=library_version("pypdfium2"),
            units=tuple(units),
            metadata=_metadata(doc),
            page_count=count,
            image_only_pages=image_only,
            ocr_pages=tuple(w.index + 1 for w in read),
            ocr_missing=missing,
            ocr_left=tuple(w.index + 1 for w in left),
        )
    finally:
        doc.close()
