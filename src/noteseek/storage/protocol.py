"""What the engine needs from a storage backend: the `Storage` protocol.

The engine (updating, searching, note access, the `Index` facade) talks to storage only through
these methods, so a second backend (PostgreSQL, `storage/postgres/`) implements this protocol and
nothing above it changes; mypy checks that the engine uses nothing else. The docstrings here
say what each call must do, once for both backends; a backend's method carries at most a note on
what is particular to it (how FTS5 or PostgreSQL does it).

`Storage` is the sum of its parts (`ConnectionPart`, `FilePart`, ...): each backend has one object
per part, in modules of the same names (`connection.py`, `files.py`, ...), and `storage.store.Store`
puts them together, binding every call to the part that does it.

Contract in short:
- Every write happens inside `write()`, one transaction that takes the writer lock up front; a
  reader (`snapshot()`) sees each file entirely old or entirely new, and never blocks the writer.
- An update run holds `update_lock()` from its first write to its last, so two runs never
  interleave; it is released when its holder ends in any way (a killed process included), and
  searches never take it. (PostgreSQL: a session-level advisory lock does the same.)
- Ids: files and chunks have integer ids the backend assigns; the engine keeps them only for the
  length of one search or one update, never across processes.
- Vectors are int8 rows (`quantize`), one per chunk, stored with the chunk; `vector_rows()` reads
  them all for the in-memory vector index, `knn()` is the fallback when that is not possible.
- Keyword search takes the query's terms (already planned: stopwords and common terms left out)
  and returns BM25 scores, higher is better, with the backend's column weights applied.
- Text a `replace_file` or `delete_file` removes must not stay readable in the index's files
  (SQLite: `PRAGMA secure_delete=ON` zeroes freed pages): a re-scrub replaces text that held a
  secret the old rules missed. PostgreSQL has no such setting: removed rows are gone
  for every query at once, but their bytes stay in the server's files until VACUUM and later
  writes reuse the space, and in its WAL until the segment is overwritten (measured, and what
  an operator does about it: docs/postgres.md, removed text).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol

from .queries import FileFilter, KeywordQuery
from .records import (
    FileEntry,
    FileState,
    FileWrite,
    IndexedFile,
    KindOutcomes,
    StoredChunk,
)
from .rows import ChunkRow, NoteTerms, VectorRows

if TYPE_CHECKING:  # numpy costs ~65 ms to import; a one-shot search never needs it
    import numpy as np
    import numpy.typing as npt

    from ..core.links import ParsedLink

__all__ = [
    "ConnectionPart",
    "FilePart",
    "IntegrityPart",
    "KeywordMatch",
    "LinkPart",
    "MultilingualPart",
    "NoteTerms",
    "NoteTermsPart",
    "Storage",
    "TermCount",
    "TextIndexPart",
    "VectorPart",
]

# (chunk id, BM25 score with higher = better, file id), best first.
KeywordMatch = tuple[int, float, int]
# A query word's index forms (the stems the keyword index stores for it) and how many chunks hold
# the most frequent of them.
TermCount = tuple[tuple[str, ...], int]


class ConnectionPart(Protocol):
    """The connection: lifetime, transactions, the meta table (storage.meta names the keys)."""

    @property
    def location(self) -> str:
        """Where the index lives, as status shows it (a file path, a database URL)."""
        ...

    @property
    def schema_version(self) -> int:
        """The schema version the index has (every open index is migrated to the latest)."""
        ...

    def identity(self) -> tuple[Hashable, ...]:
        """Changes when the index is replaced underneath (a new file at the same path)."""
        ...

    def size_bytes(self) -> int:
        """Space the index takes now."""
        ...

    def close(self) -> None:
        """Release the connection."""
        ...

    def write(self) -> AbstractContextManager[None]:
        """One write transaction holding the writer lock; IndexLockedError when another writer
        keeps it past the busy timeout. Rolled back on any exception."""
        ...

    def snapshot(self) -> AbstractContextManager[None]:
        """Several reads against one consistent state (nested use joins the outer one)."""
        ...

    def get_meta(self, key: str) -> str | None:
        """A value of the meta table."""
        ...

    def set_meta(self, key: str, value: str) -> None:
        """Set a meta value (inside `write()`)."""
        ...

    def get_json(self, key: str) -> Any:
        """A JSON meta value, decoded."""
        ...

    chunks_deleted: int  # chunks this connection deleted or replaced (for the FTS merge decision)

    @property
    def vectors_available(self) -> bool:
        """Whether vectors can be read and written in this connection."""
        ...

    vector_error: str | None  # why vectors are not available (a phrase for messages), or None


class FilePart(Protocol):
    """A file's rows: written whole (replace, delete, touch) and read back (states, filters, chunks)."""

    def file_states(self, near: Sequence[str] | None = None) -> dict[str, FileState]:
        """Every known file (skipped ones included) with what change detection needs.

        With `near` (normalised vault-relative targets of a targeted update), at least the files
        such an update looks at: those at or below a target, every file that shares a stored
        (mtime, size) or content hash with one of them (a possible symlink alias), and every
        file that is not a plain note (a kind other than "note", an extraction engine, or a
        document's suffix). A backend may return more (every file, as PostgreSQL does)."""
        ...

    def file_paths(self) -> dict[int, str]:
        """file id -> vault-relative path, for every known file."""
        ...

    def touch_file(self, path: str, mtime_ns: int, size: int) -> None:
        """Record a new mtime for a file whose content did not change (inside `write()`); a file
        whose date came from its mtime gets the new one (`core.note_dates.mtime_date`)."""
        ...

    def delete_file(self, path: str) -> None:
        """Remove a file with its chunks, names, tags and vectors (inside `write()`)."""
        ...

    def replace_file(self, file: FileWrite) -> None:
        """Replace a file's rows (chunks with their locations, names, tags, one int8 vector per
        chunk when given) with `file`'s (inside `write()`); marks the common-term counts stale.
        The record's `kind`, `outcome` and `engine` are stored with the file and come back in
        `file_states()`; its `date` and `date_source` come back on every `ChunkRow` of the file.
        It also (re)writes what `note_terms` returns for the file (`note_terms.note_term_row`:
        none when there are no chunks); `delete_file` drops them."""
        ...

    def replace_files(self, files: Sequence[FileWrite]) -> None:
        """`replace_file` for each of `files`, in order (inside `write()`), with the rows and ids
        that gives; a backend may write them together."""
        ...

    def left_out(self) -> list[tuple[str, int, int]]:
        """(path, skipped link sections, scrubbed secrets) of every file whose row counts either
        (`FileRecord.skipped_sections`, `.secrets_scrubbed`, as `replace_file` stored them), by
        path; files that left nothing out are not listed."""
        ...

    def file_problems(self) -> list[tuple[str, str, str]]:
        """(path, status, problem) of every file that was skipped or had a warning, by path."""
        ...

    def file_entries(self) -> list[FileEntry]:
        """Every known file's row (status, problem, stat, chunk count, when written), by path."""
        ...

    def indexed_file(self, path: str) -> IndexedFile | None:
        """The row of one file by its exact vault-relative path, or None (its `kind` included)."""
        ...

    def document_outcomes(self) -> list[KindOutcomes]:
        """Files with a document kind, counted per (kind, outcome, missing package), ordered by
        them; a document without an outcome (never read: permissions, vanished) counts as outcome
        "unread"; `missing_package` is the X of an engine "missing:X" (else None)."""
        ...

    def vault_location(self, path: str) -> tuple[str, str] | None:
        """(vault folder, path inside it) of a note path as this index shows it (its hits'
        paths); None before the first update. One vault: the stored root and `path` itself; a
        backend that searches several vaults at once shows `vault/path` and splits it here."""
        ...

    def similar_paths(self, file_name: str, limit: int) -> list[str]:
        """Indexed (not skipped) notes whose file name is `file_name`, case-insensitively."""
        ...

    def files_named(self, name: str) -> list[int]:
        """Ids of files whose title, alias or file name has this `name_key()`, ascending."""
        ...

    def files_matching(self, filters: FileFilter) -> set[int]:
        """Ids of the files `filters` keeps (every filter it sets, as `FileFilter` says)."""
        ...

    def files_by_date(self, allowed: set[int] | None, limit: int) -> list[int]:
        """Ids of indexed (not skipped) files with chunks and a date, newest first, only those
        in `allowed` when given; at most `limit` (browsing a period)."""
        ...

    def note_tags(self, file_ids: Sequence[int] | None = None) -> dict[int, tuple[str, ...]]:
        """file id -> the tag_key()s of every indexed (not skipped) file that has tags; only
        the files in `file_ids` when given (one indexed read for a search's first hits)."""
        ...

    def chunk_count(self) -> int:
        """Number of chunks."""
        ...

    def chunk_rows(self, ids: Sequence[int]) -> dict[int, ChunkRow]:
        """Stored chunks by id with their location fields (missing ids are left out)."""
        ...

    def chunk_texts(self, path: str) -> list[str]:
        """The stored text of one file's chunks, in order."""
        ...

    def file_chunks(self, path: str) -> list[StoredChunk]:
        """Every chunk of one file (exact vault-relative path) with its section, location and
        overlap, by `seq`; empty for an unknown path."""
        ...

    def file_ids(self, chunk_ids: Sequence[int]) -> dict[int, int]:
        """chunk id -> file id."""
        ...

    def chunks_of_files(self, file_ids: Iterable[int]) -> set[int]:
        """Ids of every chunk of these files."""
        ...

    def first_chunk(self, file_id: int) -> int | None:
        """Id of a file's first chunk."""
        ...


