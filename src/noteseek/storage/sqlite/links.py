"""The links each note makes and the aliases it is known by (schema m009, m011): written with the
note's rows, read back by link key so a note's backlinks are one indexed lookup.

Links are stored as written (target path, `#…` part, kind, the linking line), not resolved:
which file a link opens depends on every path in the vault, so it is resolved when read
(engine/links.py), and a link to a note added later resolves without touching its source.

Most linking lines are chunk text already, and the line was most of what a link row cost (8 of
13 MB on MDN). Where one of the note's chunks holds the line as it would be stored (a long line:
the piece of it kept), the row keeps its place instead, the chunk's `seq` and the line's
character offset and length, and the target as an offset and length inside that line (schema
m011); a read takes them back out of the chunk text in the same statement. The rest (a link in
the frontmatter or in a skipped Related section, a target written with %-escapes) stores its
text. The note's chunks and links are written in
one transaction, and a chunk's text never changes without its note's links being written again,
so a place always points at the text it was taken from.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ..link_rows import link_from_row, links_by_file
from ..rows import strings_by_file
from .connection import SqliteConnection

if TYPE_CHECKING:
    from ...core.links import ParsedLink

__all__ = ["LinkTable"]

# Stored as small integers (0 and 1 take no bytes in an SQLite record); read back as the names.
_KIND_CODES = {"wiki": 0, "embed": 1, "markdown": 2}

_ELLIPSIS = "…"  # what core.links puts where it cut a long line

# A note's links are rows file_id * _SPAN + n (n: the link's place in the note): together in the
# table, so a note's links are one range of it and need no index by file. More than the parser
# ever keeps of one note (MAX_LINKS_PER_NOTE).
_SPAN = 16384

# The `link_rows.LINK_COLUMNS` of a row, text taken from the chunk where the row keeps a place.
_PIECE = "substr(c.chunk_text, l.context_at + 1, l.context_len)"
_SELECT = (
    f"SELECT l.id / {_SPAN}, l.line, "
    "COALESCE(l.target, substr(c.chunk_text, l.context_at + l.target_at + 1, l.target_len)), "
    "l.target_key, l.fragment, "
    "CASE l.kind WHEN 0 THEN 'wiki' WHEN 1 THEN 'embed' ELSE 'markdown' END, "
    f"COALESCE(l.context, iif(l.context_cut & 1, '{_ELLIPSIS}', '') || {_PIECE} || "
    f"iif(l.context_cut & 2, '{_ELLIPSIS}', '')) FROM {{links}} "
    f"LEFT JOIN chunks c ON l.context IS NULL AND c.file_id = l.id / {_SPAN} "
    "AND c.seq = l.context_seq"
)


def _place(context: str, target: str, chunks: Sequence[tuple[int, str]]) -> tuple[int, ...] | None:
    """(seq, offset, length, cut, target offset, target length) of the line in a chunk that holds
    it, or None. A long line is stored cut, with '…' where it was cut: the piece between is what
    a chunk holds, and `cut` says which ends get the '…' back."""
    piece, cut = context, 0
    if piece.startswith(_ELLIPSIS):
        piece, cut = piece[1:], cut | 1
    if piece.endswith(_ELLIPSIS):
        piece, cut = piece[:-1], cut | 2
    inner = piece.find(target)
    if not piece or inner < 0:
        return None  # a target written with %-escapes: not worth a place for the line alone
    for seq, text in chunks:
        if "\x00" in text:
            continue  # SQLite's substr() may stop at a NUL character
        at = text.find(piece)
        if at >= 0:
            return seq, at, len(piece), cut, inner, len(target)
    return None


def _row(
    file_id: int, n: int, link: ParsedLink, chunks: Sequence[tuple[int, str]]
) -> tuple[Any, ...]:
    """The link's row: its line and target as places in a chunk that holds them, else as text."""
    kind = _KIND_CODES.get(link.kind, 2)
    head = (file_id * _SPAN + n, link.line)
    tail = (link.key, link.fragment, kind)
    place = _place(link.context, link.target, chunks)
    if place is None:
        return (*head, link.target, *tail, link.context, None, None, None, None, None, None)
    return (*head, None, *tail, None, *place)


class LinkTable:
    """Reads and writes of `links` and `note_aliases`."""

    def __init__(self, conn: SqliteConnection) -> None:
        self.db = conn.db

    def write_links(
        self,
        file_id: int,
        links: Sequence[ParsedLink],
        aliases: Sequence[str],
        chunks: Sequence[tuple[int, str]] = (),
    ) -> None:
        """The note's links and aliases, replacing its old ones (inside `write()`); `chunks`: the
        (seq, text) of the chunks written with them, where a link's line may be found."""
        self.delete_links(file_id)
        self.db.executemany(
            "INSERT INTO links(id, line, target, target_key, fragment, kind, context, "
            "context_seq, context_at, context_len, context_cut, target_at, target_len) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            [_row(file_id, n, link, chunks) for n, link in enumerate(links[:_SPAN])],
        )
        self.db.executemany(
            "INSERT INTO note_aliases(alias, file_id) VALUES (?, ?)",
            [(a, file_id) for a in sorted(set(aliases))],
        )

    def delete_links(self, file_id: int) -> None:
        """Drop the note's links and aliases (inside `write()`)."""
        self.db.execute(
            "DELETE FROM links WHERE id >= ? AND id < ?", (file_id * _SPAN, (file_id + 1) * _SPAN)
        )
        self.db.execute("DELETE FROM note_aliases WHERE file_id = ?", (file_id,))

    def links_to(self, keys: Sequence[str]) -> list[tuple[int, ParsedLink]]:
        if not keys:
            return []
        marks = ",".join("?" * len(keys))
        rows = self.db.execute(
            _SELECT.format(links="links l")
            + f" WHERE l.target_key IN ({marks}) ORDER BY l.id / {_SPAN}, l.line, l.id",
            tuple(keys),
        )
        return [(int(r[0]), link_from_row(r)) for r in rows]

    def links_of_files(self, file_ids: Iterable[int]) -> dict[int, list[ParsedLink]]:
        ids = sorted(set(file_ids))
        if not ids:
            return {}
        # One range of the table per note, by its primary key. CROSS JOIN keeps the list as the
        # outer loop: the planner, not knowing its length, scanned the whole table otherwise.
        rows = self.db.execute(
            _SELECT.format(
                links=f"json_each(?) j CROSS JOIN links l ON l.id >= j.value * {_SPAN} "
                f"AND l.id < (j.value + 1) * {_SPAN}"
            )
            + " ORDER BY l.id",
            (json.dumps(ids),),
        )
        return links_by_file(rows)

    def note_aliases(self) -> dict[int, tuple[str, ...]]:
        return strings_by_file(
            self.db.execute("SELECT file_id, alias FROM note_aliases ORDER BY file_id, alias")
        )
