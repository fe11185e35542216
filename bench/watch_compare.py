"""watchfiles vs watchdog on the MDN vault, side by side: the figures behind noteseek's pick.

Each library runs in its own child process (so RSS and CPU are its own) that watches a copy of the
MDN vault and prints one line per change it is told of, stamped with the system-wide monotonic
clock. The parent writes files and reads the child's clock, so latency is write -> callback in the
library's own thread, without noteseek's debounce on top. Per library and mode it reports:

- setup: time to watch the whole tree (inotify: one watch per folder; MDN has 13,067), RSS after;
- idle: CPU of the child over ``--idle`` seconds with no changes (% of one core);
- latency: 20 single-file edits, write -> first event for that file (median, p95);
- burst: ``git checkout`` of a branch that differs in 1,000 notes: events, batches (watchfiles
  yields sets), time from the end of the checkout to the last event, and how many of the 1,000 paths
  were reported;
- limit: the inotify watch limit reached (a user namespace with ``max_inotify_watches`` = 2,000, so
  the machine-wide limit other processes use is never touched): what the library does.

    nice -n 10 python bench/watch_compare.py [--idle 60] [--workdir /tmp/x] [--data DIR]

Needs the shared data set (skips with a message when it is absent), ``git`` and ``unshare``.
``--edits`` and ``--burst`` set the 20 edits and the 1,000-note checkout; the smoke run
(bench/smoke.py) takes watchfiles alone on the stand-in MDN half of the sample vault.
"""

from __future__ import annotations

import argparse
import os
import queue
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from datasets import CORPORA, DATA_DIR  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")
BURST = 1000
LIMIT = 2000


# --- child side ------------------------------------------------------------------------------


def _emit(stamp: float, paths: list[str]) -> None:
    sys.stdout.write(f"EV {stamp:.6f} {len(paths)}\t" + "\t".join(paths) + "\n")
    sys.stdout.flush()


def _rss_kb() -> tuple[int, int]:
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])


def child(lib: str, mode: str, root: str) -> None:
    """Watch `root` with one library until stdin closes, printing READY, then one EV per callback."""
    stop = threading.Event()

    def wait_for_eof() -> None:
        sys.stdin.read()
        stop.set()

    threading.Thread(target=wait_for_eof, daemon=True).start()
    started = time.monotonic()
    polling = mode == "polling"
    try:
        if lib == "watchfiles":
            import watchfiles

            # RustNotify sets up the watches when the generator first runs; an empty change
            # set on the first timeout tells us it is ready.
            gen = watchfiles.watch(
                root,
                watch_filter=None,
                debounce=1600,
                step=50,
                stop_event=stop,
                rust_timeout=200,
                yield_on_timeout=True,
                raise_interrupt=False,
                force_polling=polling,
                poll_delay_ms=1000,
            )
            ready = False
            for changes in gen:
                if not ready:
                    ready = True
                    print(f"READY {time.monotonic() - started:.3f} {_rss_kb()[0]}", flush=True)
                if changes:
                    _emit(time.monotonic(), [p for _, p in changes])
        else:
            from watchdog.events import (
                DirCreatedEvent,
                DirDeletedEvent,
                DirMovedEvent,
                FileClosedEvent,
                FileCreatedEvent,
                FileDeletedEvent,
                FileModifiedEvent,
                FileMovedEvent,
                FileSystemEvent,
                FileSystemEventHandler,
            )
            from watchdog.observers import Observer
            from watchdog.observers.polling import PollingObserver

            class Handler(FileSystemEventHandler):  # type: ignore[misc]  # untyped library
                def on_any_event(self, event: FileSystemEvent) -> None:
                    paths = [str(event.src_path)]
                    if getattr(event, "dest_path", ""):
                        paths.append(str(event.dest_path))
                    _emit(time.monotonic(), paths)

            observer = PollingObserver(timeout=1.0) if polling else Observer()
            # Without this filter watchdog also asks inotify for IN_OPEN / IN_CLOSE_NOWRITE: its own
            # walk of MDN's folders then overflows the kernel queue, and every overflow starts
            # another walk (measured: 45 % of a core, no event delivered). `--watchdog-all` shows it.
            kinds = (
                None
                if os.environ.get("WATCHDOG_ALL")
                else [
                    FileCreatedEvent,
                    FileModifiedEvent,
                    FileDeletedEvent,
                    FileMovedEvent,
                    FileClosedEvent,
                    DirCreatedEvent,
                    DirDeletedEvent,
                    DirMovedEvent,
                ]
            )
            observer.schedule(Handler(), root, recursive=True, event_filter=kinds)
            observer.start()
            print(f"READY {time.monotonic() - started:.3f} {_rss_kb()[0]}", flush=True)
            stop.wait()
            observer.stop()
            observer.join()
    except Exception as exc:
        print(f"ERROR {time.monotonic() - started:.3f} {type(exc).__name__}: {exc}", flush=True)
        return
    rss, hwm = _rss_kb()
    print(f"DONE {rss} {hwm}", flush=True)


