"""The SQLite backend: one file, FTS5 for BM25, sqlite-vec for the vectors."""
