"""The BM25 SQL over noteseek's postings ranks and scores exactly like FTS5's bm25().

Needs a PostgreSQL server (tests/postgres_fixtures.py): skips locally without one, fails in CI.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from noteseek import Index
from noteseek.engine.query_plan import CommonTerms
from noteseek.storage.postgres.bm25 import bm25_params, bm25_sql, prepare_query
from noteseek.storage.postgres.schema import MIGRATIONS
from noteseek.storage.postgres.terms import Tokenizer, chunk_terms

from .conftest import SAMPLE_VAULT, FakeEmbedder, WriteNotes, note
from .test_stemming import ENGLISH_NOTE, GERMAN_NOTE

QUERIES = [
    "how do I undo a rebase",
    "rotate api tokens",
    "run running runs",  # one stem from three words: three FTS5 phrases
    "the",  # only a stopword: searched anyway
    "Dateiformaten unterstützte Ordner",  # German: Porter and German stems colocated
    "supported file formats",
    "§3 Absatz 2 — 10,000 émigrés",
    "zzzz-not-a-word",
]


def _copy_into_postgres(conn: Any, idx: Index, tokenizer: Tokenizer) -> int:
    for migration in MIGRATIONS:
        conn.execute(migration.sql)
    cid = conn.execute("INSERT INTO collections(name) VALUES ('t') RETURNING id").fetchone()[0]
    db = idx._store.db  # type: ignore[attr-defined]
    for fid, path in db.execute("SELECT id, path FROM files"):
        conn.execute(
            "INSERT INTO files(id, collection_id, path, mtime_ns, size, status, indexed_at) "
            "OVERRIDING SYSTEM VALUE VALUES (%s, %s, %s, 0, 0, 'ok', 0)",
            (fid, cid, path),
        )
    chunks = tokens = 0
    rows = db.execute("SELECT id, file_id, chunk_text, section, title, tags, lang FROM chunks")
    for chunk_id, file_id, text, section, title, tags, lang in list(rows):
        terms = chunk_terms(
            tokenizer, text=text, section=section, title=title, tags=tags, lang=lang
        )
        conn.execute(
            "INSERT INTO chunks(id, collection_id, file_id, seq, section, chunk_text, "
            "heading_context, title, tags, lang, mtime_ns, content_hash, doc_len) "
            "OVERRIDING SYSTEM VALUE VALUES (%s, %s, %s, 0, %s, %s, '', %s, %s, %s, 0, 0, %s)",
            (chunk_id, cid, file_id, section, text, title, tags, lang, terms.doc_len),
        )
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO postings VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                [(cid, t, chunk_id, terms.doc_len, *tf) for t, tf in terms.tf.items()],
            )
        chunks += 1
        tokens += terms.doc_len
    conn.execute(
        "INSERT INTO term_stats SELECT collection_id, term, count(*) FROM postings "
        "GROUP BY collection_id, term"
    )
    conn.execute(
        "UPDATE collections SET chunk_count = %s, token_count = %s WHERE id = %s",
        (chunks, tokens, cid),
    )
    return int(cid)


def test_sql_bm25_equals_fts5_bm25(
    pg_schema: str, tmp_path: Path, make_vault: WriteNotes, fake_embedder: FakeEmbedder
) -> None:
    import psycopg

    vault = make_vault(
        {
            "de/dateien.md": GERMAN_NOTE,
            "de/ordner.md": GERMAN_NOTE.replace("Dateien", "Ordnerstruktur")
            + "\nOrdner und Dateien.",
            "en/files.md": ENGLISH_NOTE,
            "en/runs.md": note("Runs", ("Running", "He runs; they run; running is a run of runs.")),
            **{
                str(p.relative_to(SAMPLE_VAULT)): p.read_text(encoding="utf-8")
                for p in SAMPLE_VAULT.rglob("*.md")
            },
        }
    )
    with Index(tmp_path / "i.db", embedder=fake_embedder) as idx:
        idx.update(vault)
        assert idx._store.stem_options.german_queries  # so German queries get colocated stems
        tokenizer = Tokenizer(german_queries=True)
        weights = idx._searcher.settings.column_weights
        with psycopg.connect(pg_schema, autocommit=True) as conn:
            cid = _copy_into_postgres(conn, idx, tokenizer)
            compared = colocated = 0
            for text in QUERIES:
                fts = idx._searcher._bm25(text, 100)
                drop = CommonTerms(idx._store).test(idx._searcher.settings.max_term_share)
                query = prepare_query(text, tokenizer, drop=drop)
                if query is None:
                    assert fts == [], text
                    continue
                colocated += any(len(p) > 1 for p in query.phrases)
                params = bm25_params(query, collection=cid, weights=weights, limit=100)
                rows = conn.execute(bm25_sql(query), params).fetchall()
                assert [(r[0], r[2]) for r in rows] == [(r[0], r[2]) for r in fts], text
                for (_, sql_score, _), (_, fts_score, _) in zip(rows, fts):
                    assert abs(sql_score - fts_score) <= 1e-12 * abs(fts_score), text
                compared += len(fts)
            assert compared > 50
            assert colocated >= 1  # the colocated form was exercised
