"""int8 vector storage. Pure.

Each unit vector is scaled so its largest component is ±127 and rounded. Cosine similarity does
not depend on a vector's length, so no per-vector scale needs to be stored: the stored int8 row,
re-normalised, is the original direction to within ~0.4% per component. This cuts the vectors to
a quarter of their float32 size (the bulk of the index file).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["dequantize", "quantize"]


def quantize(vectors: npt.NDArray[np.float32]) -> npt.NDArray[np.int8]:
    """Rows scaled to ±127 and rounded to int8."""
    matrix = np.asarray(vectors, dtype=np.float32)
    peak = np.abs(matrix).max(axis=1, keepdims=True) if matrix.size else np.ones((len(matrix), 1))
    peak[peak == 0] = 1.0
    return np.clip(np.rint(matrix * (127.0 / peak)), -127, 127).astype(np.int8)


def dequantize(rows: npt.NDArray[np.int8]) -> npt.NDArray[np.float32]:
    """Unit-length float32 rows from int8 rows (zero rows stay zero)."""
    matrix = rows.astype(np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(matrix / norms, dtype=np.float32)
