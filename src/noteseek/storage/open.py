"""Open the storage an index locator names: the backend is chosen from the locator.

A path (or anything without a URL scheme) is an SQLite file. A URL such as `postgresql://…` names
a server database; no backend for it exists yet (issue 18 adds `storage/postgres/`, which plugs in
here and nowhere else).
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from ..errors import NoteseekError

if TYPE_CHECKING:
    from .protocol import Storage

__all__ = ["UnsupportedStorageError", "is_url", "open_storage"]

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


class UnsupportedStorageError(NoteseekError):
    """The locator names a storage backend this noteseek does not have."""


def is_url(locator: str | os.PathLike[str]) -> bool:
    """Whether a locator is a URL (`scheme://…`) rather than a file path."""
    return bool(_SCHEME.match(os.fspath(locator)))


def open_storage(locator: str | os.PathLike[str], *, create: bool = True) -> Storage:
    """The storage at `locator`: an SQLite file for a path (made when missing, with `create`)."""
    if is_url(locator):
        scheme = os.fspath(locator).split("://", 1)[0]
        raise UnsupportedStorageError(
            f"no storage backend for {scheme}:// URLs in this noteseek; give an index file path"
        )
    from .sqlite.store import SqliteStore

    return SqliteStore(locator, create=create)
