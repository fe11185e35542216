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

    from .agents.prompt_context import PromptContext, prompt_context
    from .core.chunker import ChunkedNote, ChunkOptions, NoteChunk, chunk_note
    from .core.context_block import format_context
    from .core.fusion import reciprocal_rank_fusion
    from .core.locator import DatabaseUrl
    from .core.query import fts_query
    from .core.relevance import GateSettings
    from .embedding.embedder import (
        Embedder,
        Model2VecEmbedder,
        bundled_model_path,
        default_embedder,
    )
    from .engine.coverage import Coverage, FileCoverage
    from .engine.index import Index, IndexStatus
    from .engine.locations import data_dir, default_db_path
    from .engine.note_access import NoteText
    from .engine.open import LazyIndex, Locator, locate_index, open_index
    from .engine.request import DEFAULT_MIN_SCORE, SearchRequest, SearchResult
    from .engine.search import MODES, Explanation, Hit, Mode, SearchSettings
    from .engine.secret_scan import ScanReport, load_allowlist, scan_secrets
    from .engine.update.options import IndexOptions, IndexStats
    from .errors import (
        DatabaseConnectionError,
        IndexLockedError,
        IndexNotFoundError,
        IndexReadOnlyError,
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
    from .secrets.scrubber import Allowlist, AllowlistError, ScrubResult, scrub

# Public name -> the submodule that defines it.
_EXPORTS: dict[str, str] = {
    "PromptContext": "agents.prompt_context",
    "prompt_context": "agents.prompt_context",
    "format_context": "core.context_block",
    "GateSettings": "core.relevance",
    "NoteAccessError": "errors",
    "NoteNotIndexedError": "errors",
    "ChunkedNote": "core.chunker",
    "ChunkOptions": "core.chunker",
    "NoteChunk": "core.chunker",
    "chunk_note": "core.chunker",
    "Embedder": "embedding.embedder",
    "Model2VecEmbedder": "embedding.embedder",
    "bundled_model_path": "embedding.embedder",
    "default_embedder": "embedding.embedder",
    "IndexLockedError": "errors",
    "IndexReadOnlyError": "errors",
    "DatabaseConnectionError": "errors",
    "DatabaseUrl": "core.locator",
    "IndexNotFoundError": "errors",
    "ModelLoadError": "errors",
    "NoteseekError": "errors",
    "SchemaVersionError": "errors",
    "VaultGoneError": "errors",
    "VaultNotFoundError": "errors",
    "VectorSupportError": "errors",
    "WatchError": "errors",
    "reciprocal_rank_fusion": "core.fusion",
    "Coverage": "engine.coverage",
    "FileCoverage": "engine.coverage",
    "Index": "engine.index",
    "IndexStatus": "engine.index",
    "NoteText": "engine.note_access",
    "LazyIndex": "engine.open",
    "Locator": "engine.open",
    "locate_index": "engine.open",
    "open_index": "engine.open",
    "DEFAULT_MIN_SCORE": "engine.request",
    "SearchRequest": "engine.request",
    "SearchResult": "engine.request",
    "IndexOptions": "engine.update.options",
    "IndexStats": "engine.update.options",
    "data_dir": "engine.locations",
    "default_db_path": "engine.locations",
    "fts_query": "core.query",
    "ScanReport": "engine.secret_scan",
    "scan_secrets": "engine.secret_scan",
    "load_allowlist": "engine.secret_scan",
    "Allowlist": "secrets.scrubber",
    "AllowlistError": "secrets.scrubber",
    "ScrubResult": "secrets.scrubber",
    "scrub": "secrets.scrubber",
    "MODES": "engine.search",
    "Explanation": "engine.search",
    "Hit": "engine.search",
    "Mode": "engine.search",
    "SearchSettings": "engine.search",
}

__all__ = [
    "DEFAULT_MIN_SCORE",
    "MODES",
    "Allowlist",
    "AllowlistError",
    "ChunkOptions",
    "ChunkedNote",
    "Coverage",
    "DatabaseConnectionError",
    "DatabaseUrl",
    "Embedder",
    "Explanation",
    "FileCoverage",
    "GateSettings",
    "Hit",
    "Index",
    "IndexLockedError",
    "IndexNotFoundError",
    "IndexOptions",
    "IndexReadOnlyError",
    "IndexStats",
    "IndexStatus",
    "LazyIndex",
    "Locator",
    "Mode",
    "Model2VecEmbedder",
    "ModelLoadError",
    "NoteAccessError",
    "NoteChunk",
    "NoteNotIndexedError",
    "NoteText",
    "NoteseekError",
    "PromptContext",
    "ScanReport",
    "SchemaVersionError",
    "ScrubResult",
    "SearchRequest",
    "SearchResult",
    "SearchSettings",
    "VaultGoneError",
    "VaultNotFoundError",
    "VectorSupportError",
    "WatchError",
    "__version__",
    "bundled_model_path",
    "chunk_note",
    "data_dir",
    "default_db_path",
    "default_embedder",
    "format_context",
    "fts_query",
    "load_allowlist",
    "locate_index",
    "open_index",
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
