"""`noteseek mcp`: the Model Context Protocol server. A thin adapter: parse, call the library, format.

Design (the user-facing version is docs/mcp.md):

- The SDK's high-level `MCPServer` (FastMCP before mcp 2): tool schemas come from the signatures,
  and a `ToolError` becomes an `isError` result whose text the agent reads and acts on.
- Replies are budgeted plain text; `search` and `get_note` add a `structuredContent` page in the
  same budget, with a cursor (mcp/paging.py: Claude Code shows only that when both are there).
- links, related, and with `--allow-writes` only, the write tools: mcp/agent_tools.py.
- Nothing is opened at start-up. The index, the embedding model and the vector matrix load on the
  first tool call that needs them, so `initialize` is answered at once however large or stale
  the index, and a server started before `noteseek index` ran still starts (its tools say what
  to run).
- `--watch` (the default where the vault is known: `--vault`, or the vault the index was built
  from) keeps the index fresh: an `IndexRefresher` (watch/refresh.py), started in a background
  thread after `initialize`, with a writing `Index` of its own, indexes each change of the vault.
  With `--vault` and no index yet, it builds one. `--refresh` runs one incremental `Index.update`
  in the same way, without watching. WAL lets the tools keep reading the last committed state;
  each note switches from old to new atomically when its transaction commits.
- The SDK runs sync tools on worker threads; one lock serialises the shared `Index`, whose
  `Store` must not be used by two threads at once.
"""

# No `from __future__ import annotations`: the SDK evaluates the tool signatures, whose pydantic
# `Field`s are imported inside build_server (pydantic comes with the optional SDK).
import dataclasses
import logging
import threading
import time
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

import click

from .. import (
    SEARCH_LIMITS,
    Coverage,
    Index,
    IndexStatus,
    LazyIndex,
    Locator,
    Mode,
    NoteseekError,
    NoteText,
    SearchRequest,
    SearchResult,
    Sort,
    __version__,
    open_index,
)
from ..core.budget import CHARS_PER_TOKEN
from ..core.display import bounded
from ..extras import require
from . import descriptions as docs
from .agent_tools import AgentActions, add_graph_tools, add_tools, add_write_tools
from .descriptions import GET_NOTE_DOC, INSTRUCTIONS, SEARCH_DOC, STATUS_DOC
from .format import RefreshState, format_hits, format_note, format_status, search_scope
from .freshness import Freshness
from .paging import CURSOR_ARG, NotePage, PageAsk, SearchPage, note_result, search_result

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from ..watch.refresh import IndexRefresher

__all__ = [
    "RefreshState",
    "VaultService",
    "build_server",
    "format_hits",
    "format_note",
    "format_status",
    "serve",
]

log = logging.getLogger("noteseek.mcp")

LOCALHOST = "127.0.0.1"
DEFAULT_PORT = 8765
SEARCH_TOKENS = 1500
NOTE_TOKENS = 4000
MAX_LIMIT = SEARCH_LIMITS.limit  # the one table every adapter uses (engine/search/request.py)
# An error or a scope line echoes what was asked; a 1 MB argument must not come back whole.
MAX_ERROR_CHARS = 2_000
MAX_ECHO_CHARS = 100
MAX_ECHO_VALUES = 5
_T = TypeVar("_T")


