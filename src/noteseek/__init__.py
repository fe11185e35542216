"""noteseek: local-first hybrid (BM25 + vector) search for Markdown note vaults, in one SQLite file.

The public names below are imported on first use (PEP 562), not when the package is imported: a
Claude Code hook starts a fresh process on every prompt, and importing `noteseek.search` must not
pay for the indexer, chunker, YAML, scrubber or Model2Vec. `from noteseek import Index` works as
before; type checkers see the real imports through the `TYPE_CHECKING` block.
"""

from __future__ import annotations

import importlib

__version__ = "0.6.0.dev0"

# Not `from typing import TYPE_CHECKING`: importing typing costs a hook process several ms, and
# type checkers treat any constant named TYPE_CHECKING as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .agents.prompt_context import PromptContext as PromptContext
    from .agents.prompt_context import prompt_context as prompt_context
    from .core.chunker import ChunkedNote as ChunkedNote
    from .core.chunker import ChunkOptions as ChunkOptions
    from .core.chunker import NoteChunk as NoteChunk
    from .core.chunker import chunk_note as chunk_note
    from .core.context_block import format_context as format_context
    from .core.fusion import reciprocal_rank_fusion as reciprocal_rank_fusion
    from .core.locator import DatabaseUrl as DatabaseUrl
    from .core.query import fts_query as fts_query
    from .core.relevance import GateSettings as GateSettings
    from .core.time_range import TimeRange as TimeRange
    from .embedding.embedder import Embedder as Embedder
    from .embedding.embedder import Model2VecEmbedder as Model2VecEmbedder
    from .embedding.embedder import bundled_model_path as bundled_model_path
    from .embedding.embedder import default_embedder as default_embedder
    from .engine.coverage import Coverage as Coverage
    from .engine.coverage import FileCoverage as FileCoverage
    from .engine.image_access import ImageFile as ImageFile
    from .engine.index import Index as Index
    from .engine.index import IndexStatus as IndexStatus
    from .engine.links import Backlink as Backlink
    from .engine.links import NoteLinks as NoteLinks
    from .engine.links import Outlink as Outlink
    from .engine.locations import data_dir as data_dir
    from .engine.locations import default_db_path as default_db_path
    from .engine.note_access import NoteText as NoteText
    from .engine.open import LazyIndex as LazyIndex
    from .engine.open import Locator as Locator
    from .engine.open import locate_index as locate_index
    from .engine.open import open_index as open_index
    from .engine.search.hits import Explanation as Explanation
    from .engine.search.hits import Hit as Hit
    from .engine.search.request import DEFAULT_MIN_ANSWER as DEFAULT_MIN_ANSWER
    from .engine.search.request import DEFAULT_MIN_SCORE as DEFAULT_MIN_SCORE
    from .engine.search.request import MODES as MODES
    from .engine.search.request import SEARCH_LIMITS as SEARCH_LIMITS
    from .engine.search.request import SORTS as SORTS
    from .engine.search.request import Mode as Mode
    from .engine.search.request import SearchLimits as SearchLimits
    from .engine.search.request import SearchRequest as SearchRequest
    from .engine.search.request import SearchResult as SearchResult
    from .engine.search.request import Sort as Sort
    from .engine.search.searcher import SearchSettings as SearchSettings
    from .engine.secret_scan import ScanReport as ScanReport
    from .engine.secret_scan import load_allowlist as load_allowlist
    from .engine.secret_scan import scan_secrets as scan_secrets
    from .engine.update.options import IndexOptions as IndexOptions
    from .engine.update.options import IndexStats as IndexStats
    from .errors import DatabaseConnectionError as DatabaseConnectionError
    from .errors import IndexLockedError as IndexLockedError
    from .errors import IndexNotFoundError as IndexNotFoundError
    from .errors import IndexReadOnlyError as IndexReadOnlyError
    from .errors import InvalidDateError as InvalidDateError
    from .errors import MissingExtraError as MissingExtraError
    from .errors import ModelLoadError as ModelLoadError
    from .errors import NotAnIndexError as NotAnIndexError
    from .errors import NoteAccessError as NoteAccessError
    from .errors import NoteNotIndexedError as NoteNotIndexedError
    from .errors import NoteseekError as NoteseekError
    from .errors import SchemaVersionError as SchemaVersionError
    from .errors import SearchRequestError as SearchRequestError
    from .errors import VaultGoneError as VaultGoneError
    from .errors import VaultNotFoundError as VaultNotFoundError
    from .errors import VectorSupportError as VectorSupportError
    from .errors import WatchError as WatchError
    from .secrets.scrubber import Allowlist as Allowlist
    from .secrets.scrubber import AllowlistError as AllowlistError
    from .secrets.scrubber import KnownSecrets as KnownSecrets
    from .secrets.scrubber import ScrubResult as ScrubResult
    from .secrets.scrubber import scrub as scrub

