"""Text from documents beside the notes: PDF, PowerPoint, Word, spreadsheets, CSV, HTML, .txt, canvases,
and images (by OCR, the `ocr` extra: `pip install 'noteseek[ocr]'`).

The libraries are the `documents` extra (`pip install 'noteseek[documents]'`); a missing one makes
that format's files come back `unsupported` with the install line. Every file ends in one
`ExtractionResult` with a named `Outcome`. `ExtractionPool` runs extraction in worker processes with
a memory limit and a timeout, so no document can crash, hang or exhaust the caller; `extract_file`
runs in this process (tests, trusted input). Libraries are imported by the workers, not here.

The names below are imported on first use (PEP 562), as the package root's are: the indexer reads
`ExtractionLimits` on every run, and a run with no document to read (a no-op, a note's edit) must
not pay for the extraction pool and its multiprocessing imports.
"""

from __future__ import annotations

import importlib

# Not `from typing import TYPE_CHECKING` (see the package root): type checkers treat any constant
# named TYPE_CHECKING as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .errors import CorruptDocumentError as CorruptDocumentError
    from .errors import DocumentError as DocumentError
    from .errors import DocumentTooLargeError as DocumentTooLargeError
    from .errors import EncryptedDocumentError as EncryptedDocumentError
    from .errors import NoTextFoundError as NoTextFoundError
    from .errors import NoTextLayerError as NoTextLayerError
    from .errors import UnsupportedDocumentError as UnsupportedDocumentError
    from .errors import over_limit as over_limit
    from .extract import extract_file as extract_file
    from .formats import DOCUMENT_SUFFIXES as DOCUMENT_SUFFIXES
    from .formats import EXTRA as EXTRA
    from .formats import INSTALL_HINT as INSTALL_HINT
    from .formats import OCR_EXTRA as OCR_EXTRA
    from .formats import document_kind as document_kind
    from .formats import install_hint as install_hint
    from .formats import missing_libraries as missing_libraries
    from .model import BREADCRUMB_SEPARATOR as BREADCRUMB_SEPARATOR
    from .model import DocumentMetadata as DocumentMetadata
    from .model import ExtractedDocument as ExtractedDocument
    from .model import ExtractionLimits as ExtractionLimits
    from .model import ExtractionResult as ExtractionResult
    from .model import Location as Location
    from .model import Outcome as Outcome
    from .model import TextUnit as TextUnit
    from .pool import ExtractionPool as ExtractionPool
    from .pool import PoolStats as PoolStats
    from .textsplit import join_parts as join_parts
    from .textsplit import split_text as split_text
    from .textsplit import split_unit as split_unit

_EXPORTS = {
    "BREADCRUMB_SEPARATOR": "model",
    "CorruptDocumentError": "errors",
    "DOCUMENT_SUFFIXES": "formats",
    "DocumentError": "errors",
    "DocumentMetadata": "model",
    "DocumentTooLargeError": "errors",
    "EXTRA": "formats",
    "EncryptedDocumentError": "errors",
    "ExtractedDocument": "model",
    "ExtractionLimits": "model",
    "ExtractionPool": "pool",
    "ExtractionResult": "model",
    "INSTALL_HINT": "formats",
    "Location": "model",
    "NoTextFoundError": "errors",
    "NoTextLayerError": "errors",
    "OCR_EXTRA": "formats",
    "Outcome": "model",
    "PoolStats": "pool",
    "TextUnit": "model",
    "UnsupportedDocumentError": "errors",
    "document_kind": "formats",
    "extract_file": "extract",
    "install_hint": "formats",
    "join_parts": "textsplit",
    "missing_libraries": "formats",
    "over_limit": "errors",
    "split_text": "textsplit",
    "split_unit": "textsplit",
}

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


def __getattr__(name: str) -> Any:
    """Import a public name's module on first access and cache the name in this package."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
