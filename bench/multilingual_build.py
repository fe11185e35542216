"""Build the multilingual lane of cached development indexes, and measure what it costs.

Usage (``pip install -e '.[ranking-lab]'``, after ``quality.py`` built the indexes)::

    OMP_NUM_THREADS=1 nice -n 10 python bench/multilingual_build.py obsidian-help-de
    OMP_NUM_THREADS=1 nice -n 10 python bench/multilingual_build.py xquad-de xquad-en obsidian-help-en --seed-from-lab

Runs the engine's own build (``Index.build_multilingual``, the code behind ``noteseek index
--multilingual``) and prints chunks embedded, wall and CPU seconds, and the index size before and
after. ``--seed-from-lab`` first stores the e5 vectors part 1's lab computed for the same chunks
(``bench/.cache/e5/<index>.pkl``, same model, float32 rows, quantised here exactly as the engine
quantises) wherever the lab embedded exactly the text the engine embeds; the build then embeds only
the rest. It saves ~20 CPU-minutes on this shared machine and changes no vector: the cost figures
of a seeded index are therefore not build costs (the script says which).
"""

from __future__ import annotations

import argparse
import os
import pickle
import resource
import sys
import time
from collections import defaultdict
from pathlib import Path

import noteseek
from datasets import CACHE_DIR
from noteseek.core.chunker import embedding_text, prose_text
from noteseek.embedding.quantize import quantize


def _size(db: Path) -> int:
    return sum(p.stat().st_size for p in (db, Path(f"{db}-wal")) if p.exists())


def seed(idx: noteseek.Index, name: str) -> int:
    """Store the lab's vectors of chunks whose embedded text is the engine's; how many."""
    path = CACHE_DIR / "e5" / f"{name}.pkl"
    if not path.exists():
        print(f"[{name}] no lab vectors at {path}", file=sys.stderr)
        return 0
    lab = pickle.loads(path.read_bytes())
    store = idx._store
    # The lab's chunk ids are from before the pipeline-6 re-processing; file ids and chunk order
    # survived it, so the k-th lab chunk of a file is the k-th chunk of that file now.
    old: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for row, (cid, fid) in enumerate(zip(lab["ids"], lab["fids"])):
        old[int(fid)].append((int(cid), row))
    now: dict[int, list[tuple[int, str, str, str, int]]] = defaultdict(list)
    for cid, fid, title, section, text, h in store.db.execute(
        "SELECT c.id, c.file_id, COALESCE(f.title, ''), c.section, c.chunk_text, c.content_hash "
        "FROM chunks c JOIN files f ON f.id = c.file_id ORDER BY c.file_id, c.seq"
    ):
        now[int(fid)].append((int(cid), str(title), str(section), str(text), int(h)))
    rows = quantize(lab["full"])
    hashes, vectors = [], []
    for fid, chunks in now.items():
        before = sorted(old.get(fid, []))
        if len(before) != len(chunks):
            continue
        for (_, row), (_, title, section, text, h) in zip(before, chunks):
            prose = prose_text(text)
            if embedding_text(title, section, prose) != embedding_text(title, section, text):
                continue  # the lab embedded another text for this chunk: leave it to the build
            hashes.append(h)
            vectors.append(rows[row].tobytes())
    from noteseek.embedding.multilingual import MultilingualModel

    fingerprint = MultilingualModel().fingerprint
    with store.write():
        if store.multilingual_state()[0] != fingerprint:
            store.reset_multilingual(fingerprint)
        store.set_multilingual_vectors(hashes, vectors)
    return len(hashes)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("indexes", nargs="+")
    ap.add_argument("--cache-dir", type=Path, default=CACHE_DIR)
    ap.add_argument("--seed-from-lab", action="store_true")
    args = ap.parse_args()
    print(f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}, load average {os.getloadavg()}")
    print("| index | chunks | seeded from the lab | embedded by the build | wall s | CPU s | CPU s per chunk | size before → after (MB) |")
    print("|---|---|---|---|---|---|---|---|")
    for name in args.indexes:
        db = args.cache_dir / f"{name}.db"
        with noteseek.Index(db, create=False) as idx:
            before = _size(db)
            seeded = seed(idx, name) if args.seed_from_lab else 0
            cpu0 = resource.getrusage(resource.RUSAGE_SELF).ru_utime
            started = time.perf_counter()
            stats = idx.build_multilingual()
            wall = time.perf_counter() - started
            cpu = resource.getrusage(resource.RUSAGE_SELF).ru_utime - cpu0
            idx._store.checkpoint()
        after = _size(db)
        per = f"{cpu / stats.embedded:.2f}" if stats.embedded else "–"
        print(
            f"| {name} | {stats.total} | {seeded} | {stats.embedded} | {wall:.0f} | {cpu:.0f} | {per} | "
            f"{before / 1e6:.1f} → {after / 1e6:.1f} |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