# The public API: name -> the submodule that defines it. `__all__` is this table; the imports
# above repeat it for type checkers only (tests/test_public_api.py keeps the two equal).
_EXPORTS: dict[str, str] = {
    "PromptContext": "agents.prompt_context",
    "prompt_context": "agents.prompt_context",
    "ChunkOptions": "core.chunker",
    "ChunkedNote": "core.chunker",
    "NoteChunk": "core.chunker",
    "chunk_note": "core.chunker",
    "format_context": "core.context_block",
    "reciprocal_rank_fusion": "core.fusion",
    "DatabaseUrl": "core.locator",
    "fts_query": "core.query",
    "GateSettings": "core.relevance",
    "Embedder": "embedding.embedder",
    "Model2VecEmbedder": "embedding.embedder",
    "bundled_model_path": "embedding.embedder",
    "default_embedder": "embedding.embedder",
    "Coverage": "engine.coverage",
    "FileCoverage": "engine.coverage",
    "Index": "engine.index",
    "IndexStatus": "engine.index",
    "Backlink": "engine.links",
    "NoteLinks": "engine.links",
    "Outlink": "engine.links",
    "data_dir": "engine.locations",
    "default_db_path": "engine.locations",
    "NoteText": "engine.note_access",
    "ImageFile": "engine.image_access",
    "LazyIndex": "engine.open",
    "Locator": "engine.open",
    "locate_index": "engine.open",
    "open_index": "engine.open",
    "DEFAULT_MIN_ANSWER": "engine.search.request",
    "DEFAULT_MIN_SCORE": "engine.search.request",
    "SEARCH_LIMITS": "engine.search.request",
    "SearchLimits": "engine.search.request",
    "SearchRequest": "engine.search.request",
    "SearchResult": "engine.search.request",
    "SearchRequestError": "errors",
    "Explanation": "engine.search.hits",
    "Hit": "engine.search.hits",
    "MODES": "engine.search.request",
    "Mode": "engine.search.request",
    "SearchSettings": "engine.search.searcher",
    "ScanReport": "engine.secret_scan",
    "load_allowlist": "engine.secret_scan",
    "scan_secrets": "engine.secret_scan",
    "SORTS": "engine.search.request",
    "Sort": "engine.search.request",
    "TimeRange": "core.time_range",
    "InvalidDateError": "errors",
    "IndexOptions": "engine.update.options",
    "IndexStats": "engine.update.options",
    "DatabaseConnectionError": "errors",
    "IndexLockedError": "errors",
    "IndexNotFoundError": "errors",
    "IndexReadOnlyError": "errors",
    "MissingExtraError": "errors",
    "ModelLoadError": "errors",
    "NoteAccessError": "errors",
    "NoteNotIndexedError": "errors",
    "NoteseekError": "errors",
    "NotAnIndexError": "errors",
    "SchemaVersionError": "errors",
    "VaultGoneError": "errors",
    "VaultNotFoundError": "errors",
    "VectorSupportError": "errors",
    "WatchError": "errors",
    "Allowlist": "secrets.scrubber",
    "AllowlistError": "secrets.scrubber",
    "KnownSecrets": "secrets.scrubber",
    "ScrubResult": "secrets.scrubber",
    "scrub": "secrets.scrubber",
}

__all__ = ["__version__", *_EXPORTS]


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
