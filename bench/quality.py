"""Retrieval quality of noteseek on the judged data sets in ../shared/data.

Usage (from the repo root, with the ``bench`` extra installed: ``pip install -e '.[bench]'``)::

    python bench/quality.py                              # every set, modes bm25, vector, hybrid
    python bench/quality.py --sets mdn,xquad-* --modes bm25,hybrid --limit-queries 200
    python bench/quality.py --json bench/results/quality.json

Each set's vault is unpacked once into ``bench/.cache/<corpus>/`` and indexed once into
``bench/.cache/<index>.db``; later runs re-use both (``Index.update`` is incremental, so a run
only re-reads notes whose size or mtime changed; ``--reindex`` rebuilds from scratch). Every
query is run with ``limit=100`` in each mode (its first 10 hits are exactly what ``limit=10``, the
default, returns: only each list's head decides the ranking; before session 3 a larger limit also
widened the fusion's scale, so figures measured here then flattered the default slightly); the hits
are mapped to notes (a note keeps the rank of its first chunk), and nDCG@10, R@10, R@100 and RR@10 (MRR@10) are computed against the
qrels by ir-measures (trec_eval through pytrec-eval-terrier). Queries with no hit score 0.
Hybrid is compared to BM25 and to vector search per set with a two-sided paired t-test on
per-query nDCG@10 (scipy.stats.ttest_rel; the JSON also has the Wilcoxon signed-rank p-value).

R@100 counts the notes in the top 100 *chunks*, which can be fewer than 100 notes.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import math
import platform
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

try:
    import ir_measures
    from scipy import stats as sps
except ImportError as exc:  # pragma: no cover - depends on the environment
    sys.exit(
        f"error: {exc.name or exc} is not installed; install the bench extra from the repo root: "
        "pip install -e '.[bench]'"
    )

import _internals
import noteseek
from datasets import (
    CACHE_DIR,
    CORPORA,
    DATA_DIR,
    DataSet,
    NoteMatcher,
    ensure_corpus,
    load_qrels,
    read_queries,
    select_datasets,
)
from noteseek import SearchSettings

MODES = ("bm25", "vector", "hybrid")
LIMIT = 100
MEASURE_NAMES = ("nDCG@10", "R@10", "R@100", "RR@10")
LABELS = {"nDCG@10": "nDCG@10", "R@10": "R@10", "R@100": "R@100", "RR@10": "MRR@10"}
MEASURES = [ir_measures.parse_measure(name) for name in MEASURE_NAMES]

log = logging.getLogger("bench.quality")


@dataclass
class RunState:
    """What sets of one run share: ranked notes per (index, mode), indexes already rebuilt."""

    ranked: dict[tuple[str, str, str], dict[str, list[str]]] = field(default_factory=dict)
    rebuilt: set[str] = field(default_factory=set)


@dataclass
class IndexInfo:
    """How one set's index was obtained."""

    db: str
    notes: int
    chunks: int
    update_seconds: float
    built_now: bool
    reprocessed: bool
    build_seconds: float | None
    problems: int
    vector_problem: str | None = None


@dataclass
class SetResult:
    """Everything measured for one data set."""

    name: str
    notes: str
    index: IndexInfo
    queries: int
    queries_without_text: int
    qrels: int
    unmatched: dict[str, int]
    judged_without_chunks: dict[str, int]
    modes: dict[str, dict[str, Any]] = field(default_factory=dict)
    tests: dict[str, dict[str, Any]] = field(default_factory=dict)
    per_query: dict[str, dict[str, float]] = field(default_factory=dict)
    # mode -> measure label -> query id -> value (for paired tests of R@10 and MRR@10 too)
    per_query_all: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)


# --- indexing --------------------------------------------------------------------------------


