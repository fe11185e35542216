"""The store both backends build: one object per part of `Storage`, and which part does each call.

A backend's `store.py` makes its parts, each from the connection and the parts it needs (the file
rows write through the text index, the vectors, the note terms and the links), and hands them to
`Store`, which binds every protocol call to the part that does it: a call costs what it costs on
the part, and no part reaches another except through the objects it was given.

The update lock's wait (how long, how often, what a cancelled or timed-out wait raises, who is
named as the holder) is the same on both backends and lives here; a backend's `update_lock.py`
only takes, announces and releases its lock (`UpdateLockPart`). `checkpoint` is each store's own.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

from ..errors import IndexLockedError

if TYPE_CHECKING:
    from .protocol import (
        ConnectionPart,
        FilePart,
        IntegrityPart,
        LinkPart,
        MultilingualPart,
        NoteTermsPart,
        TextIndexPart,
        VectorPart,
    )

__all__ = ["RETRY_SECONDS", "Store", "UpdateLockPart", "holder_record"]

# How often a waiting update run tries the lock again.
RETRY_SECONDS = 0.05


class UpdateLockPart(Protocol):
    """A backend's update-run lock, as `Store.update_lock` drives it."""

    def try_lock(self) -> bool:
        """Take the lock if it is free, without waiting; whether this store holds it now."""
        ...

    def announce(self, holder: str) -> None:
        """Record who holds the lock (it is held), for the message a waiting run shows."""
        ...

    def holder(self) -> str | bytes | None:
        """The record the holder announced (`holder_record`), or None when there is none."""
        ...

    def unlock(self) -> None:
        """Release the lock if held and whatever trying took; called once a wait or a hold ends."""
        ...


def holder_record(holder: str, *, host: str | None = None) -> str:
    """What a holder announces: its name, pid, start and (where runs may come from several
    machines) its host, as JSON."""
    record: dict[str, object] = {"pid": os.getpid(), "holder": holder, "since": time.time()}
    if host is not None:
        record["host"] = host
    return json.dumps(record)


def _holder_text(raw: str | bytes | None) -> str:
    """Who holds the lock, from its record (it may be being written right now: then unknown)."""
    who = "another noteseek process"
    with suppress(ValueError, TypeError, KeyError, AttributeError):
        data = json.loads(raw or "{}")
        since = time.strftime("%H:%M:%S", time.localtime(float(data["since"])))
        where = f" on {data['host']}" if "host" in data else ""
        who = f"{data['holder']} (pid {int(data['pid'])}{where}, since {since})"
    return who


# A backend's own connection and vector classes: what its `checkpoint` and its tools reach past
# the protocol for (the other parts are used through their protocols only).
ConnT = TypeVar("ConnT", bound="ConnectionPart")
VectorsT = TypeVar("VectorsT", bound="VectorPart")


