"""End-to-end latency of the per-prompt paths, as a process: spawn → stdout closed.

    python bench/hook_latency.py                 # the MDN index (13,062 notes), built if missing
    python bench/hook_latency.py --db FILE.db --runs 30
    python bench/hook_latency.py --old-src /tmp/old/src   # also another checkout's hook, alternating

Rows, measured interleaved (each round runs every row once, in a shuffled order, so load from
other processes on a shared machine hits all rows alike):

- `python -c pass`: the interpreter alone, the floor for any hook;
- `noteseek search --json`: the one-shot CLI search;
- hook cold: `noteseek hook prompt` with a real UserPromptSubmit JSON on stdin and no daemon
  (NOTESEEK_NO_DAEMON=1, so it neither asks nor starts one);
- hook warm: the same with `noteseek serve` running for the index;
- daemon client: a bare Python process that sends the `context` request and prints the block.

With `--old-src DIR` (the `src` folder of another checkout, e.g. `git archive <commit> src`), the
one-shot search and both hook rows run a second time with that code (`PYTHONPATH=DIR`, its own copy
of the index and its own daemon), in the same shuffled rounds, and a second table gives the ratio
of each row's median to the old code's.

Prints a Markdown table of medians and p90s and their ratios to the interpreter start and to the
one-shot search, and writes every sample to bench/results/hook_latency.json. Timings are this
machine's, on this load; compare rows of one run, not figures across runs.
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
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from datasets import CACHE_DIR, CORPORA, DATA_DIR, DATASETS, ensure_corpus

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
NOTESEEK = str(BIN / "noteseek")
RESULTS = REPO / "bench" / "results" / "hook_latency.json"
# What `noteseek install-hooks` writes into settings.json: this interpreter with -m noteseek.
HOOK_COMMAND = [sys.executable, "-m", "noteseek"]

# The daemon client's module, in this checkout or in an older one (before the package split).
IMPORT_REQUEST = """
import importlib.util
if importlib.util.find_spec("noteseek.daemon_client") is not None:
    from noteseek.daemon_client import request
else:
    from noteseek.daemon.client import request
"""
CLIENT = (
    IMPORT_REQUEST
    + """
import sys, json
answer = request(sys.argv[1], {"op": "context", "prompt": sys.argv[2], "max_tokens": 500})
if answer is None or not answer.get("ok"):
    sys.exit(f"no answer from the daemon: {answer}")
sys.stdout.write(answer["text"])
"""
)


@dataclass
class Row:
    """One measured command: argv, stdin and environment, and its samples in seconds."""

    name: str
    argv: Sequence[str]
    env: dict[str, str]
    stdin: bytes | None = None
    samples: list[float] = field(default_factory=list)
    out_bytes: list[int] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)  # the child's user + system CPU seconds


def run_once(row: Row) -> tuple[float, int, float]:
    """Seconds from spawn until the child closed stdout, how many bytes it wrote, and the CPU
    seconds it used (user + system: far less disturbed by other load than the wall clock)."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        row.argv,
        stdin=subprocess.PIPE if row.stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=row.env,
    )
    if row.stdin is not None:
        assert proc.stdin is not None
        proc.stdin.write(row.stdin)
        proc.stdin.close()
    assert proc.stdout is not None
    out = proc.stdout.read()  # returns at EOF: the child closed stdout (normally: exited)
    elapsed = time.perf_counter() - start
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{row.name} failed (exit {proc.returncode}): {' '.join(row.argv)}")
    return elapsed, len(out), usage.ru_utime + usage.ru_stime