def open_index(ds: DataSet, vault: Path, cache_dir: Path, *, reindex: bool) -> IndexInfo:
    """Bring the set's cached index up to date with its vault; return what that took."""
    db = cache_dir / f"{ds.index}.db"
    sidecar = cache_dir / f"{ds.index}.build.json"
    if reindex:
        for p in (db, Path(f"{db}-wal"), Path(f"{db}-shm"), sidecar):
            p.unlink(missing_ok=True)
    fresh = not db.exists()
    with noteseek.Index(db) as idx:
        stats = idx.update(vault)
        status = idx.status()
    built = None
    # Every note (re)processed without a fresh file: the pipeline fingerprint changed (chunking,
    # scrubber rules); vectors were re-used by content hash, so this is not a cold build time.
    reprocessed = (
        not fresh and stats.files_seen > 0 and stats.added + stats.changed == stats.files_seen
    )
    if fresh:
        built = stats.seconds
        sidecar.write_text(
            json.dumps(
                {
                    "seconds": stats.seconds,
                    "notes": stats.files_seen,
                    "chunks": stats.chunks,
                    "noteseek": noteseek.__version__,
                    "at": time.strftime("%Y-%m-%d %H:%M:%S"),
                }
            ),
            encoding="utf-8",
        )
    elif stats.added + stats.changed + stats.removed > 0 and not reprocessed:
        log.warning(
            "%s: %d notes added, %d changed, %d removed since the index was built",
            ds.index,
            stats.added,
            stats.changed,
            stats.removed,
        )
    if built is None and sidecar.is_file():
        built = float(json.loads(sidecar.read_text(encoding="utf-8"))["seconds"])
    return IndexInfo(
        db=str(db),
        notes=status.files,
        chunks=status.chunks,
        update_seconds=stats.seconds,
        built_now=fresh,
        reprocessed=reprocessed,
        build_seconds=built,
        problems=len(status.problems),
        vector_problem=status.vector_problem,
    )


def note_chunk_counts(db: Path) -> dict[str, int]:
    """Vault-relative path -> number of chunks, for every file the index knows."""
    with noteseek.Index(db, create=False) as idx:
        rows = _internals.sqlite_db(idx).execute("SELECT path, chunk_count FROM files")
        return {str(path): int(n) for path, n in rows}


# --- running ---------------------------------------------------------------------------------


def run_queries(
    db: Path,
    queries: Sequence[tuple[str, str]],
    mode: str,
    matcher: NoteMatcher,
    settings: SearchSettings | None,
) -> tuple[dict[str, list[str]], float, str | None]:
    """Ranked note ids per query (first chunk of a note gives its rank), seconds, vector problem."""
    ranked: dict[str, list[str]] = {}
    with noteseek.Index(db, create=False, settings=settings) as idx:
        if mode != "bm25":  # load the model before the clock starts
            idx.search("warm up", limit=1, mode="vector")
        started = time.perf_counter()
        for qid, text in queries:
            notes: list[str] = []
            seen: set[str] = set()
            # The ranking is measured: neither the per-hit nor the query-level threshold hides a hit.
            for hit in idx.search(text, limit=LIMIT, mode=mode, min_score=0, min_answer=0):  # type: ignore[arg-type]
                note = matcher.note_id(hit.path)
                if note not in seen:
                    seen.add(note)
                    notes.append(note)
            ranked[qid] = notes
        seconds = time.perf_counter() - started
        problem = idx.vector_problem if mode != "bm25" else None
    return ranked, seconds, problem


def evaluate(
    qrels: dict[str, dict[str, int]], ranked: dict[str, list[str]]
) -> dict[str, dict[str, float]]:
    """measure name -> query id -> value, for every judged query (0 where the run is empty)."""
    run = {
        qid: {note: float(len(notes) - rank) for rank, note in enumerate(notes)}
        for qid, notes in ranked.items()
        if notes
    }
    values: dict[str, dict[str, float]] = {
        name: dict.fromkeys(qrels, 0.0) for name in MEASURE_NAMES
    }
    for metric in ir_measures.iter_calc(MEASURES, qrels, run):
        values[str(metric.measure)][metric.query_id] = float(metric.value)
    return values


