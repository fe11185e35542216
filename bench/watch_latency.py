"""Write -> searchable through the vault watcher on the MDN vault, with a real index behind it.

The watcher (`noteseek.watch.watcher.VaultWatcher`) hands each batch to a callback that runs today's public
`Index.update(vault)` (a full incremental pass: there is no targeted update yet) in the watcher's
thread. The main thread writes files and polls a second `Index` on the same file with hybrid
searches, so a figure is the time from the write to the first search that shows the change, which
is what a user or an agent sees. It reports:

- latency for an edit (a new word appended to an MDN note), a new note and a deletion, 20 each
  (median, p95), each started with the watcher idle;
- a ``git checkout`` that changes 1,000 notes: checkout end -> every changed note searchable, the
  number of update runs it took, and a plain incremental ``Index.update`` of the same 1,000 notes
  (the checkout undone) for comparison;
- idle cost of the whole watching process (index, model and watcher loaded): CPU over ``--idle``
  seconds with no changes and its RSS.

    nice -n 10 python bench/watch_latency.py [--idle 60] [--runs 20] [--checkouts 3] [--polling]
        [--workdir DIR] [--data DIR]

The first run builds the MDN index in the workdir (~1 min); ``--workdir`` keeps it for the next.
"""

from __future__ import annotations

import argparse
import re
import resource
import secrets
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from datasets import CORPORA, DATA_DIR  # noqa: E402
from noteseek import Index  # noqa: E402
from noteseek.watch.changes import ChangeBatch  # noqa: E402
from noteseek.watch.watcher import VaultWatcher  # noqa: E402

BURST = 1000
TIMEOUT = 60.0


class Updater:
    """The callback: one incremental `Index.update` per batch, with when each run started and ended."""

    def __init__(self, index: Index, vault: Path) -> None:
        self.index, self.vault = index, vault
        self.runs: list[tuple[float, float, ChangeBatch]] = []
        self.busy = threading.Event()

    def __call__(self, batch: ChangeBatch) -> None:
        self.busy.set()
        start = time.monotonic()
        try:
            self.index.update(self.vault)
        finally:
            self.runs.append((start, time.monotonic(), batch))
            self.busy.clear()

    def wait_idle(self, quiet: float = 1.5) -> None:
        """Until no run started or ran for `quiet` seconds."""
        last = -1
        while True:
            time.sleep(quiet)
            if not self.busy.is_set() and len(self.runs) == last:
                return
            last = len(self.runs)


def _found(reader: Index, word: str) -> set[str]:
    return {hit.path for hit in reader.search(word, limit=5)}