def pct(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def default_db(work: Path) -> Path:
    """A private copy of the MDN index from the bench cache, built there first when missing."""
    cached = CACHE_DIR / f"{DATASETS['mdn'].index}.db"
    if not cached.exists():
        import noteseek

        vault = ensure_corpus(CORPORA["mdn-content-en"], DATA_DIR) / DATASETS["mdn"].vault
        print(f"building {cached} from {vault} (minutes, once)", file=sys.stderr)
        with noteseek.Index(cached) as idx:
            idx.update(vault)
    # A copy: readers checkpoint the WAL on close, and the cache file is shared with other runs.
    copy = work / "mdn.db"
    shutil.copyfile(cached, copy)
    return copy


def prompts(count: int) -> list[str]:
    """Prompt-like texts around MDN's own anchor texts (known to have answers in the index)."""
    path = DATA_DIR / DATASETS["mdn"].queries
    texts = ["how do I center a div with flexbox?"]
    if path.exists():
        lines = path.read_text(encoding="utf-8").splitlines()
        texts = [json.loads(line)["text"] for line in lines if line.strip()]
    rng = random.Random(7)
    rng.shuffle(texts)
    shapes = (
        "How do I use {} in my page?",
        "Explain {} with an example.",
        "{}: what can go wrong?",
    )
    return [shapes[i % len(shapes)].format(texts[i % len(texts)]) for i in range(count)]


def hook_payload(prompt: str, cwd: str) -> bytes:
    event = {
        "session_id": "bench-hook-latency",
        "transcript_path": "/dev/null",
        "cwd": cwd,
        "permission_mode": "default",
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }
    return json.dumps(event).encode()


def start_daemon(db: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """`noteseek serve` in the foreground of a child process; returns once it answers."""
    proc = subprocess.Popen(
        [NOTESEEK, "serve", "--db", str(db), "--idle-minutes", "0"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    ping = IMPORT_REQUEST + "import sys; sys.exit(request(sys.argv[1], {'op': 'ping'}) is None)"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if subprocess.run([sys.executable, "-c", ping, str(db)], env=env).returncode == 0:
            return proc
        if proc.poll() is not None:
            raise SystemExit("noteseek serve exited before answering")
        time.sleep(0.3)
    proc.terminate()
    raise SystemExit("noteseek serve did not answer within 120 s")


def hook_available() -> bool:
    return importlib.util.find_spec("noteseek.hooks") is not None


def process_cpu(pid: int) -> float:
    """User + system CPU seconds of a running process, all threads (Linux /proc; 0.0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def ping(db: Path, env: dict[str, str]) -> dict[str, Any]:
    """The daemon's ping answer for `db` (served counts), or {} when none answers."""
    code = (
        IMPORT_REQUEST
        + "import sys, json; print(json.dumps(request(sys.argv[1], {'op': 'ping'}) or {}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(db)], env=env, capture_output=True, text=True
    )
    answer: dict[str, Any] = json.loads(out.stdout or "{}")
    return answer


def comparison(rows: Sequence[Row]) -> str:
    """Each row against the same row run with the old code (`--old-src`): medians, the median of
    the per-round ratios (both ran in the same round, so shared load cancels), and CPU time."""
    by_name = {r.name: r for r in rows}
    lines = [
        "| path | new median ms | old median ms | new / old | per-round new / old "
        "| new CPU ms | old CPU ms | CPU new / old |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        old = by_name.get(f"{r.name} [old]")
        if old is None:
            continue
        new_ms, old_ms = statistics.median(r.samples) * 1000, statistics.median(old.samples) * 1000
        paired = statistics.median(a / b for a, b in zip(r.samples, old.samples))
        new_cpu, old_cpu = statistics.median(r.cpu) * 1000, statistics.median(old.cpu) * 1000
        lines.append(
            f"| {r.name} | {new_ms:.1f} | {old_ms:.1f} | {new_ms / old_ms:.3f} | {paired:.3f} "
            f"| {new_cpu:.1f} | {old_cpu:.1f} | {new_cpu / old_cpu:.3f} |"
        )
    return "\n".join(lines)


def markdown(rows: Sequence[Row]) -> str:
    base = next((statistics.median(r.samples) for r in rows if r.name == "python -c pass"), None)
    search = next(
        (statistics.median(r.samples) for r in rows if r.name.startswith("noteseek search")), None
    )
    lines = [
        "| path | median ms | p90 ms | × python start | × one-shot search | output bytes (median) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        median = statistics.median(r.samples)
        ratio_base = f"{median / base:.1f}" if base else "—"
        ratio_search = f"{median / search:.2f}" if search else "—"
        lines.append(
            f"| {r.name} | {median * 1000:.0f} | {pct(r.samples, 90) * 1000:.0f} | {ratio_base} "
            f"| {ratio_search} | {statistics.median(r.out_bytes):.0f} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--db", type=Path, help="index file (default: a copy of the MDN index)")
    parser.add_argument("--runs", type=int, default=25, help="measured runs per row (≥ 20)")
    parser.add_argument("--warmup", type=int, default=2, help="unmeasured runs per row first")
    parser.add_argument("--json", type=Path, default=RESULTS)
    parser.add_argument(
        "--old-src", type=Path, help="src folder of another checkout, measured alongside"
    )
    parser.add_argument(
        "--old-db",
        type=Path,
        help="the index the old checkout built (default: a copy of --db; an older checkout may "
        "not open a newer schema)",
    )
    args = parser.parse_args(argv)

    # pip byte-compiles a package it installs; an editable checkout (and PYTHONDONTWRITEBYTECODE,
    # set on some machines) would otherwise make every process compile noteseek from source.
    import compileall

    import noteseek

    compileall.compile_dir(str(Path(noteseek.__file__).parent), quiet=1)
    if args.old_src:
        compileall.compile_dir(str(args.old_src / "noteseek"), quiet=1)
    work = Path(tempfile.mkdtemp(prefix="noteseek-hook-latency-"))
    daemon: subprocess.Popen[bytes] | None = None
    old_daemon: subprocess.Popen[bytes] | None = None
    try:
        db = args.db.expanduser().resolve() if args.db else default_db(work)
        base_env = dict(os.environ)
        # Private runtime and data folders: the daemon's socket and the hook log stay ours.
        base_env["NOTESEEK_RUNTIME_DIR"] = str(work / "run")
        base_env["NOTESEEK_HOME"] = str(work / "home")
        base_env.pop("NOTESEEK_DB", None)
        cold_env = dict(base_env, NOTESEEK_NO_DAEMON="1")
        texts = prompts(args.warmup + args.runs)

        rows = [
            Row("python -c pass", [sys.executable, "-c", "pass"], cold_env),
            Row(
                "noteseek search --json (one-shot)",
                [NOTESEEK, "search", "--json", "--db", str(db), texts[0]],
                cold_env,
            ),
        ]
        hooks = hook_available()
        if hooks:
            rows.append(
                Row(
                    "hook prompt, cold (no daemon)",
                    [*HOOK_COMMAND, "hook", "prompt", "--db", str(db)],
                    cold_env,
                    stdin=hook_payload(texts[0], str(work)),
                )
            )
            rows.append(
                Row(
                    "hook prompt, warm (daemon running)",
                    [*HOOK_COMMAND, "hook", "prompt", "--db", str(db)],
                    base_env,
                    stdin=hook_payload(texts[0], str(work)),
                )
            )
        else:
            print("noteseek.hooks.command not found: hook rows skipped", file=sys.stderr)
        rows.append(
            Row(
                "daemon client alone (context op)",
                [sys.executable, "-c", CLIENT, str(db)],
                base_env,
            )
        )
        old_db: Path | None = None
        if args.old_src:
            # Its own copy of the index: a daemon is found by the index's path, so the two
            # checkouts' daemons must serve different files.
            old_db = work / "old.db"
            shutil.copyfile(args.old_db.expanduser().resolve() if args.old_db else db, old_db)
            old_src = str(args.old_src.resolve())
            old_base = dict(base_env, PYTHONPATH=old_src)
            old_cold = dict(cold_env, PYTHONPATH=old_src)
            for row in [
                r for r in rows if r.name.startswith(("noteseek search", "hook", "daemon"))
            ]:
                argv = [str(old_db) if a == str(db) else a for a in row.argv]
                env = old_cold if row.env is cold_env else old_base
                rows.append(Row(f"{row.name} [old]", argv, env, stdin=row.stdin))
        daemon = start_daemon(db, base_env)
        if old_db is not None:
            old_daemon = start_daemon(
                old_db, dict(base_env, PYTHONPATH=str(args.old_src.resolve()))
            )

        rng = random.Random(11)
        daemons = {"new": daemon, "old": old_daemon}
        daemon_cpu: dict[str, float] = {}
        for i in range(args.warmup + args.runs):
            if i == args.warmup:  # the daemons' own CPU from here on: their share of a warm answer
                daemon_cpu = {k: process_cpu(p.pid) for k, p in daemons.items() if p is not None}
            prompt = texts[i]
            for row in rows:  # same prompt for every row in a round
                if row.name.startswith("noteseek search"):
                    row.argv = [*row.argv[:-1], prompt]
                elif row.name.startswith("hook"):
                    row.stdin = hook_payload(prompt, str(work))
                elif row.name.startswith("daemon client"):
                    row.argv = [*row.argv[:4], prompt]
            order = rows[:]
            rng.shuffle(order)
            for row in order:
                elapsed, size, cpu = run_once(row)
                if i >= args.warmup:
                    row.samples.append(elapsed)
                    row.out_bytes.append(size)
                    row.cpu.append(cpu)
            print(f"round {i + 1}/{args.warmup + args.runs}", file=sys.stderr, end="\r")
        print(file=sys.stderr)

        per_request = {
            k: (process_cpu(p.pid) - daemon_cpu[k]) * 1000 / (2 * args.runs)
            for k, p in daemons.items()
            if p is not None and k in daemon_cpu
        }
        table = markdown(rows)
        print(table)
        versus = comparison(rows) if old_db is not None else ""
        if versus:
            print("\nThis checkout against --old-src, same rounds:\n")
            print(versus)
        # Which path answered: the daemon counts what it served (warm hook runs + client runs);
        # cold runs have NOTESEEK_NO_DAEMON set and never reach it.
        rounds = args.warmup + args.runs
        counts: dict[str, Any] = {
            "daemon_served": ping(db, base_env).get("served"),
            "expected_warm": 2 * rounds if hooks else rounds,
        }
        if old_db is not None:
            counts["old_daemon_served"] = ping(old_db, base_env).get("served")
            counts["old_expected_warm"] = 2 * rounds if hooks else rounds
        print(f"\ndaemon(s) served: {counts}")
        if per_request:
            shown = ", ".join(f"{k} {v:.2f} ms" for k, v in per_request.items())
            print(f"daemon CPU per request (warm hook and client rows, measured rounds): {shown}")
        with open("/proc/loadavg") if Path("/proc/loadavg").exists() else open(os.devnull) as fh:
            load = fh.read().split()[:3]
        doc: dict[str, Any] = {
            "machine": {
                "cpu_count": os.cpu_count(),
                "platform": platform.platform(),
                "python": platform.python_version(),
                "loadavg_at_end": load,
            },
            "db": str(args.db or "copy of bench/.cache/mdn.db"),
            "runs": args.runs,
            "hook_paths": counts,
            "rows": {
                r.name: {
                    "median_ms": statistics.median(r.samples) * 1000,
                    "p90_ms": pct(r.samples, 90) * 1000,
                    "samples_ms": [s * 1000 for s in r.samples],
                    "cpu_ms": [c * 1000 for c in r.cpu],
                    "out_bytes": r.out_bytes,
                }
                for r in rows
            },
            "table": table,
            "old_src": str(args.old_src) if args.old_src else None,
            "daemon_cpu_ms_per_request": per_request,
            "versus_old": versus or None,
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.json}", file=sys.stderr)
    finally:
        for proc in (daemon, old_daemon):
            if proc is not None:
                proc.terminate()
                proc.wait(30)
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
