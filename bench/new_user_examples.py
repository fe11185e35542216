"""The two new-user queries of issue 16 on the real Obsidian hub vault, before and after each change.

Usage (after ``bench/quality.py`` built ``bench/.cache/obsidian-hub.db`` and ``rerank_lab.py
--export bench/.cache/models --export-without hub`` wrote a model that never saw the hub)::

    python bench/new_user_examples.py [--model bench/.cache/models/rerank-lambdarank.json]

Prints the first five notes of today's hybrid search, with the known-words gate, with RM3
expansion (where the query is thin enough), and reranked by the exported model (evaluated by
`noteseek.core.rerank_model`, the pure-Python evaluator), and what `prompt_context` (the prompt hook's
block) says for each.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import noteseek
from datasets import CACHE_DIR
from lab_rerank_model import load_model
from rerank_lab import Tokens, note_tokens, query_features
from rerank_pool import in_degrees, note_data, pool_entry

QUERIES = ("what is the difference between tags and links", "tags versus links")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--model", type=Path, default=CACHE_DIR / "models" / "rerank-lambdarank.json"
    )
    parser.add_argument("--top", type=int, default=5)
    args = parser.parse_args()
    model = load_model(args.model)
    tokens = Tokens()
    db_path = CACHE_DIR / "obsidian-hub.db"
    vault = CACHE_DIR / "obsidian-hub" / "obsidian-hub"
    with noteseek.Index(db_path, create=False) as idx:
        db = idx._store.db
        paths = {str(p): int(f) for p, f in db.execute("SELECT path, id FROM files")}
        by_id = {f: p for p, f in paths.items()}
        degree = in_degrees(vault, paths)
        from noteseek.agents.prompt_context import prompt_context

        for text in QUERIES:
            print(f"\n### {text!r}\n")
            entry = pool_entry(idx, paths, text, 50)
            print("today (hybrid):")
            for i, (fid, _score, b, v) in enumerate(entry["fused"][: args.top], 1):
                print(f"  {i}. {by_id[fid]}  (bm25 #{b}, vec #{v})")
            block = prompt_context(idx, text, max_tokens=500)
            said = f"block of {len(block.text)} chars" if block.text else f"nothing ({block.reason})"
            print(f"  prompt hook: {said}")
            chunk_ids = [c for c, _ in entry["kw"] + entry["vec"]]
            chunk_file = idx._store.file_ids(chunk_ids)
            wanted = {f for f, *_ in entry["fused"]} | set(chunk_file.values())
            notes = note_data(db, wanted)
            for fid, n in notes.items():
                n["indegree"] = degree.get(fid, 0)
            pool = {
                "chunk_file": chunk_file,
                "total_chunks": int(idx._store.scalar("SELECT count(*) FROM chunks")),
                "notes": notes,
            }
            toks = {f: note_tokens(tokens, notes[f]) for f, *_ in entry["fused"][:40]}
            started = time.perf_counter()
            cands, X, _ = query_features(pool, entry, toks, 40)
            scores = [model.score(list(row)) for row in X]
            order = [cands[i] for i in sorted(range(len(cands)), key=lambda i: (-scores[i], i))]
            spent = time.perf_counter() - started
            print(
                f"reranked ({args.model.name}, features + model for 40 candidates: {1e3 * spent:.1f} ms):"
            )
            for i, fid in enumerate(order[: args.top], 1):
                print(f"  {i}. {by_id[fid]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
