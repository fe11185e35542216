"""BM25 and hybrid parity of the PostgreSQL design with the SQLite backend, and BM25 SQL latency.

Usage (bench extra and the postgres extra installed; a server from tests/pgserver.py)::

    eval "$(.ci/postgres.sh start --dir /tmp/nspg-bench --set shared_buffers=1GB)"
    nice -n 10 python bench/pg_bm25.py --data-dir ../shared/data [--limit-queries N] [--json out.json]

What it does, per set (MDN, the Obsidian hub, SciFact):

1. builds (or re-uses) the set's SQLite index with the current noteseek, as bench/quality.py;
2. copies it into PostgreSQL in the proposed schema (bench/pg_load.py), postings tokenised by
   noteseek's own tokenizer;
3. runs every judged query through the *same* `Index.search` (grouping, convex fusion, exact
   names, best section) twice: as it is (SQLite FTS5 + int8 vectors), and with the searcher's two
   candidate lists taken from PostgreSQL instead (the BM25 SQL of
   noteseek.storage.postgres.bm25; cosine KNN over halfvec — exact, then HNSW at several
   ef_search); everything else stays in-process and identical;
4. prints nDCG@10 side by side, how many queries have the identical top 10, and the largest
   relative difference between FTS5's bm25() and the SQL score of the same chunk.

On MDN it then times the BM25 candidate query (depth 100, warm, interleaved per query) for
SQLite FTS5 and three PostgreSQL posting stores: the postings table (index-only scan), per-stem
posting arrays, and a tsvector per chunk with a GIN index.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

import psycopg  # noqa: E402

import _internals  # noqa: E402
import noteseek  # noqa: E402
import pg_load  # noqa: E402
import pg_queries  # noqa: E402
from datasets import (  # noqa: E402
    CACHE_DIR,
    CORPORA,
    DATA_DIR,
    DATASETS,
    NoteMatcher,
    ensure_corpus,
    read_qrels,
    read_queries,
)
from noteseek.storage.postgres.terms import Tokenizer  # noqa: E402
from quality import evaluate, note_chunk_counts, open_index  # noqa: E402

SETS = ("mdn", "obsidian-hub", "beir-scifact")
LIMIT = 100
EF_SEARCH = (100, 200, 400)


def _queries(ds_name: str, data_dir: Path, db: Path, limit: int | None) -> tuple[Any, ...]:
    ds = DATASETS[ds_name]
    matcher = NoteMatcher(note_chunk_counts(db), ds.id_prefix)
    qrels, _ = matcher.map_qrels(read_qrels(data_dir / ds.qrels, ds.min_score))
    texts = read_queries(data_dir / ds.queries)
    queries = [(qid, text) for qid, text in texts.items() if qid in qrels]
    if limit:
        queries = queries[:limit]
    return matcher, {qid: qrels[qid] for qid, _ in queries}, queries


def _ranked(idx: noteseek.Index, queries: list[tuple[str, str]], mode: str, matcher: Any) -> Any:
    out: dict[str, list[str]] = {}
    for qid, text in queries:
        notes: list[str] = []
        for hit in idx.search(text, limit=LIMIT, mode=mode, min_score=0, min_answer=0):  # type: ignore[arg-type]
            note = matcher.note_id(hit.path)
            if note not in notes:
                notes.append(note)
        out[qid] = notes
    return out


def _ndcg(qrels: Any, ranked: Any) -> float:
    values = evaluate(qrels, ranked)["nDCG@10"]
    return sum(values.values()) / max(len(values), 1)


def _same_top10(a: dict[str, list[str]], b: dict[str, list[str]]) -> float:
    return sum(a[q][:10] == b[q][:10] for q in a) / max(len(a), 1)


def measure_set(conn: Any, name: str, args: argparse.Namespace) -> dict[str, Any]:
    ds = DATASETS[name]
    vault = ensure_corpus(CORPORA[ds.corpus], args.data_dir, args.cache_dir) / ds.vault
    info = open_index(ds, vault, args.cache_dir, reindex=False)
    db = Path(info.db)
    found = conn.execute("SELECT id FROM collections WHERE name = %s", (name,)).fetchone()
    if found is None:
        loaded = pg_load.load_collection(conn, db, name, alternatives=(name == "mdn"))
        print(f"[{name}] loaded into PostgreSQL: {loaded}", file=sys.stderr, flush=True)
        cid = loaded["collection"]
        # The visibility map, without which an index-only scan still visits the heap; in
        # production autovacuum sets it after inserts (autovacuum_vacuum_insert_threshold).
        conn.execute("VACUUM (ANALYZE)")
    else:
        cid = int(found[0])
    matcher, qrels, queries = _queries(name, args.data_dir, db, args.limit_queries)
    out: dict[str, Any] = {"set": name, "queries": len(queries), "chunks": info.chunks}
    runs: dict[str, dict[str, list[str]]] = {}
    with noteseek.Index(db, create=False) as idx:
        german = _internals.storage(idx).get_meta("german_notes") == "1"
        pg = pg_queries.PgLists(conn, cid, Tokenizer(german_queries=german), idx)
        runs["sqlite bm25"] = _ranked(idx, queries, "bm25", matcher)
        runs["sqlite hybrid"] = _ranked(idx, queries, "hybrid", matcher)
        out["score_check"] = pg.compare_scores(idx, [t for _, t in queries[:300]])
        with pg.installed(idx, vectors="exact"):
            runs["pg bm25"] = _ranked(idx, queries, "bm25", matcher)
            runs["pg hybrid (exact knn)"] = _ranked(idx, queries, "hybrid", matcher)
        pg.ensure_hnsw()
        for ef in EF_SEARCH:
            with pg.installed(idx, vectors="hnsw", ef_search=ef):
                runs[f"pg hybrid (hnsw ef={ef})"] = _ranked(idx, queries, "hybrid", matcher)
        out["split_words"] = pg.split_words
    out["ndcg@10"] = {mode: round(_ndcg(qrels, run), 4) for mode, run in runs.items()}
    out["same_top10_as_sqlite"] = {
        "bm25": round(_same_top10(runs["sqlite bm25"], runs["pg bm25"]), 4),
        "hybrid (exact knn)": round(
            _same_top10(runs["sqlite hybrid"], runs["pg hybrid (exact knn)"]), 4
        ),
    }
    for mode, value in out["ndcg@10"].items():
        print(f"[{name}] {mode:26s} nDCG@10 {value:.4f}", file=sys.stderr, flush=True)
    return out


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(1000 * statistics.median(ordered), 2),
        "p95_ms": round(1000 * ordered[int(0.95 * (len(ordered) - 1))], 2),
        "mean_ms": round(1000 * statistics.fmean(ordered), 2),
    }


def latency(conn: Any, args: argparse.Namespace) -> dict[str, Any]:
    """BM25 candidate lists (depth 100) on MDN: SQLite FTS5 vs the three PostgreSQL stores."""
    ds = DATASETS["mdn"]
    db = args.cache_dir / f"{ds.index}.db"
    cid = int(conn.execute("SELECT id FROM collections WHERE name = 'mdn'").fetchone()[0])
    _, _, queries = _queries("mdn", args.data_dir, db, args.latency_queries)
    texts = [t for _, t in queries]
    with noteseek.Index(db, create=False) as idx:
        pg = pg_queries.PgLists(conn, cid, Tokenizer(), idx)
        variants: dict[str, Callable[[str], object]] = {
            "sqlite fts5 bm25()": lambda q: _internals.keyword_list(idx, q, LIMIT),
            "pg postings table": lambda q: pg.bm25(q, LIMIT),
            "pg per-stem arrays": lambda q: pg.bm25(q, LIMIT, store="arrays"),
            "pg tsvector + GIN": lambda q: pg.bm25(q, LIMIT, store="tsvector"),
        }
        for fn in variants.values():  # warm caches and plans
            for q in texts[:50]:
                fn(q)
        samples: dict[str, list[float]] = {name: [] for name in variants}
        agree = {name: 0 for name in variants}
        for q in texts:
            reference = None
            for name, fn in variants.items():
                started = time.perf_counter()
                result = fn(q)
                samples[name].append(time.perf_counter() - started)
                ids = [r[0] % pg_load.OFFSET for r in result]  # type: ignore[attr-defined]
                reference = ids if reference is None else reference
                agree[name] += ids[:10] == reference[:10]
        hybrid = _hybrid_latency(idx, pg, texts)
        plans = _plan_variants(conn, pg, texts)
    return {
        "queries": len(texts),
        "depth": LIMIT,
        "variants": {
            name: {**_percentiles(samples[name]), "same_top10_as_fts5": agree[name] / len(texts)}
            for name in variants
        },
        "postings_scan_variants": plans,
        "hybrid_search": hybrid,
        "sizes_mb": pg.sizes(),
        "plan": pg.explain(texts[0]),
    }


def _hybrid_latency(idx: noteseek.Index, pg: Any, texts: list[str]) -> dict[str, Any]:
    """Index.search(mode='hybrid', limit=10), warm: SQLite as it is vs both lists from PG."""
    pg.ensure_hnsw()
    samples: dict[str, list[float]] = {"sqlite": [], "pg (hnsw ef=100)": [], "pg (exact knn)": []}
    for q in texts[:30]:
        idx.search(q, mode="hybrid")
    for q in texts:
        for name in samples:
            if name == "sqlite":
                started = time.perf_counter()
                idx.search(q, mode="hybrid")
            else:
                vectors = "exact" if "exact" in name else "hnsw"
                with pg.installed(idx, vectors=vectors, ef_search=100):
                    started = time.perf_counter()
                    idx.search(q, mode="hybrid")
            samples[name].append(time.perf_counter() - started)
    return {name: _percentiles(v) for name, v in samples.items()}


def _plan_variants(conn: Any, pg: Any, texts: list[str]) -> dict[str, Any]:
    """What the covering primary key buys: the same query with index-only scans forbidden."""
    out = {}
    for label, setting in (
        ("index-only scan (covering pkey)", None),
        ("index scan + heap fetch", "enable_indexonlyscan"),
        ("bitmap heap scan", "enable_indexscan"),
    ):
        samples = []
        for q in texts[:100]:
            with conn.transaction():
                if setting:
                    conn.execute(f"SET LOCAL {setting} = off")
                    if setting == "enable_indexscan":
                        conn.execute("SET LOCAL enable_indexonlyscan = off")
                started = time.perf_counter()
                pg.bm25(q, LIMIT)
                samples.append(time.perf_counter() - started)
        out[label] = _percentiles(samples)
    # A deduplicated, non-covering (collection_id, term) index instead of the covering key: built,
    # measured and rolled back in one transaction (the bench database only).
    with contextlib.suppress(psycopg.Rollback), conn.transaction():
        conn.execute("CREATE INDEX postings_term_dedup ON postings(collection_id, term)")
        size = conn.execute("SELECT pg_relation_size('postings_term_dedup')").fetchone()[0]
        conn.execute("ALTER TABLE postings DROP CONSTRAINT postings_pkey")
        conn.execute("ANALYZE postings")
        samples = []
        for q in texts[:100]:
            started = time.perf_counter()
            pg.bm25(q, LIMIT)
            samples.append(time.perf_counter() - started)
        out["dedup (collection_id, term) index, no covering key"] = {
            **_percentiles(samples),
            "index_mb": round(size / 1e6, 1),
        }
        raise psycopg.Rollback()
    conn.execute("ANALYZE postings")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url", default=None, help="default: $NOTESEEK_TEST_PG")
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR)
    parser.add_argument("--cache-dir", type=Path, default=CACHE_DIR)
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--limit-queries", type=int, default=None)
    parser.add_argument("--latency-queries", type=int, default=300)
    parser.add_argument("--reload", action="store_true", help="drop and re-copy every collection")
    parser.add_argument("--latency-only", action="store_true", help="skip the parity runs")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    import os

    url = args.url or os.environ.get("NOTESEEK_TEST_PG")
    if not url:
        sys.exit("error: no server: pass --url or start one (.ci/postgres.sh start) and export it")
    conn = psycopg.connect(url, autocommit=True)
    exists = (conn.execute("SELECT to_regclass('collections')").fetchone() or (None,))[0]
    if args.reload or exists is None:
        pg_load.apply_schema(conn)
    sets = [] if args.latency_only else [measure_set(conn, s, args) for s in args.sets.split(",")]
    result: dict[str, Any] = {"sets": sets}
    if "mdn" in args.sets.split(","):
        result["latency_mdn"] = latency(conn, args)
        for name, v in result["latency_mdn"]["variants"].items():
            print(f"[latency] {name:22s} {v}", file=sys.stderr)
    text = json.dumps(result, indent=2)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
