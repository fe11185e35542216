"""The stored vectors as numpy float32 rows, for intake's note centroids (not the search path).

A module of its own so that a one-shot search neither imports it nor pays for its dataclasses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from ..embedding.quantize import dequantize

if TYPE_CHECKING:
    from ..storage.protocol import Storage
    from .search.vectors import VectorMatrix

__all__ = ["ChunkVectors", "FloatMatrix", "chunk_vectors", "float_matrix"]


@dataclass(frozen=True)
class FloatMatrix:
    """Every vector as a unit float32 row, with its chunk and note (for intake's note centroids)."""

    ids: npt.NDArray[np.int64]
    rows: npt.NDArray[np.float32]
    files: npt.NDArray[np.int64]  # file id of each row, -1 if unknown


@dataclass(frozen=True)
class ChunkVectors:
    """Every vector as a unit float32 row, with the path of its note (None if unknown)."""

    rows: npt.NDArray[np.float32]
    paths: tuple[str | None, ...]


def float_matrix(matrix: VectorMatrix | None, store: Storage) -> FloatMatrix | None:
    """The in-memory int8 rows as unit float32 rows with their file ids; None without a matrix."""
    if matrix is None:
        return None
    ids = np.frombuffer(matrix.ids, dtype=np.int64).copy()
    rows = dequantize(np.frombuffer(matrix.rows, dtype=np.int8).reshape(-1, matrix.dim))
    files = store.file_ids(ids.tolist())
    return FloatMatrix(ids, rows, np.array([files.get(int(i), -1) for i in ids], dtype=np.int64))


def chunk_vectors(matrix: FloatMatrix | None, store: Storage) -> ChunkVectors | None:
    """`float_matrix` with note paths instead of file ids."""
    if matrix is None:
        return None
    paths = store.file_paths()
    return ChunkVectors(matrix.rows, tuple(paths.get(int(f)) for f in matrix.files))
