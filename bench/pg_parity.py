"""The PostgreSQL backend against the SQLite backend, both through `noteseek.Index`: retrieval
quality (nDCG@10 per mode on MDN, the Obsidian hub and SciFact), the backend's KNN recall against
exact search, and warm hybrid latency on MDN side by side in one run.

    eval "$(.ci/postgres.sh start --dir /tmp/nspg-bench --set shared_buffers=1GB --set maintenance_work_mem=2GB)"
    nice -n 10 python bench/pg_parity.py --data-dir /work/shared/data --db "$NOTESEEK_TEST_PG" \\
        --json bench/results/pg_parity.json

Each set's SQLite index is `bench/quality.py`'s cached one (`bench/.cache/<index>.db`, brought
up to date); its PostgreSQL twin is the collection `<index>` of `--db`, built by `Index.update`
from the same vault with the bundled model (the build time is measured when the collection is
new; `--rebuild` drops it first). Every judged query runs in every mode through `Index.search`
with limit 100 on both, exactly as quality.py runs them; the hits are mapped to notes by the
same matcher and scored by the same ir-measures code. Not a prototype: BM25 comes from the
backend's SQL over its own postings, vectors from its HNSW index (`knn`), fusion and the rest
from the engine, unchanged.

`--latency-queries N` (default 300, on MDN or `--latency-set`) times warm `search(q, mode="hybrid")` (limit 10)
on both backends alternately per query after 50 warm-up queries of each (`--warmup`); p50/p95
in ms. The load average is printed before and after (the machine is shared: compare the rows of
one run). Beside the wall time, the CPU time a search costs: this process's per search on both,
plus, on PostgreSQL, its server process's (the connection's backend, read from /proc when the
server runs on this machine), which moves far less with other jobs' load than wall time does.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np

import _internals
import noteseek
import quality
from datasets import (
    CACHE_DIR,
    CORPORA,
    DATA_DIR,
    DATASETS,
    NoteMatcher,
    ensure_corpus,
    load_qrels,
    read_queries,
)
from noteseek.core.locator import DatabaseUrl, with_collection

SETS = ("mdn", "obsidian-hub", "beir-scifact")
MODES = ("bm25", "vector", "hybrid")


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def collection_url(db: str, name: str) -> DatabaseUrl:
    return DatabaseUrl(with_collection(db, name))


def build_collection(url: DatabaseUrl, vault: Path, *, rebuild: bool) -> dict[str, Any]:
    """Bring the collection up to date with the vault; the build time when it was new."""
    if rebuild:
        drop_collection(url)
    with noteseek.Index(url) as idx:
        fresh = idx.status().files == 0
        stats = idx.update(vault)
        status = idx.status()
        problems = idx.check()
    return {
        "fresh": fresh,
        "seconds": round(stats.seconds, 1),
        "notes": status.files,
        "chunks": status.chunks,
        "vectors": status.vectors,
        "integrity_problems": problems,
    }


def drop_collection(url: DatabaseUrl) -> None:
    import psycopg

    name = url.collection
    with psycopg.connect(url.with_collection(None).url, autocommit=True) as conn:
        found = conn.execute("SELECT to_regclass('collections')").fetchone()
        if found is None or found[0] is None:
            return
        row = conn.execute("SELECT id FROM collections WHERE name = %s", (name,)).fetchone()
        if row:
            conn.execute(f"DROP INDEX IF EXISTS chunks_hnsw_c{int(row[0])}")
            conn.execute("DELETE FROM collections WHERE id = %s", (row[0],))


def knn_recall(url: DatabaseUrl, queries: Sequence[str], k: int = 100) -> dict[str, Any]:
    """Recall@k of the backend's `knn` (HNSW, the search's ef_search) against exact cosine
    top-k over the same int8 vectors, for the set's first queries."""
    with noteseek.Index(url, create=False) as idx:
        store = _internals.postgres_store(idx)
        rows = store.conn.rows(
            "SELECT chunk_id, embedding::text FROM chunk_vectors WHERE collection_id = %s "
            "ORDER BY chunk_id",
            (store.conn.collections.only,),
        )
        ids = np.array([r[0] for r in rows])
        matrix = np.array([json.loads(r[1]) for r in rows], dtype=np.float32)
        matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
        recalls, times = [], []
        for text in queries:
            vector = _internals.query_vector(idx, text)
            if vector is None:
                continue
            q = np.frombuffer(vector, dtype=np.int8).astype(np.float32)
            q /= max(float(np.linalg.norm(q)), 1e-12)
            exact = set(ids[np.argsort(-(matrix @ q), kind="stable")[:k]].tolist())
            started = time.perf_counter()
            found = {cid for cid, _ in store.knn(vector, k)}
            times.append(1000 * (time.perf_counter() - started))
            recalls.append(len(found & exact) / k)
        plan = store.conn.rows(
            "EXPLAIN SELECT chunk_id FROM chunk_vectors WHERE collection_id = %s "
            "ORDER BY embedding::halfvec(256) <=> %s::halfvec(256) LIMIT 100",
            (store.conn.collections.only, "[" + ",".join(["1"] * 256) + "]"),
        )
        exact_scan = bool(_internals.exact_vector_collections(store))
    return {
        "k": k,
        "queries": len(recalls),
        "recall": round(sum(recalls) / max(len(recalls), 1), 4),
        "p50_ms": round(statistics.median(times), 2) if times else None,
        "hnsw_built": any("chunks_hnsw" in r[0] for r in plan),
        "knn_exact": exact_scan,  # below EXACT_KNN_MAX_CHUNKS: knn scans exactly, index or not
    }


