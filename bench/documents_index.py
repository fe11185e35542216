"""Documents indexed, not only extracted: the long PDF, a mixed vault of real documents beside the
MDN notes, the no-op run over it, and the notes-only path next to the code before documents.

    nice -n 10 python bench/documents_index.py --data-dir /work/shared/data \\
        [--runs 5] [--rounds 3] [--main-src DIR] [--count 1000] [--json OUT] [--skip PART ...]

Needs the `documents` extra, Debian's apt-get (bench/documents_fetch.py fetches the packages into
bench/.cache/documents/ once) and the MDN tarball of the shared data. Every index uses the bundled
model. Parts (each can be skipped with --skip):

- `pdf`: the 311-page gnuplot 5.4 manual alone in a vault, `--runs` fresh indexes: the time of
  `Index.update` (walk, hash, worker start, extraction, chunks, scrubbing, embedding, storage)
  with the model already loaded, and of a whole `noteseek index` process (interpreter, model load).
- `mixed`: every distinct document of those packages and tests/data/documents (deduplicated by
  content; padded to `--count` with copies of the non-HTML ones under copies/, which the report
  counts apart: a copy is extracted again but its vectors are reused) beside the 13,062 MDN notes,
  hard-linked into one vault. One full build with documents and one without (notes only): the
  difference is what the documents cost. Per format: files, MB, seconds inside the extraction
  workers (two in parallel), MB/s and files/s per worker-second, chunks. Then `--runs` no-op runs
  over the whole vault, with the number of extraction pools they opened (must be 0).
- `mdn`: the MDN notes alone, full build and no-op run, this checkout against `--main-src` (the
  code before documents, e.g. `git archive d1576be src | tar -x -C /tmp/main`), in `--rounds`
  alternating rounds, each run in its own process: medians and the median of per-round ratios,
  of wall time and of the child's CPU time (user + system; the steadier one when others load the
  machine; the extraction and tokenizer threads count in it).

Figures are medians of one invocation on a shared machine; run it under `nice -n 10`.
`--smoke` needs no Debian package: the long PDF is a 13-page sample of tests/data/documents, the
mixed vault those samples (smoke.py runs it on the stand-in MDN of bench/datasets.py).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _internals
import noteseek.engine.update.documents as update_documents
from datasets import CACHE_DIR, CORPORA, DATA_DIR, ensure_corpus
from documents_fetch import MANUAL, MORE_PACKAGES, PACKAGES, ensure_packages
from noteseek import Index, IndexOptions
from noteseek.documents import ExtractionPool, document_kind

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "tests" / "data" / "documents"
MIXED = CACHE_DIR / "documents-mixed"


class RecordingPool(ExtractionPool):
    """The real pool, keeping every result (kind, size, in-worker seconds, outcome)."""

    opened: ClassVar[int] = 0
    results: ClassVar[list[Any]] = []

    def __init__(self, **kwargs: Any) -> None:
        RecordingPool.opened += 1
        super().__init__(**kwargs)

    def extract_many(self, paths: Any, *, limits: Any = None) -> Any:
        for result in super().extract_many(paths, limits=limits):
            RecordingPool.results.append(result)
            yield result


def _link(src: Path, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(src, dest)
    except OSError:
        shutil.copy2(src, dest)


def _fresh_db(folder: Path, name: str) -> Path:
    db = folder / name
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    return db


def long_pdf(manual: Path, runs: int, tmp: Path) -> dict[str, Any]:
    vault = tmp / "manual"
    _link(manual, vault / manual.name)
    update_s, stats = [], None
    for run in range(runs):
        with Index(_fresh_db(tmp, f"manual-{run}.db")) as idx:
            idx.embed(["load the model before the clock starts"])
            started = time.perf_counter()
            stats = idx.update(vault)
            update_s.append(time.perf_counter() - started)
            counts = _internals.storage(idx).counts()
            assert stats.chunks == counts["vectors"] == counts["embedded"] > 0, counts
    cli_s = []
    for run in range(runs):
        db = _fresh_db(tmp, f"manual-cli-{run}.db")
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "noteseek", "index", str(vault), "--db", str(db), "-q"],
            check=True,
            capture_output=True,
        )
        cli_s.append(time.perf_counter() - started)
    assert stats is not None
    return {
        "file": manual.name,
        "chunks": stats.chunks,
        "update_median_s": statistics.median(update_s),
        "update_all_s": update_s,
        "cli_process_median_s": statistics.median(cli_s),
        "cli_all_s": cli_s,
        "runs": runs,
    }


def build_mixed_vault(cache: Path | None, mdn: Path, count: int) -> dict[str, Any]:
    """The mixed vault (rebuilt each time): distinct documents, copies up to `count`, MDN."""
    shutil.rmtree(MIXED, ignore_errors=True)
    packages = PACKAGES + MORE_PACKAGES if cache is not None else ()
    sources = [cache / p for p in packages if cache is not None] + [SAMPLES]
    seen: dict[str, Path] = {}
    for source in sources:
        for path in sorted(source.rglob("*")):
            if path.is_symlink() or not path.is_file() or document_kind(path) is None:
                continue
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            if digest in seen:
                continue
            seen[digest] = path
            _link(path, MIXED / "docs" / source.name / path.relative_to(source))
    distinct = list(seen.values())
    non_html = [p for p in distinct if document_kind(p) != "html"]
    copies = 0
    rng = random.Random(14)
    while len(distinct) + copies < count and non_html:
        path = rng.choice(non_html)
        _link(path, MIXED / "copies" / f"{copies:03d}-{path.name}")
        copies += 1
    notes = 0
    for path in sorted(mdn.rglob("*.md")):
        _link(path, MIXED / "mdn" / path.relative_to(mdn))
        notes += 1
    return {"documents_distinct": len(distinct), "copies": copies, "mdn_notes": notes}


def _per_format(results: list[Any], chunks: dict[str, int]) -> dict[str, Any]:
    per: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for result in results:
        kind = document_kind(result.path) or "?"
        row = per[kind]
        row["files"] += 1
        row["mb"] += os.stat(result.path).st_size / 1e6
        row["worker_s"] += result.seconds
        row[f"outcome_{result.outcome.value}"] += 1
    out = {}
    for kind, row in sorted(per.items(), key=lambda item: -item[1]["mb"]):
        seconds = max(row["worker_s"], 1e-9)
        out[kind] = {
            **{k: round(v, 3) if isinstance(v, float) else v for k, v in row.items()},
            "mb_per_s": round(row["mb"] / seconds, 2),
            "files_per_s": round(row["files"] / seconds, 1),
            "chunks": chunks.get(kind, 0),
        }
    return out


def mixed(cache: Path | None, mdn: Path, count: int, runs: int, tmp: Path) -> dict[str, Any]:
    made = build_mixed_vault(cache, mdn, count)
    update_documents.ExtractionPool = RecordingPool  # type: ignore[attr-defined]
    with Index(_fresh_db(tmp, "notes-only.db"), options=IndexOptions(documents=False)) as idx:
        idx.embed(["load the model"])
        started = time.perf_counter()
        notes = idx.update(MIXED)
        notes_s = time.perf_counter() - started
    RecordingPool.results, RecordingPool.opened = [], 0
    with Index(_fresh_db(tmp, "mixed.db")) as idx:
        idx.embed(["load the model"])
        started = time.perf_counter()
        full = idx.update(MIXED)
        full_s = time.perf_counter() - started
        rows = _internals.sqlite_db(idx).execute(
            "SELECT f.kind, count(*) FROM chunks c JOIN files f ON f.id = c.file_id "
            "WHERE f.kind IS NOT NULL GROUP BY f.kind"
        )
        chunks = {kind: n for kind, n in rows}
        results = list(RecordingPool.results)
        opened_full = RecordingPool.opened
        RecordingPool.opened = 0
        noop_s = []
        for _ in range(runs):
            started = time.perf_counter()
            noop = idx.update(MIXED)
            noop_s.append(time.perf_counter() - started)
            assert noop.added == noop.changed == noop.removed == 0
        status = idx.status()
    return {
        **made,
        "documents_seen": full.documents,
        "full_build_s": full_s,
        "notes_only_build_s": notes_s,
        "documents_cost_s": full_s - notes_s,
        "documents_per_s": full.documents / max(full_s - notes_s, 1e-9),
        "chunks": full.chunks,
        "document_chunks": sum(chunks.values()),
        "notes_only_chunks": notes.chunks,
        "vectors_reused": full.vectors_reused,
        "pools_opened_full": opened_full,
        "per_format": _per_format(results, chunks),
        "outcomes": [list(o) for o in status.documents],
        "problems": [[p, why] for p, state, why in status.problems if state == "skipped"],
        "noop_median_s": statistics.median(noop_s),
        "noop_all_s": noop_s,
        "noop_pools_opened": RecordingPool.opened,
    }


CHILD = """
import json, os, sys, time
sys.path.insert(0, {src!r})
import noteseek
assert noteseek.__file__.startswith({src!r}), noteseek.__file__

