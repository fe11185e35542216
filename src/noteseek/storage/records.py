"""The rows an update writes and reads back (files, chunks, file states) and the rows note access
reads: frozen values, no SQL, and the conversions both backends make from their result rows.
What searches read is in `rows.py`."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # numpy costs ~65 ms to import; the type is only named here
    import numpy as np
    import numpy.typing as npt

    from ..core.links import ParsedLink

__all__ = [
    "ChunkRecord",
    "FileEntry",
    "FileRecord",
    "FileState",
    "FileWrite",
    "IndexedFile",
    "KindOutcomes",
    "StoredChunk",
    "file_entry_of",
    "file_state_of",
    "indexed_file_of",
    "kind_outcomes_of",
]


@dataclass(frozen=True)
class FileState:
    """What the index remembers about a file, to decide whether it changed."""

    mtime_ns: int
    size: int
    content_hash: str | None
    status: str
    kind: str | None = None  # None: a Markdown note; else the document kind ("pdf", ...)
    engine: str | None = None  # documents: the reader ("pypdfium2 5.15.2") or "missing:<module>"


@dataclass(frozen=True)
class FileRecord:
    """A file's row, as the indexer writes it, with the note-level fields every chunk carries
    (stored once per file; core/field_caps.py caps them)."""

    path: str
    mtime_ns: int
    size: int
    content_hash: str | None
    title: str | None
    status: str
    problem: str | None
    title_field: str = ""  # title, aliases and file name: a BM25 field of every chunk
    tags_field: str = ""  # type and tags: a BM25 field of every chunk
    heading_context: str = ""  # title | type | tags | aliases, shown beside each of its hits
    names: tuple[str, ...] = ()  # name_key()s for exact-name matches
    tags: tuple[str, ...] = ()  # tag_key()s for tag filters
    lang: str | None = None  # language.note_language(): the stemmer its chunks get
    skipped_sections: int = 0  # link-list sections left out of search (chunker skip list)
    secrets_scrubbed: int = 0  # values the scrubber replaced
    kind: str | None = None  # None: a Markdown note; else the document kind ("pdf", "xlsx", ...)
    # Documents: how extraction ended (ok, encrypted, no_text, corrupt, timed_out, too_large,
    # unsupported; the reason is `problem`), and the library that read it, or "missing:<module>".
    outcome: str | None = None
    engine: str | None = None
    # core/note_dates.note_date(): an ISO day or local date-time, and where it came from
    # (frontmatter, filename, document, mtime).
    date: str | None = None
    date_source: str | None = None
    links: tuple[ParsedLink, ...] = ()  # every link the note makes (core.links.parse_links)
    aliases: tuple[str, ...] = ()  # frontmatter aliases, folded as link keys are


@dataclass(frozen=True)
class ChunkRecord:
    """A chunk ready to be stored: scrubbed text plus its content address and, for a document's
    chunk, where in the document the text is (None where a field does not apply)."""

    seq: int
    section: str
    text: str
    content_hash: int
    page: int | None = None  # 1-based PDF page
    page_label: str | None = None  # the PDF's own label for it ("xii")
    slide: int | None = None  # 1-based slide
    sheet: str | None = None  # sheet name
    row_first: int | None = None  # 1-based first and last spreadsheet/CSV row
    row_last: int | None = None
    overlap: int = 0  # leading characters repeated from the chunk before (a split unit)


@dataclass(frozen=True, eq=False)  # by identity: an array's == is element-wise, not a bool
class FileWrite:
    """One file as `replace_file` writes it: its row, its chunks in order and, when they were
    embedded, one int8 vector per chunk (row i for chunk i). A skipped file is its record alone."""

    record: FileRecord
    chunks: Sequence[ChunkRecord] = ()
    vectors: npt.NDArray[np.int8] | None = None


@dataclass(frozen=True)
class IndexedFile:
    """A file's row as note access reads it: whether it was indexed, and what it looked like."""

    status: str  # ok | warning | skipped
    problem: str | None
    mtime_ns: int
    size: int
    title: str | None
    kind: str | None = None  # None: a Markdown note; else the document kind


@dataclass(frozen=True)
class FileEntry:
    """A file's row as per-file coverage (`noteseek status --files`) lists it."""

    path: str
    status: str  # ok | warning | skipped
    problem: str | None
    mtime_ns: int  # 0 for a problem looked at again on every run (see engine/update/run.py)
    size: int
    chunks: int
    indexed_at: float  # when the row was last written (seconds since the epoch)


@dataclass(frozen=True)
class StoredChunk:
    """One chunk of a file as reading a document back needs it: text, section and location."""

    seq: int
    section: str
    text: str
    page: int | None
    page_label: str | None
    slide: int | None
    sheet: str | None
    row_first: int | None
    row_last: int | None
    overlap: int


@dataclass(frozen=True)
class KindOutcomes:
    """How many documents of one kind ended with one outcome (for status)."""

    kind: str
    outcome: str
    files: int
    missing_package: str | None = None  # `unsupported` for this library, not installed then


def file_state_of(row: Sequence[Any]) -> FileState:
    """A `FileState` from a (mtime_ns, size, content_hash, status, kind, engine) row."""
    return FileState(int(row[0]), int(row[1]), row[2], row[3], row[4], row[5])


def file_entry_of(path: str, row: Sequence[Any]) -> FileEntry:
    """The `FileEntry` of the file shown as `path`, from a (status, problem, mtime_ns, size,
    chunk_count, indexed_at) row."""
    return FileEntry(path, row[0], row[1], int(row[2]), int(row[3]), int(row[4]), float(row[5]))


def indexed_file_of(row: Sequence[Any]) -> IndexedFile:
    """An `IndexedFile` from a (status, problem, mtime_ns, size, title, kind) row."""
    return IndexedFile(row[0], row[1], int(row[2]), int(row[3]), row[4], row[5])


def kind_outcomes_of(rows: Iterable[Sequence[Any]]) -> list[KindOutcomes]:
    """`document_outcomes` from (kind, outcome, files, missing package) rows, in their order."""
    # No outcome: the indexer could not read the file at all (permissions, vanished).
    return [KindOutcomes(r[0], r[1] or "unread", int(r[2]), r[3]) for r in rows]
