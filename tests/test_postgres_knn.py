"""KNN on PostgreSQL: small collections are searched exactly even with their HNSW index built.

The SQLite backend's vector search is exact; HNSW misses some true neighbours (hub recall@100
0.91), which cost vector-only nDCG. So a collection below `EXACT_KNN_MAX_CHUNKS` is scanned
exactly: checked here by the plan of the query `knn` runs (no HNSW index in it) and by its
results against exact cosine in numpy; above the threshold the plan uses the index. Below it
`vector_rows` also hands the selected collections' vectors to the engine, which searches them in
memory (as on SQLite) and reads them again when a writer commits.

Needs a PostgreSQL server (tests/postgres_fixtures.py): skips locally without one, fails in CI.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from noteseek import open_index
from noteseek.engine.search.vectors import VectorMatrix
from noteseek.storage.postgres import vector_table

from .conftest import FakeEmbedder, note

WORDS = [
    "git",
    "rebase",
    "token",
    "bread",
    "garden",
    "tomato",
    "reflog",
    "commit",
    "branch",
    "merge",
    "sun",
    "oven",
    "flour",
]


def sixty_notes(tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    vault.mkdir()
    for i in range(60):
        words = " ".join(WORDS[(i * k) % len(WORDS)] for k in range(1, 6))
        (vault / f"n{i}.md").write_text(note(f"Note {i}", ("Body", f"{words} {i}")), "utf-8")
    return vault


@pytest.fixture
def small(pg_schema: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A collection of 60 notes, embedded, with its HNSW index built by the run's checkpoint
    (which builds one only from EXACT_KNN_MAX_CHUNKS chunks on: lowered for the build)."""
    vault = sixty_notes(tmp_path)
    with monkeypatch.context() as patch:
        patch.setattr(vector_table, "EXACT_KNN_MAX_CHUNKS", 10)
        with open_index(pg_schema, vault, create=True, embedder=FakeEmbedder(), write=True) as idx:
            idx.update(vault)
    return pg_schema


