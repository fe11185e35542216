"""What a search reads back from storage: chunks by id and every vector. Frozen values, no SQL.

Apart from `records.py` (what an update writes, what change detection and note access read) so
that a one-shot search defines only these two dataclasses: each costs a process ~0.5 ms.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass

__all__ = ["ChunkRow", "VectorRows"]


@dataclass(frozen=True)
class ChunkRow:
    """A stored chunk, as search reads it back."""

    id: int
    path: str
    section: str
    text: str
    heading_context: str


@dataclass(frozen=True)
class VectorRows:
    """Every stored vector: chunk ids and their int8 rows (len(ids) × dim, row-major). Immutable."""

    ids: array[int]
    rows: bytearray  # never written after the read
    dim: int