def measure(ds_name: str, args: argparse.Namespace) -> dict[str, Any]:
    ds = DATASETS[ds_name]
    corpus_dir = ensure_corpus(CORPORA[ds.corpus], args.data_dir, args.cache_dir)
    vault = corpus_dir / ds.vault if ds.vault else corpus_dir
    print(f"[{ds.name}] SQLite index ...", file=sys.stderr, flush=True)
    info = quality.open_index(ds, vault, args.cache_dir, reindex=False)
    sqlite_db = Path(info.db)
    url = collection_url(args.db, ds.index)
    print(f"[{ds.name}] PostgreSQL collection {ds.index} ...", file=sys.stderr, flush=True)
    built = build_collection(url, vault, rebuild=args.rebuild)
    print(f"[{ds.name}] {built}", file=sys.stderr, flush=True)
    matcher = NoteMatcher(quality.note_chunk_counts(sqlite_db), ds.id_prefix)
    qrels, _ = matcher.map_qrels(load_qrels(ds, args.data_dir, args.cache_dir))
    texts = read_queries(args.data_dir / ds.queries)
    queries = [(qid, text) for qid, text in texts.items() if qid in qrels]
    if args.limit_queries:
        queries = queries[: args.limit_queries]
    qrels = {qid: qrels[qid] for qid, _ in queries}
    out: dict[str, Any] = {
        "queries": len(queries),
        "sqlite": {"notes": info.notes, "chunks": info.chunks},
        "postgres": built,
        "modes": {},
    }
    for mode in MODES:
        row: dict[str, Any] = {}
        ranked = {}
        for backend, db in (("sqlite", sqlite_db), ("postgres", url)):
            found, seconds, problem = quality.run_queries(db, queries, mode, matcher, None)  # type: ignore[arg-type]
            values = quality.evaluate(qrels, found)["nDCG@10"]
            row[backend] = round(sum(values.values()) / max(len(values), 1), 4)
            row[f"{backend}_ms_per_query"] = round(1000 * seconds / max(len(queries), 1), 1)
            row[f"{backend}_vector_problem"] = problem
            ranked[backend] = found
        row["delta"] = round(row["postgres"] - row["sqlite"], 4)
        row["same_top10"] = round(
            sum(ranked["sqlite"][q][:10] == ranked["postgres"][q][:10] for q, _ in queries)
            / max(len(queries), 1),
            4,
        )
        out["modes"][mode] = row
        print(f"[{ds.name}] {mode}: {row}", file=sys.stderr, flush=True)
    out["knn_recall"] = knn_recall(url, [t for _, t in queries[:200]])
    print(f"[{ds.name}] knn: {out['knn_recall']}", file=sys.stderr, flush=True)
    return out