class VaultService:
    """The index behind the tools: opened on first use, one caller at a time."""

    def __init__(
        self,
        *,
        db: str | None = None,
        vault: str | None = None,
        opener: Callable[[Locator], Index] | None = None,
        collection: str | None = None,
        write_db: str | None = None,
        allow_writes: bool = False,
    ) -> None:
        self._vault = vault
        # Looked up on every call until it opens: the index may be made after the server started.
        self._index = LazyIndex(db=db, vault=vault, opener=opener, collection=collection)
        # A refresh writes where writes go: --write-db, else $NOTESEEK_WRITE_DB, else --db.
        self._writer = LazyIndex(
            db=write_db or db, vault=vault, opener=opener, collection=collection, write=True
        )
        self._lock = threading.Lock()
        self._refresh = RefreshState()
        self._refresh_thread: threading.Thread | None = None
        self._db = db
        self._freshness = Freshness(vault=vault, open_writer=self._open_writer)
        # links, related and (with --allow-writes) the writes: mcp/agent_tools.py
        self.agent = AgentActions(
            self._index, self._writer, lock=self._lock, vault=vault, allow_writes=allow_writes
        )

    @property
    def opened(self) -> bool:
        """Whether a tool call has opened the index yet."""
        return self._index.opened

    def search(
        self,
        query: str,
        *,
        limit: int,
        mode: Mode,
        folders: list[str],
        tags: list[str],
        files: list[str] | None = None,
        since: str | None = None,
        until: str | None = None,
        sort: Sort = "relevance",
        time_parse: bool = True,
        show_all: bool = False,
    ) -> SearchResult:
        """Hits (unbudgeted), how many the threshold hid (none with `show_all`), why vectors
        were not used, the dates kept (InvalidDateError)."""
        request = SearchRequest(
            query,
            limit=limit,
            mode=mode,
            folders=folders,
            tags=tags,
            files=files,
            since=since or None,
            until=until or None,
            sort=sort,
            time_parse=time_parse,
        )
        if show_all:
            request = dataclasses.replace(request, min_score=0.0, min_answer=0.0)
        with self._lock:
            return self._index.get().run_search(request)

    def get_note(
        self,
        path: str,
        *,
        section: str | None,
        page: int | None = None,
        slide: int | None = None,
        sheet: str | None = None,
    ) -> NoteText:
        """A scrubbed note or section, or a document's page/slide/sheet (see `Index.read_note`)."""
        with self._lock:
            return self._index.get().read_note(
                path, section=section, page=page, slide=slide, sheet=sheet
            )

    def status(self) -> tuple[IndexStatus, RefreshState]:
        """The index's status and the refresh state."""
        with self._lock:
            return self._index.get().status(), self._refresh

    def coverage(self) -> Coverage:
        """Every file's state (indexed, skipped, failed, pending): `Index.file_coverage`."""
        with self._lock:
            return self._index.get().file_coverage()

    def watch_line(self) -> str | None:
        """What keeping the index fresh does now, for the status tool (None: not asked to)."""
        return self._freshness.line()

    def start_watch(self) -> None:
        """Watch the vault in the background (no tool call waits for it)."""
        self._freshness.start()

    def wait_watch_started(self, timeout: float | None = None) -> "IndexRefresher | None":
        """The refresher once started (tests), or None when the vault is not watched."""
        return self._freshness.wait_started(timeout)

    def _open_writer(self) -> Index:
        # Watching writes where a refresh writes: --write-db, else $NOTESEEK_WRITE_DB, else --db.
        path = self._writer.path()
        if not path.exists() and self._vault is not None:
            # --vault: build it (the vault checked first, so a typo leaves no empty index)
            return open_index(path, self._vault, create=True)
        return self._writer.open_separate()

    def start_refresh(self) -> None:
        """Start one incremental update in a background thread (its own connection)."""
        self._refresh = RefreshState("running", "updating the index", started_at=time.time())
        # Daemon: the server must exit when the client closes stdin even mid-update; a file
        # transaction cut short is rolled back by SQLite, so the index stays consistent.
        thread = threading.Thread(target=self._run_refresh, name="noteseek-refresh", daemon=True)
        self._refresh_thread = thread
        thread.start()

    def wait_refresh(self, timeout: float | None = None) -> RefreshState:
        """Wait for the background refresh to end (tests, shutdown)."""
        if self._refresh_thread is not None:
            self._refresh_thread.join(timeout)
        return self._refresh

    def _run_refresh(self) -> None:
        started = self._refresh.started_at

        def end(state: Literal["done", "skipped", "failed"], message: str) -> None:
            self._refresh = RefreshState(state, message, started, time.time())

        try:
            with self._writer.open_separate() as idx:
                vault = self._vault or idx.vault_root
                if vault is None:
                    return end("skipped", "the index has no vault yet: run 'noteseek index VAULT'")
                if idx.built_with_other_options():
                    # --allow-file, other chunking or an older noteseek: a refresh with default
                    # options would re-process every note and scrub differently.
                    return end(
                        "skipped",
                        "the index was built with other options (--allow-file, chunking) or an "
                        f"older noteseek; run 'noteseek index {vault}' with your options instead",
                    )
                stats = idx.update(vault)
            end(
                "done",
                f"{stats.added} added, {stats.changed} changed, {stats.removed} removed, "
                f"{stats.skipped} skipped in {stats.seconds:.1f} s",
            )
        except NoteseekError as exc:
            end("failed", str(exc))
        except Exception as exc:  # a background thread must report, never die silently
            log.exception("background refresh failed")
            end("failed", f"{type(exc).__name__}: {exc}")

    def close(self) -> None:
        """Stop watching (after the current file) and close the index if a tool call opened it."""
        self._freshness.close()
        with self._lock:
            self._index.close()
        self.agent.close()


