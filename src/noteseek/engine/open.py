"""Finding and opening an index: the one way every adapter gets an `Index`.

`locate_index` says which file is meant, `open_index` opens it (refusing a missing one with the
command that makes it), and `LazyIndex` is the holder the long-lived adapters keep (the MCP
server, the daemon) and the hook uses: opened on first use, and it tells when the file was
replaced, so a daemon can open it again.

Light on purpose: the per-prompt hook imports this module before it knows whether it needs an
index at all, so the index itself (storage, embedding, search) is imported only when one opens.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..core.locator import DatabaseUrl, collection_slug
from ..errors import IndexNotFoundError, VaultNotFoundError
from ..settings import ENV_COLLECTION, ENV_DB, ENV_WRITE_DB
from .locator import Locator, as_locator

# Not `from typing import TYPE_CHECKING`: a hook that finds the warm daemon still comes here, and
# typing costs it several ms. Type checkers treat any constant named TYPE_CHECKING as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Hashable

    from ..embedding.embedder import Embedder
    from .index import Index
    from .search.searcher import SearchSettings
    from .update.options import IndexOptions

    Opener = Callable[[Path | DatabaseUrl], Index]

__all__ = ["LazyIndex", "Locator", "as_locator", "locate_index", "open_index"]


def locate_index(
    *,
    db: str | os.PathLike[str] | DatabaseUrl | None = None,
    vault: str | os.PathLike[str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    collection: str | None = None,
    write: bool = False,
) -> Locator:
    """Which index is meant: `db`, $NOTESEEK_DB (for a `write`, $NOTESEEK_WRITE_DB first),
    `vault`'s index, the index of a vault that contains `cwd` (default: the current folder), or
    the only index there is.

    An explicit path (what `install-hooks --db` writes) is taken as it is, without looking at
    noteseek's data folder. A database URL gets its collection from `collection`, else its own
    `collection` parameter, else $NOTESEEK_COLLECTION, else the vault folder's name; without any
    of them a reader sees the only collection or all of them (docs/scale.md).
    """
    chosen = db or (os.environ.get(ENV_WRITE_DB) if write else None) or os.environ.get(ENV_DB)
    if chosen:
        found = as_locator(chosen)
        if isinstance(found, DatabaseUrl):
            return _with_collection(found, collection, vault)
    else:
        # deferred: the data folder's lookup (platformdirs, ~8 ms), only without an index named
        from .locations import resolve_db

        found = resolve_db(vault=None if vault is None else str(vault), cwd=cwd)
    if collection:
        raise IndexNotFoundError(
            f"a collection ({collection!r}) belongs to a database index (--db postgresql://…); "
            f"{found} is an index file: leave out --collection"
        )
    return found


def _with_collection(
    url: DatabaseUrl, collection: str | None, vault: str | os.PathLike[str] | None
) -> DatabaseUrl:
    name = collection or url.collection or os.environ.get(ENV_COLLECTION)
    if not name and vault is not None:
        name = collection_slug(Path(vault).expanduser().resolve().name)
    return url.with_collection(name) if name else url


def open_index(
    db: str | os.PathLike[str] | DatabaseUrl | None = None,
    vault: str | os.PathLike[str] | None = None,
    *,
    create: bool = False,
    cwd: str | os.PathLike[str] | None = None,
    model: str | os.PathLike[str] | None = None,
    embedder: Embedder | None = None,
    options: IndexOptions | None = None,
    settings: SearchSettings | None = None,
    collection: str | None = None,
    write: bool = False,
) -> Index:
    """The index `locate_index` finds, opened; with `create`, made when missing (`noteseek index`).

    Raises IndexNotFoundError, naming the command to run, when there is none to open, and
    VaultNotFoundError when `vault` is not a folder (with `create`, before anything is made).
    `collection` and `write` are `locate_index`'s (a command that writes passes `write=True`).
    """
    if create and vault is not None:
        # Before anything is made: `noteseek index /typo/vault` must not leave an empty index
        # behind, which later searches would find and answer "no matches" from.
        _check_vault(vault)
    path = locate_index(db=db, vault=vault, cwd=cwd, collection=collection, write=write)
    if not create and not path.exists():
        if vault is not None:
            _check_vault(vault)  # a typo in --vault is no such folder, not a missing index
            if db is None:  # the index looked for is the vault's: the command names it
                raise IndexNotFoundError.at(path, vault=str(Path(vault).expanduser()))
        raise IndexNotFoundError.at(path)
    # deferred: the Index (~45 ms to import), only to open one; locate_index alone never loads it
    from .index import Index

    return Index(
        path, model=model, embedder=embedder, options=options, settings=settings, create=create
    )


def _check_vault(vault: str | os.PathLike[str]) -> None:
    folder = Path(vault).expanduser()
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise VaultNotFoundError(f"no such vault folder: {str(folder)!r} {what}")


def _open_existing(path: Locator) -> Index:
    return open_index(path)


class LazyIndex:
    """An existing index opened on first use and kept until `close()`.

    Until it opens, every `get()` looks the file up again, so a server started before
    `noteseek index` ran finds the index once it exists. `opener` replaces `open_index` (tests
    give the index a fake model); `collection` and `write` are `locate_index`'s. Not
    thread-safe: callers hold their own lock.
    """

    def __init__(
        self,
        *,
        db: str | os.PathLike[str] | DatabaseUrl | None = None,
        vault: str | os.PathLike[str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        opener: Opener | None = None,
        collection: str | None = None,
        write: bool = False,
    ) -> None:
        self._db, self._vault, self._cwd = db, vault, cwd
        self._collection, self._write = collection, write
        self._opener: Opener = opener or _open_existing
        self._index: Index | None = None
        self._identity: Hashable = None

    @property
    def opened(self) -> bool:
        """Whether the index is open now."""
        return self._index is not None

    def path(self) -> Locator:
        """The index meant (looked up again on every call)."""
        return locate_index(
            db=self._db,
            vault=self._vault,
            cwd=self._cwd,
            collection=self._collection,
            write=self._write,
        )

    def get(self, *, track_identity: bool = False) -> Index:
        """The open index, opened now if it is not; `track_identity` remembers its `identity()`
        so that `replaced()` can tell when to open it again (a long-lived daemon)."""
        if self._index is None:
            index = self._opener(self.path())
            self._index = index
            self._identity = index.identity() if track_identity else None
        return self._index

    def replaced(self) -> bool:
        """Whether the open index's file was replaced or re-indexed with another model since
        `get(track_identity=True)` opened it (raises OSError when the file is gone)."""
        return self._index is not None and self._index.identity() != self._identity

    def open_separate(self) -> Index:
        """Another Index on the same file, with its own connection (for another thread)."""
        return self._opener(self.path())

    def close(self) -> None:
        """Close the index if it is open."""
        if self._index is not None:
            self._index.close()
            self._index = None