class LinkPart(Protocol):
    """The links each note makes and its aliases (schema m009 for SQLite, 6 for PostgreSQL)."""

    def links_to(self, keys: Sequence[str]) -> list[tuple[int, ParsedLink]]:
        """(source file id, link as `replace_file` stored it) of every link whose key is in `keys`."""
        ...

    def links_of_files(self, file_ids: Iterable[int]) -> dict[int, list[ParsedLink]]:
        """file id -> the links that file makes, in order (files without links left out)."""
        ...

    def note_aliases(self) -> dict[int, tuple[str, ...]]:
        """file id -> the folded aliases (`record.aliases`) of every note that has some."""
        ...


class TextIndexPart(Protocol):
    """The keyword index: BM25 search, the shares of frequent stems, the language state."""

    def keyword_search(self, query: KeywordQuery) -> list[KeywordMatch]:
        """BM25 over text, section, title and tags with the query's column weights, any term
        matching; only files in `query.allowed` when given (filtered before `query.limit`).
        Never raises on the terms."""
        ...

    def term_shares(self) -> Mapping[str, float]:
        """Share of chunks holding each recorded stem (those above 1 % of chunks); the same
        object until the recorded counts change, so callers may cache on its identity."""
        ...

    def index_stems(self, word: str) -> list[str]:
        """The stems the keyword index's term counts use for one query word."""
        ...

    def common_terms_outdated(self) -> bool:
        """Whether the recorded term counts are missing or stale (recompute them)."""
        ...

    def refresh_common_terms(self) -> None:
        """Recount the frequent stems (inside `write()`)."""
        ...

    def refresh_languages(self) -> None:
        """Record whether some chunk is German, for query stemming (inside `write()`)."""
        ...

    def optimize_text_index(self) -> None:
        """Compact the keyword index after many deletes (inside `write()`)."""
        ...