# --- parent side -----------------------------------------------------------------------------


class Child:
    def __init__(self, lib: str, mode: str, root: Path, *, limit: int | None = None) -> None:
        cmd = [sys.executable, __file__, "--child", lib, mode, str(root)]
        if limit is not None:
            script = f"echo {limit} > /proc/sys/user/max_inotify_watches && exec " + " ".join(cmd)
            cmd = ["unshare", "--user", "--map-root-user", "sh", "-c", script]
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
        )
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put("EOF")

    def next(self, timeout: float) -> str | None:
        try:
            return self.lines.get(timeout=timeout)
        except queue.Empty:
            return None

    def events(self, quiet: float) -> list[tuple[float, list[str]]]:
        """EV lines until none came for `quiet` seconds."""
        out: list[tuple[float, list[str]]] = []
        while (line := self.next(quiet)) is not None:
            if line.startswith("EV "):
                head, _, rest = line.partition("\t")
                out.append((float(head.split()[1]), rest.split("\t") if rest else []))
        return out

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK

    def finish(self) -> str:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        line = ""
        while (got := self.next(30)) not in (None, "EOF"):
            line = got if got.startswith(("DONE", "ERROR")) else line
        self.proc.wait(30)
        return line


def _unpack(workdir: Path, data: Path) -> Path:
    src = data / CORPORA["mdn-content-en"].source
    if not src.is_file():
        sys.exit(f"skipped: the MDN data set is not at {src}")
    vault = workdir / "mdn"
    if not vault.is_dir():
        with tarfile.open(src) as tar:
            tar.extractall(vault, filter="data")
    return vault


def _git(vault: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(vault), *args], check=True, capture_output=True)


def _notes(vault: Path) -> list[Path]:
    return sorted(p for p in vault.rglob("*.md") if ".git" not in p.parts)


