"""The PostgreSQL backend of the `Storage` protocol: collections of one database, every job in
its own module (docs/postgres-design.md).

- connection.py: connecting, migrations, the collection selection, transactions, meta;
- failures.py: what a failed statement means (server gone, a standby, a reader role);
- collections.py: which collections a locator means, and the paths shown for several;
- text_index.py, bm25.py, terms.py: BM25 in SQL over noteseek's own postings;
- vector_table.py: halfvec vectors, HNSW per collection, KNN on the server;
- files.py: a file's rows, written in its transaction and read back (file and chunk reads);
- integrity.py: counts and checks; schema.py: the migrations;
- update_lock.py: the lock one update run holds from start to end (a session advisory lock).
"""

from __future__ import annotations

from .integrity import Integrity
from .update_lock import UpdateLocking

__all__ = ["PostgresStore"]


class PostgresStore(Integrity, UpdateLocking):
    """One collection selection of a PostgreSQL database (`Storage`). Not thread-safe: use one
    per thread."""