class NoteTermsPart(Protocol):
    """Term counts of query words and the token sets of each note, for the rerank."""

    def query_term_counts(self, words: Sequence[str]) -> list[TermCount]:
        """Per word, in order: its index forms, as the keyword index tokenizes a query (every
        colocated form), and the number of chunks holding the most frequent of them (0 when no
        chunk has it). Current, not the recorded counts."""
        ...

    def note_terms(self, file_ids: Sequence[int]) -> dict[int, NoteTerms]:
        """Per note (missing ids left out): the distinct index tokens of its title field, tags
        field and section headings, tokenized as its chunks were (written by `replace_file`;
        empty sets for a note written before the backend stored them), chunk count and size."""
        ...


class VectorPart(Protocol):
    """The chunks' int8 vectors, one per chunk."""

    # How many searches at a new state ask `knn` before the engine reads the vectors for it
    # (0: at once). For a storage whose read costs several of its own `knn` searches (a
    # server's): readers of an index being written do not read it again after every commit.
    vectors_load_after_searches: int

    def has_vector_table(self) -> bool:
        """Whether vectors have been set up (once a model's dimension is known)."""
        ...

    def reset_vectors(self, dim: int, fingerprint: str) -> None:
        """(Re)create vector storage for a model; every chunk then needs a new vector."""
        ...

    def vectors_by_hash(self, hashes: Iterable[int]) -> dict[int, bytes]:
        """Stored int8 vectors of chunks with these content hashes (content-addressed reuse)."""
        ...

    def chunks_missing_vectors(self, limit: int) -> list[tuple[int, str, str, str]]:
        """(id, title, section, text) of chunks without a vector, for backfilling."""
        ...

    def set_vectors(self, ids: Sequence[int], vectors: npt.NDArray[np.int8]) -> None:
        """Store vectors of existing chunks, skipping chunks gone meanwhile (inside `write()`)."""
        ...

    def vector_rows(self) -> VectorRows | None:
        """Every stored vector, for the in-memory index; None when they cannot be read whole."""
        ...

    def data_version(self) -> Hashable:
        """Changes whenever any connection commits: cached vectors must then be read again."""
        ...

    def knn(self, query: bytes, limit: int) -> list[tuple[int, float]]:
        """(chunk id, cosine) of the `limit` nearest chunks to an int8 query, best first."""
        ...


