"""Phase 4 of an update: vectors for what was prepared (reused by content hash, else embedded in
one call per batch), and a backfill of chunks that still lack one."""

from __future__ import annotations

import threading
from collections import Counter
from typing import TYPE_CHECKING

from ...core.chunker import embedding_text
from ...embedding.embedder import Embedder
from ...embedding.quantize import quantize
from .options import EMBED_BATCH_CHUNKS

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from ...storage.protocol import Storage
    from .prepare import Prepared

__all__ = ["backfill_vectors", "embed_batch"]


def embed_batch(
    store: Storage,
    embedder: Embedder,
    batch: list[Prepared],
    *,
    reuse: bool,
    counter: Counter[str],
) -> list[npt.NDArray[np.int8]]:
    """int8 vectors for every chunk of a batch of files: reused by content hash, else embedded at once."""
    # deferred: numpy (~40 ms to import) only once there is something to embed, not on a no-op
    import numpy as np

    hashes = [c.content_hash for item in batch for c in item.chunks]
    known = store.vectors_by_hash(hashes) if reuse else {}
    # A note a worker embedded comes without its texts (workers.py): its hashes are to do, and
    # its rows below are their vectors.
    todo: dict[int, str | None] = {}
    for item in batch:
        if item.vectors is not None:
            for c in item.chunks:
                todo.setdefault(c.content_hash, None)
        else:
            for c, t in zip(item.chunks, item.embed_texts, strict=True):
                todo[c.content_hash] = t
    todo = {h: t for h, t in todo.items() if h not in known}
    fresh: dict[int, npt.NDArray[np.int8]] = {}
    # Rows a worker process embedded (workers.py) are the ones embedding here would give.
    for item in batch:
        if item.vectors is not None:
            for c, row in zip(item.chunks, item.vectors):
                if c.content_hash in todo:
                    fresh.setdefault(c.content_hash, row)
    rest = {h: t for h, t in todo.items() if h not in fresh and t is not None}
    if rest:
        embedded = quantize(embedder.embed(list(rest.values())))
        fresh.update(zip(rest.keys(), embedded))
    counter["chunks_embedded"] += len(todo)
    counter["reused"] += sum(1 for h in hashes if h in known)
    out: list[npt.NDArray[np.int8]] = []
    for item in batch:
        rows = [
            fresh[c.content_hash]
            if c.content_hash in fresh
            else np.frombuffer(known[c.content_hash], dtype=np.int8)
            for c in item.chunks
        ]
        out.append(np.vstack(rows) if rows else np.zeros((0, embedder.dim), dtype=np.int8))
    return out


def backfill_vectors(
    store: Storage, embedder: Embedder, *, stop: threading.Event, counter: Counter[str]
) -> bool:
    """Embed every chunk without a vector (left by an interrupted run or a model change), one
    batch per transaction, until none is left (True) or the run is stopped (False)."""
    while True:
        missing = store.chunks_missing_vectors(EMBED_BATCH_CHUNKS)
        if not missing:
            return True
        if stop.is_set():
            return False
        texts = [embedding_text(title, section, text) for _, title, section, text in missing]
        vectors = quantize(embedder.embed(texts))
        with store.write():
            store.set_vectors([m[0] for m in missing], vectors)
        counter["chunks_embedded"] += len(missing)
