"""Office document properties (docProps/core.xml) as `DocumentMetadata`, for python-docx and python-pptx."""

from __future__ import annotations

from typing import Any

from .model import DocumentMetadata

__all__ = ["core_metadata"]

_FIELDS = (
    "title",
    "author",
    "subject",
    "keywords",
    "category",
    "comments",
    "last_modified_by",
    "created",
    "modified",
)


def core_metadata(props: Any) -> DocumentMetadata:
    """Every non-empty core property; dates as ISO strings."""
    fields: list[tuple[str, str]] = []
    for name in _FIELDS:
        value = getattr(props, name, None)
        if value is None:
            continue
        text = value.isoformat() if hasattr(value, "isoformat") else str(value).strip()
        if text:
            fields.append((name, text))
    values = dict(fields)
    return DocumentMetadata(
        title=values.get("title"), author=values.get("author"), fields=tuple(fields)
    )