def cpu():  # user + system seconds of this process: steadier than wall time on a shared machine
    t = os.times()
    return t.user + t.system

with noteseek.Index({db!r}) as idx:
    idx.embed(["load the model"])
    t, c = time.perf_counter(), cpu(); stats = idx.update({vault!r})
    full, full_cpu = time.perf_counter() - t, cpu() - c
    t, c = time.perf_counter(), cpu(); idx.update({vault!r})
    noop, noop_cpu = time.perf_counter() - t, cpu() - c
print(json.dumps({{"full_s": full, "noop_s": noop, "full_cpu_s": full_cpu,
                  "noop_cpu_s": noop_cpu, "chunks": stats.chunks}}))
"""


def mdn_compare(mdn: Path, main_src: Path, rounds: int, tmp: Path) -> dict[str, Any]:
    sides = {"branch": REPO / "src", "main": main_src.resolve()}
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in sides}
    rng = random.Random(5)
    for round_ in range(rounds):
        order = list(sides)
        rng.shuffle(order)
        for name in order:
            db = _fresh_db(tmp, f"mdn-{name}.db")
            code = CHILD.format(src=str(sides[name]), db=str(db), vault=str(mdn))
            done = subprocess.run(
                [sys.executable, "-c", code], check=True, capture_output=True, text=True
            )
            runs[name].append(json.loads(done.stdout.strip().splitlines()[-1]))
            print(f"  mdn round {round_ + 1} {name}: {runs[name][-1]}", file=sys.stderr)
    out: dict[str, Any] = {"rounds": rounds, "main_src": str(main_src), "runs": runs}
    for key in ("full_s", "noop_s", "full_cpu_s", "noop_cpu_s"):
        for name in sides:
            out[f"{name}_{key}_median"] = statistics.median(r[key] for r in runs[name])
        # A no-op run's CPU time can be 0 (os.times counts clock ticks): no ratio from that round.
        ratios = [b[key] / m[key] for b, m in zip(runs["branch"], runs["main"]) if m[key] > 0]
        out[f"{key}_ratio_median"] = statistics.median(ratios) if ratios else None
    out["chunks"] = {name: runs[name][0]["chunks"] for name in sides}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--main-src", type=Path)
    parser.add_argument("--skip", nargs="*", default=[], choices=["pdf", "mixed", "mdn"])
    parser.add_argument("--json", type=Path)
    parser.add_argument("--smoke", action="store_true", help="the repository's samples only")
    args = parser.parse_args()
    try:
        mdn = ensure_corpus(CORPORA["mdn-content-en"], args.data_dir) / "files" / "en-us"
    except FileNotFoundError as exc:
        sys.exit(f"documents_index: {exc}; pass --data-dir /path/to/shared/data")
    cache = None if args.smoke else ensure_packages(PACKAGES + MORE_PACKAGES)
    manual = SAMPLES / "pdflatex-outline.pdf" if cache is None else cache / MANUAL
    report: dict[str, Any] = {"machine": {"cpu_count": os.cpu_count(), "python": sys.version}}
    with tempfile.TemporaryDirectory(prefix="noteseek-docbench-") as name:
        tmp = Path(name)
        if "pdf" not in args.skip:
            report["long_pdf"] = long_pdf(manual, args.runs, tmp)
            print(json.dumps(report["long_pdf"], indent=1), file=sys.stderr)
        if "mixed" not in args.skip:
            report["mixed"] = mixed(cache, mdn, args.count, args.runs, tmp)
            print(
                json.dumps({k: v for k, v in report["mixed"].items() if k != "problems"}, indent=1),
                file=sys.stderr,
            )
        if "mdn" not in args.skip:
            if args.main_src is None:
                sys.exit("documents_index: the mdn part needs --main-src (or --skip mdn)")
            report["mdn"] = mdn_compare(mdn, args.main_src, args.rounds, tmp)
    text = json.dumps(report, indent=1)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
