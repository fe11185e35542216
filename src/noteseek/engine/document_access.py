"""Read one indexed document, or one page, slide, sheet or section of it, for an agent.

A document's text comes from its stored chunks, not from the file: they are already scrubbed,
they are exactly what search found, and parsing an untrusted PDF again in a search process (the
MCP server, the web server) would undo the isolation the indexer's worker processes give. The
parts of a unit that extraction split are joined back without their overlap
(`documents.join_parts`), so the text reads once, in order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..core.display import bounded, bounded_repr
from ..core.document_location import location_label
from ..errors import SectionNotFoundError
from ..storage.records import StoredChunk

__all__ = ["DocumentPart", "DocumentText", "document_text"]


@dataclass(frozen=True)
class DocumentPart:
    """What was asked for: one page, slide or sheet (None = the whole document)."""

    page: int | None = None
    slide: int | None = None
    sheet: str | None = None


@dataclass(frozen=True)
class DocumentText:
    """A document's text (or a part of it), the section returned and what could be asked for."""

    text: str
    section: str | None
    sections: tuple[str, ...]
    locations: tuple[str, ...]


def _where(chunk: StoredChunk) -> tuple[object, ...]:
    return (chunk.page, chunk.slide, chunk.sheet)


def _label(chunk: StoredChunk, *, numbered: bool = True) -> str:
    return location_label(
        page=chunk.page,
        page_label=chunk.page_label,
        slide=chunk.slide,
        sheet=chunk.sheet,
        numbered=numbered,
    )


def _locations(chunks: Sequence[StoredChunk]) -> tuple[str, ...]:
    """Every page, slide or sheet, in order (`p. 1`, `slide 2`, `sheet Data`)."""
    return tuple(dict.fromkeys(label for c in chunks if (label := _label(c))))


def _sections(chunks: Sequence[StoredChunk]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(c.section for c in chunks if c.section))


def _key(text: str) -> str:
    return " ".join(text.split()).casefold()


def _join(chunks: Sequence[StoredChunk], *, marked: bool) -> str:
    """The chunks' text in order: a unit's split parts joined without their overlap, a blank
    line between units, and `[p. 3]`-style markers where the page or slide changes."""
    # deferred: note access (MCP, web) imports this module for every note read, and the
    # documents package brings the extraction pool's imports (~25 ms).
    from ..documents import join_parts

    out: list[str] = []
    group: list[StoredChunk] = []
    last_where: tuple[object, ...] | None = None

    def close() -> None:
        if group:
            out.append(join_parts([(c.text, c.overlap) for c in group]))
            group.clear()

    for chunk in chunks:
        where = _where(chunk)
        same_unit = (
            bool(group) and where == _where(group[-1]) and chunk.section == group[-1].section
        )
        if not (same_unit and chunk.overlap):
            close()
        if marked and where != last_where and (chunk.page is not None or chunk.slide is not None):
            out.append(f"[{_label(chunk)}]")
        last_where = where
        group.append(chunk)
    close()
    return "\n\n".join(out)


def document_text(
    chunks: Sequence[StoredChunk],
    *,
    part: DocumentPart,
    section: str | None = None,
) -> DocumentText:
    """The text of a document's stored chunks, narrowed to a page/slide/sheet and/or a section.

    Raises SectionNotFoundError listing what the document has when nothing matches.
    """
    locations, sections = _locations(chunks), _sections(chunks)
    chosen = list(chunks)
    asked = []
    if part.page is not None:
        chosen = [c for c in chosen if c.page == part.page]
        asked.append(f"page {part.page}")
    if part.slide is not None:
        chosen = [c for c in chosen if c.slide == part.slide]
        asked.append(f"slide {part.slide}")
    if part.sheet is not None:
        chosen = [c for c in chosen if c.sheet is not None and _key(c.sheet) == _key(part.sheet)]
        asked.append(f"sheet {bounded_repr(part.sheet)}")
    if asked and not chosen:
        raise SectionNotFoundError(
            f"this document has no {' and '.join(asked)}; it has: "
            + _listing(locations)
            + ". Ask for one of those, or leave the page/slide/sheet out for the whole document",
            locations,
        )
    name = None
    if section is not None and section.strip():
        wanted = _key(section)
        matching = [c for c in chosen if _key(c.section) == wanted]
        if not matching:
            raise SectionNotFoundError(
                f"no section {bounded_repr(section)} in this document{' there' if asked else ''}; its "
                f"sections are: {_listing(_sections(chosen) or sections)}",
                _sections(chosen) or sections,
            )
        chosen, name = matching, matching[0].section
    marked = part.page is None and part.slide is None
    return DocumentText(_join(chosen, marked=marked), name, sections, locations)


def _listing(names: Sequence[str], limit: int = 40) -> str:
    shown = "; ".join(bounded(name, 100) for name in names[:limit])
    return (shown or "nothing") + (" …" if len(names) > limit else "")
