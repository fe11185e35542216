"""Open the storage an index locator names: the backend is chosen from the locator.

A path (or anything without a URL scheme) is an SQLite file. A `postgresql://` or `postgres://`
URL (a `DatabaseUrl`, or a string) is a PostgreSQL database with pgvector (`storage/postgres/`,
the `postgres` extra); any other scheme is refused.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..core.locator import DatabaseUrl
from ..core.locator import is_url as _is_url
from ..errors import NoteseekError
from ..extras import EXTRAS, require

if TYPE_CHECKING:
    from .protocol import Storage

__all__ = ["POSTGRES_SCHEMES", "UnsupportedStorageError", "is_url", "open_storage"]

POSTGRES_SCHEMES = ("postgresql", "postgres")


class UnsupportedStorageError(NoteseekError):
    """The locator names a storage backend this noteseek does not have."""


def is_url(locator: str | os.PathLike[str] | DatabaseUrl) -> bool:
    """Whether a locator is a URL (`scheme://…`) rather than a file path."""
    return isinstance(locator, DatabaseUrl) or _is_url(os.fspath(locator))


def open_storage(locator: str | os.PathLike[str] | DatabaseUrl, *, create: bool = True) -> Storage:
    """The storage at `locator`: an SQLite file for a path (made when missing, with `create`), a
    PostgreSQL collection for a `postgresql://` URL (its schema and collection made with
    `create`)."""
    if is_url(locator):
        url = locator if isinstance(locator, DatabaseUrl) else DatabaseUrl(os.fspath(locator))
        scheme = url.url.split("://", 1)[0].lower()
        if scheme not in POSTGRES_SCHEMES:
            raise UnsupportedStorageError(
                f"no storage backend for {scheme}:// URLs in this noteseek; give an index file "
                "path or a postgresql:// URL"
            )
        for module in EXTRAS["postgres"]:
            require("postgres", module, what="a postgresql:// index")
        # deferred: the backend named, only; a PostgreSQL index never loads SQLite's, nor the other way
        from .postgres.store import PostgresStore

        return PostgresStore(url, create=create)
    # deferred: the backend named, only; a PostgreSQL index never loads SQLite's, nor the other way
    from .sqlite.store import SqliteStore

    assert not isinstance(locator, DatabaseUrl)  # is_url above
    return SqliteStore(locator, create=create)
