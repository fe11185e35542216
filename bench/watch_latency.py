"""Write -> searchable through a real `noteseek watch` process on the MDN vault.

The bench starts `python -m noteseek watch VAULT --db DB` as a child process (it inherits this
process's nice level) and, in this process, polls a searching `Index` on the same file with hybrid
searches every 50 ms, so a figure is the time from the write to the first search that shows the
change: what a user or an agent sees. It reports, with the load average beside each figure:

- latency for an edit (a new section with a new word appended to an MDN note), a new note and a
  deletion, ``--runs`` each (median, p95), each started with the watcher idle; and the watcher's own
  update-run time from its stderr;
- a ``git checkout`` changing 1,000 notes: checkout end -> the last changed note searchable (BM25
  polls: hybrid ones would re-read every vector after each commit and slow the watcher), and
  how many update runs it took; side by side in each round, the same 1,000 notes (checkout undone,
  the watcher stopped) as a plain ``noteseek index`` run (its own ``done in`` time and the whole
  process, model load included);
- the idle cost of the watch process: CPU over ``--idle`` seconds without changes, its RSS and peak,
  once after the catch-up and once after the edits (the model loaded).

    nice -n 10 python bench/watch_latency.py --data /work/shared/data [--workdir DIR]
        [--runs 20] [--checkouts 3] [--idle 60] [--polling --poll-interval S]

The first run builds the MDN index in the workdir (a few minutes); ``--workdir`` keeps it.
``--burst`` sets the 1,000 notes of the checkout. The smoke run (bench/smoke.py) takes the
stand-in MDN half of the sample vault, one run, a five-note checkout and a second of idling.
"""

from __future__ import annotations

import argparse
import functools
import os
import re
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from datasets import CORPORA, DATA_DIR  # noqa: E402
from noteseek import Index  # noqa: E402

BURST = 1000  # notes the checkout changes (--burst)
TIMEOUT = 120.0
TICK = os.sysconf("SC_CLK_TCK")


def load() -> str:
    return f"load {os.getloadavg()[0]:.2f}"


def _word() -> str:
    return "zq" + secrets.token_hex(5)  # a token no MDN page has


