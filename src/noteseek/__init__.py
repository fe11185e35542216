"""noteseek: local-first hybrid (BM25 + vector) search for Markdown note vaults, in one SQLite file."""

from __future__ import annotations

from .chunker import ChunkedNote, ChunkOptions, NoteChunk, chunk_note
from .embedder import Embedder, Model2VecEmbedder, bundled_model_path, default_embedder
from .errors import (
    IndexLockedError,
    IndexNotFoundError,
    ModelLoadError,
    NoteseekError,
    SchemaVersionError,
    VaultNotFoundError,
    VectorSupportError,
)
from .fusion import reciprocal_rank_fusion
from .index import Index, IndexStatus
from .indexer import IndexOptions, IndexStats
from .paths import default_db_path
from .query import fts_query
from .scan import ScanReport, scan_secrets
from .scrubber import Allowlist, AllowlistError, ScrubResult, scrub
from .search import Explanation, Hit, Mode, SearchSettings

__version__ = "0.1.0"

__all__ = [
    "Allowlist",
    "AllowlistError",
    "ChunkOptions",
    "ChunkedNote",
    "Embedder",
    "Explanation",
    "Hit",
    "Index",
    "IndexLockedError",
    "IndexNotFoundError",
    "IndexOptions",
    "IndexStats",
    "IndexStatus",
    "Mode",
    "Model2VecEmbedder",
    "ModelLoadError",
    "NoteChunk",
    "NoteseekError",
    "ScanReport",
    "SchemaVersionError",
    "ScrubResult",
    "SearchSettings",
    "VaultNotFoundError",
    "VectorSupportError",
    "__version__",
    "bundled_model_path",
    "chunk_note",
    "default_db_path",
    "default_embedder",
    "fts_query",
    "reciprocal_rank_fusion",
    "scan_secrets",
    "scrub",
]
