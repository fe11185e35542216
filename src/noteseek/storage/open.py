"""Open the storage an index locator names: the backend is chosen from the locator.

A path (or anything without a URL scheme) is an SQLite file. A URL such as `postgresql://…` names
a server database; no backend for it exists yet (issue 18 adds `storage/postgres/`, which plugs in
here and nowhere else).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..errors import NoteseekError

if TYPE_CHECKING:
    from .protocol import Storage

__all__ = ["UnsupportedStorageError", "is_url", "open_storage"]

class UnsupportedStorageError(NoteseekError):
    """The locator names a storage backend this noteseek does not have."""


def is_url(locator: str | os.PathLike[str]) -> bool:
    """Whether a locator is a URL (`scheme://…`, RFC 3986 scheme) rather than a file path."""
    scheme, sep, _ = os.fspath(locator).partition("://")
    # No regex: this runs in every one-shot process, where compiling one costs more than the test.
    return bool(sep and scheme[:1].isascii() and scheme[:1].isalpha()) and all(
        c.isascii() and (c.isalnum() or c in "+.-") for c in scheme
    )


def open_storage(locator: str | os.PathLike[str], *, create: bool = True) -> Storage:
    """The storage at `locator`: an SQLite file for a path (made when missing, with `create`)."""
    if is_url(locator):
        scheme = os.fspath(locator).split("://", 1)[0]
        raise UnsupportedStorageError(
            f"no storage backend for {scheme}:// URLs in this noteseek; give an index file path"
        )
    from .sqlite.store import SqliteStore

    return SqliteStore(locator, create=create)
