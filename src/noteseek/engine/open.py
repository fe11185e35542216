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

from ..errors import IndexNotFoundError
from ..settings import ENV_DB

# Not `from typing import TYPE_CHECKING`: a hook that finds the warm daemon still comes here, and
# typing costs it several ms. Type checkers treat any constant named TYPE_CHECKING as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Hashable

    from ..embedding.embedder import Embedder
    from .index import Index
    from .search import SearchSettings
    from .update.options import IndexOptions

    Opener = Callable[[Path], Index]

__all__ = ["LazyIndex", "locate_index", "open_index"]


def locate_index(
    *,
    db: str | os.PathLike[str] | None = None,
    vault: str | os.PathLike[str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
) -> Path:
    """Which index file is meant: `db`, $NOTESEEK_DB, `vault`'s index, the index of a vault that
    contains `cwd` (default: the current folder), or the only index there is.

    An explicit path (what `install-hooks --db` writes) is taken as it is, without looking at
    noteseek's data folder.
    """
    if db:
        return Path(db).expanduser()
    if os.environ.get(ENV_DB):
        return Path(os.environ[ENV_DB]).expanduser()
    from .locations import resolve_db

    return resolve_db(vault=None if vault is None else str(vault), cwd=cwd)


def open_index(
    db: str | os.PathLike[str] | None = None,
    vault: str | os.PathLike[str] | None = None,
    *,
    create: bool = False,
    cwd: str | os.PathLike[str] | None = None,
    model: str | os.PathLike[str] | None = None,
    embedder: Embedder | None = None,
    options: IndexOptions | None = None,
    settings: SearchSettings | None = None,
) -> Index:
    """The index `locate_index` finds, opened; with `create`, made when missing (`noteseek index`).

    Raises IndexNotFoundError, naming the command to run, when there is none to open.
    """
    path = locate_index(db=db, vault=vault, cwd=cwd)
    if not create and not path.exists():
        raise IndexNotFoundError.at(path)
    from .index import Index

    return Index(
        path, model=model, embedder=embedder, options=options, settings=settings, create=create
    )


def _open_existing(path: Path) -> Index:
    return open_index(path)


class LazyIndex:
    """An existing index opened on first use and kept until `close()`.

    Until it opens, every `get()` looks the file up again, so a server started before
    `noteseek index` ran finds the index once it exists. `opener` replaces `open_index` (tests
    give the index a fake model). Not thread-safe: callers hold their own lock.
    """

    def __init__(
        self,
        *,
        db: str | os.PathLike[str] | None = None,
        vault: str | os.PathLike[str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        opener: Opener | None = None,
    ) -> None:
        self._db, self._vault, self._cwd = db, vault, cwd
        self._opener: Opener = opener or _open_existing
        self._index: Index | None = None
        self._identity: Hashable = None

    @property
    def opened(self) -> bool:
        """Whether the index is open now."""
        return self._index is not None

    def path(self) -> Path:
        """The index file meant (looked up again on every call)."""
        return locate_index(db=self._db, vault=self._vault, cwd=self._cwd)

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
