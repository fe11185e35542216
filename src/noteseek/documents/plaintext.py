"""Plain .txt: decoded like every text format, then split at paragraphs (see `textsplit`)."""

from __future__ import annotations

from pathlib import Path

from .encoding import decode_text
from .model import ExtractedDocument, ExtractionLimits, TextUnit

__all__ = ["extract_text"]


def extract_text(path: Path, limits: ExtractionLimits) -> ExtractedDocument:
    """The whole file as one unit; `extract` splits it into ~1,000-character pieces."""
    text, encoding = decode_text(path.read_bytes())
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    units = (TextUnit(text),) if text.strip() else ()
    return ExtractedDocument(kind="txt", engine=f"text ({encoding})", units=units)
