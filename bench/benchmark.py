"""noteseek next to what a user would otherwise reach for: speed and quality, in one run.

    python bench/benchmark.py                              # MDN + obsidian-hub, ~15 min on 2 cores
    python bench/benchmark.py --vaults obsidian-hub --quick
    python bench/benchmark.py --plots-only                 # tables + docs/img/*.png from the JSON

Per vault (the development-half data sets in ../shared/data):

1. Full builds, each in a child process, in rounds with the order rotated: noteseek's full index
   from scratch (time, chunks, DB size, peak RSS; as bench/perf.py) and the alternatives of
   bench/alternatives.py built from noteseek's chunks (time per step, size on disk, peak RSS).
2. noteseek's no-op incremental run and its incremental run after appending to 10 notes.
3. One process, warm: the same real queries (MDN: anchor known-item; hub: alias known-item; shuffled
   with a fixed seed) through noteseek bm25/vector/hybrid and every alternative, interleaved per
   query with the order rotated, so machine noise hits all systems alike. Each system answers with
   its own defaults: noteseek ``Index.search(q, mode=...)`` (10 notes), the alternatives the whole
   RRF list over the top 30 chunks of each input list. Chunks are mapped to notes (a note keeps the
   rank of its first chunk) and scored with noteseek.evaluation.score_run (nDCG@10, R@10, MRR@10).
4. One-shot: a fresh process per query, process start to output, for rg, the noteseek CLI and
   the alternatives (what an agent hook pays), round-robin.

Medians over repeated runs; ratios are alternative / noteseek (> 1: the alternative is slower or
bigger). Nothing is asserted. The JSON keeps every per-query time for the plots.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import noteseek
from alternatives import (
    CANDIDATES,
    Answer,
    ReferenceDesign,
    Ripgrep,
    WriteUp2,
)
from datasets import CORPORA, DATA_DIR, DATASETS, ensure_corpus
from noteseek.evaluation import (
    EvalQuery,
    ModeResult,
    NoteMatcher,
    compare_modes,
    load_qrels,
    load_queries,
    score_run,
)
from perf import CHILD_INDEX, db_size, pct

BENCH = Path(__file__).resolve().parent  # on sys.path as the script's folder
REPO = BENCH.parent
ALTERNATIVES = BENCH / "alternatives.py"
VAULTS = ("mdn", "obsidian-hub")  # keys of datasets.DATASETS
RANKED = ("noteseek", "writeup2", "reference")
MODES = ("bm25", "vector", "hybrid")
RG = ("rg-terms", "rg-phrase")
BASE = "noteseek-hybrid"
WARMUP = ("warm up", "how to install a plugin", "configure settings")
LABELS = {
    "noteseek": "noteseek",
    "writeup2": "write-up 2 (rank_bm25 + numpy + RRF)",
    "reference": "reference design (FTS5 + vec0 float32)",
    "rg-terms": "ripgrep, any query word",
    "rg-phrase": "ripgrep, whole query as a phrase",
}


@dataclass(frozen=True)
class Plan:
    """How many times each thing is measured."""

    full_runs: int = 3
    noop_runs: int = 5
    changed_runs: int = 3
    build_runs: int = 3
    queries: int = 300
    one_shot_runs: int = 10


QUICK = Plan(full_runs=1, noop_runs=2, changed_runs=1, build_runs=1, queries=60, one_shot_runs=3)


# --- helpers -------------------------------------------------------------------------------------


# A child forked from this (large) process would report this process's RSS as its own peak: Linux
# keeps the pre-exec high-water mark. So every measured child is started by a small launcher that
# forks, execs, times the child from fork to exit and reports its rusage.
LAUNCHER = """
import json, os, sys, time
result, argv = sys.argv[1], sys.argv[2:]
t = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(argv[0], argv)
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
seconds = time.perf_counter() - t
with open(result, "w") as fh:
    json.dump({"seconds": seconds, "code": os.waitstatus_to_exitcode(status),
               "maxrss_kb": usage.ru_maxrss}, fh)
