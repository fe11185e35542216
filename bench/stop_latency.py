"""How long `noteseek watch` and the `noteseek serve` daemon live on after they are told to stop.

    nice -n 10 python bench/stop_latency.py [--rounds 5] [--old-src DIR] [--index-vault DIR]
        [--index-after S] [--json OUT] [--smoke]

On a copy of the sample vault (indexed once, in a temporary data folder), through real processes:

- `watch`: started, sent SIGINT once it says it is watching; the figure is the time from its
  "stopped; the index is consistent" line to the end of its process.
- `serve`: a daemon started and asked to stop with `noteseek serve --stop`; the figures are how
  long `--stop` took and how long the daemon's process lived on after `--stop` returned (while it
  lives a hook call can meet it, or start another daemon beside it).
- `index`: a first build of `--index-vault DIR` (default: a generated vault of 2,000 notes; the
  MDN corpus, unpacked, is the large case) into a fresh index, sent SIGINT
  `--index-after` seconds after its first progress line, to its whole process group as a
  terminal's Ctrl-C is; the figure is the time from the signal to the end of the process (the
  files it had added are kept beside it, and each round checks the run said it stopped early).

`--old-src DIR` (e.g. `git archive <commit> src | tar -x -C /tmp/old`) runs the same rounds with
that checkout's `src` first on PYTHONPATH, alternating with this one. Medians of one invocation on
a shared machine; `--smoke` runs one round of each.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "examples" / "sample-vault"


def _noteseek(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "noteseek", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def watch_round(env: dict[str, str], vault: Path) -> float:
    """Seconds from watch's "stopped" line to the end of its process."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "noteseek", "watch", str(vault)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    said = None
    for line in proc.stdout:
        if "watching for changes" in line:
            proc.send_signal(signal.SIGINT)
        if "stopped; the index is consistent" in line:
            said = time.monotonic()
    proc.wait(timeout=120)
    assert said is not None, "watch never said it stopped"
    return time.monotonic() - said


def serve_round(env: dict[str, str], vault: Path) -> tuple[float, float]:
    """(seconds `serve --stop` took, seconds the daemon lived on after it returned)."""
    daemon = subprocess.Popen(
        [sys.executable, "-m", "noteseek", "serve", "--vault", str(vault), "--no-watch"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    for _ in range(600):
        if _noteseek(env, "serve", "--status", "--vault", str(vault)).returncode == 0:
            break
        time.sleep(0.1)
    started = time.monotonic()
    stop = _noteseek(env, "serve", "--stop", "--vault", str(vault))
    returned = time.monotonic()
    assert stop.returncode == 0, stop.stderr
    # Polled, not wait()ed with a timeout: the exit time is what is measured.
    while daemon.poll() is None:
        time.sleep(0.005)
    return returned - started, time.monotonic() - returned


def generated_vault(root: Path, notes: int) -> Path:
    """`notes` notes of a few KB each in nine folders: enough for the indexer's worker pool."""
    for i in range(notes):
        folder = root / f"f{i % 9}"
        folder.mkdir(parents=True, exist_ok=True)
        body = f"Paragraph about subject {i} and its many details. " * 60
        (folder / f"note {i}.md").write_text(f"# Topic {i}\n\n{body}\n", encoding="utf-8")
    return root


def index_round(env: dict[str, str], vault: Path, db: Path, after: float) -> tuple[float, int]:
    """(seconds from SIGINT to the end of `index`, files it had added), on a fresh `db`."""
    for old in db.parent.glob(db.name + "*"):
        old.unlink()
    proc = subprocess.Popen(
        [sys.executable, "-m", "noteseek", "index", str(vault), "--db", str(db)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,  # its own process group: the signal reaches its workers too
    )
    assert proc.stderr is not None
    first = proc.stderr.readline()  # "indexed 1/N files", once the first file is written
    assert first.startswith("indexed "), first
    time.sleep(after)
    sent = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)
    while proc.poll() is None:  # polled: the exit time is what is measured
        time.sleep(0.005)
    took = time.monotonic() - sent
    out = proc.stdout.read() if proc.stdout else ""
    assert out.startswith("stopped early (Ctrl-C)"), out  # else the build ended before the signal
    added = int(out.split(" added", 1)[0].rsplit(" ", 1)[1])
    return took, added


def main() -> None:
    """Index the sample copy once, then alternate rounds of each checkout; print the medians."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--old-src", type=Path, help="another checkout's src folder")
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--index-vault", type=Path, help="the vault the index rounds build")
    parser.add_argument(
        "--index-after", type=float, default=5.0, help="seconds into a build to send SIGINT"
    )
    parser.add_argument("--smoke", action="store_true", help="one round of each")
    args = parser.parse_args()
    rounds = 1 if args.smoke else args.rounds
    with tempfile.TemporaryDirectory(prefix="stop-latency-") as tmp:
        vault = Path(tmp) / "vault"
        shutil.copytree(SAMPLE, vault, symlinks=True)
        base = {k: v for k, v in os.environ.items() if not k.startswith("NOTESEEK_")}
        base.update(
            NOTESEEK_HOME=str(Path(tmp) / "data"),
            NOTESEEK_RUNTIME_DIR=str(Path(tmp) / "run"),
            HF_HUB_OFFLINE="1",
        )
        done = _noteseek(base, "index", str(vault), "-q")
        assert done.returncode == 0, done.stderr
        checkouts = {"this": base}
        if args.old_src is not None:
            checkouts["old"] = {**base, "PYTHONPATH": str(args.old_src.resolve())}
        big = args.index_vault or generated_vault(Path(tmp) / "big", 400 if args.smoke else 2000)
        index_after = 0.0 if args.smoke else args.index_after
        samples: dict[str, dict[str, list[float]]] = {
            name: {
                "watch_after_stopped": [],
                "serve_stop": [],
                "daemon_after_stop": [],
                "index_after_sigint": [],
                "index_files_added": [],
            }
            for name in checkouts
        }
        for _ in range(rounds):
            for name, env in checkouts.items():
                samples[name]["watch_after_stopped"].append(watch_round(env, vault))
                took, after = serve_round(env, vault)
                samples[name]["serve_stop"].append(took)
                samples[name]["daemon_after_stop"].append(after)
                took, added = index_round(env, big, Path(tmp) / "big.db", index_after)
                samples[name]["index_after_sigint"].append(took)
                samples[name]["index_files_added"].append(added)
    report: dict[str, Any] = {
        "command": " ".join(["python", "bench/stop_latency.py", *sys.argv[1:]]),
        "rounds": rounds,
        "index_vault": str(args.index_vault) if args.index_vault else "generated",
        "index_after_seconds": index_after,
        "median_seconds": {
            name: {key: round(statistics.median(v), 3) for key, v in values.items()}
            for name, values in samples.items()
        },
        "samples": {
            name: {key: [round(x, 3) for x in v] for key, v in values.items()}
            for name, values in samples.items()
        },
        "load_note": "one invocation on a shared machine",
    }
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