class MultilingualPart(Protocol):
    """The multilingual lane's vectors, keyed by content hash (optional; schema m007 for SQLite)."""

    def multilingual_state(self) -> tuple[str | None, bool]:
        """(fingerprint of the model the lane's vectors came from or None, whether a lane build
        finished: search uses the lane only then)."""
        ...

    def reset_multilingual(self, fingerprint: str) -> None:
        """Drop every lane vector; the next ones come from this model (inside `write()`)."""
        ...

    def mark_multilingual_built(self) -> None:
        """Record that a lane build finished (inside `write()`)."""
        ...

    def prune_multilingual(self) -> int:
        """Drop lane vectors whose content no chunk has any more (inside `write()`); how many."""
        ...

    def multilingual_missing(self, limit: int) -> list[tuple[int, str, str, str]]:
        """(content hash, title, section, text) of distinct chunk contents without a lane vector,
        non-English chunks first."""
        ...

    def set_multilingual_vectors(self, hashes: Sequence[int], rows: Sequence[bytes]) -> None:
        """Store int8 lane vectors by content hash (inside `write()`)."""
        ...

    def multilingual_progress(self) -> tuple[int, int]:
        """(distinct chunk contents with a lane vector, distinct chunk contents)."""
        ...

    def multilingual_rows(self) -> VectorRows | None:
        """Every chunk with a lane vector (chunk ids, int8 rows); None when there is none."""
        ...


class IntegrityPart(Protocol):
    """Counts and checks."""

    def counts(self) -> dict[str, int]:
        """Row counts that must agree: files, chunks, keyword rows, embedded chunks, vectors."""
        ...

    def integrity_problems(self) -> list[str]:
        """Empty when the backend's own checks pass and the counts agree."""
        ...


class Storage(
    ConnectionPart,
    FilePart,
    LinkPart,
    TextIndexPart,
    NoteTermsPart,
    VectorPart,
    MultilingualPart,
    IntegrityPart,
    Protocol,
):
    """One index: files, chunks, their keyword index and vectors, and a small key/value table.

    Each backend builds it from one object per part above (`storage.store.Store`); the update
    lock and the end-of-run housekeeping are the store's own."""

    def update_lock(
        self,
        *,
        wait: float | None,
        holder: str,
        cancel: Callable[[], bool] | None = None,
    ) -> AbstractContextManager[None]:
        """Hold the lock of one update run (not a transaction: each file still commits on its
        own). Waits up to `wait` seconds for another run (None: until it ends, 0: not at all),
        then raises IndexLockedError whose message names the holder (`holder`, as the other run
        gave it, with its pid); `cancel()` turning true while waiting raises it at once."""
        ...

    def checkpoint(self) -> None:
        """Housekeeping at the end of an update run (best effort)."""
        ...
