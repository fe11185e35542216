"""int8 vector storage. Pure.

Each unit vector is scaled so its largest component is ±127 and rounded. Cosine similarity does
not depend on a vector's length, so no per-vector scale needs to be stored: the stored int8 row,
re-normalised, is the original direction to within ~0.4% per component. This cuts the vectors to
a quarter of their float32 size (the bulk of the index file).

A query is quantised the same way (`quantize_query`, pure Python): int8 query against int8 rows is
what the SIMD kernel in vectors.py computes, and pure Python keeps numpy out of a one-shot search.

numpy is imported inside the functions that need it: a one-shot hook quantises its query
without it (tests/test_daemon.py).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where used: quantize_query must not pull numpy in (~65 ms)
    import numpy as np
    import numpy.typing as npt

__all__ = ["dequantize", "normalise_int8_rows", "quantize", "quantize_query"]

# Below this dimension a row's sum of squared int8 values (≤ dim · 127²) stays under 2**24, so every
# partial sum is an integer that float32 holds exactly, whatever order the sum is taken in.
_EXACT_SUM_DIM = (1 << 24) // (127 * 127)


def quantize(vectors: npt.NDArray[np.float32]) -> npt.NDArray[np.int8]:
    """Rows scaled to ±127 and rounded to int8."""
    import numpy as np

    matrix = np.asarray(vectors, dtype=np.float32)
    peak = np.abs(matrix).max(axis=1, keepdims=True) if matrix.size else np.ones((len(matrix), 1))
    peak[peak == 0] = 1.0
    return np.clip(np.rint(matrix * (127.0 / peak)), -127, 127).astype(np.int8)


def dequantize(rows: npt.NDArray[np.int8]) -> npt.NDArray[np.float32]:
    """Unit-length float32 rows from int8 rows (zero rows stay zero)."""
    import numpy as np

    matrix = np.array(rows, dtype=np.float32)  # always a copy: normalised in place below
    normalise_int8_rows(matrix)
    return matrix


def normalise_int8_rows(matrix: npt.NDArray[np.float32]) -> None:
    """Scale float32 rows holding int8 values to unit length, in place (zero rows stay zero).

    The result is bit-identical to `m / np.linalg.norm(m, axis=1, keepdims=True)`, without its two
    matrix-sized temporaries (the squares and the quotient), which in a fresh process cost more in
    page faults than the arithmetic: the squared norms come from einsum, exact for these integer
    rows (see _EXACT_SUM_DIM), and float32 sqrt and division are correctly rounded, so computing
    them in another order or in place cannot change a bit.
    """
    import numpy as np

    if matrix.ndim != 2 or not len(matrix):
        return
    if matrix.shape[1] <= _EXACT_SUM_DIM:
        norms = np.einsum("ij,ij->i", matrix, matrix)
        np.sqrt(norms, out=norms)
    else:  # sums could round: take exactly the reference computation
        norms = np.linalg.norm(matrix, axis=1)
    norms[norms == 0] = 1.0
    np.divide(matrix, norms[:, None], out=matrix)


def quantize_query(values: Iterable[float]) -> bytes | None:
    """A query vector as int8 bytes, scaled like a stored row; None for a zero or non-finite one.

    Plain Python floats throughout, so every process that quantises the same values gets the same
    bytes (round() is round-half-to-even, like np.rint).
    """
    floats = [float(v) for v in values]
    peak = max((abs(v) for v in floats), default=0.0)
    if peak == 0.0 or not math.isfinite(peak):
        return None
    scale = 127.0 / peak
    return bytes((max(-127, min(127, round(v * scale))) & 0xFF) for v in floats)