def paired_tests(a: Sequence[float], b: Sequence[float]) -> dict[str, Any]:
    """Two-sided paired t-test and Wilcoxon signed-rank test of a vs b (same queries)."""
    diff = [x - y for x, y in zip(a, b)]
    out: dict[str, Any] = {
        "mean_diff": sum(diff) / len(diff) if diff else math.nan,
        "wins": sum(d > 0 for d in diff),
        "losses": sum(d < 0 for d in diff),
        "ties": sum(d == 0 for d in diff),
        "t_test_p": math.nan,
        "wilcoxon_p": math.nan,
    }
    if len(diff) >= 2 and any(diff):
        out["t_test_p"] = float(sps.ttest_rel(a, b).pvalue)
        with contextlib.suppress(ValueError):  # e.g. too few non-zero differences
            out["wilcoxon_p"] = float(sps.wilcoxon(a, b).pvalue)
    return out


def measure_set(
    ds: DataSet,
    args: argparse.Namespace,
    settings: SearchSettings | None,
    state: RunState,
) -> SetResult:
    """Unpack, index, run and evaluate one data set."""
    data_dir: Path = args.data_dir
    cache_dir: Path = args.cache_dir
    corpus_dir = ensure_corpus(CORPORA[ds.corpus], data_dir, cache_dir)
    vault = corpus_dir / ds.vault if ds.vault else corpus_dir
    print(f"[{ds.name}] indexing {vault} ...", file=sys.stderr, flush=True)
    info = open_index(ds, vault, cache_dir, reindex=args.reindex and ds.index not in state.rebuilt)
    state.rebuilt.add(ds.index)
    db = Path(info.db)
    how = "built" if info.built_now else "up to date, checked"
    print(
        f"[{ds.name}] {info.notes:,} notes, {info.chunks:,} chunks ({how} in {info.update_seconds:.1f} s)",
        file=sys.stderr,
        flush=True,
    )

    chunk_counts = note_chunk_counts(db)
    matcher = NoteMatcher(chunk_counts, ds.id_prefix)
    raw_qrels = load_qrels(ds, data_dir, cache_dir)
    qrels, unmatched = matcher.map_qrels(raw_qrels)
    no_chunks: Counter[str] = Counter()
    for docs in qrels.values():
        for note in docs:
            path = note[len(ds.id_prefix) :] if note.startswith(ds.id_prefix) else note
            if chunk_counts.get(path) == 0:
                no_chunks[note] += 1

    judgments = sum(len(d) for d in qrels.values())
    texts = read_queries(data_dir / ds.queries)
    without_text = [q for q in qrels if q not in texts]
    queries = [(qid, text) for qid, text in texts.items() if qid in qrels]
    if args.limit_queries:
        queries = queries[: args.limit_queries]
    qrels = {qid: qrels[qid] for qid, _ in queries}

    result = SetResult(
        name=ds.name,
        notes=ds.notes,
        index=info,
        queries=len(queries),
        queries_without_text=len(without_text),
        qrels=judgments,
        unmatched=dict(unmatched),
        judged_without_chunks=dict(no_chunks),
    )
    for mode in args.modes:
        # Sets over one index share runs only when they share the query file too: the
        # cross-lingual sets reuse the other language's query ids.
        key = (ds.index, ds.queries, mode)
        cached = state.ranked.setdefault(key, {})
        todo = [(qid, text) for qid, text in queries if qid not in cached]
        seconds, problem = 0.0, None
        if todo:
            ranked, seconds, problem = run_queries(db, todo, mode, matcher, settings)
            cached.update(ranked)
        values = evaluate(qrels, {qid: cached[qid] for qid, _ in queries})
        n = len(queries)
        result.modes[mode] = {
            "metrics": {name: sum(v.values()) / n if n else math.nan for name, v in values.items()},
            "seconds": seconds,
            "ms_per_query": 1000 * seconds / len(todo) if todo else None,
            "vector_problem": problem,
            "queries_without_hits": sum(1 for qid, _ in queries if not cached[qid]),
        }
        result.per_query[mode] = values["nDCG@10"]
        result.per_query_all[mode] = {LABELS[name]: v for name, v in values.items()}
        if problem:
            log.warning("%s/%s: vector search unavailable (%s)", ds.name, mode, problem)
        m = result.modes[mode]["metrics"]
        print(
            f"[{ds.name}] {mode:6s} nDCG@10 {m['nDCG@10']:.4f}  ({n} queries, {seconds:.1f} s)",
            file=sys.stderr,
            flush=True,
        )
    if "hybrid" in result.per_query:
        qids = [qid for qid, _ in queries]
        hybrid = [result.per_query["hybrid"][q] for q in qids]
        for other in ("bm25", "vector"):
            if other in result.per_query:
                result.tests[f"hybrid-{other}"] = paired_tests(
                    hybrid, [result.per_query[other][q] for q in qids]
                )
    return result


