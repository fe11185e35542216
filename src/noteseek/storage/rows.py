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
    """A stored chunk, as search reads it back (the location fields are None for a note's chunk)."""

    id: int
    path: str
    section: str
    text: str
    heading_context: str
    page: int | None = None
    page_label: str | None = None
    slide: int | None = None
    sheet: str | None = None
    row_first: int | None = None
    row_last: int | None = None
    date: str | None = None  # its file's date (ISO day or date-time) and where that came from
    date_source: str | None = None


@dataclass(frozen=True)
class VectorRows:
    """Every stored vector: chunk ids and their int8 rows (len(ids) × dim, row-major). Immutable."""

    ids: array[int]
    rows: bytearray  # never written after the read
    dim: int
