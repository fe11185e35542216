"""Tokenising and embedding a vault's chunks: the `tokenizers` library alone, and through the piece
cache (src/noteseek/embedding/piece_cache.py), side by side in one process, alternating.

    RAYON_NUM_THREADS=1 nice -n 10 python bench/tokenise_pieces.py --rounds 3

The chunks' embedding texts are prepared once (as a full index prepares them, not timed), in
batches of 32 notes as a worker process embeds them. Each round tokenises every batch once per
way (a fresh cache each round: a worker starts cold), then pools the vectors. Prints CPU-s per
round, medians and ratios, how many texts' ids differ between the ways (must be 0) and whether
the vectors are the same bytes, and the counts that make the cache pay: chunks, characters,
tokens, whitespace pieces and distinct pieces. RAYON_NUM_THREADS=1 keeps the library on one
thread, so CPU time is one core's work.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from functools import partial
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np

import _internals

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "examples" / "sample-vault"
BATCH_NOTES = 32  # engine/update/workers.py: notes per worker task


def _cpu(run: Callable[[], Any]) -> tuple[float, Any]:
    start = time.process_time()
    out = run()
    return time.process_time() - start, out


def _tokenise(model: Any, batches: list[list[str]]) -> list[list[int]]:
    return [row for batch in batches for row in model.tokenize(batch)]


def _embed(model: Any, batches: list[list[str]]) -> Any:
    return np.concatenate([model.encode(batch) for batch in batches])


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--vault", type=Path, help="default: MDN (bench/datasets.py unpacks it)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="the sample vault, one round")
    parser.add_argument("--json", type=Path, help="write every figure here")
    args = parser.parse_args(argv)
    if args.smoke:
        vault, rounds = SAMPLE, 1
    elif args.vault is None:
        from datasets import CORPORA, ensure_corpus

        vault, rounds = ensure_corpus(CORPORA["mdn-content-en"]) / "files" / "en-us", args.rounds
    else:
        vault, rounds = args.vault, args.rounds
    notes = _internals.embedding_texts(vault)
    batches = [
        list(chain.from_iterable(notes[i : i + BATCH_NOTES]))
        for i in range(0, len(notes), BATCH_NOTES)
    ]
    texts = [t for batch in batches for t in batch]
    model = _internals.static_model()
    if model.pieces is None:
        raise SystemExit("the bundled model's tokenizer is not one the piece cache accepts")
    library = dataclasses.replace(model, pieces=None)
    pieces_tokenizer = model.pieces

    def cached() -> Any:
        pieces_tokenizer.clear()
        return model

    ways: dict[str, Callable[[], Any]] = {"library": lambda: library, "pieces": cached}
    figures: dict[str, dict[str, list[float]]] = {
        way: {"tokenise": [], "embed": []} for way in ways
    }
    ids: dict[str, list[list[int]]] = {}
    vectors: dict[str, bytes] = {}
    for r in range(rounds):
        for way, make in ways.items():
            m = make()
            cpu, out = _cpu(partial(_tokenise, m, batches))
            figures[way]["tokenise"].append(cpu)
            m = make()  # cold again: embedding tokenises too
            cpu, vec = _cpu(partial(_embed, m, batches))
            figures[way]["embed"].append(cpu)
            ids[way], vectors[way] = out, vec.tobytes()
            print(
                f"round {r + 1} {way:8s} tokenise {figures[way]['tokenise'][-1]:6.2f} CPU-s"
                f"  embed {cpu:6.2f} CPU-s",
                flush=True,
            )
    differ = sum(a != b for a, b in zip(ids["library"], ids["pieces"], strict=True))
    pieces = [p for t in texts for p in t.split()]
    report: dict[str, Any] = {
        "vault": str(vault.relative_to(REPO)) if vault.is_relative_to(REPO) else vault.name,
        "notes": len(notes),
        "chunks": len(texts),
        "characters": sum(map(len, texts)),
        "tokens": sum(map(len, ids["library"])),
        "pieces": len(pieces),
        "distinct_pieces": len(set(pieces)),
        "texts_whose_ids_differ": differ,
        "same_vector_bytes": vectors["library"] == vectors["pieces"],
        "rounds": rounds,
        "cpu_s": figures,
    }
    for stage in ("tokenise", "embed"):
        lib = statistics.median(figures["library"][stage])
        cache = statistics.median(figures["pieces"][stage])
        report[f"{stage}_median_cpu_s"] = {"library": lib, "pieces": cache}
        report[f"{stage}_ratio"] = cache / lib if lib else None
        print(
            f"{stage}: median library {lib:.2f} CPU-s, pieces {cache:.2f} CPU-s, "
            f"ratio {cache / lib if lib else float('nan'):.2f}"
        )
    print(
        f"{report['chunks']} chunks, {report['characters']:,} characters, {report['tokens']:,} "
        f"tokens, {report['pieces']:,} pieces ({report['distinct_pieces']:,} distinct); texts "
        f"whose ids differ: {differ}; same vector bytes: {report['same_vector_bytes']}"
    )
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    if differ or not report["same_vector_bytes"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
