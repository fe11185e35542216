"""How scrubbing time grows with the number of secrets in one note: a note of n random tokens.

Usage (from the repo root)::

    python bench/scrub_many_values.py [--sizes 4000 16000 64000] [--old-src DIR]
    python bench/scrub_many_values.py --smoke

Three shapes, each with fresh random values: `ghp_…` tokens on one line (a pasted list), bare
24-character tokens one per line, and `password: …` lines. Prints CPU seconds of this process per
scrub and per 1,000 values. With ``--old-src`` (a ``src/noteseek`` of another commit, e.g.
``git archive <commit> src/noteseek | tar -x -C /tmp/ns-old``) that package is loaded under another
name and timed on the same texts, for a before/after in one process. Every value must be removed
by either scrubber (checked), so only the time is compared.
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import string
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
try:
    from noteseek.secrets.scrubber import scrub
except ImportError:  # running from a checkout without `pip install -e .`
    sys.path.insert(0, str(REPO / "src"))
    from noteseek.secrets.scrubber import scrub

ALNUM = string.ascii_letters + string.digits


def _random(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(ALNUM) for _ in range(n))


def texts(n: int, seed: int) -> dict[str, tuple[str, list[str]]]:
    """Shape name -> (the note, its values)."""
    rng = random.Random(seed)
    tokens = [f"ghp_{_random(rng, 36)}" for _ in range(n)]
    bare = [_random(rng, 24) for _ in range(n)]
    passwords = [_random(rng, 14) for _ in range(n)]
    return {
        "ghp tokens, one line": (" ".join(tokens), tokens),
        "bare tokens, one per line": ("\n".join(bare), bare),
        "password: lines": ("\n".join(f"password: {p}" for p in passwords), passwords),
    }


def load_old(src: Path) -> Callable[[str], Any]:
    """The scrubber of the package at `src`, imported as `noteseek_old`."""
    spec = importlib.util.spec_from_file_location(
        "noteseek_old", src / "__init__.py", submodule_search_locations=[str(src)]
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["noteseek_old"] = module
    spec.loader.exec_module(module)
    return importlib.import_module("noteseek_old.secrets.scrubber").scrub  # type: ignore[no-any-return]


def timed(fn: Callable[[str], Any], text: str) -> tuple[float, str]:
    start = time.process_time()
    result = fn(text)
    return time.process_time() - start, result.text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[4000, 16000, 64000])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--old-src", type=Path, help="another commit's src/noteseek to compare")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, to prove the script runs")
    args = parser.parse_args(argv)
    sizes = [50, 200] if args.smoke else args.sizes
    old = load_old(args.old_src) if args.old_src else None
    print(
        f"{'shape':28s} {'values':>7s} {'MB':>6s} {'CPU s':>8s} {'s/1k':>6s}"
        + (f" {'old CPU s':>10s} {'old s/1k':>9s}" if old else "")
    )
    for n in sizes:
        for shape, (text, values) in texts(n, args.seed).items():
            seconds, out = timed(scrub, text)
            kept = sum(value in out for value in values)
            line = (
                f"{shape:28s} {n:7d} {len(text) / 1e6:6.2f} {seconds:8.2f} {seconds / n * 1e3:6.3f}"
            )
            if old is not None:
                old_seconds, old_out = timed(old, text)
                kept += sum(value in old_out for value in values)
                line += f" {old_seconds:10.2f} {old_seconds / n * 1e3:9.3f}"
            print(line + (f"  ({kept} values kept!)" if kept else ""), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