def backend_cpu_seconds(idx: noteseek.Index) -> float | None:
    """CPU seconds the PostgreSQL server process of this index's connection has used so far
    (user + system, from /proc), or None when it runs elsewhere."""
    pid = _internals.postgres_store(idx).conn.scalar("SELECT pg_backend_pid()")
    try:
        fields = Path(f"/proc/{int(pid)}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None  # another machine (or no /proc): client CPU only
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def latency(args: argparse.Namespace) -> dict[str, Any]:
    """Warm hybrid search on `--latency-set` (MDN), both backends alternately per query."""
    ds = DATASETS[args.latency_set]
    texts = list(read_queries(args.data_dir / ds.queries).values())
    warm, timed = texts[: args.warmup], texts[args.warmup : args.warmup + args.latency_queries]
    sqlite_db = args.cache_dir / f"{ds.index}.db"
    url = collection_url(args.db, ds.index)
    times: dict[str, list[float]] = {"sqlite": [], "postgres": []}
    cpu = {"sqlite": 0.0, "postgres": 0.0}
    with noteseek.Index(sqlite_db, create=False) as lite, noteseek.Index(url, create=False) as pg:
        for text in warm:
            lite.search(text)
            pg.search(text)
        server_before = backend_cpu_seconds(pg)
        for i, text in enumerate(timed):
            order = (
                (("sqlite", lite), ("postgres", pg))
                if i % 2 == 0
                else (("postgres", pg), ("sqlite", lite))
            )
            for name, idx in order:
                started, cpu_started = time.perf_counter(), time.process_time()
                idx.search(text, mode="hybrid")
                times[name].append(1000 * (time.perf_counter() - started))
                cpu[name] += time.process_time() - cpu_started
        server_after = backend_cpu_seconds(pg)
    out: dict[str, Any] = {"set": ds.name, "queries": len(timed)}
    n = max(len(timed), 1)
    for name, values in times.items():
        values.sort()
        out[name] = {
            "p50_ms": round(statistics.median(values), 2),
            "p95_ms": round(values[int(0.95 * (len(values) - 1))], 2),
            "cpu_ms": round(1000 * cpu[name] / n, 2),  # this process's, per search
        }
    out["ratio_p50"] = round(out["postgres"]["p50_ms"] / out["sqlite"]["p50_ms"], 2)
    if server_before is not None and server_after is not None:
        # The backend serves only this connection, so its CPU over the loop is the searches'.
        out["postgres"]["server_cpu_ms"] = round(1000 * (server_after - server_before) / n, 2)
        total = out["postgres"]["cpu_ms"] + out["postgres"]["server_cpu_ms"]
        out["ratio_cpu"] = round(total / max(out["sqlite"]["cpu_ms"], 1e-9), 2)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", required=True, help="postgresql:// URL of the benchmark server")
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR)
    parser.add_argument("--cache-dir", type=Path, default=CACHE_DIR)
    parser.add_argument("--limit-queries", type=int)
    parser.add_argument("--latency-queries", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=50, help="warm-up queries of each backend")
    parser.add_argument(
        "--latency-set",
        default="mdn",
        choices=SETS,
        help="the set whose queries the latency run times (its indexes must exist: a set of "
        "--sets, or one measured before)",
    )
    parser.add_argument("--rebuild", action="store_true", help="drop and rebuild the collections")
    parser.add_argument("--skip-quality", action="store_true", help="only the latency run")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    report: dict[str, Any] = {
        "machine": f"{platform.machine()} {os.cpu_count()} cpus, Python {platform.python_version()}",
        "load_before": load(),
        "at": time.strftime("%Y-%m-%d %H:%M:%S"),
        "sets": {},
    }
    if not args.skip_quality:
        for name in args.sets.split(","):
            report["sets"][name] = measure(name, args)
    latency_key = f"latency_{args.latency_set}_hybrid"
    if args.latency_queries:
        report[latency_key] = latency(args)
        print(f"[latency] {report[latency_key]}", file=sys.stderr, flush=True)
    report["load_after"] = load()
    print("| set | mode | queries | SQLite nDCG@10 | PostgreSQL nDCG@10 | Δ | same top 10 |")
    print("|---|---|---|---|---|---|---|")
    for name, data in report["sets"].items():
        for mode, row in data["modes"].items():
            print(
                f"| {name} | {mode} | {data['queries']} | {row['sqlite']:.4f} | "
                f"{row['postgres']:.4f} | {row['delta']:+.4f} | {row['same_top10']:.3f} |"
            )
    if latency_key in report:
        lat = report[latency_key]
        print(
            f"\nwarm hybrid on {lat['set']} ({lat['queries']} queries): "
            f"SQLite p50 {lat['sqlite']['p50_ms']} "
            f"/ p95 {lat['sqlite']['p95_ms']} ms, PostgreSQL p50 {lat['postgres']['p50_ms']} / "
            f"p95 {lat['postgres']['p95_ms']} ms (ratio {lat['ratio_p50']})"
        )
        server = lat["postgres"].get("server_cpu_ms")
        print(
            f"CPU per search: SQLite {lat['sqlite']['cpu_ms']} ms, PostgreSQL "
            f"{lat['postgres']['cpu_ms']} ms here"
            + (
                f" + {server} ms in the server (ratio {lat['ratio_cpu']})"
                if server is not None
                else ""
            )
        )
    print(f"load average before {report['load_before']}, after {report['load_after']}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