"""


def timed_process(argv: Sequence[str], cwd: Path | None = None) -> tuple[float, float, str]:
    """Run a process to its end: (seconds from fork to exit, peak RSS MB, its stdout).

    The peak RSS has a floor of the launcher's own (~10 MB, a small Python process).
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        with tempfile.NamedTemporaryFile(suffix=".json") as result:
            launcher = [sys.executable, "-c", LAUNCHER, result.name, *argv]
            subprocess.run(launcher, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
            info = json.loads(Path(result.name).read_text(encoding="utf-8") or "{}")
        out.seek(0)
        err.seek(0)
        code = info.get("code", -1)
        if code not in (0, 1) or (code == 1 and Path(argv[0]).name != "rg"):  # rg: 1 = no match
            raise SystemExit(f"{list(argv[:5])} failed ({code}):\n{err.read().decode()}")
        return info["seconds"], info["maxrss_kb"] / 1024, out.read().decode("utf-8", "replace")


def index_child(db: Path, vault: Path) -> tuple[dict[str, Any], float]:
    """perf.py's indexing child (Index.update, timed inside); its answer and peak RSS MB."""
    _, rss, stdout = timed_process([sys.executable, "-c", CHILD_INDEX, str(db), str(vault), "0"])
    return json.loads(stdout.strip().splitlines()[-1]), rss


def summary(ms: Sequence[float]) -> dict[str, float]:
    """p50/p95/p99/mean of a list of milliseconds."""
    return {
        "p50": pct(list(ms), 50),
        "p95": pct(list(ms), 95),
        "p99": pct(list(ms), 99),
        "mean": statistics.fmean(ms),
        "n": len(ms),
    }


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


class NoiseMonitor(threading.Thread):
    """Samples how many cores processes outside this benchmark keep busy, per phase.

    The machine is shared; this says how much of a figure may be someone else's load. Reads
    utime + stime of every process in /proc once a second (Linux only; silent elsewhere).
    """

    def __init__(self, interval: float = 1.0) -> None:
        super().__init__(daemon=True)
        self.interval = interval
        self.phase = "setup"
        self.busy: dict[str, list[float]] = {}
        self._stop_event = threading.Event()
        self._tick = os.sysconf("SC_CLK_TCK")

    def _sample(self) -> dict[int, tuple[int, float]]:
        procs: dict[int, tuple[int, float]] = {}
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/stat", encoding="utf-8") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            procs[int(entry.name)] = (
                int(fields[1]),
                (int(fields[11]) + int(fields[12])) / self._tick,
            )
        return procs

    def _others(self, procs: dict[int, tuple[int, float]]) -> set[int]:
        me, mine = os.getpid(), set()
        for pid in procs:
            p, seen = pid, 0
            while p > 1 and seen < 64:
                if p == me:
                    mine.add(pid)
                    break
                p, seen = procs.get(p, (0, 0.0))[0], seen + 1
        return set(procs) - mine

    def run(self) -> None:
        try:
            prev, t = self._sample(), time.perf_counter()
            while not self._stop_event.wait(self.interval):
                cur, now = self._sample(), time.perf_counter()
                used = sum(cur[p][1] - prev[p][1] for p in self._others(cur) if p in prev)
                self.busy.setdefault(self.phase, []).append(max(used, 0.0) / (now - t))
                prev, t = cur, now
        except (OSError, ValueError, IndexError):
            return

    def stop(self) -> dict[str, dict[str, float]]:
        """Per phase: mean and max cores kept busy by other processes, and the sample count."""
        self._stop_event.set()
        self.join(timeout=5)
        return {
            phase: {"mean_cores": statistics.fmean(v), "max_cores": max(v), "samples": len(v)}
            for phase, v in self.busy.items()
            if v
        }


def machine() -> dict[str, Any]:
    """What this machine and software stack are."""
    import importlib.metadata as md

    import apsw

    cpu = "?"
    with open("/proc/cpuinfo", encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem_kb = 0
    with open("/proc/meminfo", encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("MemTotal"):
                mem_kb = int(line.split()[1])
    db = apsw.Connection(":memory:")
    import sqlite_vec

    db.enable_load_extension(True)
    db.load_extension(sqlite_vec.loadable_path())
    vec_version = db.execute("SELECT vec_version()").fetchall()[0][0]
    rg = subprocess.run(["rg", "--version"], capture_output=True, text=True).stdout.split("\n")[0]
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--", "src"], cwd=REPO, capture_output=True, text=True
    ).stdout.split("\n")
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "memory_gb": round(mem_kb / 1024 / 1024, 1),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "sqlite": apsw.sqlite_lib_version(),
        "sqlite_vec": vec_version,
        "apsw": apsw.apswversion(),
        "ripgrep": rg,
        "rank_bm25": md.version("rank-bm25"),
        "numpy": md.version("numpy"),
        "model2vec": md.version("model2vec"),
        "noteseek": noteseek.__version__,
        "git_commit": commit,
        "src_uncommitted": [line[3:] for line in dirty if line.strip()],
    }


# --- 1 + 2. full builds, round-robin; then noteseek's incremental runs --------------------------


