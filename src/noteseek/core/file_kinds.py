"""Which files of a vault are indexed, by name, and the one registry of document formats.

A vault holds Markdown notes and documents beside them. Each document kind is one `Format` record
in `FORMATS`: its suffixes, how its first bytes are checked (`noteseek.documents.sniff`), the
reader that extracts it, the extra and modules that reader imports, and which location fields its
text units carry. Adding a format means one reader module plus one record;
tests/test_file_kinds.py fails when a record is incomplete (a reader or sniffer that does not
exist, an extra that does not, a location field the reader never sets).

Pure data in the core, with the reader named rather than imported: the vault walk, the file
watcher and a search's hits ask a file's kind once per file, on the per-prompt hook's path, and
must not load the extraction layer (`noteseek.documents`, which resolves the names).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePath
from typing import Literal

__all__ = [
    "DOCUMENT_SUFFIXES",
    "EXCALIDRAW_SUFFIX",
    "FORMATS",
    "IMAGE_KIND",
    "LOCATION_FIELDS",
    "NOTE_SUFFIXES",
    "Format",
    "document_kind",
    "format_of",
    "is_note_file_name",
]

NOTE_SUFFIXES = (".md",)
IMAGE_KIND = "image"  # every image suffix is this one kind: its text comes from OCR
EXCALIDRAW_SUFFIX = ".excalidraw.md"

# The first-byte checks of `noteseek.documents.sniff.SNIFFERS`, by name.
Sniffer = Literal["text", "pdf", "image", "zip", "xls"]
# The `documents.Location` fields a reader may set on its units.
LocationField = Literal["page", "page_label", "slide", "sheet", "rows"]
LOCATION_FIELDS: tuple[LocationField, ...] = ("page", "page_label", "slide", "sheet", "rows")


@dataclass(frozen=True)
class Format:
    """One document kind: everything the walk, the sniffer and the extractor need to know of it."""

    kind: str  # the stored kind ("pdf"); several suffixes may share one
    suffixes: tuple[str, ...]  # lower case, with the dot
    sniff: Sniffer  # how the first bytes are checked before any parser sees them
    reader: str  # "module:function" in noteseek.documents, called (path, limits, **options)
    # Keyword options the reader takes: "kind" (one reader for several kinds), "fallback" (it has
    # a second reader that the extraction pool retries a crashed file with).
    options: tuple[Literal["kind", "fallback"], ...] = ()
    zip_member: str | None = None  # sniff "zip": the member that proves the kind (not "a zip")
    extra: str | None = None  # the optional extra its reader needs (None: standard library only)
    modules: tuple[str, ...] = ()  # that extra's modules the reader imports (the first is vital)
    location: tuple[LocationField, ...] = ()  # where in the document a unit is; () = no place


FORMATS: tuple[Format, ...] = (
    # `.excalidraw.md` first: it must win over a note's `.md` (a drawing, not a note: its Markdown
    # holds the drawing's compressed JSON, of which only the "Text Elements" section is text).
    Format("excalidraw", (EXCALIDRAW_SUFFIX,), "text", "excalidraw:extract_excalidraw"),
    Format(
        "pdf",
        (".pdf",),
        "pdf",
        "pdf:extract_pdf",
        extra="documents",
        modules=("pypdfium2",),
        location=("page", "page_label"),
    ),
    Format(
        "pptx",
        (".pptx",),
        "zip",
        "slides:extract_pptx",
        zip_member="ppt/presentation.xml",
        extra="documents",
        modules=("pptx",),
        location=("slide",),
    ),
    Format(
        "docx",
        (".docx",),
        "zip",
        "wordproc:extract_docx",
        zip_member="word/document.xml",
        extra="documents",
        modules=("docx",),
    ),
    Format(
        "xlsx",
        (".xlsx", ".xlsm"),
        "zip",
        "sheets:extract_spreadsheet",
        options=("kind", "fallback"),
        zip_member="xl/workbook.xml",
        extra="documents",
        modules=("python_calamine", "openpyxl"),
        location=("sheet", "rows"),
    ),
    # An .xls is an OLE file, or an .xlsx saved under the old name: calamine reads both.
    Format(
        "xls",
        (".xls",),
        "xls",
        "sheets:extract_spreadsheet",
        options=("kind",),
        extra="documents",
        modules=("python_calamine",),
        location=("sheet", "rows"),
    ),
    Format(
        "ods",
        (".ods",),
        "zip",
        "sheets:extract_spreadsheet",
        options=("kind",),
        zip_member="content.xml",
        extra="documents",
        modules=("python_calamine",),
        location=("sheet", "rows"),
    ),
    # Text kinds: chardet (documents extra) only matters for text that is not UTF-8, so it is not
    # listed as a module they need.
    Format(
        "csv",
        (".csv",),
        "text",
        "delimited:extract_delimited",
        options=("kind",),
        location=("rows",),
    ),
    Format(
        "tsv",
        (".tsv", ".tab"),
        "text",
        "delimited:extract_delimited",
        options=("kind",),
        location=("rows",),
    ),
    Format(
        "html",
        (".html", ".htm", ".xhtml"),
        "text",
        "webpage:extract_html",
        extra="documents",
        modules=("selectolax",),
    ),
    Format("txt", (".txt", ".text"), "text", "plaintext:extract_text"),
    Format("canvas", (".canvas",), "text", "canvas:extract_canvas"),
    # Images are read by OCR (the `ocr` extra); an Excalidraw or canvas PNG export is a `.png`. A
    # multi-frame TIFF or GIF numbers its frames as pages.
    Format(
        IMAGE_KIND,
        (".png", ".jpg", ".jpeg", ".webp", ".tif", ".tiff", ".gif", ".bmp"),
        "image",
        "images:extract_image",
        extra="ocr",
        modules=("tesserocr", "tessdata", "PIL"),
        location=("page",),
    ),
)

_BY_KIND = {f.kind: f for f in FORMATS}
# Longest suffix first, so a compound suffix (`.excalidraw.md`) wins over its tail.
_SUFFIX_KINDS: tuple[tuple[str, str], ...] = tuple(
    sorted(((s, f.kind) for f in FORMATS for s in f.suffixes), key=lambda sk: -len(sk[0]))
)
DOCUMENT_SUFFIXES: tuple[str, ...] = tuple(s for s, _ in _SUFFIX_KINDS)


def format_of(kind: str) -> Format | None:
    """The `Format` record of a document kind (`"pdf"`), or None for a kind noteseek does not read."""
    return _BY_KIND.get(kind)


def document_kind(path: str | PurePath) -> str | None:
    """The document kind a file name stands for (`"pdf"`, `"xlsx"`, ...), or None for other files
    (Markdown notes included)."""
    name = PurePath(path).name.lower()
    for suffix, kind in _SUFFIX_KINDS:
        if name.endswith(suffix) and len(name) > len(suffix):
            return kind
    return None


def is_note_file_name(name: str) -> bool:
    """A Markdown note's file name (`.md`, any case), a drawing's `.excalidraw.md` excepted."""
    return name.lower().endswith(NOTE_SUFFIXES) and document_kind(name) is None
