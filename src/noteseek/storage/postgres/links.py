"""The links each note makes and the aliases it is known by (PostgreSQL migration 6), on PostgreSQL:
the same facts the SQLite backend's `links.py` gives, written in the file's transaction and read
by link key over the selected collections. Stored as written and resolved when read
(engine/links.py), so a link to a note added later resolves without touching its source.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from ..link_rows import LINK_COLUMNS, link_from_row, links_by_file
from ..rows import strings_by_file
from .connection import PostgresConnection

if TYPE_CHECKING:
    from ...core.links import ParsedLink

__all__ = ["LinkTable"]


class LinkTable:
    """Reads and writes of `links` and `note_aliases`."""

    def __init__(self, conn: PostgresConnection) -> None:
        self.conn = conn

    def write_links(
        self,
        file_ids: Sequence[int],
        links: Sequence[Sequence[ParsedLink]],
        aliases: Sequence[Sequence[str]],
    ) -> None:
        """The files' links and aliases, replacing their old ones, in four statements (inside
        `write()`): the links in file order and each file's in order, so their ids ascend."""
        ids = list(file_ids)
        self.conn.run("DELETE FROM links WHERE file_id = ANY(%s)", (ids,))
        self.conn.run("DELETE FROM note_aliases WHERE file_id = ANY(%s)", (ids,))
        cid = self.conn.collections.only
        made = [(fid, k) for fid, some in zip(ids, links) for k in some]
        if made:
            self.conn.run(
                "INSERT INTO links(collection_id, file_id, line, target, target_key, fragment, "
                "kind, context) SELECT %s, f, line, target, target_key, fragment, kind, context "
                "FROM unnest(%b::bigint[], %b::int[], %b::text[], %b::text[], %b::text[], "
                "%b::text[], %b::text[]) WITH ORDINALITY AS u(f, line, target, target_key, "
                "fragment, kind, context, n) ORDER BY u.n",
                (
                    cid,
                    [fid for fid, _ in made],
                    [k.line for _, k in made],
                    [k.target for _, k in made],
                    [k.key for _, k in made],
                    [k.fragment for _, k in made],
                    [k.kind for _, k in made],
                    [k.context for _, k in made],
                ),
            )
        named = [(a, fid) for fid, some in zip(ids, aliases) for a in sorted(set(some))]
        if named:
            self.conn.run(
                "INSERT INTO note_aliases(collection_id, alias, file_id) "
                "SELECT %s, a, f FROM unnest(%b::text[], %b::bigint[]) AS u(a, f)",
                (cid, [a for a, _ in named], [f for _, f in named]),
            )

    def links_to(self, keys: Sequence[str]) -> list[tuple[int, ParsedLink]]:
        if not keys:
            return []
        rows = self.conn.rows(
            f"SELECT {LINK_COLUMNS} FROM links WHERE collection_id = ANY(%s) AND "
            "target_key = ANY(%s) ORDER BY file_id, line, id",
            (self.conn.collections.ids, list(keys)),
        )
        return [(int(r[0]), link_from_row(r)) for r in rows]

    def links_of_files(self, file_ids: Iterable[int]) -> dict[int, list[ParsedLink]]:
        ids = sorted(set(file_ids))
        if not ids:
            return {}
        rows = self.conn.rows(
            f"SELECT {LINK_COLUMNS} FROM links WHERE file_id = ANY(%s) ORDER BY file_id, id",
            (ids,),
        )
        return links_by_file(rows)

    def note_aliases(self) -> dict[int, tuple[str, ...]]:
        rows = self.conn.rows(
            "SELECT file_id, alias FROM note_aliases WHERE collection_id = ANY(%s) "
            "ORDER BY file_id, alias",
            (self.conn.collections.ids,),
        )
        return strings_by_file(rows)
