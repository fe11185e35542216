"""What a learned rerank of the fused head adds to a warm hybrid query (issue 16, part 1).

Usage (after ``bench/quality.py`` built the MDN index and ``rerank_lab.py --export`` wrote a model)::

    nice -n 10 python bench/rerank_latency.py [--model bench/.cache/models/rerank-lambdarank.json]

One process, one index (MDN), the same 300 anchor queries, rounds alternating between today's
``Index.search(q)`` and the same search followed by everything a reranker needs at query time:
the candidate data from storage (one query for the 40 candidates' headings, one for their best
sections), tokenizing title field, headings and those sections with the index's tokenizer, the
features (`noteseek.core.rerank_features`), the model (`noteseek.core.rerank_model`, pure Python) and the
re-sort. The BM25 and vector lists are the ones the search itself computed (its `_bm25` / `_knn`
results are captured, not recomputed), so the difference is the reranker's own cost. Link
in-degree is a dict lookup here (part 2 stores it at index time).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import apsw

import noteseek
from datasets import CACHE_DIR, DATA_DIR, read_queries
from lab_rerank_features import Candidate, NoteTokens, QueryTerms, features
from lab_rerank_model import load_model

HEAD = 30


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=CACHE_DIR / "models" / "rerank-lambdarank.json")
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--rerank", type=int, default=40)
    parser.add_argument(
        "--cheap", action="store_true", help="no section bodies: title, tags, headings, lengths only"
    )
    parser.add_argument("--also-limit", action="store_true", help="also time search(limit=RERANK) alone")
    args = parser.parse_args()
    model = load_model(args.model)
    texts = list(read_queries(args.data_dir / "mdn-content-en/knownitem-anchor/queries.jsonl").values())
    random.Random(42).shuffle(texts)
    texts = texts[: args.queries]
    with noteseek.Index(CACHE_DIR / "mdn.db", create=False) as idx:
        searcher = idx._searcher
        con = idx._store.db
        captured: dict[str, Any] = {}
        bm25, knn = searcher._bm25, searcher._knn

        def cap_bm25(*a: Any, **k: Any) -> Any:
            captured["kw"] = bm25(*a, **k)
            return captured["kw"]

        def cap_knn(*a: Any, **k: Any) -> Any:
            captured["vec"] = knn(*a, **k)
            return captured["vec"]

        searcher._bm25 = cap_bm25  # type: ignore[method-assign]
        searcher._knn = cap_knn  # type: ignore[method-assign]
        tok = con.fts5_tokenizer("noteseek", [])
        con.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.lat_vocab USING fts5vocab(main, chunks_fts, 'row')")
        total = int(idx._store.scalar("SELECT count(*) FROM chunks"))
        indegree: dict[int, int] = {}

        def tokens(text: str, lang: str | None = None) -> tuple[str, ...]:
            return tuple(str(t[2]) for t in tok(text.encode("utf-8"), apsw.FTS5_TOKENIZE_DOCUMENT, lang))

        def reranked(text: str) -> list[str]:
            hits = idx.search(text, limit=args.rerank, explain=True)
            kw_rows, vec_rows = captured.get("kw", []), captured.get("vec", [])
            file_of = {cid: fid for cid, _, fid in kw_rows}
            file_of.update({m.chunk_id: m.file_id for m in vec_rows if m.file_id is not None})
            kw_first: dict[int, tuple[int, float, int]] = {}
            kw_count: dict[int, int] = {}
            for cid, score, fid in kw_rows:
                kw_count[fid] = kw_count.get(fid, 0) + 1
                if fid not in kw_first:
                    kw_first[fid] = (cid, score, len(kw_first) + 1)
            vec_first: dict[int, tuple[int, float, int]] = {}
            vec_count: dict[int, int] = {}
            for m in vec_rows:
                fid = file_of.get(m.chunk_id)
                if fid is None:
                    continue
                vec_count[fid] = vec_count.get(fid, 0) + 1
                if fid not in vec_first:
                    vec_first[fid] = (m.chunk_id, m.cosine, len(vec_first) + 1)
            fids = [file_of.get(h.chunk_id) for h in hits]
            wanted = [f for f in fids if f is not None]
            ids = json.dumps(wanted)
            heads: dict[int, list[str]] = {}
            meta: dict[int, tuple[int, int, int]] = {}
            for fid, section in con.execute(
                "SELECT file_id, section FROM chunks WHERE file_id IN (SELECT value FROM json_each(?))", (ids,)
            ):
                heads.setdefault(fid, []).append(section)
            for fid, n, size, mtime in con.execute(
                "SELECT id, chunk_count, size, mtime_ns FROM files WHERE id IN (SELECT value FROM json_each(?))", (ids,)
            ):
                meta[fid] = (n, size, mtime)
            shown = [c for f in wanted for c in {kw_first.get(f, (None,))[0], vec_first.get(f, (None,))[0]} if c]
            rows = {
                r[0]: r
                for r in con.execute(
                    "SELECT id, '' AS t, title, tags, lang FROM chunks WHERE id IN (SELECT value FROM json_each(?))"
                    if args.cheap
                    else "SELECT id, chunk_text, title, tags, lang FROM chunks WHERE id IN (SELECT value FROM json_each(?))",
                    (json.dumps(shown),),
                )
            }
            qtoks = [[str(f) for f in t[2:]] for t in tok(text.encode("utf-8"), apsw.FTS5_TOKENIZE_QUERY, None)]
            idf = []
            for forms in qtoks:
                df = 0
                for f in forms:
                    r = con.execute("SELECT doc FROM temp.lat_vocab WHERE term = ?", (f,)).fetchone()
                    df = max(df, int(r[0]) if r else 0)
                idf.append(max(0.0, __import__("math").log((total - df + 0.5) / (df + 0.5))) if df else 0.0)
            q = QueryTerms(tuple(frozenset(f) for f in qtoks), tuple(idf))
            kw_head = [s for _, s, r in kw_first.values() if r <= HEAD] or [0.0]
            vec_head = [s for _, s, r in vec_first.values() if r <= HEAD] or [0.0]
            kw_lo, kw_span = min(kw_head), (max(kw_head) - min(kw_head)) or 1.0
            vec_lo, vec_span = min(vec_head), (max(vec_head) - min(vec_head)) or 1.0
            scored = []
            mt = [meta[f][2] for f in wanted if f in meta]
            lo, hi = (min(mt), max(mt)) if mt else (0, 0)
            for pos, (h, fid) in enumerate(zip(hits, fids), start=1):
                if fid is None:
                    continue
                k, v = kw_first.get(fid), vec_first.get(fid)
                chunk_ids = [c for c in (k[0] if k else None, v[0] if v else None) if c in rows]
                chunk_ids = list(dict.fromkeys(chunk_ids))
                first = rows[chunk_ids[0]] if chunk_ids else None
                lang = first[4] if first else None
                note = NoteTokens(
                    title=frozenset(tokens(first[2], lang)) if first else frozenset(),
                    tags=frozenset(tokens(first[3], lang)) if first else frozenset(),
                    headings=frozenset(tokens(" ".join(heads.get(fid, [])), lang)),
                    chunks=((),) if args.cheap else tuple(tokens(rows[c][1], lang) for c in chunk_ids) or ((),),
                    best=0,
                )
                n, size, mtime = meta.get(fid, (1, 0, 0))
                cand = Candidate(
                    fused_rank=pos,
                    fused_score=h.score,
                    bm25_rank=k[2] if k else None,
                    bm25_norm=((k[1] - kw_lo) / kw_span) if k and k[2] <= HEAD else 0.0,
                    vec_rank=v[2] if v else None,
                    cosine=v[1] if v else None,
                    vec_norm=((v[1] - vec_lo) / vec_span) if v and v[2] <= HEAD else 0.0,
                    bm25_chunks=kw_count.get(fid, 0),
                    vec_chunks=vec_count.get(fid, 0),
                    exact_name=bool(h.explanation and h.explanation.exact_name),
                    chunk_count=n,
                    note_chars=size,
                    indegree=indegree.get(fid, 0),
                    recency=(mtime - lo) / (hi - lo) if hi > lo else 0.5,
                )
                scored.append((model.score(features(q, cand, note)), -pos, h.path))
            scored.sort(reverse=True)
            return [p for _, _, p in scored[:10]]

        for t in texts[:20]:  # warm up both paths
            idx.search(t)
            reranked(t)
        plain: list[list[float]] = []
        rerank: list[list[float]] = []
        wide: list[list[float]] = []
        paths = [("plain", lambda t: idx.search(t), plain), ("rerank", reranked, rerank)]
        if args.also_limit:
            paths.append(("limit", lambda t: idx.search(t, limit=args.rerank), wide))
        for _ in range(args.rounds):
            for label, fn, sink in paths:
                times = []
                for t in texts:
                    started = time.perf_counter()
                    fn(t)
                    times.append(time.perf_counter() - started)
                sink.append(times)
                print(f"{label}: p50 {1e3 * statistics.median(times):.2f} ms", file=sys.stderr)
    p50 = lambda rounds: statistics.median(statistics.median(r) for r in rounds)  # noqa: E731
    p95 = lambda rounds: statistics.median(sorted(r)[int(0.95 * len(r))] for r in rounds)  # noqa: E731
    print(f"MDN, {len(texts)} queries x {args.rounds} alternating rounds, model {args.model.name} ({type(model).__name__}):")
    print("| path | median p50 | median p95 |\n|---|---|---|")
    print(f"| hybrid today (limit 10) | {1e3 * p50(plain):.2f} ms | {1e3 * p95(plain):.2f} ms |")
    print(f"| hybrid (limit {args.rerank}) + rerank | {1e3 * p50(rerank):.2f} ms | {1e3 * p95(rerank):.2f} ms |")
    if wide:
        print(f"| hybrid (limit {args.rerank}), no rerank | {1e3 * p50(wide):.2f} ms | {1e3 * p95(wide):.2f} ms |")
    print(f"rerank / today at p50: {p50(rerank) / p50(plain):.2f}x ({'cheap features' if args.cheap else 'all features'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
