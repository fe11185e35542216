"""The PostgreSQL backend's BM25 ranks and scores exactly like the SQLite backend's FTS5 bm25().

The same vault is indexed into both backends by `Index.update`; every query's planned terms and
its whole top-100 keyword list (paths, chunk texts, scores bit for bit) must agree.

Needs a PostgreSQL server (tests/postgres_fixtures.py): skips locally without one, fails in CI.
"""

from __future__ import annotations

from pathlib import Path

from noteseek import DatabaseUrl, Index
from noteseek.core.locator import with_collection
from noteseek.core.query import search_terms
from noteseek.engine.search.query_plan import CommonTerms
from noteseek.storage.postgres.bm25 import query_phrases
from noteseek.storage.queries import KeywordQuery

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


def _keyword(idx: Index, text: str) -> tuple[list[str], list[tuple[str, str, float]]]:
    """The planned terms of a query and the backend's BM25 list as (path, chunk text, score)."""
    store, settings = idx._store, idx._searcher.settings
    terms = search_terms(text, drop=CommonTerms(store).test(settings.max_term_share))
    found = store.keyword_search(
        KeywordQuery(terms, limit=100, column_weights=settings.column_weights)
    )
    rows = store.chunk_rows([cid for cid, _, _ in found])
    return terms, [(rows[cid].path, rows[cid].text, score) for cid, score, _ in found]


def test_the_backends_bm25_equals_fts5_bm25(
    pg_schema: str, tmp_path: Path, make_vault: WriteNotes, fake_embedder: FakeEmbedder
) -> None:
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
    url = DatabaseUrl(with_collection(pg_schema, "bm25"))
    with (
        Index(tmp_path / "i.db", embedder=fake_embedder) as lite,
        Index(url, embedder=fake_embedder) as pg,
    ):
        lite.update(vault)
        pg.update(vault)
        assert lite._store.conn.stem_options.german_queries  # type: ignore[attr-defined]
        compared = colocated = 0
        for text in QUERIES:
            lite_terms, lite_hits = _keyword(lite, text)
            pg_terms, pg_hits = _keyword(pg, text)
            assert pg_terms == lite_terms, text  # the same words left out as too common
            assert [h[:2] for h in pg_hits] == [h[:2] for h in lite_hits], text
            for (*_, pg_score), (*_, fts_score) in zip(pg_hits, lite_hits):
                assert pg_score == fts_score, text  # bit for bit
            compared += len(lite_hits)
            colocated += any(len(p) > 1 for p in _phrases(pg, pg_terms))
        assert compared > 50
        assert colocated >= 1  # the colocated (German) form was exercised


def _phrases(idx: Index, terms: list[str]) -> tuple[tuple[str, ...], ...]:
    query = query_phrases(terms, idx._store.conn.tokenizer)  # type: ignore[attr-defined]
    return () if query is None else query.phrases
