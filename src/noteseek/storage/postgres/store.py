"""The PostgreSQL backend of the `Storage` protocol: collections of one database, one part object
per job (docs/postgres.md).

`PostgresStore` connects and makes the parts, each from the connection and the parts it writes
through; `storage.store.Store` binds every protocol call to its part. The parts, and the modules
they use:

- connection.py (`PostgresConnection`): connecting, migrations, the collection selection,
  transactions, meta; failures.py: what a failed statement means (server gone, a standby, a
  reader role); errors.py: what a failed connection means; collections.py: which collections a
  locator means, and the paths shown for several;
- files.py (`FileRows`): a file's rows, written in its transaction with the BM25 statistics on
  them, and read back (file and chunk reads);
- text_index.py (`TextIndex`), with bm25.py and terms.py: BM25 in SQL over noteseek's own postings;
- note_terms.py (`NoteTermsTable`): query term counts, per-note token sets;
- vector_table.py (`VectorTable`): halfvec vectors, HNSW per collection, KNN on the server;
- multilingual_table.py (`MultilingualTable`): the deep lane's vectors;
- links.py (`LinkTable`): links and aliases;
- integrity.py (`Integrity`): counts and checks; schema.py: the migrations;
- update_lock.py (`UpdateLock`): the lock one update run holds (a session advisory lock).
"""

from __future__ import annotations

from ...core.locator import DatabaseUrl
from ..store import Store
from .connection import PostgresConnection
from .files import FileRows
from .integrity import Integrity
from .links import LinkTable
from .multilingual_table import MultilingualTable
from .note_terms import NoteTermsTable
from .text_index import TextIndex
from .update_lock import UpdateLock
from .vector_table import VectorTable

__all__ = ["PostgresStore"]


class PostgresStore(Store[PostgresConnection, VectorTable]):
    """One collection selection of a PostgreSQL database (`Storage`). Not thread-safe: use one
    per thread."""

    def __init__(self, url: DatabaseUrl, *, create: bool = True) -> None:
        conn = PostgresConnection(url, create=create)
        vectors = VectorTable(conn)
        terms, links = NoteTermsTable(conn), LinkTable(conn)
        files = FileRows(conn, vectors=vectors, terms=terms, links=links)
        text, deep, integrity = TextIndex(conn), MultilingualTable(conn), Integrity(conn, vectors)
        super().__init__(conn, files, links, text, terms, vectors, deep, integrity, UpdateLock(conn))

    def checkpoint(self) -> None:
        """The collection's HNSW index built when it is missing (`VectorTable.build_index`)."""
        self.vectors.build_index()