def full_builds(
    vault: Path, work: Path, plan: Plan
) -> tuple[dict[str, Any], dict[str, Any], Path, dict[str, Path]]:
    """noteseek's full index and the alternatives' builds, each in a child process, in rounds.

    Round i runs all three with the order rotated, so load from elsewhere hits all alike. The
    alternatives take their chunks from noteseek's first index, built first in round 0.
    """
    db = work / "noteseek0.db"
    state = {"writeup2": work / "writeup2", "reference": work / "reference.db"}
    ns_runs: list[dict[str, Any]] = []
    alt_runs: dict[str, list[dict[str, Any]]] = {name: [] for name in state}
    systems = ["noteseek", *state]
    for i in range(max(plan.full_runs, plan.build_runs)):
        for name in systems[i % 3 :] + systems[: i % 3]:
            if name == "noteseek" and i < plan.full_runs:
                target = work / f"noteseek{i}.db"
                answer, rss = index_child(target, vault)
                ns_runs.append({**answer, "peak_rss_mb": rss, "db_bytes": db_size(target)})
                if i > 0:
                    for suffix in ("", "-wal", "-shm"):
                        Path(f"{target}{suffix}").unlink(missing_ok=True)
                log(
                    f"noteseek full index {i + 1}: {answer['seconds']:.1f} s, {answer['chunks']} chunks"
                )
            elif name != "noteseek" and i < plan.build_runs:
                if name == "writeup2":
                    shutil.rmtree(state[name], ignore_errors=True)
                argv = [sys.executable, str(ALTERNATIVES), "build", name, "--index", str(db)]
                wall, rss, stdout = timed_process([*argv, "--out", str(state[name])])
                answer = json.loads(stdout.strip().splitlines()[-1])
                alt_runs[name].append({**answer, "wall_seconds": wall, "peak_rss_mb": rss})
                steps = ", ".join(f"{k} {v:.1f}" for k, v in answer["steps"].items())
                log(f"{name} build {i + 1}: {answer['seconds']:.1f} s ({steps})")
    noteseek_full = {
        "full_index_seconds": median([r["seconds"] for r in ns_runs]),
        "full_index_seconds_all": [r["seconds"] for r in ns_runs],
        "chunks": ns_runs[0]["chunks"],
        "db_bytes": ns_runs[0]["db_bytes"],
        "peak_rss_mb": median([r["peak_rss_mb"] for r in ns_runs]),
        "peak_rss_mb_all": [r["peak_rss_mb"] for r in ns_runs],
    }
    builds = {
        name: {
            "build_seconds": median([r["seconds"] for r in rs]),
            "build_seconds_all": [r["seconds"] for r in rs],
            "steps_seconds": {k: median([r["steps"][k] for r in rs]) for k in rs[0]["steps"]},
            "read_chunks_seconds": median([r["read_chunks_seconds"] for r in rs]),
            "chunks": rs[0]["chunks"],
            "disk_bytes": rs[-1]["disk_bytes"],
            "peak_rss_mb": median([r["peak_rss_mb"] for r in rs]),
            "peak_rss_mb_all": [r["peak_rss_mb"] for r in rs],
        }
        for name, rs in alt_runs.items()
    }
    return noteseek_full, builds, db, state


def noteseek_incremental(vault: Path, db: Path, work: Path, plan: Plan) -> dict[str, Any]:
    """No-op incremental runs, then runs after appending to 10 notes (on copies of both)."""
    noop = [index_child(db, vault)[0]["seconds"] for _ in range(plan.noop_runs)]
    copy = work / "vault-copy"
    shutil.copytree(vault, copy)
    shutil.copy(db, work / "copy.db")
    notes = sorted(copy.rglob("*.md"))
    changed = []
    for round_no in range(plan.changed_runs):
        for path in random.Random(round_no).sample(notes, 10):
            with path.open("a", encoding="utf-8") as fh:
                fh.write(
                    f"\n\n## Bench edit {round_no}\n\nAn appended paragraph for the benchmark.\n"
                )
        answer, _ = index_child(work / "copy.db", copy)
        changed.append(answer["seconds"])
    shutil.rmtree(copy, ignore_errors=True)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{work / 'copy.db'}{suffix}").unlink(missing_ok=True)
    log(f"noteseek no-op {median(noop):.2f} s, 10 changed {median(changed):.2f} s")
    return {
        "noop_incremental_seconds": median(noop),
        "noop_incremental_seconds_all": noop,
        "incremental_10_changed_seconds": median(changed),
        "incremental_10_changed_seconds_all": changed,
    }


# --- 3. warm queries in one process, interleaved ------------------------------------------------


def query_session(
    vault: Path, db: Path, state: dict[str, Path], queries: Sequence[EvalQuery]
) -> dict[str, Any]:
    """Every query through every system in one process; per-query ms, answers, load times."""
    idx = noteseek.Index(db, create=False)
    idx.search("warm up", mode="hybrid")  # model + vector matrix, before any clock
    t = time.perf_counter()
    writeup2 = WriteUp2.load(state["writeup2"], idx)
    load_writeup2 = time.perf_counter() - t
    reference = ReferenceDesign(state["reference"], idx)
    rg = {name: Ripgrep(vault, phrase=name == "rg-phrase") for name in RG}
    for _ in range(2):  # page cache: let rg read every note once before timing
        Ripgrep(vault, phrase=True).query("zq-no-such-phrase-qz")

    def noteseek_mode(mode: str) -> Callable[[str], Answer]:
        def run(text: str) -> Answer:
            return Answer([h.path for h in idx.search(text, mode=mode, min_score=0, min_answer=0)])  # type: ignore[arg-type]

        return run

    systems: dict[str, Callable[[str], Answer]] = {
        **{f"noteseek-{m}": noteseek_mode(m) for m in MODES},
        "writeup2": writeup2.query,
        "reference": reference.query,
        **{name: r.query for name, r in rg.items()},
    }
    for text in WARMUP:
        for fn in systems.values():
            fn(text)
    names = list(systems)
    ms: dict[str, list[float]] = {n: [] for n in names}
    answers: dict[str, dict[str, Answer]] = {n: {} for n in names}
    started = time.perf_counter()
    for i, q in enumerate(queries):
        shift = i % len(names)
        for name in names[shift:] + names[:shift]:
            t = time.perf_counter()
            answer = systems[name](q.text)
            ms[name].append((time.perf_counter() - t) * 1000)
            answers[name][q.id] = answer
        if (i + 1) % 50 == 0:
            log(f"queries {i + 1}/{len(queries)}")
    # Untimed ablation: write-up 2 with BM25 over the chunk text alone (no title › section).
    ablation = WriteUp2(writeup2.chunks, writeup2.vectors, idx, bm25_on="text")
    answers["writeup2-chunktext"] = {q.id: ablation.query(q.text) for q in queries}
    reference.close()
    idx.close()
    return {
        "ms": ms,
        "answers": answers,
        "seconds": time.perf_counter() - started,
        "writeup2_load_seconds": load_writeup2,
    }


