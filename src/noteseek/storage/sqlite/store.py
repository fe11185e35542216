"""The SQLite backend of the `Storage` protocol: one index file, every job in its own module.

- connection.py: opening the file (WAL, busy timeout, sqlite-vec, the tokenizer), migrations,
  write transactions and snapshots, the meta table;
- files.py: a file's rows (replace and delete in one transaction), names, tags, filters, and
  chunk reads for search and note access;
- text_index.py: BM25 over FTS5, the frequent-stem counts, the language state;
- vector_table.py: the vec0 table and the bulk read behind the in-memory vector index;
- integrity.py: counts and integrity checks;
- update_lock.py: the lock one update run holds from start to end (a file beside the index).
"""

from __future__ import annotations

from .files import FileRows
from .integrity import Integrity
from .update_lock import UpdateLocking

__all__ = ["SqliteStore"]


class SqliteStore(FileRows, Integrity, UpdateLocking):
    """One SQLite index file (`Storage`). Not thread-safe: use one per thread."""
