"""noteseek: local-first hybrid (BM25 + vector) search for Markdown note vaults, in one SQLite file.

The public names below are imported on first use (PEP 562), not when the package is imported: a
Claude Code hook starts a fresh process on every prompt, and importing `noteseek.search` must not
pay for the indexer, chunker, YAML, scrubber or Model2Vec. `from noteseek import Index` works as
before; type checkers see the real imports through the `TYPE_CHECKING` block.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

# Not `from typing import TYPE_CHECKING`: importing typing costs a hook process several ms, and
# type checkers treat any constant named TYPE_CHECKING as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .agent_context import PromptContext, prompt_context
    from .chunker import ChunkedNote, ChunkOptions, NoteChunk, chunk_note
    from .context import format_context
    from .embedder import Embedder, Model2VecEmbedder, bundled_model_path, default_embedder
    from .errors import (
        IndexLockedError,
        IndexNotFoundError,
        ModelLoadError,
        NoteAccessError,
        NoteNotIndexedError,
        NoteseekError,
        SchemaVersionError,
        VaultGoneError,
        VaultNotFoundError,
        VectorSupportError,
        WatchError,
    )
    from .fusion import reciprocal_rank_fusion
    from .index import Index, IndexStatus
    from .indexer import IndexOptions, IndexStats
    from .paths import default_db_path
    from .query import fts_query
    from .relevance import GateSettings
    from .scan import ScanReport, scan_secrets
    from .scrubber import Allowlist, AllowlistError, ScrubResult, scrub
    from .search import Explanation, Hit, Mode, SearchSettings

# Public name -> the submodule that defines it.
_EXPORTS: dict[str, str] = {
    "PromptContext": "agent_context",
    "prompt_context": "agent_context",
    "format_context": "context",
    "GateSettings": "relevance",
    "NoteAccessError": "errors",
    "NoteNotIndexedError": "errors",
    "ChunkedNote": "chunker",
    "ChunkOptions": "chunker",
    "NoteChunk": "chunker",
    "chunk_note": "chunker",
    "Embedder": "embedder",
    "Model2VecEmbedder": "embedder",
    "bundled_model_path": "embedder",
    "default_embedder": "embedder",
    "IndexLockedError": "errors",
    "IndexNotFoundError": "errors",
    "ModelLoadError": "errors",
    "NoteseekError": "errors",
    "SchemaVersionError": "errors",
    "VaultGoneError": "errors",
    "VaultNotFoundError": "errors",
    "VectorSupportError": "errors",
    "WatchError": "errors",
    "reciprocal_rank_fusion": "fusion",
    "Index": "index",
    "IndexStatus": "index",
    "IndexOptions": "indexer",
    "IndexStats": "indexer",
    "default_db_path": "paths",
    "fts_query": "query",
    "ScanReport": "scan",
    "scan_secrets": "scan",
    "Allowlist": "scrubber",
    "AllowlistError": "scrubber",
    "ScrubResult": "scrubber",
    "scrub": "scrubber",
    "Explanation": "search",
    "Hit": "search",
    "Mode": "search",
    "SearchSettings": "search",
}

__all__ = [
    "Allowlist",
    "AllowlistError",
    "ChunkOptions",
    "ChunkedNote",
    "Embedder",
    "Explanation",
    "GateSettings",
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
    "NoteAccessError",
    "NoteChunk",
    "NoteNotIndexedError",
    "NoteseekError",
    "PromptContext",
    "ScanReport",
    "SchemaVersionError",
    "ScrubResult",
    "SearchSettings",
    "VaultGoneError",
    "VaultNotFoundError",
    "VectorSupportError",
    "WatchError",
    "__version__",
    "bundled_model_path",
    "chunk_note",
    "default_db_path",
    "default_embedder",
    "format_context",
    "fts_query",
    "prompt_context",
    "reciprocal_rank_fusion",
    "scan_secrets",
    "scrub",
]


def __getattr__(name: str) -> Any:
    """Import a public name's module on first access and cache the name in this module."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'noteseek' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
