"""A similarity floor for "no padding with noise", calibrated on the development sets (issue 16).

Usage (after ``bench/quality.py`` and ``bench/rerank_pool.py``)::

    nice -n 10 python bench/floor_lab.py                 # grid of floors, nonsense queries, paired tests

The rule measured: a note of the fused ranking that only the vector list returned (no BM25 match)
is dropped when its best chunk's cosine is below the floor; in vector mode every note below it is.
Two things are measured for each floor: what it does to the development sets (nDCG@10 of the
default hybrid ranking with the floor applied, paired t-test against no floor, and how many of a
query's first ten hits it removes), and what is left for nonsense queries — made-up pronounceable
words (seeded, checked to occur in no index) run through the real `Index.search` on every cached
index. The nonsense queries are generated here, not taken from any data set.
"""

from __future__ import annotations

import argparse
import math
import pickle
import random
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats as sps

import noteseek
from datasets import CACHE_DIR

SETS = (
    "beir-scifact",
    "mdn",
    "obsidian-hub",
    "obsidian-help-en",
    "obsidian-help-de",
    "tldr",
    "xquad-de",
    "xquad-en",
    "xquad-de-en",
    "xquad-en-de",
    "obsidian-help-de-en",
)
INDEXES = (
    "beir-scifact",
    "mdn",
    "obsidian-hub",
    "obsidian-help-en",
    "obsidian-help-de",
    "tldr-en",
    "xquad-de",
    "xquad-en",
)
FLOORS = (0.0, 0.10, 0.15, 0.20, 0.25, 0.30, 0.35, 0.40)


def ndcg10(ranked: Sequence[int], qrels: dict[int, int]) -> float:
    dcg = sum(qrels.get(f, 0) / math.log2(i + 2) for i, f in enumerate(ranked[:10]))
    ideal = sorted(qrels.values(), reverse=True)[:10]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def nonsense(n: int, seed: int = 16) -> list[str]:
    """Made-up pronounceable queries of one to four words."""
    rng = random.Random(seed)
    onset = [
        "b",
        "bl",
        "br",
        "d",
        "dr",
        "f",
        "fl",
        "g",
        "gr",
        "k",
        "kl",
        "kr",
        "m",
        "n",
        "p",
        "pl",
        "pr",
        "sk",
        "sl",
        "st",
        "t",
        "tr",
        "v",
        "z",
        "zw",
    ]
    vowel = ["a", "e", "i", "o", "u", "ai", "ou", "ee"]
    coda = ["", "n", "m", "r", "l", "sk", "x", "nd", "rt", "v"]

    def word() -> str:
        return "".join(
            rng.choice(onset) + rng.choice(vowel) + rng.choice(coda)
            for _ in range(rng.randint(2, 3))
        )

    return [" ".join(word() for _ in range(rng.randint(1, 4))) for _ in range(n)]


def cosines(entry: dict[str, Any], chunk_file: dict[int, int]) -> dict[int, float]:
    best: dict[int, float] = {}
    for cid, cos in entry["vec"]:
        fid = chunk_file.get(cid)
        if fid is not None and fid not in best:
            best[fid] = cos
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nonsense", type=int, default=40)
    args = parser.parse_args()

    queries = nonsense(args.nonsense)
    print("nonsense queries, e.g.: " + "; ".join(queries[:6]))
    print(
        "\n| index | nonsense queries | with a BM25 hit | hits returned (hybrid, limit 10) | max cosine of any hit: median / max |"
    )
    print("|---|---|---|---|---|")
    nonsense_max: dict[str, list[float]] = {}
    for index in INDEXES:
        db = CACHE_DIR / f"{index}.db"
        if not db.exists():
            continue
        with noteseek.Index(db, create=False) as idx:
            bm25_hits = 0
            hits_total = 0
            maxima = []
            for q in queries:
                hits = idx.search(q, limit=10)
                hits_total += len(hits)
                bm25_hits += any(h.bm25_rank is not None for h in hits)
                maxima.append(max((h.cosine or 0.0) for h in hits) if hits else 0.0)
        nonsense_max[index] = maxima
        print(
            f"| {index} | {len(queries)} | {bm25_hits} | {hits_total} | "
            f"{np.median(maxima):.3f} / {max(maxima):.3f} |"
        )

    print(
        "\nFloor applied to vector-only notes of the default hybrid ranking (nDCG@10; p = paired t-test vs no floor; "
        "dropped = vector-only hits removed from the first 10, per query):\n"
    )
    print("| set | " + " | ".join(f"floor {f:.2f}" for f in FLOORS) + " |")
    print("|---|" + "---|" * len(FLOORS))
    vec_rows = []
    for name in SETS:
        path = CACHE_DIR / "pools" / f"{name}.pkl"
        if not path.exists():
            continue
        pool = pickle.loads(path.read_bytes())
        per_floor: list[list[float]] = []
        dropped: list[float] = []
        vec_floor: list[list[float]] = []
        for floor in FLOORS:
            scores, gone, vscores = [], 0, []
            for entry in pool["queries"].values():
                cos = cosines(entry, pool["chunk_file"])
                kept = [
                    f for f, _, b, _ in entry["fused"] if b is not None or cos.get(f, 0.0) >= floor
                ]
                gone += sum(
                    1 for f, _, b, _ in entry["fused"][:10] if b is None and cos.get(f, 0.0) < floor
                )
                scores.append(ndcg10(kept, entry["qrels"]))
                vlist = [f for f, c in sorted(cos.items(), key=lambda x: -x[1]) if c >= floor]
                vscores.append(ndcg10(vlist, entry["qrels"]))
            per_floor.append(scores)
            dropped.append(gone / len(pool["queries"]))
            vec_floor.append(vscores)
        base = per_floor[0]
        cells = []
        for scores, d in zip(per_floor, dropped):
            diff = any(a != b for a, b in zip(scores, base))
            p = float(sps.ttest_rel(scores, base).pvalue) if diff else 1.0
            cells.append(f"{np.mean(scores):.3f} (p {p:.2f}; {d:.1f})")
        print(f"| {name} | " + " | ".join(cells) + " |")
        vbase = vec_floor[0]
        vcells = []
        for vs in vec_floor:
            diff = any(a != b for a, b in zip(vs, vbase))
            p = float(sps.ttest_rel(vs, vbase).pvalue) if diff else 1.0
            vcells.append(f"{np.mean(vs):.3f} (p {p:.2f})")
        vec_rows.append(f"| {name} | " + " | ".join(vcells) + " |")
    print("\nThe same floor in vector mode (every note below it dropped):\n")
    print("| set | " + " | ".join(f"floor {f:.2f}" for f in FLOORS) + " |")
    print("|---|" + "---|" * len(FLOORS))
    print("\n".join(vec_rows))
    print("\nNonsense queries answered with nothing at each floor (hybrid):\n")
    print("| index | " + " | ".join(f"{f:.2f}" for f in FLOORS) + " |")
    print("|---|" + "---|" * len(FLOORS))
    for index, maxima in nonsense_max.items():
        print(
            f"| {index} | "
            + " | ".join(f"{sum(m < f for m in maxima)}/{len(maxima)}" for f in FLOORS)
            + " |"
        )
    known_words_rule(queries)
    return 0


