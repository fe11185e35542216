"""Why a document could not be read. Raised inside extraction, turned into an `Outcome` by `extract`."""

from __future__ import annotations

from ..errors import NoteseekError
from .model import Outcome

__all__ = [
    "CorruptDocumentError",
    "DocumentError",
    "DocumentTooLargeError",
    "EncryptedDocumentError",
    "NoTextFoundError",
    "NoTextLayerError",
    "UnsupportedDocumentError",
    "over_limit",
]

_MIB = 1024 * 1024


def over_limit(size: float, limit: float) -> str:
    """`1,024.5 MiB, more than the 1,024 MiB limit`: a size past a limit, with as many decimals
    as it takes to differ from the limit, so it never reads as if it passed."""
    shown = f"{limit / _MIB:,.0f}"
    for decimals in range(4):
        if round(size / _MIB, decimals) > round(limit / _MIB, decimals):
            return f"{size / _MIB:,.{decimals}f} MiB, more than the {shown} MiB limit"
    return f"{int(size):,} bytes, more than the {shown} MiB limit"


class DocumentError(NoteseekError):
    """A document that cannot be indexed; `outcome` says which kind of failure it is."""

    outcome = Outcome.CORRUPT


class EncryptedDocumentError(DocumentError):
    """The document needs a password."""

    outcome = Outcome.ENCRYPTED


class NoTextLayerError(DocumentError):
    """Every page with content is an image, and OCR is off or not installed."""

    outcome = Outcome.NO_TEXT

    def __init__(
        self,
        message: str,
        image_only_pages: tuple[int, ...],
        *,
        missing_package: str | None = None,
        ocr_wanted: bool = False,
    ) -> None:
        super().__init__(message)
        self.image_only_pages = image_only_pages
        self.missing_package = missing_package  # the OCR package that would read them
        self.ocr_wanted = ocr_wanted  # OCR was off for this extraction


class NoTextFoundError(DocumentError):
    """OCR ran over the whole file and recognised no word."""

    outcome = Outcome.NO_TEXT_FOUND


class CorruptDocumentError(DocumentError):
    """The file is damaged, or is not what its name says (a `.pdf` holding HTML)."""

    outcome = Outcome.CORRUPT


class DocumentTooLargeError(DocumentError):
    """The file passes a size cap (bytes, unpacked bytes, compression ratio, pages, characters)."""

    outcome = Outcome.TOO_LARGE


class UnsupportedDocumentError(DocumentError):
    """The format is not one noteseek reads, or its library is not installed."""

    outcome = Outcome.UNSUPPORTED
    missing_package: str | None = None  # set when the reason is a library that is not installed
