"""A synthetic 1M-chunk collection from real chunk vectors: HNSW build, latency and recall at scale.

Usage (a server from tests/pgserver.py with maintenance_work_mem large enough for the graph,
`NOTESEEK_TEST_PG` exported; it takes a while — run it under nice)::

    eval "$(.ci/postgres.sh start --dir /tmp/nspg-bench --set maintenance_work_mem=2GB)"
    nice -n 10 python bench/pg_scale.py --data-dir ../shared/data --rows 1000000 [--json out.json]

The rows are the real int8 chunk vectors of MDN, the Obsidian hub and SciFact (~89k, from the
SQLite indexes bench/quality.py builds), repeated with noise until there are `--rows`: copy j of
vector v is normalise(v/|v| + σ·g/√d) with Gaussian g, quantised to int8 as noteseek stores
vectors (σ = 0.5 by default: a copy keeps cosine ≈ 0.9 with its original, so the collection
has the real corpora's topical structure, near-duplicates included, rather than uniform noise).
The queries are MDN's judged queries encoded as a search encodes them. Exact top lists come from
numpy over the same int8 rows; HNSW is measured by bench/pg_hnsw.measure (halfvec, m = 16,
ef_construction = 64; the top 30 and the top 100 at several ef_search).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
from pgvector.psycopg import register_vector

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

import _internals  # noqa: E402
import noteseek  # noqa: E402
import pg_hnsw  # noqa: E402
from datasets import CACHE_DIR, DATA_DIR, DATASETS  # noqa: E402
from noteseek.embedding.quantize import quantize  # noqa: E402

SOURCES = ("mdn", "obsidian-hub", "beir-scifact")


def real_vectors(cache_dir: Path) -> Any:
    parts = []
    for name in SOURCES:
        db = cache_dir / f"{DATASETS[name].index}.db"
        with noteseek.Index(db, create=False) as idx:
            matrix = _internals.vector_matrix(idx)
            assert matrix is not None, f"{db}: no vectors"
            parts.append(np.frombuffer(bytes(matrix.rows), dtype=np.int8).reshape(-1, matrix.dim))
    return np.concatenate(parts)


def synthesize(real: Any, rows: int, sigma: float, seed: int = 18) -> Any:
    """`rows` int8 vectors: the real ones first, then noisy copies of them, round-robin."""
    rng = np.random.default_rng(seed)
    unit = real.astype(np.float32)
    unit /= np.maximum(np.linalg.norm(unit, axis=1, keepdims=True), 1e-12)
    out = np.empty((rows, real.shape[1]), dtype=np.int8)
    take = min(rows, len(real))
    out[:take] = real[:take]
    dim = real.shape[1]
    for start in range(take, rows, 100_000):
        n = min(100_000, rows - start)
        base = unit[np.arange(start, start + n) % len(real)]
        noisy = base + sigma * rng.standard_normal((n, dim), dtype=np.float32) / np.sqrt(dim)
        out[start : start + n] = quantize(noisy)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url", default=os.environ.get("NOTESEEK_TEST_PG"))
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR)
    parser.add_argument("--cache-dir", type=Path, default=CACHE_DIR)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--sigma", type=float, default=0.5)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--ef", default="40,100,200,400")
    parser.add_argument("--m", type=int, default=16)
    parser.add_argument("--ef-construction", type=int, default=64)
    parser.add_argument("--keep", action="store_true", help="keep the table afterwards")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    if not args.url:
        sys.exit("error: no server: pass --url or export NOTESEEK_TEST_PG (.ci/postgres.sh start)")
    started = time.perf_counter()
    real = real_vectors(args.cache_dir)
    rows = synthesize(real, args.rows, args.sigma)
    _, queries = pg_hnsw.mdn_vectors(args.cache_dir, args.data_dir, args.queries)
    exact = {k: pg_hnsw.exact_top(rows, queries, k) for k in (30, 100)}
    print(f"[scale] {len(rows):,} rows from {len(real):,} real vectors; exact lists in "
          f"{time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)  # fmt: skip
    conn = psycopg.connect(args.url, autocommit=True)
    register_vector(conn)
    settings = {
        name: (conn.execute(f"SHOW {name}").fetchone() or ("?",))[0]
        for name in ("maintenance_work_mem", "max_parallel_maintenance_workers", "shared_buffers")
    }
    table = f"scale_{len(rows)}"
    result = pg_hnsw.measure(
        conn,
        table,
        "halfvec",
        rows,
        queries,
        exact=exact,
        ef_values=tuple(int(e) for e in args.ef.split(",")),
        seq_scan_queries=10,
        m=args.m,
        ef_construction=args.ef_construction,
    )
    if not args.keep:
        conn.execute(f"DROP TABLE {table}")
    text = json.dumps(
        {
            "rows": len(rows),
            "real_vectors": len(real),
            "sigma": args.sigma,
            "queries": len(queries),
            "server_settings": settings,
            "result": result,
            "total_seconds": round(time.perf_counter() - started),
        },
        indent=2,
    )
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