def known_words_rule(nonsense_queries: list[str]) -> None:
    """A query none of whose content words the vault or the model knows gets no answer.

    Known = its index token occurs in some chunk (FTS5 document count > 0), or the word is one
    whole token of the model's vocabulary (the bundled WordPiece vocabulary). Scored on the
    nonsense queries (should all be caught) and on every development query (should none be).
    """
    import apsw

    from noteseek.core.query import STOPWORDS, query_terms

    vocab_path = Path(noteseek.__file__).parent / "models" / "potion-base-8M" / "vocab.txt"
    vocab = set(vocab_path.read_text(encoding="utf-8").split("\n"))
    print(
        "\nKnown-words rule (no content word in the vault's index nor whole in the model vocabulary → no hits):\n"
    )
    print("| index | nonsense queries caught | development queries caught (set: n) |")
    print("|---|---|---|")
    by_index: dict[str, list[str]] = {}
    for name in SETS:
        idx_name = {
            "tldr": "tldr-en",
            "xquad-de-en": "xquad-en",
            "xquad-en-de": "xquad-de",
            "obsidian-help-de-en": "obsidian-help-en",
        }.get(name, name)
        by_index.setdefault(idx_name, []).append(name)
    for index in INDEXES:
        db = CACHE_DIR / f"{index}.db"
        with noteseek.Index(db, create=False) as idx:
            con = idx._store.db
            con.execute(
                "CREATE VIRTUAL TABLE IF NOT EXISTS temp.fl_vocab USING fts5vocab(main, chunks_fts, 'row')"
            )
            tok = con.fts5_tokenizer("noteseek", [])

            def known(word: str, con: Any = con, tok: Any = tok) -> bool:
                if word in vocab:
                    return True
                for t in tok(word.encode("utf-8"), apsw.FTS5_TOKENIZE_QUERY, None):
                    for form in t[2:]:
                        if con.execute(
                            "SELECT 1 FROM temp.fl_vocab WHERE term = ?", (form,)
                        ).fetchone():
                            return True
                return False

            def caught(q: str, known: Any = known) -> bool:
                words = [w for w in query_terms(q) if w not in STOPWORDS] or query_terms(q)
                return bool(words) and not any(known(w) for w in words)

            n_caught = sum(caught(q) for q in nonsense_queries)
            dev = []
            for name in by_index.get(index, []):
                path = CACHE_DIR / "pools" / f"{name}.pkl"
                if path.exists():
                    pool = pickle.loads(path.read_bytes())
                    hit = [e for e in pool["queries"].values() if caught(e["text"])]
                    today = (
                        f", their hybrid nDCG@10 today {np.mean([ndcg10([f for f, *_ in e['fused']], e['qrels']) for e in hit]):.3f}"
                        if hit
                        else ""
                    )
                    dev.append(f"{name}: {len(hit)}/{len(pool['queries'])}{today}")
        print(f"| {index} | {n_caught}/{len(nonsense_queries)} | {'; '.join(dev)} |")


if __name__ == "__main__":
    sys.exit(main())