# --- reporting -------------------------------------------------------------------------------


def _fmt_p(p: float) -> str:
    if math.isnan(p):
        return "n/a"
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def _fmt_test(test: dict[str, Any] | None) -> str:
    if not test:
        return ""
    return f"{test['mean_diff']:+.4f} (p={_fmt_p(test['t_test_p'])})"


def markdown_table(results: Sequence[SetResult], modes: Sequence[str]) -> str:
    """One table: a row per set x mode, index figures on each set's first row."""
    head = [
        "set",
        "mode",
        *(LABELS[m] for m in MEASURE_NAMES),
        "queries",
        "Δ nDCG@10 vs bm25 (p)",
        "Δ nDCG@10 vs vector (p)",
        "ms/query",
        "notes",
        "chunks",
        "index s",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] * len(head)) + "|"]
    for r in results:
        for i, mode in enumerate(m for m in modes if m in r.modes):
            data = r.modes[mode]
            metrics = data["metrics"]
            flag = " ⚠" if data["vector_problem"] else ""
            ms = data["ms_per_query"]
            build = r.index.build_seconds
            cells = [
                r.name if i == 0 else "",
                mode + flag,
                *(f"{metrics[m]:.4f}" for m in MEASURE_NAMES),
                str(r.queries),
                _fmt_test(r.tests.get("hybrid-bm25")) if mode == "hybrid" else "",
                _fmt_test(r.tests.get("hybrid-vector")) if mode == "hybrid" else "",
                f"{ms:.1f}" if ms is not None else "(shared)",
                f"{r.index.notes:,}" if i == 0 else "",
                f"{r.index.chunks:,}" if i == 0 else "",
                (f"{build:.1f}" if build is not None else "?") if i == 0 else "",
            ]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def footnotes(results: Sequence[SetResult]) -> str:
    """Unmatched qrels, judged notes without chunks, index provenance, degraded modes."""
    out = [
        "",
        "Δ = mean per-query nDCG@10 of hybrid minus the other mode; p = two-sided paired t-test "
        "(scipy.stats.ttest_rel) over the set's queries. index s = cold build time of the cached "
        "index (measured when its file was created; --reindex to re-measure).",
        "",
        "| set | judgments (whole file) | qrels ids matching no note | judged notes with 0 chunks | index |",
        "|---|---|---|---|---|",
    ]
    for r in results:
        idx = r.index
        if idx.built_now:
            state = "built in this run"
        elif idx.reprocessed:
            state = (
                f"cached; every note re-processed in {idx.update_seconds:.1f} s "
                "(pipeline fingerprint changed, vectors re-used)"
            )
        else:
            state = f"cached, checked in {idx.update_seconds:.1f} s"
        if idx.problems:
            state += f"; {idx.problems} file problem(s)"
        out.append(
            f"| {r.name} | {r.qrels} | {sum(r.unmatched.values())} ({len(r.unmatched)} ids) | "
            f"{len(r.judged_without_chunks)} | {state} |"
        )
    degraded = [
        f"{r.name}/{mode}: {d['vector_problem']}"
        for r in results
        for mode, d in r.modes.items()
        if d["vector_problem"]
    ]
    if degraded:
        out += ["", "⚠ vector search unavailable, results are BM25 only: " + "; ".join(degraded)]
    for r in results:
        if r.unmatched:
            sample = ", ".join(list(r.unmatched)[:5])
            out.append(f"\n{r.name}: unmatched corpus ids, e.g. {sample}")
        if r.queries_without_text:
            out.append(f"\n{r.name}: {r.queries_without_text} judged queries have no text")
    return "\n".join(out)


