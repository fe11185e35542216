"""The links each note makes and the aliases it is known by (schema m009): written with the
note's rows, read back by link key so a note's backlinks are one indexed lookup.

Links are stored as written (target path, `#…` part, kind, the linking line), not resolved:
which file a link opens depends on every path in the vault, so it is resolved when read
(engine/links.py), and a link to a note added later resolves without touching its source.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from ..link_rows import LINK_COLUMNS, link_from_row, links_by_file
from ..rows import strings_by_file
from .connection import SqliteConnection

if TYPE_CHECKING:
    from ...core.links import ParsedLink

__all__ = ["LinkTable"]


class LinkTable:
    """Reads and writes of `links` and `note_aliases`."""

    def __init__(self, conn: SqliteConnection) -> None:
        self.db = conn.db

    def write_links(
        self, file_id: int, links: Sequence[ParsedLink], aliases: Sequence[str]
    ) -> None:
        """The note's links and aliases, replacing its old ones (inside `write()`)."""
        self.delete_links(file_id)
        self.db.executemany(
            f"INSERT INTO links({LINK_COLUMNS}) VALUES (?,?,?,?,?,?,?)",
            [(file_id, k.line, k.target, k.key, k.fragment, k.kind, k.context) for k in links],
        )
        self.db.executemany(
            "INSERT INTO note_aliases(alias, file_id) VALUES (?, ?)",
            [(a, file_id) for a in sorted(set(aliases))],
        )

    def delete_links(self, file_id: int) -> None:
        """Drop the note's links and aliases (inside `write()`)."""
        self.db.execute("DELETE FROM links WHERE file_id = ?", (file_id,))
        self.db.execute("DELETE FROM note_aliases WHERE file_id = ?", (file_id,))

    def links_to(self, keys: Sequence[str]) -> list[tuple[int, ParsedLink]]:
        if not keys:
            return []
        marks = ",".join("?" * len(keys))
        rows = self.db.execute(
            f"SELECT {LINK_COLUMNS} FROM links WHERE target_key IN ({marks}) ORDER BY file_id, line",
            tuple(keys),
        )
        return [(int(r[0]), link_from_row(r)) for r in rows]

    def links_of_files(self, file_ids: Iterable[int]) -> dict[int, list[ParsedLink]]:
        ids = sorted(set(file_ids))
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        rows = self.db.execute(
            f"SELECT {LINK_COLUMNS} FROM links WHERE file_id IN ({marks}) ORDER BY file_id, rowid",
            tuple(ids),
        )
        return links_by_file(rows)

    def note_aliases(self) -> dict[int, tuple[str, ...]]:
        return strings_by_file(
            self.db.execute("SELECT file_id, alias FROM note_aliases ORDER BY file_id, alias")
        )
