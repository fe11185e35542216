"""One web search as a value: the query, its options and its scope, and how it is run.

Every request builds its own frozen `WebSearch` and passes it down; nothing about a request is
kept in a module, an app attribute or a shared `Index`, so two tabs searching different folders
at the same moment cannot see each other's scope (issue 17; tests/test_web_scope.py fires 240
concurrent requests with different scopes at a served app and checks every hit).

The library filters folders and tags before the candidate lists are cut, but has no file filter
yet. Until it does, `file` is applied here through the public API only: the search runs inside
the requested files' folders (narrowing the candidates the library considers) for up to
`FILE_SCOPE_DEPTH` notes, keeps the hits whose path is one of the files, then applies the token
budget. So a hit is never outside the files; what the post-filter cannot promise is a file whose
match ranks below the first `FILE_SCOPE_DEPTH` notes of its folders. The facade should take
`files=` and filter them before the lists are cut, as it does for folders.
"""

from __future__ import annotations

from dataclasses import dataclass
from posixpath import dirname

from noteseek import Hit, Index, Mode

from . import library

__all__ = ["FILE_SCOPE_DEPTH", "SearchOutcome", "WebSearch", "file_key", "run_search"]

FILE_SCOPE_DEPTH = 1000


@dataclass(frozen=True)
class WebSearch:
    """A search as one request asked for it (a stand-in for the coming `SearchRequest`)."""

    query: str
    limit: int = 10
    mode: Mode = "hybrid"
    max_tokens: int | None = None
    explain: bool = False
    folders: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    files: tuple[str, ...] = ()


@dataclass(frozen=True)
class SearchOutcome:
    """The hits of one search and why vectors were not used (None when they were)."""

    hits: tuple[Hit, ...]
    degraded: str | None


def file_key(path: str) -> str:
    """A vault-relative file path as hits spell it: '/'-separated, no './' or outer slashes."""
    return "/".join(p for p in path.replace("\\", "/").split("/") if p not in ("", "."))


def run_search(index: Index, request: WebSearch) -> SearchOutcome:
    """Run `request` on `index` (which the caller holds exclusively for the call)."""
    if not request.files:
        hits = index.search(
            request.query,
            limit=request.limit,
            mode=request.mode,
            max_tokens=request.max_tokens,
            explain=request.explain,
            folders=list(request.folders) or None,
            tags=list(request.tags) or None,
        )
        return SearchOutcome(tuple(hits), library.degraded(index, request.mode))
    wanted: set[str] = set()
    for raw in request.files:
        key = file_key(raw)
        wanted.update((key, key + ".md") if not key.endswith(".md") else (key,))
    # The folders given narrow the search (a file must lie in one of them too); else the
    # files' own folders do, so the candidate lists hold the neighbourhood of the files only.
    folders = list(request.folders) or sorted({dirname(k) for k in wanted})
    hits = index.search(
        request.query,
        limit=FILE_SCOPE_DEPTH,
        mode=request.mode,
        explain=request.explain,
        folders=folders,
        tags=list(request.tags) or None,
    )
    kept = [h for h in hits if h.path in wanted][: request.limit]
    if request.max_tokens is not None:
        kept = library.budget(kept, request.max_tokens)
    return SearchOutcome(tuple(kept), library.degraded(index, request.mode))
