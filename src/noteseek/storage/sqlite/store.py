"""The SQLite backend of the `Storage` protocol: one index file, one part object per job.

`SqliteStore` opens the connection and makes the parts, each from the connection and the parts
it writes through; `storage.store.Store` binds every protocol call to its part.

- connection.py (`SqliteConnection`): opening the file (WAL, busy timeout, sqlite-vec, the
  tokenizer), migrations, write transactions and snapshots, the meta table;
- files.py (`FileRows`): a file's rows (replace and delete in one transaction), names, tags,
  filters, and chunk reads for search and note access;
- text_index.py (`TextIndex`): BM25 over FTS5, the frequent-stem counts, the language state;
- note_terms.py (`NoteTermsTable`): query term counts, per-note token sets;
- vector_table.py (`VectorTable`): the vec0 table and the bulk read behind the in-memory index;
- multilingual_table.py (`MultilingualTable`): the deep lane's vectors;
- links.py (`LinkTable`): links and aliases;
- integrity.py (`Integrity`): counts and integrity checks;
- update_lock.py (`UpdateLock`): the lock one update run holds (a file beside the index).
"""

from __future__ import annotations

import os

from ..store import Store
from .connection import SqliteConnection
from .files import FileRows
from .integrity import Integrity
from .links import LinkTable
from .multilingual_table import MultilingualTable
from .note_terms import NoteTermsTable
from .text_index import TextIndex
from .update_lock import UpdateLock
from .vector_table import VectorTable

__all__ = ["SqliteStore"]


class SqliteStore(Store[SqliteConnection, VectorTable]):
    """One SQLite index file (`Storage`). Not thread-safe: use one per thread."""

    def __init__(self, path: str | os.PathLike[str], *, create: bool = True) -> None:
        conn = SqliteConnection(path, create=create)
        text, vectors = TextIndex(conn), VectorTable(conn)
        terms, links = NoteTermsTable(conn), LinkTable(conn)
        files = FileRows(conn, text=text, vectors=vectors, terms=terms, links=links)
        deep, integrity, lock = MultilingualTable(conn), Integrity(conn, vectors), UpdateLock(conn)
        super().__init__(conn, files, links, text, terms, vectors, deep, integrity, lock)

    def checkpoint(self) -> None:
        """Free pages given back and the WAL copied into the file (`SqliteConnection`)."""
        self.conn.release_free_pages()
        self.conn.checkpoint()
