"""Check that a file's first bytes match its name before any parser sees it.

A name is a claim, not a fact: a `.pdf` saved from a browser is often an HTML error page, a `.xlsx`
may be a password-protected OLE container or a renamed `.docx`. Hand-written rather than `puremagic`
or `filetype`: those name the container (zip, OLE) but the decision needs the members inside it
(`xl/workbook.xml`, `EncryptedPackage`), and the signatures that matter here are a dozen.
"""

from __future__ import annotations

from pathlib import Path
from stat import S_ISREG

from .archive import check_zip
from .errors import (
    CorruptDocumentError,
    DocumentTooLargeError,
    EncryptedDocumentError,
    over_limit,
)
from .model import ExtractionLimits

__all__ = ["sniff"]

_HEAD = 8192
_OLE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_ZIP = (b"PK\x03\x04", b"PK\x05\x06")
# (magic, what it is) for binary formats a text document must not be.
_BINARY = (
    (b"%PDF-", "a PDF"),
    (b"PK\x03\x04", "a zip archive"),
    (_OLE, "an OLE (old Office) file"),
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"\x7fELF", "an executable"),
    (b"\x1f\x8b", "a gzip archive"),
)
# The member each zip-based kind must have.
_ZIP_MARKER = {
    "docx": "word/document.xml",
    "pptx": "ppt/presentation.xml",
    "xlsx": "xl/workbook.xml",
    "ods": "content.xml",
}
_ZIP_KINDS = {
    "word/document.xml": "a Word document",
    "ppt/presentation.xml": "a PowerPoint deck",
    "xl/workbook.xml": "an Excel workbook",
}
_TEXT_KINDS = frozenset({"csv", "tsv", "txt", "html", "canvas", "excalidraw"})
# The signatures of the image formats Pillow reads for OCR (WebP: RIFF....WEBP).
_IMAGE_MAGIC = (
    b"\x89PNG\r\n\x1a\n",
    b"\xff\xd8\xff",
    b"GIF87a",
    b"GIF89a",
    b"II*\x00",
    b"MM\x00*",
    b"BM",
)


def _is_image(head: bytes) -> bool:
    return head.startswith(_IMAGE_MAGIC) or (head[:4] == b"RIFF" and head[8:12] == b"WEBP")


def _looks_like(head: bytes) -> str:
    """A short guess at what the content is, for the reason of a mismatch."""
    stripped = head.lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    for magic, what in _BINARY:
        if head.startswith(magic):
            return what
    if stripped.startswith((b"<!doctype html", b"<html", b"<head", b"<body")):
        return "HTML"
    if stripped.startswith(b"<?xml") or stripped.startswith(b"<"):
        return "XML or HTML"
    if stripped.startswith((b"{", b"[")):
        return "JSON"
    return "text" if b"\x00" not in head else "binary data"


def sniff(path: Path, kind: str, *, limits: ExtractionLimits) -> None:
    """Raise a `DocumentError` when `path` is too big, empty or not the `kind` its name says."""
    stat = path.stat()
    if not S_ISREG(stat.st_mode):
        # Replaced by a FIFO since the indexer hashed it: opening one would wait for a writer.
        raise CorruptDocumentError("is no longer a regular file")
    size = stat.st_size
    if size > limits.max_file_bytes:
        raise DocumentTooLargeError(f"is {over_limit(size, limits.max_file_bytes)}")
    with path.open("rb") as handle:
        head = handle.read(_HEAD)
    if kind in _TEXT_KINDS:
        if head.startswith(_BINARY[0][0]) or any(head.startswith(m) for m, _ in _BINARY[1:]):
            raise CorruptDocumentError(f"is not a {kind} text file: it is {_looks_like(head)}")
        return
    if not head:
        raise CorruptDocumentError(f"is empty (0 bytes), not a {kind.upper()} file")
    if kind == "image":
        if not _is_image(head):
            raise CorruptDocumentError(
                f"is not an image noteseek reads: its content looks like {_looks_like(head)}"
            )
        return
    if kind == "pdf":
        # The PDF spec lets a header sit anywhere in the first 1,024 bytes.
        if b"%PDF-" not in head[:1024]:
            raise CorruptDocumentError(f"is not a PDF: its content looks like {_looks_like(head)}")
        return
    if head.startswith(_OLE):
        if kind == "xls":
            return
        # An encrypted OOXML file is an OLE container with an EncryptedPackage stream.
        if "EncryptedPackage".encode("utf-16-le") in _read_all(path, limit=limits.max_file_bytes):
            raise EncryptedDocumentError("is password-protected (an encrypted Office file)")
        raise CorruptDocumentError(
            f"is an old binary Office file (OLE), not {kind.upper()}; save it as .{kind}"
        )
    if kind == "xls":
        if head.startswith(_ZIP):
            return  # an .xlsx saved as .xls: the spreadsheet reader detects the real format
        raise CorruptDocumentError(f"is not an Excel .xls file: it looks like {_looks_like(head)}")
    if not head.startswith(_ZIP):
        raise CorruptDocumentError(
            f"is not a {kind.upper()} file (a zip container): it looks like {_looks_like(head)}"
        )
    members = check_zip(path, limits=limits)
    marker = _ZIP_MARKER[kind]
    if marker not in members:
        actual = next((what for m, what in _ZIP_KINDS.items() if m in members), "another zip")
        raise CorruptDocumentError(f"is not a {kind.upper()} file: it holds {actual}")


def _read_all(path: Path, *, limit: int) -> bytes:
    with path.open("rb") as handle:
        return handle.read(limit)
