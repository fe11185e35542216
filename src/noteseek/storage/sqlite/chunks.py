"""Reads of stored chunks, by id or by file, for search and note access."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from ..records import ChunkRow
from .connection import SqliteConnection

__all__ = ["ChunkReads"]


class ChunkReads(SqliteConnection):
    """Chunk lookups: rows by id, a file's texts, chunk -> file and file -> chunks."""

    def chunk_count(self) -> int:
        """Number of chunks."""
        return int(self.scalar("SELECT count(*) FROM chunks"))

    def chunk_rows(self, ids: Sequence[int]) -> dict[int, ChunkRow]:
        """Stored chunks by id."""
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        rows = self.db.execute(
            f"SELECT c.id, f.path, c.section, c.chunk_text, c.heading_context FROM chunks c "
            f"JOIN files f ON f.id = c.file_id WHERE c.id IN ({marks})",
            list(ids),
        )
        return {r[0]: ChunkRow(r[0], r[1], r[2], r[3], r[4]) for r in rows}

    def chunk_texts(self, path: str) -> list[str]:
        """The stored (scrubbed) text of a file's chunks, in order."""
        rows = self.db.execute(
            "SELECT c.chunk_text FROM chunks c JOIN files f ON f.id = c.file_id "
            "WHERE f.path = ? ORDER BY c.seq",
            (path,),
        ).fetchall()
        return [str(r[0]) for r in rows]

    def file_ids(self, chunk_ids: Sequence[int]) -> dict[int, int]:
        """chunk id -> file id."""
        wanted = sorted(set(chunk_ids))
        out: dict[int, int] = {}
        for start in range(0, len(wanted), 500):
            batch = wanted[start : start + 500]
            marks = ",".join("?" * len(batch))
            for chunk_id, file_id in self.db.execute(
                f"SELECT id, file_id FROM chunks WHERE id IN ({marks})", batch
            ):
                out[int(chunk_id)] = int(file_id)
        return out

    def chunks_of_files(self, file_ids: Iterable[int]) -> set[int]:
        """The ids of every chunk of these files."""
        rows = self.db.execute(
            "SELECT id FROM chunks WHERE file_id IN (SELECT value FROM json_each(?))",
            (json.dumps(sorted(set(file_ids))),),
        )
        return {int(r[0]) for r in rows}

    def first_chunk(self, file_id: int) -> int | None:
        """The id of a file's first chunk."""
        value = self.scalar(
            "SELECT id FROM chunks WHERE file_id = ? ORDER BY seq LIMIT 1", (file_id,)
        )
        return None if value is None else int(value)
