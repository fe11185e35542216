"""Which files are documents, which kind each is, and the optional library each kind needs."""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

from ..core.file_kinds import DOCUMENT_SUFFIXES, document_kind
from ..errors import MissingExtraError
from ..extras import install_hint
from ..extras import require as extras_require
from .errors import UnsupportedDocumentError

__all__ = [
    "DOCUMENT_SUFFIXES",
    "EXTRA",
    "INSTALL_HINT",
    "document_kind",
    "library_version",
    "missing_libraries",
    "require",
]

EXTRA = "documents"
INSTALL_HINT = install_hint(EXTRA)

# The modules each kind's reader imports with `require` (the first is the one it cannot do
# without). chardet only matters for text that is not UTF-8, so it is not listed for text kinds.
_KIND_MODULES: dict[str, tuple[str, ...]] = {
    "pdf": ("pypdfium2",),
    "pptx": ("pptx",),
    "docx": ("docx",),
    "xlsx": ("python_calamine", "openpyxl"),
    "xls": ("python_calamine",),
    "ods": ("python_calamine",),
    "html": ("selectolax",),
}


def require(module: str, *, what: str) -> ModuleType:
    """Import an optional library (`extras.require`), or raise `UnsupportedDocumentError` naming
    the extra to install: a document's outcome, not a failed run."""
    try:
        return extras_require(EXTRA, module, what=what)
    except MissingExtraError as exc:
        error = UnsupportedDocumentError(
            f"needs the Python package '{exc.name}' to read {what}, and it is not installed: "
            f"{INSTALL_HINT}"
        )
        error.missing_package = exc.name
        raise error from exc


def missing_libraries(kind: str) -> list[str]:
    """The modules `kind`'s reader needs that cannot be found (without importing anything)."""
    missing = []
    for module in _KIND_MODULES.get(kind, ()):
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            missing.append(module)
    return missing


def library_version(distribution: str) -> str:
    """`"name version"` for the engine field of a result."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"{distribution} {version(distribution)}"
    except PackageNotFoundError:
        return distribution
