"""Split long text into pieces for search, at the largest boundary that fits. Pure: text in, text out.

Recursive like the source design's splitter (paragraphs, then lines, then sentences, then words;
1,000 characters with 100 of overlap), with one change: a piece shorter than the minimum is merged
into its neighbour instead of being dropped, so no word is lost. Kept as own code after measuring
the libraries (bench/documents_libraries.py): semantic-text-splitter does the same job but adds 18 MB
installed; langchain-text-splitters pulls in langchain-core and pydantic.
"""

from __future__ import annotations

import re
from dataclasses import replace

from .model import TextUnit

__all__ = ["join_parts", "split_text", "split_unit"]

# Paragraph break, line break, sentence end, word gap: tried in this order.
_BOUNDARIES = (
    re.compile(r"\n[ \t]*\n\s*"),
    re.compile(r"\n"),
    re.compile(r"(?<=[.!?;:。！？])\s+"),
    re.compile(r"[ \t]+"),
)


def _pieces(text: str, max_chars: int, level: int = 0) -> list[str]:
    """Cut `text` into pieces of at most `max_chars`, each ending with the boundary after it."""
    if len(text) <= max_chars:
        return [text]
    if level == len(_BOUNDARIES):
        return [text[i : i + max_chars] for i in range(0, len(text), max_chars)]
    parts: list[str] = []
    start = 0
    for match in _BOUNDARIES[level].finditer(text):
        parts.append(text[start : match.end()])
        start = match.end()
    parts.append(text[start:])
    out: list[str] = []
    for part in parts:
        if len(part) <= max_chars:
            out.append(part)
        else:
            out.extend(_pieces(part, max_chars, level + 1))
    return out


def _overlap_tail(text: str, overlap: int) -> str:
    """The last `overlap` characters of `text`, starting at a word boundary."""
    if overlap <= 0 or len(text) <= overlap:
        return ""
    tail = text[-overlap:]
    cut = re.search(r"\s", tail)
    return tail[cut.end() :] if cut else ""


def split_text(
    text: str, *, max_chars: int = 1000, overlap: int = 100, min_chars: int = 100
) -> list[str]:
    """Pack boundary-ended pieces into chunks of about `max_chars`; every word of `text` is kept.

    A chunk after the first starts with up to `overlap` characters from the end of the one before
    (only when the cut fell inside a paragraph), so a sentence across a cut is found from either side.
    """
    return [part for part, _ in _split(text, max_chars, overlap, min_chars)]


def _split(text: str, max_chars: int, overlap: int, min_chars: int) -> list[tuple[str, int]]:
    """(chunk, characters at its start repeated from the chunk before, joining space included)."""
    text = text.strip()
    if len(text) <= max_chars:
        return [(text, 0)] if text else []
    budget = max(max_chars - overlap, max_chars // 2)
    chunks: list[str] = []
    current = ""
    for piece in _pieces(text, budget):
        if current and len(current) + len(piece) > budget:
            chunks.append(current)
            current = ""
        current += piece
    if current:
        chunks.append(current)
    # A piece of only spaces between two pieces too long to share a chunk would stand alone:
    # it holds no word, so it is dropped rather than stored as an empty chunk.
    chunks = [c for c in chunks if c.strip()]
    # A short tail joins the chunk before it rather than standing alone or being dropped.
    if len(chunks) > 1 and len(chunks[-1].strip()) < min_chars:
        tail = chunks.pop()
        chunks[-1] += tail
    out: list[tuple[str, int]] = []
    for i, chunk in enumerate(chunks):
        prefix = ""
        if i and not re.search(r"\n[ \t]*\n\s*$", chunks[i - 1]):
            prefix = _overlap_tail(chunks[i - 1].rstrip(), overlap).strip()
        if prefix:
            out.append((prefix + " " + chunk.strip(), len(prefix) + 1))
        else:
            out.append((chunk.strip(), 0))
    return out


def split_unit(
    unit: TextUnit, *, max_chars: int = 1000, overlap: int = 100, min_chars: int = 100
) -> list[TextUnit]:
    """`split_text` for one unit: every part keeps the unit's section and location, and says how
    many of its first characters repeat the part before (`TextUnit.overlap`)."""
    parts = _split(unit.text, max_chars, overlap, min_chars)
    if len(parts) == 1 and parts[0][0] == unit.text:
        return [unit]
    return [replace(unit, text=part, overlap=repeated) for part, repeated in parts]


def join_parts(parts: list[tuple[str, int]]) -> str:
    """The text of consecutive parts of one unit put back together: each part's repeated start
    (`overlap` characters) is left out, parts are joined by a space or the paragraph break they
    were cut at. The inverse of `split_unit` up to whitespace at the cuts."""
    out: list[str] = []
    for text, repeated in parts:
        if out and repeated:
            out.append(" " + text[repeated:])
        elif out:
            out.append("\n\n" + text)
        else:
            out.append(text)
    return "".join(out)