def _until(condition: Callable[[], bool], timeout: float = TIMEOUT) -> float:
    """Seconds (monotonic clock) at which `condition()` first held; inf on timeout."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return time.monotonic()
        time.sleep(0.05)
    return float("inf")


def _searchable(reader: Index, path: str, word: str, *, present: bool = True) -> float:
    """When a search for `word` first shows (or, `present=False`, no longer shows) `path`."""
    return _until(lambda: (path in _found(reader, word)) == present)


def _word() -> str:
    return "zq" + secrets.token_hex(5)  # a token no MDN page has


def _summary(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"median {1000 * statistics.median(ordered):.0f} ms, p95 {1000 * p95:.0f} ms, max {1000 * ordered[-1]:.0f} ms"


def _git(vault: Path, *args: str) -> None:
    cmd = ["git", "-C", str(vault), "-c", "user.name=b", "-c", "user.email=b@b", *args]
    subprocess.run(cmd, check=True, capture_output=True)


def prepare(workdir: Path, data: Path) -> tuple[Path, Path, dict[str, str]]:
    """The vault copy (a git repo with a branch changing 1,000 notes), its index, the new words."""
    src = data / CORPORA["mdn-content-en"].source
    if not src.is_file():
        sys.exit(f"skipped: the MDN data set is not at {src}")
    vault, db = workdir / "mdn" / "files" / "en-us", workdir / "mdn.db"
    if not vault.is_dir():
        with tarfile.open(src) as tar:
            tar.extractall(workdir / "mdn", filter="data")
    if not (vault / ".git").is_dir():
        _git(vault, "init", "-q", "-b", "main")
        _git(vault, "add", "-A")
        _git(vault, "commit", "-qm", "base")
        _git(vault, "checkout", "-q", "-b", "burst")
        notes = sorted(vault.rglob("index.md"))
        for note in notes[:: len(notes) // BURST][:BURST]:
            with note.open("a", encoding="utf-8") as f:
                f.write(f"\n\n## Checkout bench\n\nThe word {_word()} came with a checkout.\n")
        _git(vault, "commit", "-qam", "burst")
        _git(vault, "checkout", "-q", "main")
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
    if not db.exists():
        start = time.monotonic()
        with Index(db) as idx:
            stats = idx.update(vault)
        print(
            f"built the index: {stats.files_seen} notes, {stats.chunks} chunks in "
            f"{time.monotonic() - start:.1f} s",
            flush=True,
        )
    return vault, db, words


def latency(vault: Path, reader: Index, updater: Updater, runs: int) -> None:
    folder = vault / "zz-watch-bench"
    folder.mkdir(exist_ok=True)
    updater.wait_idle()
    notes = sorted(p for p in vault.rglob("index.md") if ".git" not in p.parts)[3::397][:runs]
    edit, new, gone = [], [], []
    detect: list[float] = []  # write -> the update run for it starts: the watcher's own share

    def detected(start: float) -> None:
        detect.extend([next((s - start for s, _, _ in updater.runs if s >= start), float("inf"))])

    for i, note in enumerate(notes):
        word = _word()
        start = time.monotonic()
        with note.open("a", encoding="utf-8") as f:
            # A section of its own: appended to the page's last section (often "See also", which
            # the chunker leaves out) the word would never be searchable.
            f.write(f"\n\n## Watch bench edit\n\nThe word {word} was added by the benchmark.\n")
        rel = note.relative_to(vault).as_posix()
        edit.append(_searchable(reader, rel, word) - start)
        updater.wait_idle()
        detected(start)
        word = _word()
        path, rel = folder / f"new-{i}.md", f"zz-watch-bench/new-{i}.md"
        start = time.monotonic()
        path.write_text(f"---\ntitle: Watch bench {i}\n---\n\n# Watch bench\n\n{word} text\n")
        new.append(_searchable(reader, rel, word) - start)
        updater.wait_idle()
        detected(start)
        start = time.monotonic()
        path.unlink()
        gone.append(_searchable(reader, rel, word, present=False) - start)
        updater.wait_idle()
        detected(start)
        print(
            f"  run {i + 1}: edit {edit[-1]:.2f} s, new {new[-1]:.2f} s, deletion {gone[-1]:.2f} s",
            file=sys.stderr,
            flush=True,
        )
    print(f"edit -> searchable:     {_summary(edit)}")
    print(f"new note -> searchable: {_summary(new)}")
    print(f"deletion -> gone:       {_summary(gone)}")
    print(f"of which write -> update run starts (the watcher's share): {_summary(detect)}")
    runs = [e - s for s, e, b in updater.runs if not b.full]
    print(f"the update runs themselves (full incremental passes): {_summary(runs)}")
    folder.rmdir()
    updater.wait_idle()


def checkout(
    vault: Path,
    writer: Index,
    reader: Index,
    words: dict[str, str],
    *,
    rounds: int,
    quiet: float,
    polling: bool,
) -> None:
    """Rounds of: checkout `burst` under a watcher, then back to `main` as a plain update."""
    reflected, plain = [], []
    for _ in range(rounds):
        updater = Updater(writer, vault)
        watcher = VaultWatcher(vault, updater, quiet=quiet, force_polling=polling).start()
        watcher.wait_ready(TIMEOUT)
        start = time.monotonic()
        _git(vault, "checkout", "-qf", "burst")
        done = time.monotonic()
        # Searching while the run goes on would slow it (each commit makes a reader reload the
        # vectors), so the figure is when the run covering the checkout committed, checked after.
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and not updater.runs:
            time.sleep(0.05)
        updater.wait_idle()  # and any run that events after the first one's start asked for
        watcher.stop()
        watcher.join(TIMEOUT)
        missing = sum(1 for p, w in words.items() if p not in _found(reader, w))
        end = max((e for _, e, _ in updater.runs), default=float("inf"))
        reflected.append(end - done)
        print(
            f"git checkout of {len(words)} notes: checkout {done - start:.2f} s; reflected "
            f"{end - done:.2f} s after it ended; {len(updater.runs)} update run(s) ("
            f"{', '.join(f'{e - s:.2f} s' for s, e, _ in updater.runs)}); notes not found "
            f"after: {missing}",
            flush=True,
        )
        _git(vault, "checkout", "-qf", "main")
        start = time.monotonic()
        stats = writer.update(vault)
        plain.append(time.monotonic() - start)
        print(
            f"plain incremental run over the same {stats.changed} changed notes: {plain[-1]:.2f} s",
            flush=True,
        )
    print(
        f"checkout -> reflected: median {statistics.median(reflected):.2f} s; plain incremental "
        f"run: median {statistics.median(plain):.2f} s (over {rounds} rounds)"
    )


def idle_cost(seconds: float, updater: Updater) -> None:
    updater.wait_idle()
    before, runs = resource.getrusage(resource.RUSAGE_SELF), len(updater.runs)
    start = time.monotonic()
    time.sleep(seconds)
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) / (
        time.monotonic() - start
    )
    status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    print(
        f"idle {seconds:.0f} s: {100 * cpu:.2f} % of one core (update runs meanwhile: "
        f"{len(updater.runs) - runs}); RSS {int(status['VmRSS'].split()[0]) / 1024:.0f} MB, "
        f"peak {int(status['VmHWM'].split()[0]) / 1024:.0f} MB (index, model and watcher)"
    )


def process_cost(
    vault: Path, db: Path, *, edits: int, idle: float, quiet: float, polling: bool, interval: float
) -> None:
    """What a `noteseek watch` process would hold: one writing Index and the watcher, no searches."""
    with Index(db) as writer:
        updater = Updater(writer, vault)
        watcher = VaultWatcher(
            vault,
            updater,
            quiet=quiet,
            force_polling=polling,
            poll_interval=interval,
            catch_up=True,
        )
        watcher.start()
        watcher.wait_ready(TIMEOUT)
        updater.wait_idle()
        notes = sorted(p for p in vault.rglob("index.md") if ".git" not in p.parts)[5::613][:edits]
        for note in notes:  # edits make the update embed, so the model is loaded
            with note.open("a", encoding="utf-8") as f:
                f.write(f"\n\n## Watch bench edit\n\nThe word {_word()} was added.\n")
            updater.wait_idle()
        how = f"polling every {interval:g} s" if watcher.polling else "OS events"
        print(f"watch process ({how}), after {len(updater.runs)} update runs:")
        idle_cost(idle, updater)
        watcher.stop()
        watcher.join(TIMEOUT)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--idle", type=float, default=60.0)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--checkouts", type=int, default=3, help="1,000-note checkout rounds")
    parser.add_argument("--quiet", type=float, default=0.2, help="the watcher's debounce, s")
    parser.add_argument("--polling", action="store_true", help="force polling")
    parser.add_argument("--poll-interval", type=float, default=2.0, help="with --polling, s")
    parser.add_argument(
        "--process-only",
        action="store_true",
        help="only the cost of a watch process: one writer, --runs edits, then --idle seconds",
    )
    parser.add_argument("--workdir", type=Path)
    parser.add_argument("--data", type=Path, default=DATA_DIR)
    args = parser.parse_args()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="noteseek-watch-"))
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        vault, db, words = prepare(workdir, args.data)
        if args.process_only:
            process_cost(
                vault,
                db,
                edits=args.runs,
                idle=args.idle,
                quiet=args.quiet,
                polling=args.polling,
                interval=args.poll_interval,
            )
            return
        writer, reader = Index(db), Index(db)
        updater = Updater(writer, vault)
        watcher = VaultWatcher(
            vault, updater, quiet=args.quiet, force_polling=args.polling, catch_up=True
        )
        start = time.monotonic()
        watcher.start()
        watcher.wait_ready(TIMEOUT)
        print(
            f"watching {vault} ({'polling' if watcher.polling else 'OS events'}), ready in "
            f"{time.monotonic() - start:.2f} s; quiet {args.quiet} s",
            flush=True,
        )
        updater.wait_idle()
        if updater.runs:
            s, e, _ = updater.runs[0]
            print(f"catch-up pass (a no-op incremental run): {e - s:.2f} s")
        if args.idle:
            idle_cost(args.idle, updater)
        if args.runs:
            latency(vault, reader, updater, args.runs)
        watcher.stop()
        watcher.join(TIMEOUT)
        checkout(
            vault,
            writer,
            reader,
            words,
            rounds=args.checkouts,
            quiet=args.quiet,
            polling=args.polling,
        )
        status = dict(
            line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines()
        )
        print(
            f"RSS at the end (model loaded, vectors read by the searching Index): "
            f"{int(status['VmRSS'].split()[0]) / 1024:.0f} MB, peak "
            f"{int(status['VmHWM'].split()[0]) / 1024:.0f} MB"
        )
        writer.close()
        reader.close()
    finally:
        if args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
