"""PostgreSQL schema migrations: a database made by an older noteseek is upgraded in place on
opening, keeping its rows (append-only migrations; storage/postgres/schema.py).

Needs a PostgreSQL server (tests/postgres_fixtures.py): skips locally without one, fails in CI.
"""

from __future__ import annotations

import psycopg
import pytest

from noteseek.storage.open import open_storage
from noteseek.storage.postgres import connection, schema
from noteseek.storage.records import FileRecord, FileWrite

from .backends import pg_locator


def _open_at(version: int, url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Create the collection as a noteseek whose schema ends at `version` would."""
    with monkeypatch.context() as patch:
        patch.setattr(connection, "MIGRATIONS", schema.MIGRATIONS[:version])
        patch.setattr(connection, "SCHEMA_VERSION", version)
        open_storage(pg_locator(url), create=True).close()


def test_version_1_gains_the_left_out_columns_and_keeps_its_files(
    pg_schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _open_at(1, pg_schema, monkeypatch)
    with psycopg.connect(pg_schema, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO files(collection_id, path, mtime_ns, size, content_hash, title, status, "
            "indexed_at) SELECT id, 'old.md', 1, 2, 'h', 'Old', 'ok', 0 FROM collections"
        )
    store = open_storage(pg_locator(pg_schema), create=False)
    try:
        assert store.schema_version == schema.SCHEMA_VERSION >= 2
        assert list(store.file_states()) == ["old.md"]
        assert store.left_out() == []  # old rows count 0 until the re-process fills them in
        with store.write():
            old = FileRecord("old.md", 3, 4, "h2", "Old", "ok", None)
            store.replace_file(FileWrite(FileRecord(**{**old.__dict__, "secrets_scrubbed": 1})))
        assert store.left_out() == [("old.md", 0, 1)]
    finally:
        store.close()
    with psycopg.connect(pg_schema, autocommit=True) as conn:
        applied = conn.execute("SELECT version, name FROM noteseek_schema ORDER BY version")
        assert [tuple(r) for r in applied][:2] == [(1, "initial"), (2, "left_out")]


@pytest.mark.parametrize("version", range(1, schema.SCHEMA_VERSION))
def test_every_older_version_is_upgraded_in_place(
    version: int, pg_schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _open_at(version, pg_schema, monkeypatch)
    with psycopg.connect(pg_schema, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO files(collection_id, path, mtime_ns, size, content_hash, title, status, "
            "indexed_at) SELECT id, 'old.md', 1, 2, 'h', 'Old', 'ok', 0 FROM collections"
        )
    store = open_storage(pg_locator(pg_schema), create=False)
    try:
        states = store.file_states()
        assert list(states) == ["old.md"] and states["old.md"].kind is None  # a note
        assert store.document_outcomes() == [] and store.left_out() == []
    finally:
        store.close()
    with psycopg.connect(pg_schema, autocommit=True) as conn:
        applied = [r[0] for r in conn.execute("SELECT version FROM noteseek_schema ORDER BY 1")]
        assert applied == list(range(1, schema.SCHEMA_VERSION + 1))


def test_version_7_vectors_move_to_their_own_table(
    pg_schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _open_at(7, pg_schema, monkeypatch)
    with psycopg.connect(pg_schema, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO files(collection_id, path, mtime_ns, size, content_hash, title, status, "
            "indexed_at, chunk_count) SELECT id, 'old.md', 1, 2, 'h', 'Old', 'ok', 0, 2 "
            "FROM collections"
        )
        conn.execute(
            "INSERT INTO chunks(collection_id, file_id, seq, section, chunk_text, mtime_ns, "
            "content_hash, doc_len, embedding, embedded_at) SELECT f.collection_id, f.id, s, '', "
            "'text', 1, 40 + s, 3, CASE s WHEN 0 THEN '[1,-2,3,4]'::halfvec END, "
            "CASE s WHEN 0 THEN 1.0 END FROM files f, generate_series(0, 1) s"
        )
        conn.execute("UPDATE collections SET chunk_count = 2, token_count = 6")
        conn.execute(
            "INSERT INTO meta(collection_id, key, value) SELECT id, 'vector_dim', '4' "
            "FROM collections"
        )
        conn.execute(
            "CREATE INDEX chunks_hnsw_c1 ON chunks USING hnsw ((embedding::halfvec(4)) "
            "halfvec_cosine_ops) WHERE collection_id = 1"
        )
    store = open_storage(pg_locator(pg_schema), create=False)
    try:
        # The embedded chunk's vector moved; the other is still waiting for one.
        assert store.vectors_by_hash([40, 41]) == {40: bytes([1, 254, 3, 4])}
        assert store.counts() == {"files": 1, "chunks": 2, "embedded": 1, "vectors": 1}
        assert store.integrity_problems() == []
        assert [i for i, _ in store.knn(bytes([1, 254, 3, 4]), 5)] != []
    finally:
        store.close()
    with psycopg.connect(pg_schema, autocommit=True) as conn:
        columns = [r[0] for r in conn.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = "
            "current_schema() AND table_name = 'chunks'"
        )]  # fmt: skip
        assert "embedding" not in columns
        # The HNSW index went with the column; the next update's checkpoint builds it anew.
        assert conn.execute("SELECT to_regclass('chunks_hnsw_c1')").fetchone() == (None,)
