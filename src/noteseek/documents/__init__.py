"""Text from documents beside the notes: PDF, PowerPoint, Word, spreadsheets, CSV, HTML, .txt, canvases,
and images (by OCR, the `ocr` extra: `pip install 'noteseek[ocr]'`).

The libraries are the `documents` extra (`pip install 'noteseek[documents]'`); a missing one makes
that format's files come back `unsupported` with the install line. Every file ends in one
`ExtractionResult` with a named `Outcome`. `ExtractionPool` runs extraction in worker processes with
a memory limit and a timeout, so no document can crash, hang or exhaust the caller; `extract_file`
runs in this process (tests, trusted input). Libraries are imported by the workers, not here.
"""

from __future__ import annotations

from .errors import (
    CorruptDocumentError,
    DocumentError,
    DocumentTooLargeError,
    EncryptedDocumentError,
    NoTextFoundError,
    NoTextLayerError,
    UnsupportedDocumentError,
    over_limit,
)
from .extract import extract_file
from .formats import (
    DOCUMENT_SUFFIXES,
    EXTRA,
    INSTALL_HINT,
    OCR_EXTRA,
    document_kind,
    install_hint,
    missing_libraries,
)
from .model import (
    BREADCRUMB_SEPARATOR,
    DocumentMetadata,
    ExtractedDocument,
    ExtractionLimits,
    ExtractionResult,
    Location,
    Outcome,
    TextUnit,
)
from .pool import ExtractionPool, PoolStats
from .textsplit import join_parts, split_text, split_unit

__all__ = [
    "BREADCRUMB_SEPARATOR",
    "DOCUMENT_SUFFIXES",
    "EXTRA",
    "INSTALL_HINT",
    "OCR_EXTRA",
    "CorruptDocumentError",
    "DocumentError",
    "DocumentMetadata",
    "DocumentTooLargeError",
    "EncryptedDocumentError",
    "ExtractedDocument",
    "ExtractionLimits",
    "ExtractionPool",
    "ExtractionResult",
    "Location",
    "NoTextFoundError",
    "NoTextLayerError",
    "Outcome",
    "PoolStats",
    "TextUnit",
    "UnsupportedDocumentError",
    "document_kind",
    "extract_file",
    "install_hint",
    "join_parts",
    "missing_libraries",
    "over_limit",
    "split_text",
    "split_unit",
]
