"""Which files are documents, which kind each is, and the optional library each kind needs."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

from .errors import UnsupportedDocumentError

__all__ = [
    "DOCUMENT_SUFFIXES",
    "EXTRA",
    "document_kind",
    "library_version",
    "require",
]

EXTRA = "documents"
_INSTALL = f"pip install 'noteseek[{EXTRA}]'"

# Longest suffix first: `.excalidraw.md` must win over `.md` (which is a note, not a document).
_KINDS: tuple[tuple[str, str], ...] = (
    (".excalidraw.md", "excalidraw"),
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
)
DOCUMENT_SUFFIXES: tuple[str, ...] = tuple(s for s, _ in _KINDS)


def document_kind(path: str | Path) -> str | None:
    """The document kind a file name stands for (`"pdf"`, `"xlsx"`, ...), or None for other files."""
    name = Path(path).name.lower()
    for suffix, kind in _KINDS:
        if name.endswith(suffix) and len(name) > len(suffix):
            return kind
    return None


def require(module: str, *, what: str) -> ModuleType:
    """Import an optional library, or raise `UnsupportedDocumentError` naming the extra to install."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise UnsupportedDocumentError(
            f"reading {what} needs the Python package '{module.split('.')[0]}', which is not "
            f"installed: {_INSTALL}"
        ) from exc


def library_version(distribution: str) -> str:
    """`"name version"` for the engine field of a result."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"{distribution} {version(distribution)}"
    except PackageNotFoundError:
        return distribution
