"""Does reading time phrases change rankings on the development sets, and what does it cost a query?

    nice -n 10 python bench/time_rankings.py --data-dir ../shared/data [--max-queries N] [--json OUT]

With --max-queries N: on each set every query the reader changes (a range, or text taken out)
and the first N of the others, not every query (both searches of a query are what it costs).

Every judged development query (none asks for notes of a period) is searched twice on its set's
cached index (built by bench/quality.py or bench/rerank_train.py), interleaved: as a user types it
(`SearchRequest(query)`, time phrases read) and with `time_parse=False` (the query as written,
what search did before dates existed). The two top-10 lists are compared note for note, and
nDCG@10 is computed both ways; a query whose lists differ is printed with the range it got.

The cost is `SearchRequest(query).time_filter()` timed alone, warm, per query (what parsing adds
before the index is touched): its CPU time (the process's, so a wait for a core on a loaded
machine is not counted) and its wall time; and the whole search's wall time both ways (noisy on
a shared machine: the figure that counts is the parse's own).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from datetime import date
from pathlib import Path
from typing import Any

import noteseek
from datasets import CACHE_DIR, DATA_DIR, NoteMatcher, load_qrels, read_queries, select_datasets
from noteseek import SearchRequest
from quality import evaluate

SETS = "beir-scifact,mdn,obsidian-hub,obsidian-help-en,obsidian-help-de,tldr,xquad-de,xquad-en"
TODAY = date(2026, 12, 1)  # fixed, so a printed range repeats


def _q(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] if values else 0.0


def measure(name: str, data_dir: Path, cache_dir: Path, max_queries: int | None) -> dict[str, Any]:
    (ds,) = select_datasets(name)
    db = cache_dir / f"{ds.index}.db"
    if not db.exists():
        raise SystemExit(f"{db} is missing: build it with bench/quality.py --sets {name}")
    with noteseek.Index(db, create=False) as idx:
        matcher = NoteMatcher({p: 1 for p in idx.note_paths()}, ds.id_prefix)
        qrels, _ = matcher.map_qrels(load_qrels(ds, data_dir, cache_dir))
        texts = [(q, t) for q, t in read_queries(data_dir / ds.queries).items() if q in qrels]
        for warm in ("what did I write last week", "notes from March 2026", "am 14. März"):
            SearchRequest(warm, today=TODAY).time_filter()  # load the shapes and dateparser
        # The queries the reader changes (a range, or text taken out): all searched, always.
        changed = [
            (q, t) for q, t in texts if SearchRequest(t, today=TODAY).time_filter() != (t, None)
        ]
        if max_queries:
            texts = changed + [x for x in texts if x not in changed][:max_queries]
        idx.search("warm up", limit=10)
        parse_ms: list[float] = []  # CPU time: what the parse costs, not how long it waited
        parse_wall: list[float] = []
        on_ms: list[float] = []
        off_ms: list[float] = []
        runs: dict[str, dict[str, list[str]]] = {"on": {}, "off": {}}
        differ = []
        for i, (qid, text) in enumerate(texts):
            request = SearchRequest(text, limit=10, today=TODAY)
            c0, t0 = time.process_time(), time.perf_counter()
            _, window = request.time_filter()
            parse_ms.append((time.process_time() - c0) * 1000)
            parse_wall.append((time.perf_counter() - t0) * 1000)
            plain = SearchRequest(text, limit=10, time_parse=False)
            order = (("on", request, on_ms), ("off", plain, off_ms))
            for label, req, times in order if i % 2 == 0 else order[::-1]:
                t0 = time.perf_counter()
                hits = idx.run_search(req).hits
                times.append((time.perf_counter() - t0) * 1000)
                runs[label][qid] = [matcher.note_id(h.path) for h in hits]
            if runs["on"][qid] != runs["off"][qid]:
                shown = (
                    f"{window.since}..{window.until} ({window.phrase!r})" if window else "no range"
                )
                differ.append({"query": text, "range": shown})
    judged = {qid: qrels[qid] for qid, _ in texts}
    ndcg = {k: evaluate(judged, runs[k])["nDCG@10"] for k in runs}
    return {
        "queries": len(texts),
        "queries_the_reader_changed": len(changed),
        "top10_identical": len(texts) - len(differ),
        "top10_differ": differ,
        "ndcg10_time_parse": round(statistics.fmean(ndcg["on"].values()), 4),
        "ndcg10_as_written": round(statistics.fmean(ndcg["off"].values()), 4),
        "parse_cpu_ms_mean": round(statistics.fmean(parse_ms), 4),
        "parse_cpu_ms_p99": round(_q(parse_ms, 0.99), 4),
        "parse_cpu_ms_max": round(max(parse_ms), 4),
        "parse_wall_ms_median": round(statistics.median(parse_wall), 4),
        "parse_wall_ms_mean": round(statistics.fmean(parse_wall), 4),
        "search_ms_median_time_parse": round(statistics.median(on_ms), 2),
        "search_ms_median_as_written": round(statistics.median(off_ms), 2),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", type=Path, default=DATA_DIR)
    ap.add_argument("--cache-dir", type=Path, default=CACHE_DIR)
    ap.add_argument("--sets", default=SETS)
    ap.add_argument(
        "--max-queries",
        type=int,
        help="every query the reader changes, and the first N others of each set",
    )
    ap.add_argument("--json", type=Path, help="write the figures here")
    args = ap.parse_args()
    report: dict[str, Any] = {"today": TODAY.isoformat(), "sets": {}}
    print(
        "| set | queries | read a phrase | top 10 identical | nDCG@10 parsed / as written | parse CPU ms mean / p99 / max | parse wall ms median | search ms median parsed / as written |"
    )
    print("|---|---:|---:|---:|---|---|---:|---|")
    for name in args.sets.split(","):
        r = measure(name, args.data_dir, args.cache_dir, args.max_queries)
        report["sets"][name] = r
        print(
            f"| {name} | {r['queries']} | {r['queries_the_reader_changed']} | {r['top10_identical']} | {r['ndcg10_time_parse']:.4f} / "
            f"{r['ndcg10_as_written']:.4f} | {r['parse_cpu_ms_mean']:.3f} / {r['parse_cpu_ms_p99']:.3f} / "
            f"{r['parse_cpu_ms_max']:.3f} | {r['parse_wall_ms_median']:.3f} | {r['search_ms_median_time_parse']:.1f} / "
            f"{r['search_ms_median_as_written']:.1f} |",
            flush=True,
        )
        for d in r["top10_differ"]:
            print(f"    differs: {d['query']!r} -> {d['range']}", file=sys.stderr)
    if args.json:
        args.json.write_text(
            json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