def latency_table(
    ms: dict[str, list[float]], answers: dict[str, dict[str, Answer]]
) -> dict[str, Any]:
    """Percentiles per system and ratios to noteseek hybrid (of percentiles, and paired)."""
    base = ms[BASE]
    out: dict[str, Any] = {}
    for name, values in ms.items():  # the untimed ablation has answers but no times
        s: dict[str, Any] = dict(summary(values))
        s["ratio_p50"] = s["p50"] / pct(base, 50)
        s["ratio_p95"] = s["p95"] / pct(base, 95)
        s["paired_ratio_median"] = median([a / b for a, b in zip(values, base)])
        steps = [a.seconds for a in answers[name].values() if a.seconds]
        if steps:
            s["steps_ms_median"] = {k: 1000 * median([st[k] for st in steps]) for k in steps[0]}
        out[name] = s
    return out


# --- quality -------------------------------------------------------------------------------------


def quality(
    answers: dict[str, dict[str, Answer]],
    queries: Sequence[EvalQuery],
    qrels: dict[str, dict[str, int]],
    matcher: NoteMatcher,
    prefix: str,
    note_bytes: dict[str, int],
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Metrics of every ranked list (fused and each input list), and the rg figures."""

    def notes(paths: Sequence[str]) -> list[str]:
        return list(dict.fromkeys(matcher.corpus_id(prefix + p) for p in paths))

    runs: dict[str, dict[str, list[str]]] = {}
    for mode in MODES:
        runs[f"noteseek-{mode}"] = {
            q: notes(a.paths) for q, a in answers[f"noteseek-{mode}"].items()
        }
    for name in ("writeup2", "reference", "writeup2-chunktext"):
        runs[f"{name}-hybrid"] = {q: notes(a.paths) for q, a in answers[name].items()}
        for part in ("bm25", "vector"):
            runs[f"{name}-{part}"] = {q: notes(a.parts[part]) for q, a in answers[name].items()}
    results = {name: score_run(name, run, queries, qrels) for name, run in runs.items()}

    rg: dict[str, Any] = {}
    for name in RG:
        files: list[float] = []
        mb: list[float] = []
        found = 0
        for q in queries:
            listed = answers[name][q.id].paths
            files.append(len(listed))
            mb.append(sum(note_bytes.get(p, 0) for p in listed) / 1e6)
            ids = {matcher.corpus_id(prefix + p) for p in listed}
            found += any(doc in ids for doc in qrels.get(q.id, {}))
        rg[name] = {
            "files_median": median(files),
            "files_p95": pct(files, 95),
            "files_zero_share": sum(1 for f in files if f == 0) / len(files),
            "mb_median": median(mb),
            "mb_p95": pct(mb, 95),
            "relevant_listed_share": found / len(queries),
        }
    metrics = {
        name: {**r.metrics, "queries": r.queries, "per_query_ndcg10": {}}
        for name, r in results.items()
    }
    for name, r in results.items():
        metrics[name]["per_query_ndcg10"] = {q: s["ndcg@10"] for q, s in r.per_query.items()}
    return metrics, rg


PAIRS = (
    (BASE, "writeup2-hybrid"),
    (BASE, "reference-hybrid"),
    (BASE, "writeup2-bm25"),
    ("noteseek-bm25", "writeup2-bm25"),
    ("noteseek-bm25", "reference-bm25"),
    ("noteseek-vector", "reference-vector"),  # int8 in memory vs float32 in vec0
    ("writeup2-hybrid", "reference-hybrid"),
    ("writeup2-hybrid", "writeup2-bm25"),  # does RRF help the alternatives?
    ("reference-hybrid", "reference-bm25"),
)


def paired_tests(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    """noteseek.evaluation.compare_modes (paired t-test on per-query nDCG@10) for PAIRS."""
    tests = []
    for a, b in PAIRS:
        if a not in metrics or b not in metrics:
            continue
        results = {
            name: ModeResult(
                name,
                {},
                metrics[name]["queries"],
                per_query={q: {"ndcg@10": v} for q, v in metrics[name]["per_query_ndcg10"].items()},
            )
            for name in (a, b)
        }
        tests.append(asdict(compare_modes(results)[0]))
    return tests


# --- 4. one-shot processes -----------------------------------------------------------------------


def one_shot(
    vault: Path, db: Path, state: dict[str, Path], queries: Sequence[EvalQuery], runs: int
) -> dict[str, Any]:
    """Process start to output, a fresh process per query, round-robin over the systems."""

    def argv(name: str, text: str) -> tuple[list[str], Path | None]:
        if name in RG:
            return Ripgrep(vault, phrase=name == "rg-phrase").command(text), vault
        if name == "noteseek":
            cli = [sys.executable, "-m", "noteseek", "search", "--db", str(db), "--json"]
            return [*cli, "--", text], None
        alt = [sys.executable, str(ALTERNATIVES), "search", name, "--state", str(state[name])]
        return [*alt, "--", text], None

    names = ["rg-terms", "rg-phrase", "noteseek", "writeup2", "reference"]
    wall: dict[str, list[float]] = {n: [] for n in names}
    rss: dict[str, list[float]] = {n: [] for n in names}
    for i in range(runs):
        text = queries[i % len(queries)].text
        for name in names[i % len(names) :] + names[: i % len(names)]:
            cmd, cwd = argv(name, text)
            seconds, peak, _ = timed_process(cmd, cwd)
            wall[name].append(seconds * 1000)
            rss[name].append(peak)
    base = median(wall["noteseek"])
    return {
        n: {
            "ms_median": median(wall[n]),
            "ms_p95": pct(wall[n], 95),
            "ms_all": wall[n],
            "ratio": median(wall[n]) / base,
            "peak_rss_mb": median(rss[n]),
        }
        for n in names
    }


# --- one vault -----------------------------------------------------------------------------------


def bench_vault(name: str, plan: Plan, seed: int, monitor: NoiseMonitor) -> dict[str, Any]:
    """Every measurement of one vault."""
    ds = DATASETS[name]
    root = ensure_corpus(CORPORA[ds.corpus])
    vault = root / ds.vault if ds.vault else root
    queries_all = load_queries(DATA_DIR / ds.queries)
    qrels = load_qrels(DATA_DIR / ds.qrels)
    judged = [q for q in queries_all if q.id in qrels]
    random.Random(seed).shuffle(judged)
    queries = judged[: plan.queries]
    qrels = {q.id: qrels[q.id] for q in queries}
    note_files = sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*.md"))
    note_bytes = {p: (vault / p).stat().st_size for p in note_files}
    out: dict[str, Any] = {
        "vault": str(vault),
        "notes_on_disk": len(note_files),
        "vault_mb": sum(note_bytes.values()) / 1e6,
        "queries_file": ds.queries,
        "queries": len(queries),
        "queries_judged_in_file": len(judged),
        "query_ids": [q.id for q in queries],
        "load_avg_start": loadavg(),
    }
    work = Path(tempfile.mkdtemp(prefix=f"noteseek-bench-{name}-"))
    out["phase_seconds"] = {}

    def phase(label: str) -> float:
        monitor.phase = f"{name}/{label}"
        return time.perf_counter()

    try:
        t = phase("builds")
        out["noteseek"], out["builds"], db, state = full_builds(vault, work, plan)
        out["phase_seconds"]["builds"] = time.perf_counter() - t
        t = phase("incremental")
        out["noteseek"].update(noteseek_incremental(vault, db, work, plan))
        out["phase_seconds"]["incremental"] = time.perf_counter() - t
        with noteseek.Index(db, create=False) as idx:
            indexed = idx.note_paths()
            out["notes_indexed"] = len(indexed)
        judged_ids = {doc for docs in qrels.values() for doc in docs}
        matcher = NoteMatcher([ds.id_prefix + p for p in indexed], judged_ids)
        out["unmatched_qrels_ids"] = matcher.unmatched
        log(f"{name}: {len(queries)} queries, interleaved over 7 systems")
        t = phase("queries")
        session = query_session(vault, db, state, queries)
        out["phase_seconds"]["queries"] = time.perf_counter() - t
        out["writeup2_load_seconds"] = session["writeup2_load_seconds"]
        out["latency_ms"] = latency_table(session["ms"], session["answers"])
        out["per_query_ms"] = session["ms"]
        out["quality"], out["rg"] = quality(
            session["answers"], queries, qrels, matcher, ds.id_prefix, note_bytes
        )
        out["tests"] = paired_tests(out["quality"])
        log(f"{name}: one-shot processes")
        t = phase("one_shot")
        out["one_shot"] = one_shot(vault, db, state, queries, plan.one_shot_runs)
        out["phase_seconds"]["one_shot"] = time.perf_counter() - t
    finally:
        monitor.phase = "between"
        shutil.rmtree(work, ignore_errors=True)
    out["load_avg_end"] = loadavg()
    return out


# --- report --------------------------------------------------------------------------------------


def _ratio(x: float) -> str:
    return f"{x:.2f}×" if x < 10 else f"{x:.0f}×"


def report(results: dict[str, Any]) -> str:
    """Markdown tables of every vault."""
    lines: list[str] = []
    if results.get("src_changed_during_run"):
        changed = ", ".join(results["src_changed_during_run"])
        lines += [f"**Warning: source files changed during the run: {changed}**", ""]
    for name, r in results["vaults"].items():
        ns = r["noteseek"]
        b = r["builds"]
        lines += [
            f"### {name}: {r['notes_indexed']:,} notes, {ns['chunks']:,} chunks, "
            f"{r['queries']} queries",
            "",
            "| system | full build s (runs) | ratio | on disk MB | ratio | peak RSS MB | ratio |",
            "|---|---|---|---|---|---|---|",
        ]
        runs = ", ".join(f"{s:.1f}" for s in ns["full_index_seconds_all"])
        lines.append(
            f"| noteseek | {ns['full_index_seconds']:.1f} ({runs}) | 1 | "
            f"{ns['db_bytes'] / 1e6:.1f} | 1 | {ns['peak_rss_mb']:.0f} | 1 |"
        )
        for alt in ("writeup2", "reference"):
            a = b[alt]
            runs = ", ".join(f"{s:.1f}" for s in a["build_seconds_all"])
            steps = ", ".join(f"{k} {v:.1f}" for k, v in a["steps_seconds"].items())
            lines.append(
                f"| {LABELS[alt]} | {a['build_seconds']:.1f} ({runs}; {steps}) | "
                f"{_ratio(a['build_seconds'] / ns['full_index_seconds'])} | "
                f"{a['disk_bytes'] / 1e6:.1f} | {_ratio(a['disk_bytes'] / ns['db_bytes'])} | "
                f"{a['peak_rss_mb']:.0f} | {_ratio(a['peak_rss_mb'] / ns['peak_rss_mb'])} |"
            )
        lines += [
            "",
            f"noteseek no-op incremental {ns['noop_incremental_seconds']:.2f} s "
            f"(runs {', '.join(f'{s:.2f}' for s in ns['noop_incremental_seconds_all'])}); "
            f"incremental after 10 changed notes {ns['incremental_10_changed_seconds']:.2f} s "
            f"(runs {', '.join(f'{s:.2f}' for s in ns['incremental_10_changed_seconds_all'])}). "
            f"write-up 2 loads its state and rebuilds BM25 at start: "
            f"{r['writeup2_load_seconds']:.1f} s (measured once).",
        ]
        noise = results.get("other_processes_cores_busy", {})
        busy = ", ".join(
            f"{k.split('/')[1]} {v['mean_cores']:.2f} (max {v['max_cores']:.2f})"
            for k, v in noise.items()
            if k.startswith(f"{name}/")
        )
        if busy:
            lines += ["", f"Cores kept busy by other processes, mean per phase: {busy}."]
        lines += [
            "",
            "| warm query, one process | p50 ms | p95 ms | p99 ms | p50 ratio | p95 ratio | "
            "paired ratio (median) | nDCG@10 | R@10 | MRR@10 |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for system, s in r["latency_ms"].items():
            key = system if system.startswith("noteseek") or system in RG else f"{system}-hybrid"
            q = r["quality"].get(key)
            qual = (
                f"{q['ndcg@10']:.3f} | {q['recall@10']:.3f} | {q['mrr@10']:.3f}"
                if q
                else "– | – | –"
            )
            label = LABELS.get(system, system)
            lines.append(
                f"| {label} | {s['p50']:.1f} | {s['p95']:.1f} | {s['p99']:.1f} | "
                f"{_ratio(s['ratio_p50'])} | {_ratio(s['ratio_p95'])} | "
                f"{_ratio(s['paired_ratio_median'])} | {qual} |"
            )
        lines += [
            "",
            "| where an alternative's query goes (median ms) | BM25 | embed query | KNN | fuse + rows |",
            "|---|---|---|---|---|",
        ]
        for system in ("writeup2", "reference"):
            st = r["latency_ms"][system].get("steps_ms_median", {})
            if st:
                lines.append(
                    f"| {LABELS[system]} | {st['bm25']:.2f} | {st['embed']:.2f} | "
                    f"{st['knn']:.2f} | {st['fuse']:.2f} |"
                )
        lines += ["", "| ranked list | nDCG@10 | R@10 | MRR@10 |", "|---|---|---|---|"]
        for system, q in r["quality"].items():
            lines.append(
                f"| {system} | {q['ndcg@10']:.3f} | {q['recall@10']:.3f} | {q['mrr@10']:.3f} |"
            )
        lines += [
            "",
            "| paired test on nDCG@10 | mean Δ (a − b) | p (t-test) | wins / losses / ties |",
            "|---|---|---|---|",
        ]
        for t in r["tests"]:
            p = "<0.001" if t["p_value"] < 0.001 else f"{t['p_value']:.3f}"
            lines.append(
                f"| {t['a']} vs {t['b']} | {t['mean_difference']:+.3f} | {p} | "
                f"{t['wins']} / {t['losses']} / {t['ties']} |"
            )
        lines += [
            "",
            "| ripgrep | files listed (median / p95) | MB to read (median / p95) | "
            "no file | a relevant note listed |",
            "|---|---|---|---|---|",
        ]
        for system, g in r["rg"].items():
            lines.append(
                f"| {LABELS[system]} | {g['files_median']:.0f} / {g['files_p95']:.0f} | "
                f"{g['mb_median']:.2f} / {g['mb_p95']:.2f} | {g['files_zero_share']:.0%} | "
                f"{g['relevant_listed_share']:.0%} |"
            )
        lines += [
            "",
            "| one-shot process (start to output) | median ms | p95 ms | ratio | peak RSS MB |",
            "|---|---|---|---|---|",
        ]
        for system, o in r["one_shot"].items():
            label = "noteseek CLI (`noteseek search --json`)" if system == "noteseek" else system
            lines.append(
                f"| {LABELS.get(system, label) if system != 'noteseek' else label} | "
                f"{o['ms_median']:.0f} | {o['ms_p95']:.0f} | {_ratio(o['ratio'])} | "
                f"{o['peak_rss_mb']:.0f} |"
            )
        lines.append("")
    return "\n".join(lines)


# --- plots ---------------------------------------------------------------------------------------

COLORS = {
    "noteseek": "#1b6ca8",
    "writeup2": "#e08a1e",
    "reference": "#5a9e4b",
    "rg": "#8c8c8c",
}


def _color(system: str) -> str:
    return COLORS["rg"] if system.startswith("rg") else COLORS[system.split("-")[0]]


def plots(results: dict[str, Any], img_dir: Path) -> list[Path]:
    """Latency box plots and an nDCG@10 bar chart, one panel per vault."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    img_dir.mkdir(parents=True, exist_ok=True)
    vaults = list(results["vaults"].items())
    short = {
        "noteseek-bm25": "noteseek\nbm25",
        "noteseek-vector": "noteseek\nvector",
        "noteseek-hybrid": "noteseek\nhybrid",
        "writeup2": "write-up 2\nhybrid",
        "reference": "reference\nhybrid",
        "rg-terms": "rg\nany word",
        "rg-phrase": "rg\nphrase",
    }
    fig, axes = plt.subplots(1, len(vaults), figsize=(6.2 * len(vaults), 4.6), squeeze=False)
    for ax, (name, r) in zip(axes[0], vaults):
        systems = list(short)
        data = [r["per_query_ms"][s] for s in systems]
        box = ax.boxplot(
            data,
            whis=(5, 95),
            showfliers=False,
            patch_artist=True,
            medianprops={"color": "black", "linewidth": 1.4},
        )
        for patch, s in zip(box["boxes"], systems):
            patch.set_facecolor(_color(s))
            patch.set_alpha(0.75)
        for i, s in enumerate(systems, start=1):
            p50 = r["latency_ms"][s]["p50"]
            top = max(box["whiskers"][2 * i - 1].get_ydata())
            ax.annotate(
                f"{p50:.0f}" if p50 >= 10 else f"{p50:.1f}",
                (i, top),
                textcoords="offset points",
                xytext=(0, 4),
                ha="center",
                fontsize=8,
            )
        ax.set_yscale("log")
        ax.set_xticks(range(1, len(systems) + 1), [short[s] for s in systems], fontsize=8)
        ax.set_ylabel("ms per query (log scale)")
        ax.set_title(
            f"{name}: {r['noteseek']['chunks']:,} chunks, {r['queries']} queries", fontsize=10
        )
        ax.grid(axis="y", which="both", alpha=0.25)
    fig.suptitle(
        "Warm per-query latency, all systems in one process, interleaved per query\n"
        "box: p25–p75, line: median, whiskers: p5–p95; label: p50 ms",
        fontsize=10,
    )
    fig.tight_layout()
    latency_png = img_dir / "benchmark-latency.png"
    fig.savefig(latency_png, dpi=130)
    plt.close(fig)

    fig, axes = plt.subplots(1, len(vaults), figsize=(6.2 * len(vaults), 4.2), squeeze=False)
    width = 0.26
    top = max(r["quality"][f"{s}-{m}"]["ndcg@10"] for _, r in vaults for s in RANKED for m in MODES)
    ymax = min(1.0, top * 1.1 + 0.02)
    for ax, (name, r) in zip(axes[0], vaults):
        for j, mode in enumerate(MODES):
            vals = [r["quality"][f"{s}-{mode}"]["ndcg@10"] for s in RANKED]
            xs = [i + (j - 1) * width for i in range(len(RANKED))]
            bars = ax.bar(
                xs,
                vals,
                width,
                color=[_color(s) for s in RANKED],
                alpha=(0.45, 0.7, 1.0)[j],
                edgecolor="black",
                linewidth=0.5,
            )
            for bar, v in zip(bars, vals):
                ax.annotate(
                    f"{v:.3f}",
                    (bar.get_x() + bar.get_width() / 2, v),
                    textcoords="offset points",
                    xytext=(0, 2),
                    ha="center",
                    fontsize=7,
                )
                ax.annotate(
                    mode,
                    (bar.get_x() + bar.get_width() / 2, 0.01),
                    ha="center",
                    va="bottom",
                    rotation=90,
                    fontsize=7,
                    color="white" if j == 2 else "black",
                )
        ax.set_xticks(
            range(len(RANKED)),
            ["noteseek", "write-up 2\n(rank_bm25 + numpy)", "reference\n(FTS5 + vec0)"],
        )
        ax.set_ylabel("nDCG@10 (notes)")
        ax.set_ylim(0, ymax)
        ax.set_title(f"{name}: {r['queries']} queries", fontsize=10)
        ax.grid(axis="y", alpha=0.25)
    fig.suptitle(
        "nDCG@10 of notes: same queries, same chunks, same embeddings",
        fontsize=10,
    )
    fig.tight_layout()
    quality_png = img_dir / "benchmark-quality.png"
    fig.savefig(quality_png, dpi=130)
    plt.close(fig)
    return [latency_png, quality_png]


# --- main ----------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--vaults", default=",".join(VAULTS), help="default: %(default)s")
    parser.add_argument("--quick", action="store_true", help="1 run each, 60 queries: a smoke test")
    parser.add_argument("--queries", type=int, help="queries per vault (default 300; hub has 208)")
    parser.add_argument("--seed", type=int, default=42, help="query shuffle seed")
    parser.add_argument("--json", type=Path, help="default: bench/results/benchmark[-quick].json")
    parser.add_argument(
        "--img-dir", type=Path, help="where the PNGs go (default: docs/img; --quick: no plots)"
    )
    parser.add_argument("--no-plots", action="store_true")
    parser.add_argument(
        "--plots-only",
        action="store_true",
        help="from --json: recompute the paired tests (written back), reprint, redraw",
    )
    args = parser.parse_args(argv)
    plan = QUICK if args.quick else Plan()
    if args.queries:
        plan = Plan(**{**asdict(plan), "queries": args.queries})
    path = args.json or REPO / "bench" / "results" / (
        "benchmark-quick.json" if args.quick else "benchmark.json"
    )
    # A smoke test must not overwrite the published plots.
    img_dir = args.img_dir or (None if args.quick else REPO / "docs" / "img")
    if args.no_plots:
        img_dir = None
    if args.plots_only:
        stored = json.loads(path.read_text(encoding="utf-8"))
        for r in stored["vaults"].values():  # the tests only need the stored per-query nDCG@10
            r["tests"] = paired_tests(r["quality"])
        path.write_text(json.dumps(stored, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(report(stored))
        if img_dir is not None:
            for png in plots(stored, img_dir):
                print(f"wrote {png}")
        return 0
    vaults = [v.strip() for v in args.vaults.split(",") if v.strip()]
    unknown = [v for v in vaults if v not in VAULTS]
    if unknown:
        parser.error(f"--vaults: choose from {', '.join(VAULTS)}")
    if not DATA_DIR.is_dir():
        print(f"error: {DATA_DIR} not found: the benchmark needs ../shared/data", file=sys.stderr)
        return 2
    missing = [
        what
        for what, here in (
            ("ripgrep (rg) on PATH", shutil.which("rg") is not None),
            ("rank-bm25 (the bench extra)", importlib.util.find_spec("rank_bm25") is not None),
            ("sqlite-vec", importlib.util.find_spec("sqlite_vec") is not None),
        )
        if not here
    ]
    if missing:
        # --quick is the smoke run (bench/smoke.py): a machine without them skips it and passes.
        print(f"benchmark skipped: it needs {', '.join(missing)}", file=sys.stderr)
        return 0 if args.quick else 2
    started, started_wall = time.perf_counter(), time.time()
    results: dict[str, Any] = {
        "command": " ".join(["python", "bench/benchmark.py", *(argv or sys.argv[1:])]),
        "at": time.strftime("%Y-%m-%d %H:%M:%S"),
        "plan": asdict(plan),
        "seed": args.seed,
        "candidates_per_list": CANDIDATES,
        "machine": machine(),
        "vaults": {},
    }
    monitor = NoiseMonitor()
    monitor.start()
    for name in vaults:
        log(f"== {name}")
        results["vaults"][name] = bench_vault(name, plan, args.seed, monitor)
    results["other_processes_cores_busy"] = monitor.stop()
    results["seconds_total"] = time.perf_counter() - started
    # Others edit the tree too: a source file saved mid-run means mixed code was measured.
    results["src_changed_during_run"] = sorted(
        str(p.relative_to(REPO))
        for p in (REPO / "src").rglob("*.py")
        if p.stat().st_mtime > started_wall
    )
    if results["src_changed_during_run"]:
        log(f"warning: source changed during the run: {results['src_changed_during_run']}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(report(results))
    print(f"total {results['seconds_total'] / 60:.1f} min; JSON: {path}")
    if img_dir is not None:
        for png in plots(results, img_dir):
            print(f"wrote {png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
