"""The rows an update writes and reads back (files, chunks, file states) and the file row note
access reads: frozen values, no SQL. What searches read is in `rows.py`."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ChunkRecord", "FileRecord", "FileState", "IndexedFile"]


@dataclass(frozen=True)
class FileState:
    """What the index remembers about a file, to decide whether it changed."""

    mtime_ns: int
    size: int
    content_hash: str | None
    status: str


@dataclass(frozen=True)
class FileRecord:
    """A file's row, as the indexer writes it, with the note-level fields every chunk carries."""

    path: str
    mtime_ns: int
    size: int
    content_hash: str | None
    title: str | None
    status: str
    problem: str | None
    title_field: str = ""  # title, aliases and file name: a BM25 field of every chunk
    tags_field: str = ""  # type and tags: a BM25 field of every chunk
    names: tuple[str, ...] = ()  # name_key()s for exact-name matches
    tags: tuple[str, ...] = ()  # tag_key()s for tag filters
    lang: str | None = None  # language.note_language(): the stemmer its chunks get


@dataclass(frozen=True)
class ChunkRecord:
    """A chunk ready to be stored: scrubbed text plus its content address."""

    seq: int
    section: str
    text: str
    heading_context: str
    content_hash: int


@dataclass(frozen=True)
class IndexedFile:
    """A file's row as note access reads it: whether it was indexed, and what it looked like."""

    status: str  # ok | warning | skipped
    problem: str | None
    mtime_ns: int
    size: int
    title: str | None
