"""Exact KNN latency on PostgreSQL at several collection sizes, beside HNSW: the figures behind
`EXACT_KNN_MAX_CHUNKS` (storage/postgres/vector_table.py).

    nice -n 10 python bench/pg_exact_knn.py --db "$NOTESEEK_TEST_PG" --collection mdn \\
        --sizes 25000,60000,200000 --json bench/results/pg_exact_knn.json

Copies the collection's chunks (vectors and text, so rows are as wide as real ones) into a scratch
table per size (repeated to reach sizes beyond the collection), builds the same HNSW index on
it, and times top-100 for real query vectors (the collection's own chunk vectors, a stand-in for
queries) exactly (`ORDER BY (distance) + 0`: a sequential scan and sort) and through HNSW (ef_search
400, as `knn`). Medians of --queries queries after 5 warm-ups; the scratch schema is dropped.
`--vault DIR` first indexes that vault into the collection when `--db` has none by that name.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from typing import Any

import psycopg

import noteseek
from noteseek.core.locator import connect_url, with_collection


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", required=True, help="postgresql:// URL of the benchmark server")
    parser.add_argument("--collection", default="mdn")
    parser.add_argument("--sizes", default="25000,60000,200000")
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--json", default=None)
    parser.add_argument("--vault", help="index this vault into the collection if it is missing")
    args = parser.parse_args()
    if args.vault:
        try:
            noteseek.Index(with_collection(args.db, args.collection), create=False).close()
        except noteseek.IndexNotFoundError:
            with noteseek.Index(with_collection(args.db, args.collection)) as idx:
                built = idx.update(args.vault)
            print(f"built {args.collection}: {built.added} notes", file=sys.stderr)
    sizes = [int(s) for s in args.sizes.split(",")]
    out: dict[str, Any] = {
        "machine": f"{platform.machine()} {platform.python_version()}",
        "sizes": {},
    }
    with psycopg.connect(connect_url(args.db), autocommit=True) as conn:
        cid = conn.execute(
            "SELECT id FROM collections WHERE name = %s", (args.collection,)
        ).fetchone()
        if cid is None:
            print(f"no collection {args.collection!r} in --db", file=sys.stderr)
            return 2
        conn.execute("DROP SCHEMA IF EXISTS knn_probe CASCADE")
        conn.execute("CREATE SCHEMA knn_probe")
        conn.execute("SET maintenance_work_mem = '1GB'")
        try:
            base = conn.execute(
                "SELECT count(*) FROM chunk_vectors WHERE collection_id = %s",
                cid,
            ).fetchone()[0]  # type: ignore[index]
            queries = [
                r[0]
                for r in conn.execute(
                    "SELECT embedding::text FROM chunk_vectors WHERE collection_id = %s "
                    "ORDER BY md5(chunk_id::text) LIMIT %s",
                    (cid[0], args.queries + 5),
                )
            ]
            for size in sizes:
                table = f"knn_probe.t{size}"
                conn.execute(
                    f"CREATE TABLE {table} AS SELECT row_number() OVER () AS id, embedding, "
                    "chunk_text FROM (SELECT v.embedding, c.chunk_text FROM chunk_vectors v "
                    "JOIN chunks c ON c.id = v.chunk_id, generate_series(1, %s) g "
                    "WHERE v.collection_id = %s) s LIMIT %s",
                    (size // max(base, 1) + 1, cid[0], size),
                )
                started = time.perf_counter()
                conn.execute(
                    f"CREATE INDEX ON {table} USING hnsw ((embedding::halfvec(256)) "
                    "halfvec_cosine_ops) WITH (m = 16, ef_construction = 200)"
                )
                build = time.perf_counter() - started
                conn.execute(f"ANALYZE {table}")
                conn.execute("SET hnsw.ef_search = 400")
                row: dict[str, Any] = {"hnsw_build_s": round(build, 1)}
                for name, order in (
                    ("exact", "(embedding::halfvec(256) <=> %s::halfvec(256)) + 0"),
                    ("hnsw", "embedding::halfvec(256) <=> %s::halfvec(256)"),
                ):
                    sql = f"SELECT id FROM {table} ORDER BY {order} LIMIT 100"
                    plan = "\n".join(r[0] for r in conn.execute("EXPLAIN " + sql, (queries[0],)))
                    times = []
                    for i, q in enumerate(queries):
                        started = time.perf_counter()
                        conn.execute(sql, (q,)).fetchall()
                        if i >= 5:
                            times.append(1000 * (time.perf_counter() - started))
                    row[f"{name}_p50_ms"] = round(statistics.median(times), 2)
                    row[f"{name}_p95_ms"] = round(sorted(times)[int(0.95 * (len(times) - 1))], 2)
                    row[f"{name}_uses_index"] = "Index Scan" in plan
                out["sizes"][str(size)] = row
                print(f"{size} chunks: {row}", file=sys.stderr, flush=True)
                conn.execute(f"DROP TABLE {table}")
        finally:
            conn.execute("DROP SCHEMA IF EXISTS knn_probe CASCADE")
    print(json.dumps(out, indent=2))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
