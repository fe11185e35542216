"""Typed domain errors. The library raises these; only the CLI turns them into messages and exit codes."""

from __future__ import annotations

__all__ = [
    "IndexLockedError",
    "IndexNotFoundError",
    "ModelLoadError",
    "NoteseekError",
    "SchemaVersionError",
    "VaultNotFoundError",
    "VectorSupportError",
]


class NoteseekError(Exception):
    """Base class of every error noteseek raises on purpose."""


class VaultNotFoundError(NoteseekError):
    """The vault folder does not exist or is not a directory."""


class IndexNotFoundError(NoteseekError):
    """No index file exists where one was expected."""


class SchemaVersionError(NoteseekError):
    """The index file was written by a newer noteseek than this one."""


class ModelLoadError(NoteseekError):
    """The embedding model could not be loaded."""


class IndexLockedError(NoteseekError):
    """Another process is writing to the index right now."""


class VectorSupportError(NoteseekError):
    """The index holds vectors but sqlite-vec cannot be loaded, so it must not be written."""