def _summary(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return (
        f"median {1000 * statistics.median(ordered):.0f} ms, p95 {1000 * p95:.0f} ms, "
        f"max {1000 * ordered[-1]:.0f} ms"
    )


def _listed(
    found: Callable[[str], set[str]], word: str, rel: str, *, listed: bool = True
) -> bool:
    """Whether a search for `word` lists the note `rel` (or, with `listed=False`, does not)."""
    return (rel in found(word)) == listed


def _until(condition: Callable[[], bool], timeout: float = TIMEOUT, step: float = 0.05) -> float:
    """Monotonic time at which `condition()` first held; inf on timeout."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return time.monotonic()
        time.sleep(step)
    return float("inf")


def _git(vault: Path, *args: str) -> None:
    cmd = ["git", "-C", str(vault), "-c", "user.name=b", "-c", "user.email=b@b", *args]
    subprocess.run(cmd, check=True, capture_output=True)


def _notes(vault: Path) -> list[Path]:
    return sorted(p for p in vault.rglob("*.md") if ".git" not in p.parts)


def prepare(workdir: Path, data: Path, burst: int) -> tuple[Path, Path, dict[str, str]]:
    """The vault copy (a git repo with a branch changing `burst` notes), its index, the new words."""
    src = data / CORPORA["mdn-content-en"].source
    vault, db = workdir / "mdn" / "files" / "en-us", workdir / "mdn.db"
    if not vault.is_dir():
        if not src.is_file():
            sys.exit(f"skipped: the MDN data set is not at {src}")
        with tarfile.open(src) as tar:
            tar.extractall(workdir / "mdn", filter="data")
    if not (vault / ".git").is_dir():
        _git(vault, "init", "-q", "-b", "main")
        _git(vault, "add", "-A")
        _git(vault, "commit", "-qm", "base")
        _git(vault, "checkout", "-q", "-b", "burst")
        notes = _notes(vault)
        for note in notes[:: max(1, len(notes) // burst)][:burst]:
            with note.open("a", encoding="utf-8") as f:
                f.write(f"\n\n## Checkout bench\n\nThe word {_word()} came with a checkout.\n")
        _git(vault, "commit", "-qam", "burst")
    _git(vault, "checkout", "-qf", "main")
    subprocess.run(["git", "-C", str(vault), "clean", "-qfd"], check=True)
    words: dict[str, str] = {}
    diff = subprocess.run(
        ["git", "-C", str(vault), "diff", "-U0", "main", "burst"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    path = ""
    for line in diff.splitlines():
        if line.startswith("+++ b/"):
            path = line[6:]
        elif match := re.match(r"\+The word (zq[0-9a-f]+) came with a checkout", line):
            words[path] = match.group(1)
    start = time.monotonic()
    done = _index_process(vault, db)
    print(f"index brought up to date: {done} ({time.monotonic() - start:.1f} s)", flush=True)
    return vault, db, words


def _index_process(vault: Path, db: Path) -> str:
    out = subprocess.run(
        [sys.executable, "-m", "noteseek", "index", str(vault), "--db", str(db), "-q"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return out.strip().splitlines()[0]


class WatchProcess:
    """`noteseek watch` as a child process; its stderr lines counted as they come."""

    def __init__(self, vault: Path, db: Path, log: Path, extra: list[str]) -> None:
        self.log = log
        self._handle = log.open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "noteseek", "watch", str(vault), "--db", str(db), *extra],
            stdout=subprocess.DEVNULL,
            stderr=self._handle,
        )

    def lines(self, marker: str) -> list[str]:
        return [x for x in self.log.read_text("utf-8", "replace").splitlines() if marker in x]

    def has_line(self, marker: str) -> bool:
        return bool(self.lines(marker))

    def runs(self) -> int:
        return len(self.lines("updated: ")) + len(self.lines("caught up"))

    def wait_idle(self, quiet: float = 1.0) -> None:
        """Until no new update run was reported for `quiet` seconds."""
        last = -1
        while True:
            now = self.runs()
            if now == last:
                return
            last = now
            time.sleep(quiet)

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICK

    def memory(self) -> tuple[float, float]:
        status = dict(
            line.split(":", 1)
            for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines()
        )
        return (
            int(status["VmRSS"].split()[0]) / 1024,
            int(status["VmHWM"].split()[0]) / 1024,
        )

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGINT)
        code = self.proc.wait(TIMEOUT)
        self._handle.close()
        return code


def run_seconds(line: str) -> float:
    match = re.search(r"in ([0-9.]+) s", line)
    return float(match.group(1)) if match else float("nan")


def latency(vault: Path, reader: Index, watch: WatchProcess, runs: int) -> None:
    folder = vault / "zz-watch-bench"
    folder.mkdir(exist_ok=True)
    watch.wait_idle()
    every = _notes(vault)
    notes = every[3 :: max(1, min(397, len(every) // max(runs, 1) - 1))][:runs]
    edit, new, gone, loads = [], [], [], []

    def found(word: str) -> set[str]:
        return {hit.path for hit in reader.search(word, limit=5)}

    first_line = len(watch.lines("updated: "))
    for i, note in enumerate(notes):
        loads.append(os.getloadavg()[0])
        word, rel = _word(), note.relative_to(vault).as_posix()
        start = time.monotonic()
        with note.open("a", encoding="utf-8") as f:
            # A section of its own: appended to the page's last section (often "See also", which
            # the chunker leaves out) the word would never be searchable.
            f.write(f"\n\n## Watch bench edit\n\nThe word {word} was added by the benchmark.\n")
        edit.append(_until(functools.partial(_listed, found, word, rel)) - start)
        watch.wait_idle()
        word, rel = _word(), f"zz-watch-bench/new-{i}.md"
        path = vault / rel
        start = time.monotonic()
        path.write_text(f"---\ntitle: Watch bench {i}\n---\n\n# Watch bench\n\n{word} text\n")
        new.append(_until(functools.partial(_listed, found, word, rel)) - start)
        watch.wait_idle()
        start = time.monotonic()
        path.unlink()
        gone.append(_until(functools.partial(_listed, found, word, rel, listed=False)) - start)
        watch.wait_idle()
        print(
            f"  run {i + 1}: edit {edit[-1]:.2f} s, new {new[-1]:.2f} s, deletion "
            f"{gone[-1]:.2f} s ({load()})",
            file=sys.stderr,
            flush=True,
        )
    spread = f"load average {min(loads):.2f}-{max(loads):.2f} (median {statistics.median(loads):.2f})"
    print(f"edit -> searchable:     {_summary(edit)}; {spread}")
    print(f"new note -> searchable: {_summary(new)}")
    print(f"deletion -> gone:       {_summary(gone)}")
    own = [run_seconds(x) for x in watch.lines("updated: ")[first_line:]]
    print(f"the watcher's update runs (its own 'in X s', {len(own)} runs): {_summary(own)}")
    folder.rmdir()
    watch.wait_idle()


def checkout(
    vault: Path, db: Path, reader: Index, words: dict[str, str], *, rounds: int, extra: list[str]
) -> None:
    """Rounds of: checkout `burst` under the watcher, then back to `main` as a plain index run."""
    last = max(words)  # candidates are written in path order: the last one shows the run's end
    reflected, plain, plain_wall, runs_per = [], [], [], []
    for r in range(rounds):
        watch = WatchProcess(vault, db, db.parent / f"watch-checkout-{r}.log", extra)
        _until(functools.partial(watch.has_line, "caught up"), timeout=600)
        watch.wait_idle()
        before = watch.runs()
        start = time.monotonic()
        _git(vault, "checkout", "-qf", "burst")
        done = time.monotonic()
        # BM25 polls only, 4 a second: a hybrid search after every commit would make this
        # process re-read all 59,000 vectors each time, and slow the watcher it measures.
        end = _until(
            lambda: last in {h.path for h in reader.search(words[last], mode="bm25")}, 600, 0.25
        )
        reflected.append(end - done)
        watch.wait_idle(2.0)
        runs = watch.runs() - before
        runs_per.append(runs)
        missing = sum(
            1 for p, w in words.items() if p not in {h.path for h in reader.search(w, mode="bm25")}
        )
        own = [run_seconds(x) for x in watch.lines("updated: ")]
        watch.stop()
        print(
            f"round {r + 1}: git checkout of {len(words)} notes took {done - start:.2f} s; "
            f"reflected {end - done:.2f} s after it ended, in {runs} update run(s) "
            f"({', '.join(f'{s:.2f} s' for s in own)}); notes not found after: {missing} "
            f"({load()})",
            flush=True,
        )
        _git(vault, "checkout", "-qf", "main")
        start = time.monotonic()
        line = _index_process(vault, db)
        plain_wall.append(time.monotonic() - start)
        plain.append(run_seconds(line.replace("done in", "in")))
        print(
            f"round {r + 1}: plain 'noteseek index' over the same notes: {line} "
            f"(process {plain_wall[-1]:.2f} s, {load()})",
            flush=True,
        )
    print(
        f"checkout -> reflected: median {statistics.median(reflected):.2f} s in "
        f"{statistics.median(runs_per):.0f} run(s); plain incremental run: median "
        f"{statistics.median(plain):.2f} s ('done in'), {statistics.median(plain_wall):.2f} s "
        f"as a process (over {rounds} rounds)"
    )


def idle_cost(watch: WatchProcess, seconds: float) -> None:
    watch.wait_idle()
    runs, cpu, start = watch.runs(), watch.cpu_seconds(), time.monotonic()
    load_before = os.getloadavg()[0]
    time.sleep(seconds)
    used = (watch.cpu_seconds() - cpu) / (time.monotonic() - start)
    rss, peak = watch.memory()
    print(
        f"watch process idle {seconds:.0f} s: {100 * used:.2f} % of one core (update runs "
        f"meanwhile: {watch.runs() - runs}); RSS {rss:.0f} MB, peak {peak:.0f} MB "
        f"(load {load_before:.2f} -> {os.getloadavg()[0]:.2f})",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--idle", type=float, default=60.0)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--checkouts", type=int, default=3, help="1,000-note checkout rounds")
    parser.add_argument("--burst", type=int, default=BURST, help="notes the checkout changes")
    parser.add_argument("--polling", action="store_true", help="noteseek watch --polling")
    parser.add_argument("--poll-interval", type=float, default=5.0)
    parser.add_argument("--workdir", type=Path)
    parser.add_argument("--data", type=Path, default=DATA_DIR)
    args = parser.parse_args()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="noteseek-watch-"))
    workdir.mkdir(parents=True, exist_ok=True)
    extra = ["--polling", "--poll-interval", str(args.poll_interval)] if args.polling else []
    print(f"nice {os.nice(0)}, {os.cpu_count()} cores, {load()}", flush=True)
    try:
        vault, db, words = prepare(workdir, args.data, args.burst)
        reader = Index(db)
        reader.warm_up()
        watch = WatchProcess(vault, db, workdir / "watch.log", extra)
        start = time.monotonic()
        _until(functools.partial(watch.has_line, "caught up"), timeout=600)
        print(
            f"noteseek watch caught up {time.monotonic() - start:.2f} s after it started: "
            f"{watch.lines('caught up')[0].split(' ', 1)[1]}",
            flush=True,
        )
        if args.idle:
            idle_cost(watch, args.idle)
        if args.runs:
            latency(vault, reader, watch, args.runs)
            if args.idle:  # again, now that the model is loaded and the edits were indexed
                print("after the edits:", end=" ")
                idle_cost(watch, args.idle)
        print(f"watch exited with {watch.stop()} on SIGINT")
        if args.checkouts:
            checkout(vault, db, reader, words, rounds=args.checkouts, extra=extra)
        reader.close()
    finally:
        if args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
