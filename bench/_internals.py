"""The one place bench/ reaches inside an `Index`: measurements the public API does not offer.

Every benchmark goes through `noteseek`'s public names; a few measure the parts inside a search
(the candidate lists before fusion, the query vector, the prepared vector matrix, the rerank's
feature rows), copy an index into another backend, or count rows the public status does not.
They call the functions here, so a change inside the engine breaks this one file (and mypy says
where), not twenty scripts.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import apsw

from noteseek import Index
from noteseek.engine.search.searcher import Searcher
from noteseek.engine.search.vectors import VectorMatch
from noteseek.secrets.scrubber import _find_secrets
from noteseek.storage.protocol import Storage

if TYPE_CHECKING:
    from noteseek.embedding.static_model import StaticModel
    from noteseek.storage.postgres.store import PostgresStore

__all__ = [
    "RerankRows",
    "candidate_lists_from",
    "embedding_texts",
    "exact_vector_collections",
    "keyword_list",
    "postgres_store",
    "query_vector",
    "rerank_rows",
    "searcher",
    "secret_spans",
    "sqlite_db",
    "static_model",
    "storage",
    "vector_matrix",
]

KeywordRows = list[tuple[int, float, int]]  # (chunk id, BM25 score, file id), best first
RerankRows = tuple[list[int], list[list[float]]]  # the head's file ids and their feature rows


def storage(idx: Index) -> Storage:
    """The index's storage backend (row counts, metadata, file ids, raw copies)."""
    return idx._store


def link_graph(idx: Index) -> Any:
    """The index's resolved link graph (paths, ids, `resolve`), as `links` and `related` use it."""
    return idx._link_cache().get()


def searcher(idx: Index) -> Searcher:
    """The index's searcher: its candidate lists and settings."""
    return idx._searcher


def sqlite_db(idx: Index) -> apsw.Connection:
    """The SQLite connection of an index on the SQLite backend, for raw SQL over its tables."""
    from noteseek.storage.sqlite.store import SqliteStore

    store = idx._store
    if not isinstance(store, SqliteStore):
        raise TypeError(f"{idx.db_path} is not a SQLite index")
    return store.conn.db


def query_vector(idx: Index | Searcher, text: str) -> bytes | None:
    """The int8 query vector a search would use (None when vectors are unavailable)."""
    return (idx._searcher if isinstance(idx, Index) else idx)._query_vector(text)


def keyword_list(idx: Index | Searcher, text: str, limit: int) -> KeywordRows:
    """The BM25 candidate list a search fuses, before fusion and rerank."""
    return (idx._searcher if isinstance(idx, Index) else idx)._bm25(text, limit)


def vector_matrix(idx: Index) -> Any:
    """The prepared in-memory vector matrix of the exact KNN (None for an index without vectors)."""
    return idx._searcher.vectors.prepare()


@contextlib.contextmanager
def candidate_lists_from(
    target: Index | Searcher,
    bm25: Callable[..., KeywordRows],
    knn: Callable[..., list[VectorMatch]],
) -> Iterator[None]:
    """Inside the block the searcher's BM25 and KNN candidate lists come from `bm25` and `knn`
    (another backend's SQL, say); fusion, rerank and everything after stay the engine's."""
    found = target._searcher if isinstance(target, Index) else target
    found._bm25 = bm25  # type: ignore[method-assign]
    found._knn = knn  # type: ignore[method-assign]
    try:
        yield
    finally:
        del found._bm25, found._knn


@contextlib.contextmanager
def rerank_rows(idx: Index) -> Iterator[Callable[[], RerankRows | None]]:
    """Inside the block every search keeps its rerank head and feature rows (also with
    `SearchSettings(rerank=False)`); the function yielded returns the last search's, or None."""
    reranker = idx._searcher.reranker
    reranker.capture, reranker.last = True, None

    def last() -> RerankRows | None:
        found, reranker.last = reranker.last, None
        return found

    try:
        yield last
    finally:
        reranker.capture, reranker.last = False, None


def postgres_store(idx: Index) -> PostgresStore:
    """The storage of an index on the PostgreSQL backend (`store.conn`: its connection's SQL
    helpers and collections)."""
    # Imported here: psycopg is the optional postgres extra, which a SQLite measurement lacks.
    from noteseek.storage.postgres.store import PostgresStore

    store = idx._store
    if not isinstance(store, PostgresStore):
        raise TypeError(f"{idx.db_path} is not a PostgreSQL index")
    return store


def exact_vector_collections(store: PostgresStore) -> set[int]:
    """The collections this backend's KNN searches exactly rather than through HNSW."""
    with store.snapshot():
        return store.vectors.exact_collections()


def secret_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, rule) of the secrets one scrubber pass finds (`scrub` repeats passes until
    nothing is left); for comparing detectors span by span."""
    return [(s, e, name) for s, e, name in _find_secrets(text)]


def embedding_texts(vault: Path) -> list[list[str]]:
    """Per Markdown note of `vault` (in walk order), the texts its chunks are embedded from, as
    a full index with the default options prepares them."""
    from noteseek.engine.update.options import IndexOptions
    from noteseek.engine.update.prepare import Prepared, prepare_note
    from noteseek.engine.vault_walk import walk_vault

    root = vault.resolve()
    options = IndexOptions()
    notes, _ = walk_vault(root, documents=False)
    out: list[list[str]] = []
    for note in notes:
        prepared = prepare_note(note, root, None, options, True)
        if isinstance(prepared, Prepared) and prepared.embed_texts:
            out.append(list(prepared.embed_texts))
    return out


def static_model() -> StaticModel:
    """The bundled model as indexing loads it (its `pieces` tokenizer set: piece_cache.py)."""
    from noteseek.embedding.embedder import bundled_model_path
    from noteseek.embedding.static_model import load_static_model

    model = load_static_model(bundled_model_path())
    if model is None:
        raise RuntimeError("the bundled model did not load without model2vec")
    return model
