"""A note's links: its backlinks (with the linking line) and its outlinks, resolved as Obsidian
resolves them, from the links the update stored (`Storage.links_to`, `links_of_files`).

Resolution happens here, when read, against the paths the index holds now: a rename or a new
note changes what a stored link opens without re-reading the notes that link to it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..core.links import file_key, fold_name, link_key, resolve_link
from ..errors import NoteNotIndexedError

if TYPE_CHECKING:
    from ..core.links import ParsedLink
    from ..storage.protocol import Storage

__all__ = ["Backlink", "LinkCache", "LinkGraph", "NoteLinks", "Outlink", "note_links"]


@dataclass(frozen=True)
class Backlink:
    """A note that links to (or embeds) the note, the line it does so on, and that line."""

    path: str
    line: int
    text: str


@dataclass(frozen=True)
class Outlink:
    """A link the note makes, as written (`target` with its `#…` part), and the path it opens
    (None: unresolved, no such note in the index)."""

    target: str
    path: str | None


@dataclass(frozen=True)
class NoteLinks:
    """Every backlink and outlink of one note."""

    note: str
    backlinks: tuple[Backlink, ...]
    outlinks: tuple[Outlink, ...]

    def to_json(self) -> dict[str, Any]:
        """`noteseek links --json`, the MCP tool and the HTTP API."""
        return {
            "note": self.note,
            "backlinks": [{"path": b.path, "line": b.line, "text": b.text} for b in self.backlinks],
            "outlinks": [{"target": o.target, "path": o.path} for o in self.outlinks],
        }


class LinkGraph:
    """The index's paths, by link key and by alias, for resolving links (one snapshot)."""

    def __init__(self, store: Storage) -> None:
        self.store = store
        self.paths = store.file_paths()
        self.ids = {path: file_id for file_id, path in self.paths.items()}
        self.by_key: dict[str, list[str]] = defaultdict(list)
        for path in self.paths.values():
            self.by_key[file_key(path)].append(path)
        self.aliases = store.note_aliases()
        self.by_alias: dict[str, list[str]] = defaultdict(list)
        for file_id, names in self.aliases.items():
            if file_id in self.paths:
                for name in names:
                    self.by_alias[name].append(self.paths[file_id])

        self._resolved: dict[tuple[str, str], str | None] = {}

    def resolve(self, link: ParsedLink, source: str) -> str | None:
        """The path a stored link from `source` opens, or None."""
        candidates = self.by_key.get(link.key, [])
        target = link.target
        if len(candidates) == 1 and "/" not in target and "\\" not in target:
            return candidates[0]  # a unique file name opens that file from anywhere
        # What a link opens depends on its target and the source's folder only: many notes of
        # one folder link the same way (a hub's template stubs), so each pair is resolved once.
        folder = source.rsplit("/", 1)[0] if "/" in source else ""
        memo = (target, folder)
        if memo not in self._resolved:
            aliased = None if candidates else self.by_alias.get(fold_name(target.strip()))
            self._resolved[memo] = resolve_link(target, source, candidates, aliased=aliased)
        return self._resolved[memo]

    def find(self, note: str) -> str:
        """The indexed path `note` names: an exact path, else what a `[[note]]` link from the
        vault root opens. NoteNotIndexedError (with similar names) otherwise."""
        if note in self.ids:
            return note
        cleaned = note.strip().removeprefix("[[").removesuffix("]]").split("|")[0].split("#")[0]
        found = resolve_link(
            cleaned,
            "",
            self.by_key.get(link_key(cleaned), []),
            aliased=self.by_alias.get(fold_name(cleaned.strip())),
        )
        if found is None:
            similar = self.store.similar_paths(cleaned.rsplit("/", 1)[-1], 3)
            hint = f" (did you mean {', '.join(similar)}?)" if similar else ""
            shown = note if len(note) <= 200 else note[:200] + "…"
            raise NoteNotIndexedError(
                f"{shown!r} is not an indexed note{hint}; give a vault-relative path as search "
                "returns it, or run 'noteseek index VAULT' if it is new"
            )
        return found

    def backlinks(self, path: str) -> list[Backlink]:
        """Every line of another note with a link that opens `path`, by path and line."""
        file_id = self.ids[path]
        keys = {file_key(path), *self.aliases.get(file_id, ())}
        seen: set[tuple[str, int]] = set()
        out: list[Backlink] = []
        for source_id, link in self.store.links_to(sorted(keys)):
            source = self.paths.get(source_id)
            if source is None or source == path or (source, link.line) in seen:
                continue
            if self.resolve(link, source) == path:
                seen.add((source, link.line))
                out.append(Backlink(source, link.line, link.context))
        out.sort(key=lambda b: (b.path, b.line))
        return out

    def outlinks(self, path: str) -> list[Outlink]:
        """Each distinct link target of `path` in order, with the path it opens or None."""
        links = self.store.links_of_files([self.ids[path]]).get(self.ids[path], [])
        seen: set[str] = set()
        out: list[Outlink] = []
        for link in links:
            shown = link.target + link.fragment
            if shown in seen:
                continue
            seen.add(shown)
            out.append(Outlink(shown, self.resolve(link, path)))
        return out

    def neighbours(self, path: str) -> tuple[set[str], set[str]]:
        """(notes `path` links to, notes linking to `path`), resolved, without `path`."""
        outs = {o.path for o in self.outlinks(path) if o.path and o.path != path}
        ins = {b.path for b in self.backlinks(path)}
        return outs, ins


class LinkCache:
    """One `LinkGraph` per index state (`Storage.data_version`): a long-lived process (MCP, web,
    daemon) reads the paths and aliases once, not on every call."""

    def __init__(self, store: Storage) -> None:
        self._store = store
        self._graph: LinkGraph | None = None
        self._version: Hashable = None

    def get(self) -> LinkGraph:
        """The graph of the index as it is now (call inside a snapshot)."""
        version = self._store.data_version()
        if self._graph is None or version != self._version:
            self._graph = LinkGraph(self._store)
            self._version = version
        return self._graph


def note_links(cache: LinkCache, store: Storage, note: str) -> NoteLinks:
    """Backlinks and outlinks of a note named by its path (or by a link to it)."""
    with store.snapshot():
        graph = cache.get()
        path = graph.find(note)
        return NoteLinks(path, tuple(graph.backlinks(path)), tuple(graph.outlinks(path)))