def to_json(results: Sequence[SetResult], args: argparse.Namespace) -> dict[str, Any]:
    def clean(x: Any) -> Any:
        if isinstance(x, float) and math.isnan(x):
            return None
        if isinstance(x, dict):
            return {k: clean(v) for k, v in x.items()}
        if isinstance(x, list):
            return [clean(v) for v in x]
        return x

    cleaned: dict[str, Any] = clean(
        {
            "config": {
                "modes": list(args.modes),
                "limit": LIMIT,
                "limit_queries": args.limit_queries,
                "settings": _settings_dict(args),
                "noteseek": noteseek.__version__,
                "ir_measures": ir_measures.__version__,
                "python": platform.python_version(),
                "at": time.strftime("%Y-%m-%d %H:%M:%S"),
                "measures": {LABELS[m]: m for m in MEASURE_NAMES},
                "test": "two-sided paired t-test (scipy.stats.ttest_rel) on per-query nDCG@10; "
                "wilcoxon_p from scipy.stats.wilcoxon",
            },
            "sets": {
                r.name: {
                    "notes": r.notes,
                    "index": r.index.__dict__,
                    "queries": r.queries,
                    "qrels": r.qrels,
                    "queries_without_text": r.queries_without_text,
                    "unmatched_qrels_ids": r.unmatched,
                    "judged_notes_without_chunks": r.judged_without_chunks,
                    "modes": r.modes,
                    "tests": r.tests,
                    "per_query_ndcg10": r.per_query,
                    "per_query": r.per_query_all,
                }
                for r in results
            },
        }
    )
    return cleaned


def _settings_dict(args: argparse.Namespace) -> dict[str, Any]:
    s = args.settings or SearchSettings()
    return dict(s.__dict__)


def _settings(args: argparse.Namespace) -> SearchSettings | None:
    changes: dict[str, Any] = {}
    if args.candidates is not None:
        changes["candidates"] = args.candidates
    if args.rrf_k is not None:
        changes["rrf_k"] = args.rrf_k
    if args.column_weights is not None:
        text_w, section_w, title_w, tags_w = (float(x) for x in args.column_weights.split(","))
        changes["column_weights"] = (text_w, section_w, title_w, tags_w)
    if args.fusion is not None:
        changes["fusion"] = args.fusion
    if args.alpha is not None:
        changes["alpha"] = args.alpha
    if args.no_exact_names:
        changes["exact_names"] = False
    if args.max_term_share is not None:
        changes["max_term_share"] = args.max_term_share
    if args.weights is not None:
        bm25_w, vec_w = (float(x) for x in args.weights.split(","))
        changes["bm25_weight"], changes["vector_weight"] = bm25_w, vec_w
    if args.no_known_words:
        changes["known_words"] = False
    if args.no_rerank:
        changes["rerank"] = False
    if args.no_deep:
        changes["deep"] = False
    for name in ("deep_weights", "cross_weights"):
        if getattr(args, name) is not None:
            b, v, e = (float(x) for x in getattr(args, name).split(","))
            changes[name] = (b, v, e)
    if args.deep_rerank_below is not None:
        changes["deep_rerank_below"] = args.deep_rerank_below
    return SearchSettings(**changes) if changes else None


