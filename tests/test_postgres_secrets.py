"""Issue 13 on PostgreSQL: no planted secret reaches the database, neither its rows (every column
of every noteseek table, as SQL sees them) nor its files (the heap, TOAST and index files of the
test's tables and the write-ahead log written while indexing), nor a hit or the status.

The vault is the SQLite tests' (tests/test_secrets_in_db.py: vendor tokens in every place a note
can hold them; tests/planted_secrets.py: issue 13's bare formats in every context, fixed seeds).
The files are read only when this session started the server (`pg_data_dir`); against a server
named by NOTESEEK_TEST_PG the rows are still checked.

Needs a PostgreSQL server (tests/postgres_fixtures.py): skips locally without one, fails in CI.
"""

from __future__ import annotations

from pathlib import Path

import psycopg

import noteseek
from noteseek.core.locator import with_collection

from .conftest import FakeEmbedder
from .planted_secrets import planted
from .postgres_fixtures import PgTarget
from .test_bare_secrets_end_to_end import SEEDS
from .test_bare_secrets_end_to_end import _write as write_planted
from .test_secrets_in_db import _leaks, build_secret_vault


def _relation_files(conn: psycopg.Connection, schema: str) -> list[str]:
    """Data-directory paths of the schema's tables, their TOAST tables and every index."""
    rows = conn.execute(
        "WITH t AS (SELECT c.oid, c.reltoastrelid FROM pg_class c JOIN pg_namespace n "
        "ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relkind = 'r'), "
        "rels AS (SELECT oid FROM t UNION SELECT reltoastrelid FROM t WHERE reltoastrelid <> 0), "
        "idx AS (SELECT indexrelid AS oid FROM pg_index WHERE indrelid IN (SELECT oid FROM rels)) "
        "SELECT pg_relation_filepath(oid) FROM (SELECT oid FROM rels UNION SELECT oid FROM idx) x",
        (schema,),
    ).fetchall()
    return [str(r[0]) for r in rows if r[0]]


def test_no_planted_secret_reaches_rows_files_or_wal(
    pg_schema: str, pg_target: PgTarget, pg_data_dir: Path | None, tmp_path: Path
) -> None:
    vault = build_secret_vault(tmp_path / "vault")
    bare = [p for seed in SEEDS for p in planted(seed)]
    write_planted(vault.root / "bare", bare)
    secrets = tuple(dict.fromkeys([*vault.secrets, *(p.value for p in bare)]))
    schema = pg_schema.rsplit("search_path%3D", 1)[1].split("%2C", 1)[0]
    admin = pg_target.admin_url
    with psycopg.connect(admin or pg_target.url, autocommit=True) as conn:
        wal_start = conn.execute("SELECT pg_walfile_name(pg_current_wal_lsn())").fetchone()
    url = with_collection(pg_schema, "vault")
    texts: list[str] = []
    with noteseek.Index(url, embedder=FakeEmbedder()) as idx:
        stats = idx.update(vault.root)
        for query in ("rotation", "pasted value terminal", "service billing ops", "script"):
            texts += [f"{h.path} {h.section} {h.heading_context} {h.text}" for h in idx.search(query, limit=50)]
        texts.append(repr(idx.status()))
    assert stats.secrets_scrubbed >= len(vault.secrets) and stats.added > 100
    assert _leaks("\n".join(texts).encode(), secrets) == []
    with psycopg.connect(pg_schema, autocommit=True) as conn:
        tables = [r[0] for r in conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s", (schema,)
        )]  # fmt: skip
        assert {"chunks", "postings", "term_stats", "files", "note_names", "meta"} <= set(tables)
        for table in tables:
            dump = "\n".join(str(r[0]) for r in conn.execute(f'SELECT t::text FROM "{table}" t'))
            assert _leaks(dump.encode(), secrets) == [], table
    if pg_data_dir is None or admin is None:
        return  # a server of the caller's: its files are not ours to read
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute("CHECKPOINT")  # every page written to its file
        files = _relation_files(conn, schema)
        wal_end = conn.execute("SELECT pg_walfile_name(pg_current_wal_lsn())").fetchone()
    assert wal_start and wal_end and len(files) >= 10
    wal = sorted(
        p for p in (pg_data_dir / "pg_wal").iterdir() if wal_start[0] <= p.name <= wal_end[0]
    )
    assert wal  # the segments this run wrote
    for path in [pg_data_dir / f for f in files] + wal:
        assert _leaks(path.read_bytes(), secrets) == [], path.name
