"""Screenshots made searchable beside a notes vault, through `Index.update` and `noteseek index`.

    nice -n 10 python bench/ocr_index.py --screenshots 500 --mdn --json bench/results/ocr_index.json
    nice -n 10 python bench/ocr_index.py --smoke

1. `single`: the CPU one image costs a whole `noteseek index` process (interpreter, worker start,
   OCR model load, OCR, embedding, storage): CPU-s (user + system, the process and its workers)
   of a vault with one note and one screenshot minus the same vault without the screenshot,
   median of 3 pairs.
2. `bulk`: N generated screenshots (tests/ocr_images.py, each with its own planted phrase) in a
   vault beside the MDN notes (`--mdn`, 13,062 notes from ../shared/data) or beside 50 small
   notes: when the last note/text file was stored (searchable) and when the last image was,
   wall and CPU (the indexer and its OCR workers), then how many of 50 planted phrases find
   their screenshot first, and a no-op run.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from tests import ocr_images  # noqa: E402

from noteseek import Index  # noqa: E402

WORDS = [
    "amber",
    "basalt",
    "cobalt",
    "dune",
    "ember",
    "fjord",
    "garnet",
    "harbor",
    "indigo",
    "jasper",
    "kelp",
    "lagoon",
    "meadow",
    "nectar",
    "onyx",
    "pebble",
    "quartz",
    "rapids",
    "sierra",
    "tundra",
    "umber",
    "violet",
    "willow",
    "yarrow",
    "zephyr",
    "anchor",
    "beacon",
    "canyon",
    "delta",
    "estuary",
    "forest",
    "glacier",
    "hollow",
    "island",
    "jungle",
    "knoll",
    "ledge",
    "mesa",
    "north",
    "oasis",
    "prairie",
    "quarry",
    "ridge",
    "savanna",
    "thicket",
    "upland",
    "valley",
    "wetland",
]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _self_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _index_cpu(vault: Path, db: Path) -> float:
    before = _children_cpu()
    subprocess.run(
        [sys.executable, "-m", "noteseek", "index", str(vault), "--db", str(db), "-q"],
        check=True,
        capture_output=True,
    )
    return _children_cpu() - before


def single(tmp: Path, rounds: int) -> dict[str, Any]:
    with_image: list[Any] = []
    without: list[Any] = []
    for i in range(rounds):
        for has_image in (True, False):
            vault = tmp / f"single-{i}-{has_image}"
            vault.mkdir()
            (vault / "note.md").write_text("# Note\n\nA note beside the screenshot.\n")
            if has_image:
                ocr_images.screenshot(
                    vault / "shot.png",
                    ["Quarterly planning for the lighthouse project", "Move the billing export"],
                )
            cpu = _index_cpu(vault, tmp / f"single-{i}-{has_image}.db")
            (with_image if has_image else without).append(cpu)
    diffs = [a - b for a, b in zip(with_image, without)]
    return {
        "with_image_cpu_s": [round(x, 2) for x in with_image],
        "without_cpu_s": [round(x, 2) for x in without],
        "image_cpu_s_median": round(statistics.median(diffs), 2),
    }


def make_screenshots(folder: Path, count: int) -> list[tuple[str, str]]:
    """`count` screenshots, each with a planted phrase of three random words and a number."""
    rng = random.Random(29)
    folder.mkdir(parents=True)
    planted = []
    for i in range(count):
        phrase = " ".join(rng.sample(WORDS, 3))
        lines = [
            f"Ticket {1000 + i}: {phrase}",
            "Status changed from open to review by the on-call engineer",
            f"See the runbook page {rng.randrange(1, 90)} for the rollback steps",
        ]
        name = f"shot-{i:04d}.png"
        ocr_images.screenshot(folder / name, lines, title=f"Tracker {i}")
        planted.append((f"{name}", f"ticket {1000 + i} {phrase}"))
    return planted


def bulk(tmp: Path, count: int, mdn: bool) -> dict[str, Any]:
    vault = tmp / "vault"
    if mdn:
        from datasets import CORPORA, DATASETS, ensure_corpus

        mdn_set = DATASETS["mdn"]
        notes = ensure_corpus(CORPORA[mdn_set.corpus]) / mdn_set.vault
        shutil.copytree(notes, vault / "mdn")
    else:
        for i in range(50):
            path = vault / "notes" / f"n{i}.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"# Note {i}\n\nSome words about {WORDS[i % len(WORDS)]}.\n")
    started_make = time.perf_counter()
    planted = make_screenshots(vault / "shots", count)
    made = time.perf_counter() - started_make
    db = tmp / "bulk.db"
    marks: dict[str, float] = {}
    start = time.perf_counter()
    cpu0, child0 = _self_cpu(), _children_cpu()

    def progress(done: int, total: int, path: str) -> None:
        now = time.perf_counter() - start
        key = "last_image" if path.lower().endswith(".png") else "last_text"
        marks[key] = now
        marks.setdefault("first_image" if key == "last_image" else "first_text", now)

    with Index(db) as idx:
        stats = idx.update(vault, progress=progress)
        wall = time.perf_counter() - start
        cpu = (_self_cpu() - cpu0) + (_children_cpu() - child0)
        sample = random.Random(1).sample(planted, min(50, len(planted)))
        first = sum(
            1 for name, q in sample if (h := idx.search(q, limit=3)) and h[0].path.endswith(name)
        )
        again = time.perf_counter()
        noop = idx.update(vault)
        noop_s = time.perf_counter() - again
    return {
        "screenshots": count,
        "beside": "MDN (13,062 notes)" if mdn else "50 small notes",
        "generate_s": round(made, 1),
        "notes_searchable_s": round(marks.get("last_text", 0.0), 1),
        "all_images_searchable_s": round(marks.get("last_image", 0.0), 1),
        "update_wall_s": round(wall, 1),
        "update_cpu_s": round(cpu, 1),
        "ocr_pages": stats.ocr_pages,
        "ocr_wall_s_per_image": round(
            (marks.get("last_image", 0) - marks.get("last_text", 0)) / max(1, count), 3
        ),
        "planted_first": f"{first}/{len(sample)}",
        "noop_s": round(noop_s, 2),
        "noop_ocr_pages": noop.ocr_pages,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--screenshots", type=int, default=500)
    parser.add_argument("--mdn", action="store_true", help="beside the MDN notes (../shared/data)")
    parser.add_argument("--rounds", type=int, default=3, help="pairs for the single-image figure")
    parser.add_argument("--smoke", action="store_true", help="10 screenshots, 1 pair")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if args.smoke:
        args.screenshots, args.rounds, args.mdn = 10, 1, False
    results: dict[str, Any] = {"started": time.strftime("%Y-%m-%d %H:%M:%S")}
    with tempfile.TemporaryDirectory() as tmp:
        results["single"] = single(Path(tmp), args.rounds)
        print("single:", json.dumps(results["single"]), flush=True)
        results["bulk"] = bulk(Path(tmp), args.screenshots, args.mdn)
        print("bulk:", json.dumps(results["bulk"]), flush=True)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
