"""pgvector HNSW (cosine) over noteseek's vectors: halfvec(256) vs vector(256), against exact search.

Usage (a server from tests/pgserver.py, `NOTESEEK_TEST_PG` exported)::

    nice -n 10 python bench/pg_hnsw.py --data-dir ../shared/data [--queries 300] [--json out.json]

The vectors are MDN's 59k int8 chunk vectors from the SQLite index bench/quality.py builds
(int8 values are exact in float16 and float32, so both types hold the same vectors); the queries
are the int8 query vectors of MDN's judged queries, encoded as a search encodes them. For each type:
HNSW build time (m = 16, ef_construction = 64), index size, query p50/p95 for the top 30 and the
top 100 at several `hnsw.ef_search`, and recall@30 / recall@100 against the exact top lists
(numpy over the same vectors; the seq-scan latency is shown too). bench/pg_scale.py reuses
`measure` for a synthetic 1M-chunk collection.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
from pgvector import HalfVector, Vector
from pgvector.psycopg import register_vector

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

import _internals  # noqa: E402
import noteseek  # noqa: E402
from datasets import CACHE_DIR, DATA_DIR, DATASETS, read_queries  # noqa: E402

EF_SEARCH = (40, 100, 200, 400)
TYPES = {"halfvec": HalfVector, "vector": Vector}


def mdn_vectors(cache_dir: Path, data_dir: Path, n_queries: int) -> tuple[Any, Any]:
    """(chunk vectors int8 [n, 256], query vectors int8 [q, 256]) of MDN."""
    db = cache_dir / f"{DATASETS['mdn'].index}.db"
    with noteseek.Index(db, create=False) as idx:
        matrix = _internals.vector_matrix(idx)
        assert matrix is not None
        rows = np.frombuffer(bytes(matrix.rows), dtype=np.int8).reshape(-1, matrix.dim)
        texts = list(read_queries(data_dir / DATASETS["mdn"].queries).values())[:n_queries]
        queries = [_internals.query_vector(idx, t) for t in texts]
    q = np.array([np.frombuffer(v, dtype=np.int8) for v in queries if v is not None])
    return rows.copy(), q


def exact_top(rows: Any, queries: Any, k: int) -> list[list[int]]:
    """Exact cosine top-k row numbers, ties by row number (blocks of 100k rows)."""
    qf = queries.astype(np.float32)
    qf /= np.linalg.norm(qf, axis=1, keepdims=True)
    norms = np.linalg.norm(rows.astype(np.float32), axis=1)
    best: list[list[tuple[float, int]]] = [[] for _ in range(len(qf))]
    for start in range(0, len(rows), 100_000):
        block = rows[start : start + 100_000].astype(np.float32)
        sims = (qf @ block.T) / np.maximum(norms[start : start + 100_000], 1e-12)
        top = np.argpartition(-sims, min(k, sims.shape[1] - 1), axis=1)[:, :k]
        for i, cols in enumerate(top):
            best[i].extend((float(sims[i, c]), start + int(c)) for c in cols)
    return [[r for _, r in sorted(b, key=lambda x: (-x[0], x[1]))[:k]] for b in best]


def load(conn: Any, table: str, kind: str, rows: Any) -> float:
    """A table (id int, e <kind>(dim)) holding `rows`; seconds to load."""
    started = time.perf_counter()
    dim = rows.shape[1]
    conn.execute(f"DROP TABLE IF EXISTS {table}")
    conn.execute(f"CREATE TABLE {table}(id int PRIMARY KEY, e {kind}({dim}) NOT NULL)")
    wrap = TYPES[kind]
    with conn.cursor().copy(f"COPY {table} (id, e) FROM STDIN WITH (FORMAT BINARY)") as copy:
        copy.set_types(["int4", kind])
        floats = rows.astype(np.float32)
        for i, row in enumerate(floats):
            copy.write_row((i, wrap(row)))
    conn.execute(f"ANALYZE {table}")
    return time.perf_counter() - started


def _pcts(samples: list[float]) -> dict[str, float]:
    s = sorted(samples)
    return {
        "p50_ms": round(1000 * statistics.median(s), 2),
        "p95_ms": round(1000 * s[int(0.95 * (len(s) - 1))], 2),
    }


def _search(conn: Any, table: str, kind: str, q: Any, k: int) -> tuple[list[int], float]:
    started = time.perf_counter()
    rows = conn.execute(
        f"SELECT id FROM {table} ORDER BY e <=> %s LIMIT %s", (TYPES[kind](q), k)
    ).fetchall()
    return [r[0] for r in rows], time.perf_counter() - started


def measure(
    conn: Any,
    table: str,
    kind: str,
    rows: Any,
    queries: Any,
    *,
    exact: dict[int, list[list[int]]],
    ef_values: tuple[int, ...] = EF_SEARCH,
    seq_scan_queries: int = 30,
    m: int = 16,
    ef_construction: int = 64,
) -> dict[str, Any]:
    """Load, time the seq scan, build HNSW, and time + score queries at each ef_search."""
    out: dict[str, Any] = {
        "type": kind,
        "rows": len(rows),
        "m": m,
        "ef_construction": ef_construction,
    }
    out["load_seconds"] = round(load(conn, table, kind, rows), 1)
    out["table_mb"] = round(conn.execute(f"SELECT pg_table_size('{table}')").fetchone()[0] / 1e6, 1)
    seq = [_search(conn, table, kind, q, 30)[1] for q in queries[:seq_scan_queries]]
    out["exact_seq_scan_top30"] = _pcts(seq)
    started = time.perf_counter()
    conn.execute(
        f"CREATE INDEX {table}_hnsw ON {table} USING hnsw (e {kind}_cosine_ops) "
        f"WITH (m = {m}, ef_construction = {ef_construction})"
    )
    out["build_seconds"] = round(time.perf_counter() - started, 1)
    out["index_mb"] = round(
        conn.execute(f"SELECT pg_relation_size('{table}_hnsw')").fetchone()[0] / 1e6, 1
    )
    out["ef_search"] = {}
    for ef in ef_values:
        conn.execute(f"SET hnsw.ef_search = {int(ef)}")
        for q in queries[:20]:  # warm
            _search(conn, table, kind, q, 30)
        entry: dict[str, Any] = {}
        for k in sorted(exact):
            times, recall = [], []
            for q, truth in zip(queries, exact[k]):
                got, seconds = _search(conn, table, kind, q, k)
                times.append(seconds)
                recall.append(len(set(got) & set(truth)) / k)
            entry[f"top{k}"] = {**_pcts(times), f"recall@{k}": round(statistics.fmean(recall), 4)}
        out["ef_search"][ef] = entry
        print(f"[{table}] ef_search={ef}: {entry}", file=sys.stderr, flush=True)
    conn.execute("RESET hnsw.ef_search")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url", default=os.environ.get("NOTESEEK_TEST_PG"))
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR)
    parser.add_argument("--cache-dir", type=Path, default=CACHE_DIR)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    if not args.url:
        sys.exit("error: no server: pass --url or export NOTESEEK_TEST_PG (.ci/postgres.sh start)")
    rows, queries = mdn_vectors(args.cache_dir, args.data_dir, args.queries)
    exact = {k: exact_top(rows, queries, k) for k in (30, 100)}
    conn = psycopg.connect(args.url, autocommit=True)
    register_vector(conn)
    results = [
        measure(conn, f"hnsw_{kind}", kind, rows, queries, exact=exact)
        for kind in ("halfvec", "vector")
    ]
    for kind in ("halfvec", "vector"):
        conn.execute(f"DROP TABLE IF EXISTS hnsw_{kind}")
    text = json.dumps({"corpus": "mdn", "queries": len(queries), "results": results}, indent=2)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
