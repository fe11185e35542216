"""Integrity of an index file: SQLite's and FTS5's own checks, and row counts that must agree."""

from __future__ import annotations

import apsw

from .connection import SqliteConnection
from .vector_table import VEC_TABLE, VectorTable

__all__ = ["Integrity"]


class Integrity:
    """Counts and checks, each run against one consistent state."""

    def __init__(self, conn: SqliteConnection, vectors: VectorTable) -> None:
        self.conn = conn
        self.db = conn.db
        self.vectors = vectors

    def counts(self) -> dict[str, int]:
        """Files, chunks, FTS rows, chunks marked embedded and vec0 rows."""
        with self.conn.snapshot():
            return self._counts()

    def _counts(self) -> dict[str, int]:
        result = {
            "files": int(self.conn.scalar("SELECT count(*) FROM files")),
            "chunks": int(self.conn.scalar("SELECT count(*) FROM chunks")),
            "fts": int(self.conn.scalar("SELECT count(*) FROM chunks_fts_docsize")),
            "embedded": int(
                self.conn.scalar("SELECT count(*) FROM chunks WHERE embedded")
            ),
        }
        if self.vectors.has_vector_table():
            result["vectors"] = int(self.conn.scalar(f"SELECT count(*) FROM {VEC_TABLE}_rowids"))
        return result

    def integrity_problems(self) -> list[str]:
        """Empty when SQLite's and FTS5's integrity checks pass and the row counts agree.

        Takes the write lock for the duration of the check, so it waits for a running indexer's
        current file (and the indexer waits for it).
        """
        # Why under the write lock: PRAGMA integrity_check also runs FTS5's own check, and FTS5
        # checks against the segment structure it cached in this connection. If another process
        # has merged segments since, it reports "corruption found reading blob" for a healthy
        # file (seen with SQLite 3.54, 1 in 3 checks while an indexer runs). The FTS5
        # 'integrity-check' command reloads that structure, and holding the write lock from it to
        # the end keeps it current and makes the counts agree with what was checked.
        problems: list[str] = []
        self.conn.begin_immediate()
        try:
            try:
                self.db.execute(
                    "INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('integrity-check', 1)"
                )
            except apsw.Error as exc:
                problems.append(f"FTS5 integrity-check: {exc}")
            problems += [r[0] for r in self.db.execute("PRAGMA integrity_check") if r[0] != "ok"]
            counts = self._counts()
        finally:
            if self.db.in_transaction:  # nothing was written; SQLite may have ended it on error
                self.db.execute("ROLLBACK")
        if counts["fts"] != counts["chunks"]:
            problems.append(f"FTS rows {counts['fts']} != chunks {counts['chunks']}")
        if "vectors" in counts and counts["vectors"] != counts["embedded"]:
            problems.append(f"vectors {counts['vectors']} != embedded chunks {counts['embedded']}")
        return problems