# --- main ------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Retrieval quality of noteseek (bm25, vector, hybrid) on ../shared/data."
    )
    parser.add_argument("--sets", help="comma-separated set names or patterns (default: all)")
    parser.add_argument(
        "--modes", default=",".join(MODES), help="comma-separated modes (default: %(default)s)"
    )
    parser.add_argument("--json", type=Path, help="write every figure (and per-query nDCG@10) here")
    parser.add_argument("--limit-queries", type=int, help="only the first N judged queries per set")
    parser.add_argument("--reindex", action="store_true", help="rebuild the cached indexes")
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR, help="default: %(default)s")
    parser.add_argument("--cache-dir", type=Path, default=CACHE_DIR, help="default: %(default)s")
    parser.add_argument("--candidates", type=int, help="SearchSettings.candidates (default 30)")
    parser.add_argument("--rrf-k", type=float, help="SearchSettings.rrf_k (default 60)")
    parser.add_argument("--weights", help="BM25,vector weights for --fusion rrf (default 1,1)")
    parser.add_argument(
        "--column-weights",
        help="FTS5 bm25() weights of chunk text, section heading, title (title, aliases, file "
        "name), tags (type, tags), e.g. 1,2,4,2 (the default)",
    )
    parser.add_argument("--fusion", choices=["convex", "rrf"], help="default convex")
    parser.add_argument("--alpha", type=float, help="BM25 share in convex fusion (default 0.7)")
    parser.add_argument("--no-exact-names", action="store_true", help="no exact-name promotion")
    parser.add_argument(
        "--max-term-share",
        type=float,
        help="leave out query words in more than this share of chunks (default 0.5)",
    )
    parser.add_argument("--no-known-words", action="store_true", help="no known-words gate (issue 16)")
    parser.add_argument("--no-rerank", action="store_true", help="no learned rerank of the fused head")
    parser.add_argument(
        "--no-deep",
        "--no-multilingual",
        action="store_true",
        help="never use a built deep (e5) lane",
    )
    parser.add_argument("--deep-weights", help="BM25,potion,e5 shares with the deep lane (0.4,0.1,0.5)")
    parser.add_argument("--cross-weights", help="the same for queries across languages (0.3,0,0.7)")
    parser.add_argument(
        "--deep-rerank-below",
        type=float,
        help="rerank where the lane is fused only while it covers less than this share (1.0; "
        "0: never, 1.01: always)",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log every indexing problem")
    args = parser.parse_args(argv)
    args.modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    bad = [m for m in args.modes if m not in MODES]
    if bad or not args.modes:
        parser.error(f"--modes: choose from {', '.join(MODES)}")
    if args.limit_queries is not None and args.limit_queries < 1:
        parser.error("--limit-queries must be at least 1")
    try:
        args.datasets = select_datasets(args.sets)
    except ValueError as exc:
        parser.error(str(exc))
    try:
        args.settings = _settings(args)
    except (TypeError, ValueError) as exc:
        parser.error(f"--weights/--column-weights/--rrf-k/--candidates: {exc}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print the report; returns the process exit code."""
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    if not args.verbose:
        logging.getLogger("noteseek.indexer").setLevel(logging.ERROR)
    if not args.data_dir.is_dir():
        print(
            f"error: data folder {args.data_dir} not found. bench/quality.py needs the judged data "
            "sets in ../shared/data next to the repo (see its README.md), or pass --data-dir.",
            file=sys.stderr,
        )
        return 2
    args.cache_dir.mkdir(parents=True, exist_ok=True)
    settings: SearchSettings | None = args.settings
    results: list[SetResult] = []
    state = RunState()
    started = time.perf_counter()
    for ds in args.datasets:
        try:
            results.append(measure_set(ds, args, settings, state))
        except FileNotFoundError as exc:
            print(f"error: {ds.name}: {exc}", file=sys.stderr)
            return 2
    total = time.perf_counter() - started
    s = settings or SearchSettings()
    fusion = (
        f"convex (alpha {s.alpha:g})"
        if s.fusion == "convex"
        else f"RRF (k={s.rrf_k:g}, weights {s.bm25_weight:g}/{s.vector_weight:g})"
    )
    header = (
        f"noteseek {noteseek.__version__}, limit={LIMIT} per query; hybrid = note-level {fusion}, "
        f"{s.candidates} notes per list, exact names {'on' if s.exact_names else 'off'}; "
        f"FTS5 column weights {','.join(f'{w:g}' for w in s.column_weights)}"
        + ("" if settings is None else "  **(non-default settings)**")
    )
    report = header + "\n\n" + markdown_table(results, args.modes) + "\n" + footnotes(results)
    print(report)
    print(f"\n(total {total:.0f} s)")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(
            json.dumps(to_json(results, args), indent=1, ensure_ascii=False) + "\n",
            encoding="utf-8",
        )
        print(f"wrote {args.json}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
