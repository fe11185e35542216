"""The known-words gate through the engine: nonsense silenced, development queries left alone.

Usage::

    nice -n 10 python bench/known_words_eval.py --data-dir ../shared/data
    python bench/known_words_eval.py --smoke      # a three-note vault built here, in seconds

For every cached development index: 40 made-up pronounceable queries (seeded; words that occur
in no index) run through ``Index.search`` in hybrid and vector mode, and every judged
development query over that index runs in hybrid mode with the gate on; a query counts as caught
when it gets no hit with the gate and some without it (``SearchSettings(known_words=False)``).
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from pathlib import Path

import _internals
import noteseek
from datasets import CACHE_DIR, DATA_DIR, read_queries, select_datasets
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


_ONSET = ["b", "bl", "br", "d", "dr", "f", "fl", "g", "gr", "k", "kl", "kr", "m", "n", "p", "pl", "pr", "sk", "sl", "st", "t", "tr", "v", "z", "zw"]
_VOWEL = ["a", "e", "i", "o", "u", "ai", "ou", "ee"]
_CODA = ["", "n", "m", "r", "l", "sk", "x", "nd", "rt", "v"]


def nonsense(n: int, seed: int = 16) -> list[str]:
    """Made-up pronounceable queries of one to four words (the similarity-floor study's set)."""
    rng = random.Random(seed)

    def word() -> str:
        return "".join(
            rng.choice(_ONSET) + rng.choice(_VOWEL) + rng.choice(_CODA)
            for _ in range(rng.randint(2, 3))
        )

    return [" ".join(word() for _ in range(rng.randint(1, 4))) for _ in range(n)]


def _smoke(folder: Path) -> tuple[dict[str, Path], dict[str, list[str]]]:
    """A three-note index and two queries over it, for `--smoke`."""
    vault = folder / "vault"
    vault.mkdir()
    (vault / "tags.md").write_text("# Tags\nTags group notes by topic.", encoding="utf-8")
    (vault / "links.md").write_text("# Links\nLinks connect one note to another.", encoding="utf-8")
    (vault / "daily.md").write_text("# Daily\nA daily note for each day.", encoding="utf-8")
    with noteseek.Index(folder / "smoke.db") as idx:
        idx.update(vault)
    return {"smoke": folder / "smoke.db"}, {"smoke": ["tags and links", "daily note"]}


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--data-dir", type=Path, default=DATA_DIR)
    ap.add_argument("--cache-dir", type=Path, default=CACHE_DIR)
    ap.add_argument("--smoke", action="store_true", help="a three-note vault, in seconds")
    args = ap.parse_args()
    made_up = nonsense(60)
    smoke_queries: dict[str, list[str]] = {}
    if args.smoke:
        tmp = tempfile.TemporaryDirectory()
        dbs, smoke_queries = _smoke(Path(tmp.name))
        index_sets = {"smoke": ["smoke"]}
    else:
        dbs = {name: args.cache_dir / f"{name}.db" for name in INDEX_SETS}
        index_sets = INDEX_SETS
    # Keep the queries none of whose words any index has.
    clean = []
    for q in made_up:
        ok = True
        for db in dbs.values():
            with noteseek.Index(db, create=False) as idx:
                if any(c for _, c in _internals.storage(idx).query_term_counts(q.split())):
                    ok = False
                    break
        if ok:
            clean.append(q)
    queries = clean[:40]
    print(f"{len(queries)} made-up queries, e.g. {queries[:3]}\n")
    print("| index | nonsense with hits: hybrid / vector (gate on) | same, gate off | development queries caught (set: caught / queries) |")
    print("|---|---|---|---|")
    for name, sets in index_sets.items():
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
                if args.smoke:
                    texts = smoke_queries[set_name]
                else:
                    (ds,) = select_datasets(set_name)
                    texts = list(read_queries(args.data_dir / ds.queries).values())
                caught = [t for t in texts if not on.search(t, limit=1) and off.search(t, limit=1)]
                dev.append(f"{set_name}: {len(caught)}/{len(texts)}" + (f" (e.g. {caught[0]!r})" if caught else ""))
        print(f"| {name} | {nh} / {nv} | {oh} / {ov} | {'; '.join(dev)} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
