"""What a search reads back from storage: chunks by id and every vector. Frozen values, no SQL.

Apart from `records.py` (what an update writes, what change detection and note access read) so
that a one-shot search defines only these two dataclasses: each costs a process ~0.5 ms.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ChunkRow",
    "NoteTerms",
    "VectorRows",
    "note_terms_of",
    "strings_by_file",
    "vector_rows_of",
]

# A note's terms for the rerank: title, tag and heading tokens, chunk count, size in bytes.
NoteTerms = tuple[frozenset[str], frozenset[str], frozenset[str], int, int]


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


def note_terms_of(rows: Iterable[Sequence[Any]]) -> dict[int, NoteTerms]:
    """`note_terms` from (file id, title, tags, headings, chunk count, size) rows, tokens space
    separated; NULL tokens (a note indexed before its backend stored them) are empty sets."""
    empty: frozenset[str] = frozenset()
    return {
        int(fid): (
            frozenset(title.split()) if title else empty,
            frozenset(tags.split()) if tags else empty,
            frozenset(heads.split()) if heads else empty,
            int(chunks),
            int(size),
        )
        for fid, title, tags, heads, chunks, size in rows
    }


def strings_by_file(rows: Iterable[Sequence[Any]]) -> dict[int, tuple[str, ...]]:
    """file id -> its strings, in row order, from (file id, string) rows (a note's tags, aliases)."""
    found: dict[int, list[str]] = {}
    for file_id, value in rows:
        found.setdefault(int(file_id), []).append(str(value))
    return {file_id: tuple(values) for file_id, values in found.items()}


def vector_rows_of(pairs: Iterable[Sequence[Any]]) -> VectorRows | None:
    """`VectorRows` of (chunk id, vector bytes) pairs in chunk id order; a vector whose length is
    not the first one's is left out; None when there is none."""
    ids: array[int] = array("q")
    data = bytearray()
    dim = 0
    for chunk_id, stored in pairs:
        vector = bytes(stored)
        if not dim:
            dim = len(vector)
        if len(vector) != dim:
            continue
        ids.append(int(chunk_id))
        data += vector
    return VectorRows(ids, data, dim) if dim else None
