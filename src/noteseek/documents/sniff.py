"""Check that a file's first bytes match its name before any parser sees it.

A name is a claim, not a fact: a `.pdf` saved from a browser is often an HTML error page, a `.xlsx`
may be a password-protected OLE container or a renamed `.docx`. Hand-written rather than `puremagic`
or `filetype`: those name the container (zip, OLE) but the decision needs the members inside it
(`xl/workbook.xml`, `EncryptedPackage`), and the signatures that matter here are a dozen.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from stat import S_ISREG

from ..core.file_kinds import Format, format_of
from .archive import check_zip
from .errors import (
    CorruptDocumentError,
    DocumentTooLargeError,
    EncryptedDocumentError,
    UnsupportedDocumentError,
    over_limit,
)
from .model import ExtractionLimits

__all__ = ["SNIFFERS", "sniff"]

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
# What a zip holding one of these members is, for the reason of a mismatch.
_ZIP_KINDS = {
    "word/document.xml": "a Word document",
    "ppt/presentation.xml": "a PowerPoint deck",
    "xl/workbook.xml": "an Excel workbook",
}
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
    record = format_of(kind)
    if record is None:
        raise UnsupportedDocumentError(f"is a {kind!r} file, which noteseek does not read")
    stat = path.stat()
    if not S_ISREG(stat.st_mode):
        # Replaced by a FIFO since the indexer hashed it: opening one would wait for a writer.
        raise CorruptDocumentError("is no longer a regular file")
    size = stat.st_size
    if size > limits.max_file_bytes:
        raise DocumentTooLargeError(f"is {over_limit(size, limits.max_file_bytes)}")
    with path.open("rb") as handle:
        head = handle.read(_HEAD)
    if record.sniff != "text" and not head:
        raise CorruptDocumentError(f"is empty (0 bytes), not a {kind.upper()} file")
    SNIFFERS[record.sniff](path, head, record, limits)


def _text(path: Path, head: bytes, record: Format, limits: ExtractionLimits) -> None:
    """A text kind: anything but one of the binary formats (an empty file is empty text)."""
    if any(head.startswith(magic) for magic, _ in _BINARY):
        raise CorruptDocumentError(f"is not a {record.kind} text file: it is {_looks_like(head)}")


def _image(path: Path, head: bytes, record: Format, limits: ExtractionLimits) -> None:
    if not _is_image(head):
        raise CorruptDocumentError(
            f"is not an image noteseek reads: its content looks like {_looks_like(head)}"
        )


def _pdf(path: Path, head: bytes, record: Format, limits: ExtractionLimits) -> None:
    # The PDF spec lets a header sit anywhere in the first 1,024 bytes.
    if b"%PDF-" not in head[:1024]:
        raise CorruptDocumentError(f"is not a PDF: its content looks like {_looks_like(head)}")


def _xls(path: Path, head: bytes, record: Format, limits: ExtractionLimits) -> None:
    """An OLE file, or an .xlsx saved as .xls (the spreadsheet reader detects the real format)."""
    if not head.startswith((_OLE, *_ZIP)):
        raise CorruptDocumentError(f"is not an Excel .xls file: it looks like {_looks_like(head)}")


def _zip(path: Path, head: bytes, record: Format, limits: ExtractionLimits) -> None:
    """A zip container (OOXML, OpenDocument) holding the member that proves its kind."""
    kind = record.kind
    if head.startswith(_OLE):
        # An encrypted OOXML file is an OLE container with an EncryptedPackage stream.
        if "EncryptedPackage".encode("utf-16-le") in _read_all(path, limit=limits.max_file_bytes):
            raise EncryptedDocumentError("is password-protected (an encrypted Office file)")
        raise CorruptDocumentError(
            f"is an old binary Office file (OLE), not {kind.upper()}; save it as .{kind}"
        )
    if not head.startswith(_ZIP):
        raise CorruptDocumentError(
            f"is not a {kind.upper()} file (a zip container): it looks like {_looks_like(head)}"
        )
    members = check_zip(path, limits=limits)
    if record.zip_member not in members:
        actual = next((what for m, what in _ZIP_KINDS.items() if m in members), "another zip")
        raise CorruptDocumentError(f"is not a {kind.upper()} file: it holds {actual}")


# `Format.sniff` -> its check, given the file, its first bytes (not empty but for text) and record.
SNIFFERS: dict[str, Callable[[Path, bytes, Format, ExtractionLimits], None]] = {
    "text": _text,
    "image": _image,
    "pdf": _pdf,
    "xls": _xls,
    "zip": _zip,
}


def _read_all(path: Path, *, limit: int) -> bytes:
    with path.open("rb") as handle:
        return handle.read(limit)
