"""Which collections (vaults) of the database one storage means, and how their paths are shown.

A locator names its collections in the URL's `collection` parameter (`core/locator.py`): one
name, several (`a,b`) or all (`*`); without it a reader gets the only collection there is, or all
of them. Only a single collection named explicitly can be written: a write must never land in a
vault the user did not name.

Searching one collection shows vault-relative paths, exactly as the SQLite backend does. Searching
several shows `collection/path`, because two vaults may both hold `README.md`; every method that
takes a path (note access, folder filters) takes it in that form too, so `--folder work/howto`
filters collection `work`'s folder `howto` and `--folder work` the whole collection.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ...core.locator import ALL_COLLECTIONS
from ...errors import IndexNotFoundError, NoteseekError

__all__ = [
    "MAX_NAME_CHARS",
    "CollectionNameError",
    "Collections",
    "Selection",
    "parse_selection",
]

MAX_NAME_CHARS = 64
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")


class CollectionNameError(NoteseekError):
    """A collection name that cannot be used (characters, length)."""


@dataclass(frozen=True)
class Selection:
    """What the locator asked for: named collections, all of them, or nothing in particular."""

    names: tuple[str, ...] = ()  # explicit names, in the order given
    everything: bool = False  # `*`

    @property
    def explicit_one(self) -> str | None:
        """The one collection named, when exactly one was (the only writable selection)."""
        return self.names[0] if len(self.names) == 1 and not self.everything else None


def check_name(name: str) -> str:
    """A valid collection name, or CollectionNameError saying what is allowed."""
    if not name or len(name) > MAX_NAME_CHARS or not set(name) <= _NAME_CHARS or name[0] in ".-":
        raise CollectionNameError(
            f"{name[:80]!r} is not a collection name: use 1-{MAX_NAME_CHARS} letters, digits, "
            "'.', '_' or '-' (not starting with '.' or '-'), e.g. --collection team-notes"
        )
    return name


def parse_selection(text: str | None) -> Selection:
    """The selection of a `collection` parameter: `name`, `a,b`, `*` or None."""
    if text is None or not text.strip():
        return Selection()
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if ALL_COLLECTIONS in parts:
        return Selection(everything=True)
    return Selection(tuple(dict.fromkeys(check_name(p) for p in parts)))


class Collections:
    """The collections one storage reads: ids, names, and the paths it shows for them."""

    def __init__(self, pairs: Sequence[tuple[int, str]], *, multi: bool) -> None:
        self.pairs = tuple(pairs)
        self.ids = [cid for cid, _ in self.pairs]
        self.name_of = dict(self.pairs)
        self.id_of = {name: cid for cid, name in self.pairs}
        self.multi = multi

    @property
    def only(self) -> int:
        """The collection id when there is one (single mode)."""
        return self.ids[0]

    def show(self, collection_id: int, path: str) -> str:
        """A stored vault-relative path as this storage shows it."""
        return f"{self.name_of[collection_id]}/{path}" if self.multi else path

    def split(self, path: str) -> tuple[int, str] | None:
        """(collection id, vault-relative path) of a shown path; None when it names none of ours."""
        if not self.multi:
            return self.only, path
        name, sep, rest = path.partition("/")
        cid = self.id_of.get(name)
        return None if cid is None or not sep else (cid, rest)

    def split_folder(self, folder: str) -> tuple[int | None, str] | None:
        """(collection id or None for all, folder inside it) of a shown folder prefix."""
        if not self.multi or folder == "":
            return None, folder
        name, _, rest = folder.partition("/")
        cid = self.id_of.get(name)
        return None if cid is None else (cid, rest)

    def label(self) -> str:
        """The selection as a `collection` parameter value."""
        return ",".join(name for _, name in self.pairs)


def resolve(found: Iterable[tuple[int, str]], selection: Selection, *, where: str) -> Collections:
    """The collections of `selection` among those `found` in the database; IndexNotFoundError
    (naming what exists and how to make one) when a named one or any at all is missing."""
    existing = dict((name, cid) for cid, name in found)
    listing = ", ".join(sorted(existing)) or "none yet"
    if selection.everything or not selection.names:
        if not existing:
            raise IndexNotFoundError(
                f"no collections yet in {where}: run 'noteseek index PATH/TO/VAULT --db URL' "
                "first (each vault becomes a collection)"
            )
        pairs = sorted((cid, name) for name, cid in existing.items())
        return Collections(pairs, multi=selection.everything or len(pairs) > 1)
    missing = [name for name in selection.names if name not in existing]
    if missing:
        raise IndexNotFoundError(
            f"no collection {missing[0]!r} in {where} (collections there: {listing}): run "
            f"'noteseek index PATH/TO/VAULT --db URL --collection {missing[0]}' first"
        )
    pairs = [(existing[name], name) for name in selection.names]
    return Collections(pairs, multi=len(pairs) > 1)
