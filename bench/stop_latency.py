"""How long `noteseek watch` and the `noteseek serve` daemon live on after they are told to stop.

    nice -n 10 python bench/stop_latency.py [--rounds 5] [--old-src DIR] [--json OUT] [--smoke]

On a copy of the sample vault (indexed once, in a temporary data folder), through real processes:

- `watch`: started, sent SIGINT once it says it is watching; the figure is the time from its
  "stopped; the index is consistent" line to the end of its process.
- `serve`: a daemon started and asked to stop with `noteseek serve --stop`; the figures are how
  long `--stop` took and how long the daemon's process lived on after `--stop` returned (while it
  lives a hook call can meet it, or start another daemon beside it).

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


def main() -> None:
    """Index the sample copy once, then alternate rounds of each checkout; print the medians."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--old-src", type=Path, help="another checkout's src folder")
    parser.add_argument("--json", type=Path, help="write the figures here")
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
        samples: dict[str, dict[str, list[float]]] = {
            name: {"watch_after_stopped": [], "serve_stop": [], "daemon_after_stop": []}
            for name in checkouts
        }
        for _ in range(rounds):
            for name, env in checkouts.items():
                samples[name]["watch_after_stopped"].append(watch_round(env, vault))
                took, after = serve_round(env, vault)
                samples[name]["serve_stop"].append(took)
                samples[name]["daemon_after_stop"].append(after)
    report: dict[str, Any] = {
        "command": " ".join(["python", "bench/stop_latency.py", *sys.argv[1:]]),
        "rounds": rounds,
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
