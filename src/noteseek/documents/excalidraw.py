"""Obsidian Excalidraw drawings (`.excalidraw.md`): the "Text Elements" section, never the drawing JSON.

The plugin writes every text element of the drawing as a paragraph ending in a `^blockid`
under a `## Text Elements` heading (`# Text Elements` in older files), followed by `## Element Links`,
`## Embedded Files` and, after a `%%` line, `## Drawing` with a (compressed) JSON block that holds
nothing a person wrote beyond those texts. The note text above `# Excalidraw Data` is the plugin's
"switch to Excalidraw view" banner and is not read either.
"""

from __future__ import annotations

import re
from pathlib import Path

from .encoding import decode_text
from .model import ExtractedDocument, ExtractionLimits, TextUnit

__all__ = ["extract_excalidraw"]

_START = re.compile(r"^#{1,6}\s+Text Elements\s*$")
# Only the plugin's own section headings end it: a text element may itself hold Markdown headings
# (seen in real drawings: "### 2) Notification Content" inside a text box).
_END = re.compile(r"^(#{1,2}\s+(Drawing|Element Links|Embedded Files|Embeddable Files)\s*$|%%\s*$)")
_BLOCK_ID = re.compile(r"\s*\^[A-Za-z0-9_-]{6,}\s*$")


def extract_excalidraw(path: Path, limits: ExtractionLimits) -> ExtractedDocument:
    """The drawing's text elements as one unit (split later if long)."""
    text, _ = decode_text(path.read_bytes())
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    kept: list[str] = []
    inside = False
    for line in lines:
        if not inside:
            inside = bool(_START.match(line))
            continue
        if _END.match(line):
            break
        kept.append(_BLOCK_ID.sub("", line))
    body = "\n".join(kept).strip()
    units = (TextUnit(body, ("Text Elements",)),) if body else ()
    return ExtractedDocument(kind="excalidraw", engine="text", units=units)
