"""A stored link as both backends read it back: the `links` table's columns, in one order, and the
row → `ParsedLink` conversion. PostgreSQL stores these columns as they are (its schema 6); SQLite
keeps a linking line and target as places in the note's chunk text and selects the same columns
out of them (schema m011, storage/sqlite/links.py). The statements stay in each backend's
`links.py`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..core.links import ParsedLink

__all__ = ["LINK_COLUMNS", "link_from_row", "links_by_file"]

# The linking note, the 1-based line of the link in it, the link path as written (without #... or
# |shown), its `core.links.link_key` (the folded file name: backlinks look it up), '' or
# '#Heading' or '#^block', wiki | embed | markdown, and the linking line (scrubbed), trimmed.
LINK_COLUMNS = "file_id, line, target, target_key, fragment, kind, context"

_PARSED_LINK: list[type[ParsedLink]] = []


def _parsed_link() -> type[ParsedLink]:
    # deferred: core.links on first use, since a one-shot search never reads links
    if not _PARSED_LINK:
        from ..core.links import ParsedLink

        _PARSED_LINK.append(ParsedLink)
    return _PARSED_LINK[0]


def link_from_row(row: tuple[Any, ...]) -> ParsedLink:
    """The link of a row selected as `LINK_COLUMNS` (its first column, the file id, is the
    caller's)."""
    return _parsed_link()(
        line=int(row[1]),
        target=str(row[2]),
        fragment=str(row[4]),
        kind=str(row[5]),
        context=str(row[6]),
        key=str(row[3]),
    )


def links_by_file(rows: Iterable[tuple[Any, ...]]) -> dict[int, list[ParsedLink]]:
    """file id -> its links, in row order, from rows selected as `LINK_COLUMNS`."""
    out: dict[int, list[ParsedLink]] = {}
    for row in rows:
        out.setdefault(int(row[0]), []).append(link_from_row(row))
    return out