class Store(Generic[ConnT, VectorsT]):
    """`Storage` made of one object per part, given in the order of the parameters below; a
    backend's store adds `checkpoint`."""

    def __init__(
        self,
        conn: ConnT,
        files: FilePart,
        links: LinkPart,
        text: TextIndexPart,
        terms: NoteTermsPart,
        vectors: VectorsT,
        deep: MultilingualPart,
        integrity: IntegrityPart,
        lock: UpdateLockPart,
    ) -> None:
        self.conn = conn
        self.files = files
        self.links = links
        self.text = text
        self.terms = terms
        self.vectors = vectors
        self.deep = deep
        self.integrity = integrity
        self.lock = lock
        # The connection: lifetime, transactions, meta.
        self.identity = conn.identity
        self.size_bytes = conn.size_bytes
        self.close = conn.close
        self.write = conn.write
        self.snapshot = conn.snapshot
        self.get_meta = conn.get_meta
        self.set_meta = conn.set_meta
        self.get_json = conn.get_json
        # A file's rows.
        self.file_states = files.file_states
        self.file_paths = files.file_paths
        self.touch_file = files.touch_file
        self.delete_file = files.delete_file
        self.replace_file = files.replace_file
        self.replace_files = files.replace_files
        self.left_out = files.left_out
        self.file_problems = files.file_problems
        self.file_entries = files.file_entries
        self.indexed_file = files.indexed_file
        self.document_outcomes = files.document_outcomes
        self.vault_location = files.vault_location
        self.similar_paths = files.similar_paths
        self.files_named = files.files_named
        self.files_matching = files.files_matching
        self.files_by_date = files.files_by_date
        self.note_tags = files.note_tags
        self.chunk_count = files.chunk_count
        self.chunk_rows = files.chunk_rows
        self.chunk_texts = files.chunk_texts
        self.file_chunks = files.file_chunks
        self.file_ids = files.file_ids
        self.chunks_of_files = files.chunks_of_files
        self.first_chunk = files.first_chunk
        # Links and aliases.
        self.links_to = links.links_to
        self.links_of_files = links.links_of_files
        self.note_aliases = links.note_aliases
        # The keyword index.
        self.keyword_search = text.keyword_search
        self.term_shares = text.term_shares
        self.index_stems = text.index_stems
        self.common_terms_outdated = text.common_terms_outdated
        self.refresh_common_terms = text.refresh_common_terms
        self.refresh_languages = text.refresh_languages
        self.optimize_text_index = text.optimize_text_index
        # Query term counts and note token sets.
        self.query_term_counts = terms.query_term_counts
        self.note_terms = terms.note_terms
        # Vectors.
        self.has_vector_table = vectors.has_vector_table
        self.reset_vectors = vectors.reset_vectors
        self.vectors_by_hash = vectors.vectors_by_hash
        self.chunks_missing_vectors = vectors.chunks_missing_vectors
        self.set_vectors = vectors.set_vectors
        self.vector_rows = vectors.vector_rows
        self.vectors_load_after_searches = vectors.vectors_load_after_searches
        self.data_version = vectors.data_version
        self.knn = vectors.knn
        # The multilingual lane.
        self.multilingual_state = deep.multilingual_state
        self.reset_multilingual = deep.reset_multilingual
        self.mark_multilingual_built = deep.mark_multilingual_built
        self.prune_multilingual = deep.prune_multilingual
        self.multilingual_missing = deep.multilingual_missing
        self.set_multilingual_vectors = deep.set_multilingual_vectors
        self.multilingual_progress = deep.multilingual_progress
        self.multilingual_rows = deep.multilingual_rows
        # Integrity.
        self.counts = integrity.counts
        self.integrity_problems = integrity.integrity_problems

    # The connection's values that change or are computed: read through, not copied.

    @property
    def location(self) -> str:
        return self.conn.location

    @property
    def schema_version(self) -> int:
        return self.conn.schema_version

    @property
    def vectors_available(self) -> bool:
        return self.conn.vectors_available

    @property
    def vector_error(self) -> str | None:
        return self.conn.vector_error

    @vector_error.setter
    def vector_error(self, value: str | None) -> None:
        self.conn.vector_error = value

    @property
    def chunks_deleted(self) -> int:
        return self.conn.chunks_deleted

    @chunks_deleted.setter
    def chunks_deleted(self, value: int) -> None:
        self.conn.chunks_deleted = value

    @contextmanager
    def update_lock(
        self, *, wait: float | None, holder: str, cancel: Callable[[], bool] | None = None
    ) -> Iterator[None]:
        lock = self.lock
        try:
            deadline = None if wait is None else time.monotonic() + wait
            while not lock.try_lock():
                now = time.monotonic()
                if (deadline is not None and now >= deadline) or (cancel and cancel()):
                    who = _holder_text(lock.holder())
                    raise IndexLockedError(f"{self.location} is being updated by {who}")
                time.sleep(
                    RETRY_SECONDS if deadline is None else min(RETRY_SECONDS, deadline - now)
                )
            lock.announce(holder)
            yield
        finally:
            lock.unlock()
