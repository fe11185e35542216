"""The known-words gate through the engine: nonsense silenced, development queries left alone.

Usage::

    nice -n 10 python bench/known_words_eval.py --data-dir /work/shared/data

For every cached development index: the 40 made-up queries of ``floor_lab.py`` (seeded; words
that occur in no index) run through ``Index.search`` in hybrid and vector mode, and every judged
development query over that index runs in hybrid mode with the gate on; a query counts as caught
when it gets no hit with the gate and some without it (``SearchSettings(known_words=False)``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import noteseek
from datasets import CACHE_DIR, DATA_DIR, read_queries, select_datasets
from floor_lab import nonsense
from noteseek import SearchSettings

INDEX_SETS = {
    "beir-scifact": ["beir-scifact"],
    "mdn": ["mdn"],
    "obsidian-hub": ["obsidian-hub"],
    "obsidian-help-en": ["obsidian-help-en", "obsidian-help-de-en"],
    "obsidian-help-de": ["obsidian-help-de"],
    "tldr-en": ["tldr"],
    "xquad-de": ["xquad-de", "xquad-en-de"],
    "xquad-en": ["xquad-en", "xquad-de-en"],
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data-dir", type=Path, default=DATA_DIR)
    ap.add_argument("--cache-dir", type=Path, default=CACHE_DIR)
    args = ap.parse_args()
    made_up = nonsense(60)
    dbs = {name: args.cache_dir / f"{name}.db" for name in INDEX_SETS}
    # Keep the queries none of whose words any index has (as floor_lab.py does).
    clean = []
    for q in made_up:
        ok = True
        for db in dbs.values():
            with noteseek.Index(db, create=False) as idx:
                if any(c for _, c in idx._store.query_term_counts(q.split())):
                    ok = False
                    break
        if ok:
            clean.append(q)
    queries = clean[:40]
    print(f"{len(queries)} made-up queries, e.g. {queries[:3]}\n")
    print("| index | nonsense with hits: hybrid / vector (gate on) | same, gate off | development queries caught (set: caught / queries) |")
    print("|---|---|---|---|")
    for name, sets in INDEX_SETS.items():
        db = dbs[name]
        with noteseek.Index(db, create=False, settings=SearchSettings(rerank=False)) as on, noteseek.Index(
            db, create=False, settings=SearchSettings(rerank=False, known_words=False)
        ) as off:
            nh = sum(bool(on.search(q)) for q in queries)
            nv = sum(bool(on.search(q, mode="vector")) for q in queries)
            oh = sum(bool(off.search(q)) for q in queries)
            ov = sum(bool(off.search(q, mode="vector")) for q in queries)
            dev = []
            for set_name in sets:
                (ds,) = select_datasets(set_name)
                texts = list(read_queries(args.data_dir / ds.queries).values())
                caught = [t for t in texts if not on.search(t, limit=1) and off.search(t, limit=1)]
                dev.append(f"{set_name}: {len(caught)}/{len(texts)}" + (f" (e.g. {caught[0]!r})" if caught else ""))
        print(f"| {name} | {nh} / {nv} | {oh} / {ov} | {'; '.join(dev)} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
