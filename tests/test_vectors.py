"""The in-memory matrix read from vec0's storage answers exactly like vec0's own KNN."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from noteseek import Index
from noteseek.embedding.embedder import query_vector
from noteseek.embedding.quantize import dequantize, quantize, quantize_query
from noteseek.engine.search.vectors import _best_numpy, _best_python
from noteseek.engine.vector_export import float_matrix

from .conftest import FakeEmbedder, WriteNotes, note


@pytest.fixture
def index(tmp_path: Path, make_vault: WriteNotes, fake_embedder: FakeEmbedder) -> Index:
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"]
    notes = {
        f"n{i:02}.md": note(
            f"Note {i}", ("Body", f"unique{i} " + " ".join(words[(i + j) % 10] for j in range(6)))
        )
        for i in range(40)
    }
    idx = Index(tmp_path / "i.db", embedder=fake_embedder)
    idx.update(make_vault(notes))
    return idx


def test_matrix_and_vec0_agree(index: Index, fake_embedder: FakeEmbedder) -> None:
    vectors = index._searcher.vectors
    query = query_vector(fake_embedder, "alpha gamma zeta")
    assert query is not None
    from_matrix = vectors.search(query, 15)
    assert vectors.uses_matrix
    from_vec0 = vectors._vec0_search(query, 15)
    for a, b in zip(from_matrix, from_vec0):
        assert a.cosine == pytest.approx(b.cosine, abs=0.02)
    # Equal cosines may come in any order; above the last tie level the sets must agree.
    cut = from_matrix[-1].cosine + 0.02
    assert {m.chunk_id for m in from_matrix if m.cosine > cut} == {
        m.chunk_id for m in from_vec0 if m.cosine > cut
    }
    assert from_matrix == sorted(from_matrix, key=lambda m: (-m.cosine, m.chunk_id))
    index.close()


def test_matrix_is_refreshed_after_an_update(
    index: Index, make_vault: WriteNotes, fake_embedder: FakeEmbedder
) -> None:
    text = "New › Body\n\nomega unique omega words here"
    query = query_vector(fake_embedder, text)
    assert query is not None
    before = index._searcher.vectors.search(query, 1)[0]
    assert before.cosine < 0.99
    vault = make_vault({"new.md": "# New\n\n## Body\n\nomega unique omega words here\n"})
    index.update(vault)
    after = index._searcher.vectors.search(query, 1)[0]
    assert after.cosine == pytest.approx(1.0, abs=0.01)
    assert index._store.chunk_rows([after.chunk_id])[after.chunk_id].path == "new.md"
    index.close()


def test_int8_round_trip_keeps_direction() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 256)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    back = dequantize(quantize(x))
    cos = np.sum(x * back, axis=1)
    assert cos.min() > 0.999
    assert np.allclose(np.linalg.norm(back, axis=1), 1.0, atol=1e-5)


def _reference_matrix(index: Index) -> tuple[np.ndarray, np.ndarray]:
    """The vectors as vec0 itself returns them, by id."""
    dim = int(index._store.get_meta("vector_dim") or 0)
    rows = index._store.conn.db.execute("SELECT rowid, embedding FROM chunks_vec ORDER BY rowid")
    ids, blobs = zip(*[(int(r), bytes(b)) for r, b in rows])
    matrix = np.frombuffer(b"".join(blobs), dtype=np.int8).reshape(-1, dim)
    return np.array(ids, dtype=np.int64), matrix


def test_loaded_matrix_is_bit_identical_to_the_reference(
    index: Index, make_vault: WriteNotes
) -> None:
    # Rewrite and delete notes first, so vec0's chunks have holes (validity bits) to skip.
    vault = make_vault(
        {f"n{i:02}.md": note(f"Note {i}", ("Body", f"kept {i}")) for i in range(0, 40, 3)}
    )
    for i in range(1, 40, 4):
        (vault / f"n{i:02}.md").unlink()
    index.update(vault)
    holes = index._store.conn.scalar("SELECT sum(size) FROM chunks_vec_chunks") - index._store.conn.scalar(
        "SELECT count(*) FROM chunks_vec_rowids"
    )
    assert holes > 0
    matrix = index._searcher.vectors.prepare()
    assert matrix is not None
    ref_ids, ref_rows = _reference_matrix(index)
    ids = np.frombuffer(matrix.ids, dtype=np.int64)
    rows = np.frombuffer(matrix.rows, dtype=np.int8).reshape(len(ids), -1)
    order = np.argsort(ids)
    assert np.array_equal(ids[order], ref_ids)
    assert rows[order].tobytes() == ref_rows.tobytes()
    # intake's float view: unit rows of the same vectors, each with its note
    floats = float_matrix(index._searcher.vectors.prepare(), index._store)
    assert floats is not None
    assert floats.rows.tobytes() == dequantize(rows).tobytes()
    files = index._store.file_ids([int(i) for i in ids])
    assert [files[int(i)] for i in ids] == floats.files.tolist()
    index.close()


def test_in_place_normalisation_matches_numpy_norm_bit_for_bit() -> None:
    rng = np.random.default_rng(7)
    for dim in (1, 3, 64, 256, 1040, 1100):  # 1100: past the exact-sum bound, reference path
        rows = rng.integers(-127, 128, size=(300, dim), dtype=np.int8)
        rows[5] = 0  # a zero row stays zero
        rows[6] = 127
        expected = rows.astype(np.float32)
        norms = np.linalg.norm(expected, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        expected = np.ascontiguousarray(expected / norms, dtype=np.float32)
        assert dequantize(rows).tobytes() == expected.tobytes(), dim


def test_query_quantisation_matches_stored_rows() -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(size=(50, 256)).astype(np.float32)
    for row in x:
        q = quantize_query(row.tolist())
        assert q is not None
        stored = quantize(row.reshape(1, -1))[0].astype(np.int64)
        ours = np.frombuffer(q, dtype=np.int8).astype(np.int64)
        assert np.abs(stored - ours).max() <= 1  # float64 here, float32 there: rounding only
    assert quantize_query([0.0] * 8) is None
    assert quantize_query([float("nan"), 1.0]) is None
    assert quantize_query([]) is None


@pytest.mark.parametrize("k", [1, 5, 37, 200, 1000])
def test_both_selections_pick_the_same_positions_in_the_same_order(k: int) -> None:
    """Heavy ties (few distinct values) are where a partition-based pick could differ."""
    rng = np.random.default_rng(k)
    values = rng.integers(0, 12, size=700).astype(np.float64) / 7.0
    ids_np = rng.permutation(5000)[:700].astype(np.int64)
    from array import array

    ids = array("q", ids_np.tolist())
    expected = sorted(range(700), key=lambda i: (values[i], ids[i]))[:k]
    flat = memoryview(values.tobytes()).cast("d")
    assert _best_python(values.tolist(), ids, k, None) == expected
    assert _best_numpy(flat, ids, k, None) == expected
    subset = [i for i in range(700) if i % 3]
    want = sorted(subset, key=lambda i: (values[i], ids[i]))[:k]
    assert _best_python(values.tolist(), ids, k, list(subset)) == want
    assert _best_numpy(flat, ids, k, list(subset)) == want


def test_numpy_and_pure_selection_give_identical_hits(index: Index, fake_embedder: FakeEmbedder) -> None:
    matrix = index._searcher.vectors.prepare()
    assert matrix is not None
    for text in ("alpha gamma zeta", "unique7 theta", "kappa kappa kappa"):
        query = query_vector(fake_embedder, text)
        assert query is not None
        for keep in (None, set(list(matrix.ids)[::2])):
            a = matrix.search(query, 12, keep=keep, use_numpy=False)
            b = matrix.search(query, 12, keep=keep, use_numpy=True)
            assert a == b and len(a) == 12
            if keep is not None:
                assert all(m.chunk_id in keep for m in a)
    index.close()