def _prepare_burst(vault: Path, burst: int) -> None:
    """A git repo of the vault with a branch `burst` that changes `burst` notes."""
    if (vault / ".git").is_dir():
        return
    _git(vault, "init", "-q", "-b", "main")
    _git(vault, "-c", "user.name=b", "-c", "user.email=b@b", "add", "-A")
    _git(vault, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "base")
    _git(vault, "checkout", "-q", "-b", "burst")
    notes = _notes(vault)
    for note in notes[:: max(1, len(notes) // burst)][:burst]:
        with note.open("a", encoding="utf-8") as f:
            f.write("\nburst line\n")
    _git(vault, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qam", "burst")
    _git(vault, "checkout", "-q", "main")


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def measure(lib: str, mode: str, vault: Path, idle: float, edits: int) -> dict[str, str]:
    row = {"library": lib, "mode": mode}
    child_ = Child(lib, mode, vault)
    ready = child_.next(600)
    if not ready or not ready.startswith("READY"):
        row["error"] = str(ready)
        child_.finish()
        return row
    _, setup, rss = ready.split()
    row["setup s"] = setup
    row["RSS MB"] = f"{int(rss) / 1024:.0f}"
    child_.events(2.0)
    cpu0, t0 = child_.cpu_seconds(), time.monotonic()
    time.sleep(idle)
    cpu = (child_.cpu_seconds() - cpu0) / (time.monotonic() - t0)
    row["idle CPU %"] = f"{100 * cpu:.2f}"
    # Latency: 20 edits of different notes, each after the previous one was reported.
    every = _notes(vault)
    notes = every[7 :: max(1, min(613, len(every) // max(edits, 1) - 1))][:edits]
    latencies = []
    for note in notes:
        start = time.monotonic()
        with note.open("a", encoding="utf-8") as f:
            f.write("\nlatency line\n")
        deadline = start + 20
        seen = None
        while seen is None and time.monotonic() < deadline:
            line = child_.next(deadline - time.monotonic())
            if line and line.startswith("EV ") and str(note) in line:
                seen = float(line.split()[1])
        child_.events(0.5 if mode == "native" else 2.5)  # drain follow-up events
        latencies.append((seen - start) if seen is not None else float("inf"))
    row["latency median ms"] = f"{1000 * statistics.median(latencies):.0f}"
    row["latency p95 ms"] = f"{1000 * _pct(latencies, 0.95):.0f}"
    # Burst: git checkout of 1,000 changed notes.
    start = time.monotonic()
    _git(vault, "checkout", "-qf", "burst")  # -f: also undoes the latency edits
    done = time.monotonic()
    got = child_.events(5.0)
    md = {p for _, paths in got for p in paths if p.endswith(".md") and "/.git/" not in p}
    row["checkout s"] = f"{done - start:.2f}"
    row["burst callbacks"] = str(len(got))
    row["burst last event after checkout s"] = (
        f"{max((s for s, _ in got), default=done) - done:.2f}"
    )
    row["burst notes reported"] = str(len(md))
    _git(vault, "checkout", "-qf", "main")
    child_.events(5.0)
    final = child_.finish()
    if final.startswith("DONE"):
        row["peak RSS MB"] = f"{int(final.split()[2]) / 1024:.0f}"
    return row


def limit_behaviour(lib: str, vault: Path) -> str:
    child_ = Child(lib, "native", vault, limit=LIMIT)
    line = child_.next(600) or "no answer"
    if line.startswith("READY"):
        # Started anyway: does it see a change in a folder it could not watch?
        note = _notes(vault)[-1]
        with note.open("a", encoding="utf-8") as f:
            f.write("\nlimit line\n")
        seen = any(str(note) in " ".join(p) for _, p in child_.events(5.0))
        line = f"started without error; a change in the last folder {'was' if seen else 'was NOT'} reported"
    child_.finish()
    return line


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--idle", type=float, default=60.0, help="idle window, seconds")
    parser.add_argument("--workdir", type=Path, help="where the vault copy goes (default: temp)")
    parser.add_argument("--data", type=Path, default=DATA_DIR, help="the shared data folder")
    parser.add_argument("--keep", action="store_true", help="keep the workdir")
    parser.add_argument("--only", help="one run, e.g. watchdog:native")
    parser.add_argument("--watchdog-all", action="store_true", help="watchdog without event filter")
    parser.add_argument("--edits", type=int, default=20, help="single-file edits timed")
    parser.add_argument("--burst", type=int, default=BURST, help="notes the checkout changes")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="noteseek-watch-"))
    try:
        vault = _unpack(workdir, args.data)
        _prepare_burst(vault, args.burst)
        if args.watchdog_all:
            os.environ["WATCHDOG_ALL"] = "1"
        runs = [(lib, mode) for lib in ("watchfiles", "watchdog") for mode in ("native", "polling")]
        if args.only:
            lib, mode = args.only.split(":")
            runs = [(lib, mode)]
        rows = []
        for lib, mode in runs:
            print(f"-- {lib} {mode}", file=sys.stderr, flush=True)
            rows.append(measure(lib, mode, vault, args.idle, args.edits))
        keys = list(dict.fromkeys(k for r in rows for k in r))
        print("| " + " | ".join(keys) + " |")
        print("|" + "---|" * len(keys))
        for r in rows:
            print("| " + " | ".join(r.get(k, "") for k in keys) + " |")
        if args.only:
            return
        print(f"\nwatch limit {LIMIT} (MDN has {sum(1 for _ in vault.rglob('*/')) + 1} folders):")
        for lib in ("watchfiles", "watchdog"):
            print(f"- {lib}: {limit_behaviour(lib, vault)}")
    finally:
        if not args.keep and args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
