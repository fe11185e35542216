"""Which files of a vault are indexed, by name: Markdown notes and the document kinds beside them
(images included: their text comes from OCR).

Pure (no I/O), in the core so that the vault walk, the file watcher's rules and the extraction layer
(`noteseek.documents`) read one table: a name is a note, a document of one kind, or neither.
"""

from __future__ import annotations

from pathlib import PurePath

__all__ = [
    "DOCUMENT_SUFFIXES",
    "EXCALIDRAW_SUFFIX",
    "IMAGE_KIND",
    "NOTE_SUFFIXES",
    "document_kind",
    "is_note_file_name",
]

NOTE_SUFFIXES = (".md",)
IMAGE_KIND = "image"  # every image suffix is this one kind: its text comes from OCR
EXCALIDRAW_SUFFIX = ".excalidraw.md"

# Longest suffix first: `.excalidraw.md` must win over `.md` (a drawing, not a note: its Markdown
# holds the drawing's compressed JSON, of which only the "Text Elements" section is text).
_KINDS: tuple[tuple[str, str], ...] = (
    (EXCALIDRAW_SUFFIX, "excalidraw"),
    (".pdf", "pdf"),
    (".pptx", "pptx"),
    (".docx", "docx"),
    (".xlsx", "xlsx"),
    (".xlsm", "xlsx"),
    (".xls", "xls"),
    (".ods", "ods"),
    (".csv", "csv"),
    (".tsv", "tsv"),
    (".tab", "tsv"),
    (".html", "html"),
    (".htm", "html"),
    (".xhtml", "html"),
    (".txt", "txt"),
    (".text", "txt"),
    (".canvas", "canvas"),
    # Images are read by OCR (the `ocr` extra); an Excalidraw or canvas PNG export is a `.png`.
    (".png", "image"),
    (".jpg", "image"),
    (".jpeg", "image"),
    (".webp", "image"),
    (".tif", "image"),
    (".tiff", "image"),
    (".gif", "image"),
    (".bmp", "image"),
)
DOCUMENT_SUFFIXES: tuple[str, ...] = tuple(s for s, _ in _KINDS)


def document_kind(path: str | PurePath) -> str | None:
    """The document kind a file name stands for (`"pdf"`, `"xlsx"`, ...), or None for other files
    (Markdown notes included)."""
    name = PurePath(path).name.lower()
    for suffix, kind in _KINDS:
        if name.endswith(suffix) and len(name) > len(suffix):
            return kind
    return None


def is_note_file_name(name: str) -> bool:
    """A Markdown note's file name (`.md`, any case), a drawing's `.excalidraw.md` excepted."""
    return name.lower().endswith(NOTE_SUFFIXES) and document_kind(name) is None
