"""The public entry point: `Index` opens one index file and updates or searches it."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from .embedder import BUNDLED_MODEL_NAME, Embedder, Model2VecEmbedder, default_embedder
from .errors import VaultNotFoundError
from .schema import SCHEMA_VERSION
from .search import Hit, Mode, Searcher, SearchSettings
from .store import Store

if TYPE_CHECKING:
    # The indexer pulls in the chunker, YAML, the scrubber and the vault walker; a search-only
    # process (the per-prompt hook) never needs them, so they load on first update().
    from .indexer import IndexOptions, IndexStats, Progress

__all__ = ["Index", "IndexStatus"]

_BUNDLED = "bundled"


@dataclass(frozen=True)
class IndexStatus:
    """What `noteseek status` reports."""

    db_path: str
    db_bytes: int
    schema_version: int
    vault_root: str | None
    files: int
    chunks: int
    vectors: int
    model: str | None
    model_fingerprint: str | None
    vector_support: bool
    vector_problem: str | None
    last_run: dict[str, Any] | None
    problems: tuple[tuple[str, str, str], ...]
    # Text left out of search on purpose, per file: (path, skipped link sections, secrets).
    left_out: tuple[tuple[str, int, int], ...] = ()

    @property
    def skipped_sections(self) -> int:
        """Link-list sections (Related, See also, ...) left out of search, over all files."""
        return sum(sections for _, sections, _ in self.left_out)

    @property
    def secrets_scrubbed(self) -> int:
        """Values the scrubber replaced, over all files."""
        return sum(secrets for _, _, secrets in self.left_out)


class Index:
    """One noteseek index file.

    >>> with Index("notes.db") as idx:          # doctest: +SKIP
    ...     idx.update("~/vault")
    ...     hits = idx.search("token rotation")
    """

    def __init__(
        self,
        db_path: str | os.PathLike[str],
        *,
        model: str | os.PathLike[str] | None = None,
        embedder: Embedder | None = None,
        options: IndexOptions | None = None,
        settings: SearchSettings | None = None,
        create: bool = True,
    ) -> None:
        self.db_path = Path(db_path).expanduser()
        self.store = Store(self.db_path, create=create)
        self._options = options
        self._explicit_model = embedder is not None or model is not None
        if embedder is None:
            embedder = self._embedder_for(model)
        self.embedder = embedder
        self.searcher = Searcher(self.store, embedder, settings)

    @property
    def options(self) -> IndexOptions:
        """What `update` indexes: the options given, else the folders the last finished run used
        (so a background refresh never indexes a folder the user excluded), else the defaults."""
        if self._options is None:
            from .indexer import IndexOptions

            self._options = IndexOptions.from_scope(self.store.get_meta("scope"))
        return self._options

    def _embedder_for(self, model: str | os.PathLike[str] | None) -> Embedder:
        # Queries must be embedded by the model that embedded the index, so an index built with
        # another model remembers it.
        source = str(model) if model is not None else self.store.get_meta("model_source")
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
        self.store.close()

    def update(
        self,
        vault: str | os.PathLike[str],
        *,
        full: bool = False,
        progress: Progress | None = None,
    ) -> IndexStats:
        """Index new and changed notes of `vault` and drop deleted ones (`full`: re-read all)."""
        from .indexer import run_update

        root = Path(vault).expanduser()
        if not root.is_dir():
            raise VaultNotFoundError(
                f"vault folder {str(root)!r} does not exist or is not a folder"
            )
        stats = run_update(
            self.store, self.embedder, str(root), full=full, options=self.options, progress=progress
        )
        if stats.vectors:
            source = self._model_source()
            if self.store.get_meta("model_source") != source:
                with self.store.write():
                    self.store.set_meta("model_source", source)
        self.searcher.vectors.invalidate()
        return stats

    def _model_source(self) -> str:
        if (
            isinstance(self.embedder, Model2VecEmbedder)
            and self.embedder.name == BUNDLED_MODEL_NAME
        ):
            return _BUNDLED
        if isinstance(self.embedder, Model2VecEmbedder):
            return self.embedder.source
        return self.embedder.name if self.embedder is not None else "none"

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
        max_term_share: float | None = None,
    ) -> list[Hit]:
        """The best notes for `query`, each with its best section, best first.

        Never raises on the query text. `explain=True` fills `Hit.explanation` with the fusion terms.
        `folders` (vault-relative) and `tags` narrow the notes searched: a note must be under one of
        the folders and carry every tag (nested tags count: `project` matches `project/alpha`).
        `max_term_share` overrides the settings' share above which query words are left out of BM25.
        """
        return self.searcher.search(
            query,
            limit=limit,
            mode=mode,
            max_tokens=max_tokens,
            explain=explain,
            folders=folders,
            tags=tags,
            max_term_share=max_term_share,
        )

    def check(self) -> list[str]:
        """Integrity problems (empty when SQLite, FTS5 and the row counts agree)."""
        return self.store.integrity_problems()

    def status(self) -> IndexStatus:
        """Counts, model, vector support, size and the last run of this index."""
        counts = self.store.counts()
        size = sum(
            p.stat().st_size for p in (self.db_path, Path(f"{self.db_path}-wal")) if p.exists()
        )
        return IndexStatus(
            db_path=str(self.db_path),
            db_bytes=size,
            schema_version=SCHEMA_VERSION,
            vault_root=self.store.get_meta("vault_root"),
            files=counts["files"],
            chunks=counts["chunks"],
            vectors=counts.get("vectors", 0),
            model=self.embedder.name if self.embedder is not None else None,
            model_fingerprint=self.store.get_meta("model_fingerprint"),
            vector_support=self.store.vectors_available,
            vector_problem=self.searcher.vector_problem,
            last_run=self.store.get_json("last_run"),
            problems=tuple(self.store.file_problems()),
            left_out=tuple(self.store.left_out()),
        )