# -- the server -----------------------------------------------------------------------------------


def _load_sdk() -> Any:
    return require("mcp", "mcp.server.mcpserver", what="the MCP server")


def build_server(service: VaultService) -> "MCPServer[Any]":
    """The MCP server with the search, get_note and status tools over `service`."""
    sdk = _load_sdk()
    # The mcp extra, imported when the server is built.
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.types import CallToolResult
    from pydantic import Field

    server: MCPServer[Any] = sdk.MCPServer(
        "noteseek", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING"
    )

    def call(what: str, fn: Callable[[], _T], *, max_tokens: int = SEARCH_TOKENS) -> _T:
        # Domain errors carry their next step; anything else must not take the server down.
        # An error keeps to the reply budget too (the library already shortens what it echoes).
        try:
            return fn()
        except NoteseekError as exc:
            limit = min(MAX_ERROR_CHARS, max_tokens * CHARS_PER_TOKEN - 40)
            raise ToolError(bounded(str(exc), limit)) from exc
        except Exception as exc:
            log.exception("%s failed", what)
            raise ToolError(
                f"{what} failed unexpectedly ({type(exc).__name__}); the server is still running: "
                "try again, or run 'noteseek status' in a terminal"
            ) from exc

    def search(
        query: Annotated[str, Field(description="What to look for, in plain words or a question.")],
        limit: Annotated[int, Field(ge=1, le=MAX_LIMIT, description="Most notes to return.")] = 10,
        mode: Annotated[
            Literal["hybrid", "bm25", "vector"],
            Field(description="hybrid (default), bm25 (exact words only), vector (meaning only)."),
        ] = "hybrid",
        folders: Annotated[
            list[str] | None,
            Field(description="Only notes under any of these vault-relative folders."),
        ] = None,
        tags: Annotated[
            list[str] | None, Field(description="Only notes that carry every one of these tags.")
        ] = None,
        files: Annotated[
            list[str] | None,
            Field(description="Only these notes (vault-relative paths as search returns them)."),
        ] = None,
        since: Annotated[str | None, Field(description=docs.SINCE_DOC)] = None,
        until: Annotated[str | None, Field(description=docs.UNTIL_DOC)] = None,
        sort: Annotated[Sort, Field(description=docs.SORT_DOC)] = "relevance",
        time_parse: Annotated[bool, Field(description=docs.TIME_PARSE_DOC)] = True,
        max_tokens: Annotated[
            int, Field(ge=100, le=20_000, description="Reply budget (about 4 characters a token).")
        ] = SEARCH_TOKENS,
        all: Annotated[
            bool, Field(description="Also the weaker matches the relevance threshold leaves out.")
        ] = False,
        cursor: Annotated[str | None, Field(description=CURSOR_ARG)] = None,
    ) -> Annotated[CallToolResult, SearchPage]:
        # Read first: an update in between leaves the cursor older than the hits (then refused).
        generation = call("search", service.agent.generation)
        result = call(
            "search",
            lambda: service.search(
                query,
                limit=limit,
                mode=mode,
                folders=folders or [],
                tags=tags or [],
                files=files or [],
                since=since,
                until=until,
                sort=sort,
                time_parse=time_parse,
                show_all=all,
            ),
            max_tokens=max_tokens,
        )
        scope = "".join(
            f"; {label} {_echo(values)}"
            for label, values in (
                ("in", folders or []),
                ("tagged", tags or []),
                ("files", files or []),
            )
            if values
        )
        scope += search_scope([], [], [], result.time_range)
        hits, degraded = list(result.hits), result.degraded
        ask = PageAsk(
            (query, limit, mode, folders, tags, files, since, until, sort, time_parse, all),
            generation,
            cursor,
            max_tokens,
        )
        reply = partial(
            search_result, query, hits, ask, mode=mode, degraded=degraded, hidden=result.hidden
        )
        return call("search", lambda: reply(filters=scope))

    def get_note(
        path: Annotated[str, Field(description="Vault-relative path, as search returns it.")],
        section: Annotated[
            str | None, Field(description="A section heading to return instead of the whole note.")
        ] = None,
        max_tokens: Annotated[
            int, Field(ge=200, le=30_000, description="Reply budget (about 4 characters a token).")
        ] = NOTE_TOKENS,
        page: Annotated[
            int | None, Field(ge=1, description="A PDF's page number (1-based) to return.")
        ] = None,
        slide: Annotated[
            int | None, Field(ge=1, description="A slide number (1-based) to return.")
        ] = None,
        sheet: Annotated[
            str | None, Field(description="A spreadsheet's sheet (by name) to return.")
        ] = None,
        cursor: Annotated[str | None, Field(description=CURSOR_ARG)] = None,
    ) -> Annotated[CallToolResult, NotePage]:
        generation = call("get_note", service.agent.generation)
        note = call(
            "get_note",
            lambda: service.get_note(path, section=section, page=page, slide=slide, sheet=sheet),
            max_tokens=max_tokens,
        )
        ask = PageAsk((path, section, page, slide, sheet), generation, cursor, max_tokens)
        return call("get_note", lambda: note_result(note, ask))

    def status(
        files: Annotated[
            Literal["none", "problems", "all"],
            Field(
                description="Also list files: 'problems' (skipped, failed, pending: changed since "
                "the last update), or 'all' with indexed ones."
            ),
        ] = "none",
    ) -> str:
        current, refresh = call("status", service.status)
        coverage = None if files == "none" else call("status", service.coverage)
        return format_status(
            current,
            refresh,
            now=time.time(),
            watch=service.watch_line(),
            coverage=coverage,
            problems_only=files == "problems",
        )

    add_tools(
        server,
        (
            (search, SEARCH_DOC, "Search notes"),
            (get_note, GET_NOTE_DOC, "Read a note"),
            (status, STATUS_DOC, "Note index status"),
        ),
        structured=lambda fn: fn is not status,  # search, get_note: pages (mcp/paging.py)
    )
    add_graph_tools(server, service, call)
    add_write_tools(server, service, call)  # registers nothing without --allow-writes
    return server


def _echo(values: list[str]) -> str:
    """Filter values as a reply repeats them: each and their number bounded."""
    shown = ", ".join(bounded(v, MAX_ECHO_CHARS) for v in values[:MAX_ECHO_VALUES])
    more = len(values) - MAX_ECHO_VALUES
    return shown + (f" and {more} more" if more > 0 else "")


def serve(server: "MCPServer[Any]", *, transport: str, port: int) -> None:
    """Run until the client disconnects: stdio, or streamable HTTP on the loopback interface."""
    if transport == "http":
        # Loopback only, and no --host option: the index holds private notes and has no auth.
        click.echo(f"noteseek MCP server at http://{LOCALHOST}:{port}/mcp", err=True)
        server.run("streamable-http", host=LOCALHOST, port=port)
    else:
        server.run("stdio")