def test_a_collection_below_the_exact_limit_gets_no_hnsw_index(
    pg_schema: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = sixty_notes(tmp_path)
    with open_index(pg_schema, vault, create=True, embedder=FakeEmbedder(), write=True) as idx:
        idx.update(vault)
        store: Any = idx._store  # white-box: the catalog
        hnsw = (
            "SELECT count(*) FROM pg_indexes WHERE schemaname = current_schema() "
            "AND indexname LIKE 'chunks_hnsw_c%%'"
        )
        assert store.conn.scalar(hnsw) == 0
        assert idx.search("flour oven", mode="vector")  # an exact scan answers
        # The run that finds it past the limit builds the index.
        monkeypatch.setattr(vector_table, "EXACT_KNN_MAX_CHUNKS", 10)
        (vault / "n0.md").write_text(note("Note 0", ("Body", "flour again")), "utf-8")
        idx.update(vault)
        assert store.conn.scalar(hnsw) == 1


def knn_plan(url: str, text: str) -> tuple[list[tuple[int, float]], str, list[tuple[int, float]]]:
    """`knn`'s answer for `text`, the EXPLAIN of the statement it ran, and exact cosine top-10."""
    with open_index(url, None, create=False, embedder=FakeEmbedder()) as idx:
        store: Any = idx._store  # white-box: the statement knn runs
        conn = store.conn
        vector = idx._searcher._query_vector(text)  # type: ignore[attr-defined]
        assert vector is not None
        assert (
            conn.scalar(
                "SELECT count(*) FROM pg_indexes WHERE schemaname = current_schema() "
                "AND indexname LIKE 'chunks_hnsw_c%%'"
            )
            == 1
        )
        seen: list[tuple[str, Any]] = []
        rows_with = conn.rows_with

        def recording(settings: Any, sql: str, params: Any = ()) -> Any:
            seen.append((sql, params))
            return rows_with(settings, sql, params)

        with store.snapshot():
            # A table this small is cheaper to scan than any index, so the planner would scan
            # it whatever the query; without sequential scans it takes the HNSW index whenever
            # the query's ORDER BY lets it, as it does on a real vault's table.
            conn.run("SET LOCAL enable_seqscan = off")
            conn.rows_with = recording
            found = store.knn(vector, 10)
            conn.rows_with = rows_with
            sql, params = next(s for s in seen if "<=>" in s[0])
            plan = "\n".join(r[0] for r in conn.rows("EXPLAIN " + sql, params))
        table = conn.rows("SELECT chunk_id, embedding::text FROM chunk_vectors")
    ids = np.array([int(r[0]) for r in table])
    matrix = np.array([[float(v) for v in r[1].strip("[]").split(",")] for r in table])
    matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
    q = np.frombuffer(vector, dtype=np.int8).astype(np.float64)
    cosines = matrix @ (q / max(float(np.linalg.norm(q)), 1e-12))
    order = sorted(range(len(ids)), key=lambda i: (-round(cosines[i], 6), ids[i]))[:10]
    return found, plan, [(int(ids[i]), float(cosines[i])) for i in order]


def test_small_collection_is_searched_exactly(small: str) -> None:
    found, plan, exact = knn_plan(small, "git rebase token")
    assert "chunks_hnsw" not in plan, plan
    assert [i for i, _ in found] == [i for i, _ in exact]
    assert [round(c, 3) for _, c in found] == [round(c, 3) for _, c in exact]


def test_large_collection_uses_hnsw(small: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vector_table, "EXACT_KNN_MAX_CHUNKS", 10)
    found, plan, _ = knn_plan(small, "git rebase token")
    assert "chunks_hnsw" in plan, plan
    assert len(found) == 10


def test_file_ids_after_knn_in_a_snapshot_are_the_chunks_own(small: str) -> None:
    """knn reads its hits' file ids in its statement, and file_ids answers them from the
    transaction: the same ids a statement of its own reads."""
    with open_index(small, None, create=False, embedder=FakeEmbedder()) as idx:
        store: Any = idx._store
        vector = idx._searcher._query_vector("git rebase token")  # type: ignore[attr-defined]
        assert vector is not None
        with store.snapshot():
            found = [cid for cid, _ in store.knn(vector, 10)]
            from_knn = store.file_ids(found)
        read = store.file_ids(found)  # outside the transaction: a statement
    assert len(found) == 10
    assert from_knn == read
    assert len(set(read.values())) > 1


def test_a_small_selection_hands_its_vectors_to_the_engine(small: str) -> None:
    """Below the exact limit vector_rows holds every vector of the selection, int8 as stored,
    and the in-memory search finds what the server's exact scan finds; file_ids then answers
    the matrix's hits from what the load read, the same ids a statement reads."""
    with open_index(small, None, create=False, embedder=FakeEmbedder()) as idx:
        store: Any = idx._store
        vector = idx._searcher._query_vector("git rebase token")  # type: ignore[attr-defined]
        assert vector is not None
        table = store.conn.rows("SELECT chunk_id, embedding::text FROM chunk_vectors")
        stored = {int(cid): vector_table.int8_bytes(text) for cid, text in table}
        with store.snapshot():
            rows = store.vector_rows()
            assert rows is not None
            matrix = VectorMatrix(rows.ids, rows.rows, rows.dim)
            in_memory = matrix.search(vector, 10)
            on_server = store.knn(vector, 10)
            hits = [m.chunk_id for m in in_memory]
            from_load = store.file_ids(hits)
        read = store.file_ids(hits)  # outside the transaction: a statement
    assert len(rows.ids) == len(stored) > 60
    assert {
        cid: bytes(rows.rows[i * rows.dim : (i + 1) * rows.dim]) for i, cid in enumerate(rows.ids)
    } == stored
    assert hits == [cid for cid, _ in on_server]
    assert [round(m.cosine, 4) for m in in_memory] == [round(c, 4) for _, c in on_server]
    assert from_load == read and len(read) == 10


def test_above_the_exact_limit_the_vectors_stay_on_the_server(
    small: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vector_table, "EXACT_KNN_MAX_CHUNKS", 10)
    with open_index(small, None, create=False, embedder=FakeEmbedder()) as idx:
        store: Any = idx._store
        assert store.vector_rows() is None
        assert [h.path for h in idx.search("git rebase token", mode="vector")]
        assert idx._searcher.vectors.prepare() is None  # type: ignore[attr-defined]


def test_a_reader_sees_a_new_notes_vector_after_the_writer_commits(
    small: str, tmp_path: Path
) -> None:
    """The first searches at a state no earlier search saw ask the server's knn
    (vectors_load_after_searches), the next one at that state reads the vectors into memory:
    after a file written, and after vectors written without one (a backfill), both of which
    move the collection's version."""
    vault = tmp_path / "vault"
    query = "flour oven bread"  # words the vault knows: the vector list runs
    with (
        open_index(small, None, create=False, embedder=FakeEmbedder()) as reader,
        open_index(small, vault, create=False, embedder=FakeEmbedder(), write=True) as writer,
    ):
        searcher: Any = reader._searcher  # type: ignore[attr-defined]
        store: Any = reader._store
        vectors = searcher.vectors
        asks = store.vectors_load_after_searches
        assert asks > 0
        for _ in range(asks):  # knn
            assert "new.md" not in [h.path for h in reader.search(query, mode="vector")]
            assert vectors._matrix is None
        reader.search(query, mode="vector")
        loaded = vectors._matrix
        assert loaded is not None and vectors._version == store.data_version()
        (vault / "new.md").write_text(note("New", ("Body", query)), "utf-8")
        writer.update(vault)
        for _ in range(asks):  # knn, the new state
            assert reader.search(query, mode="vector")[0].path == "new.md"
            assert vectors._matrix is loaded
        assert reader.search(query, mode="vector")[0].path == "new.md"  # in memory
        assert vectors._matrix is not loaded and vectors._version == store.data_version()
        new_chunks = {
            int(r[0])
            for r in store.conn.rows(
                "SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.path = 'new.md'"
            )
        }
        assert new_chunks and new_chunks <= set(vectors._matrix.ids)
        version = store.data_version()
        wstore: Any = writer._store
        with wstore.write():  # vectors alone, as a backfill writes them
            wstore.set_vectors(sorted(new_chunks), np.ones((len(new_chunks), 64), dtype=np.int8))
        assert store.data_version() != version
        for _ in range(asks + 1):
            reader.search(query, mode="vector")
        rows = vectors._matrix
        first = list(rows.ids).index(min(new_chunks))
        assert bytes(rows.rows[first * rows.dim : (first + 1) * rows.dim]) == bytes([1] * 64)
