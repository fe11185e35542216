"""The ASGI app: the JSON API over an `IndexPool`, the search page, and the error replies.

FastAPI rather than bare Starlette: the API is documented by a served
OpenAPI schema, which FastAPI derives from the handlers' typed parameters (and checks them:
a bad `limit` or `mode` is a 422 before any index work), and the fuzz run reads that schema.
Its Swagger/ReDoc pages are off: they load scripts from a CDN, and nothing here may.

Handlers only parse, call the library's facade on a pool thread and send the library's own JSON;
each builds its own frozen `SearchRequest`, so no request option lives anywhere shared: two tabs
searching different folders at the same moment cannot see each other's scope
(tests/test_web_scope.py fires 240 concurrent requests with different scopes and checks every hit).
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Literal

from fastapi import FastAPI, Query, Request
from fastapi import Path as PathParam
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import StringConstraints
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.staticfiles import StaticFiles

from noteseek import (
    SEARCH_LIMITS,
    Index,
    IndexLockedError,
    IndexNotFoundError,
    InvalidDateError,
    NoteAccessError,
    NoteseekError,
    SearchRequest,
    SearchRequestError,
    prompt_context,
)
from noteseek import __version__ as version

from .graph_routes import add_graph_routes
from .models import (
    ContextReply,
    ErrorReply,
    FoldersReply,
    NoteReply,
    SearchReply,
    StatusReply,
    TagsReply,
)
from .pool import IndexPool, PoolTimeoutError
from .preview import render_note
from .security import BearerAuthMiddleware, GuardMiddleware, JsonCORSMiddleware, Limits

__all__ = ["STATIC", "create_app"]

STATIC = Path(__file__).parent / "static"
# The search limits are the library's one table (engine/search/request.py), declared in the schema.
MAX_QUERY_CHARS = SEARCH_LIMITS.query_chars
MAX_FILTER_CHARS = SEARCH_LIMITS.filter_chars
# Scripts, styles and fetches from this server only: a note's text can never run as script.
PAGE_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
ERRORS: dict[int | str, dict[str, Any]] = {
    "4XX": {"model": ErrorReply, "description": "Bad parameters, unknown note, or no token."},
    "5XX": {"model": ErrorReply, "description": "Timed out, index busy, or an internal error."},
}

# SearchRequest's option -> this API's query parameter, for a refused request's reply.
_PARAMETERS = {"query": "q", "folders": "folder", "tags": "tag", "files": "file"}
# Declared in the schema (not only checked), so clients and the fuzzer know the limits.
FilterValue = Annotated[str, StringConstraints(max_length=MAX_FILTER_CHARS)]
FolderFilter = Annotated[
    list[FilterValue], Query(max_length=SEARCH_LIMITS.folders, description="Repeatable.")
]
TagFilter = Annotated[
    list[FilterValue], Query(max_length=SEARCH_LIMITS.tags, description="Repeatable.")
]
FileFilter = Annotated[
    list[FilterValue], Query(max_length=SEARCH_LIMITS.files, description="Repeatable.")
]
When = Annotated[
    str | None,
    Query(
        max_length=64,
        description="A date (2026-11-30, 2026-11), a span back from today (7d, 2w, 3m, 1y) or "
        "words (yesterday, last week, gestern).",
    ),
]


def _error(
    status: int,
    message: str,
    *,
    headers: Mapping[str, str] | None = None,
    sections: Sequence[str] | None = None,
    detail: list[dict[str, Any]] | None = None,
) -> JSONResponse:
    body: dict[str, Any] = {"error": message}
    if detail is not None:
        body["detail"] = detail
    if sections is not None:
        body["sections"] = list(sections)
    return JSONResponse(body, status_code=status, headers=headers)


def create_app(
    pool: IndexPool,
    *,
    token: str | None = None,
    hosts: frozenset[str] | None = frozenset({"127.0.0.1", "localhost", "::1"}),
    cors_origins: Sequence[str] = (),
    limits: Limits | None = None,
) -> FastAPI:
    """The web app over `pool` (whose lifetime the caller owns)."""
    app = FastAPI(
        title="noteseek",
        version=version,
        description="Search a local noteseek index of Markdown notes.",
        docs_url=None,
        redoc_url=None,
        openapi_url="/openapi.json",
    )
    app.state.pool = pool  # for introspection only; requests reach it through the closures
    _add_error_handlers(app)
    _add_routes(app, pool)
    add_graph_routes(app, pool, ERRORS)
    page = (STATIC / "index.html").read_bytes()

    @app.get("/", include_in_schema=False)
    async def index_page() -> Response:
        return Response(
            page,
            media_type="text/html; charset=utf-8",
            headers={"content-security-policy": PAGE_CSP, "cache-control": "no-cache"},
        )

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    # Added innermost first: the Guard runs before CORS, CORS before the token check.
    app.add_middleware(BearerAuthMiddleware, token=token)
    if cors_origins:
        app.add_middleware(
            JsonCORSMiddleware,
            allow_origins=list(cors_origins),
            allow_methods=["GET"],
            allow_headers=["Authorization"],
            max_age=600,
        )
    app.add_middleware(GuardMiddleware, hosts=hosts, limits=limits or Limits())
    return app


def _json_bytes(data: Any) -> bytes:
    """JSON as Starlette's JSONResponse writes it."""
    return json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()


def _server_timing(**seconds: float) -> str:
    """A Server-Timing header (milliseconds): where a request's time went, seen from a browser."""
    return ", ".join(f"{name};dur={value * 1000:.2f}" for name, value in seconds.items())


def _add_routes(app: FastAPI, pool: IndexPool) -> None:
    @app.get("/api/search", response_model=SearchReply, responses=ERRORS)
    async def search(
        q: Annotated[
            str,
            Query(
                min_length=1,
                max_length=MAX_QUERY_CHARS,
                description="Query.",
                examples=["how do I undo a rebase"],
            ),
        ],
        limit: Annotated[int, Query(ge=1, le=SEARCH_LIMITS.limit)] = 10,
        mode: Literal["hybrid", "bm25", "vector"] = "hybrid",
        folder: FolderFilter = [],  # noqa: B006 (FastAPI copies defaults per request)
        tag: TagFilter = [],  # noqa: B006
        file: FileFilter = [],  # noqa: B006
        max_tokens: Annotated[int | None, Query(ge=1, le=SEARCH_LIMITS.max_tokens)] = None,
        explain: bool = False,
        since: When = None,
        until: When = None,
        sort: Literal["relevance", "date"] = "relevance",
        time_parse: bool = True,
        all: Annotated[
            bool, Query(description="Also the hits scored below the relevance threshold.")
        ] = False,
    ) -> Response:
        """Best notes for `q`, each with its best section (the hits of `noteseek search --json`).
        `folder` keeps notes under any of the folders, `tag` notes with every tag, `file` only
        these vault-relative files; `since`/`until` notes dated within them (`2026-11-30`, `7d`,
        `last week`, …), and a time phrase in `q` does the same unless `time_parse=false`. Hits
        below the relevance threshold are left out and counted in `hidden` unless `all` is true."""
        request = SearchRequest(
            q,
            limit=limit,
            mode=mode,
            max_tokens=max_tokens,
            explain=explain,
            folders=folder,
            tags=tag,
            files=file,
            since=since or None,
            until=until or None,
            sort=sort,
            time_parse=time_parse,
        )
        if all:
            request = dataclasses.replace(request, min_score=0.0, min_answer=0.0)
        submitted = time.perf_counter()

        def work(index: Index) -> tuple[bytes, str]:
            # The reply is encoded on the pool thread too, so the event loop only moves bytes.
            started = time.perf_counter()
            result = index.run_search(request)
            searched = time.perf_counter()
            window = result.time_range
            body = _json_bytes(
                {
                    "query": q,
                    "mode": mode,
                    "degraded": result.degraded,
                    "time_range": window.to_json() if window is not None else None,
                    "searched": result.searched,
                    "hits": result.hits_json(),
                    "hidden": result.hidden,
                    "answered": round(result.answered, 4),
                }
            )
            return body, _server_timing(
                queue=started - submitted,
                search=searched - started,
                json=time.perf_counter() - searched,
            )

        body, timing = await pool.run(work)
        return Response(body, media_type="application/json", headers={"server-timing": timing})

    @app.get("/api/context", response_model=ContextReply, responses=ERRORS)
    async def context(
        q: Annotated[str, Query(min_length=1, max_length=MAX_QUERY_CHARS, description="Prompt.")],
        max_tokens: Annotated[int, Query(ge=1, le=100_000)] = 500,
        gate: Annotated[bool, Query(description="false shows the best sections anyway.")] = True,
    ) -> Response:
        """The block the prompt hook would give an agent for `q`, and the gate's decision."""

        def work(index: Index) -> dict[str, Any]:
            return prompt_context(index, q, max_tokens=max_tokens, gated=gate).to_json()

        return JSONResponse(await pool.run(work))

    @app.get("/api/notes/{path:path}", response_model=NoteReply, responses=ERRORS)
    async def note(
        path: Annotated[str, PathParam(examples=["howto/git-rebase-recipes.md"])],
        section: Annotated[str | None, Query(max_length=MAX_FILTER_CHARS)] = None,
        page: Annotated[int | None, Query(ge=1, le=1_000_000)] = None,
        slide: Annotated[int | None, Query(ge=1, le=1_000_000)] = None,
        sheet: Annotated[str | None, Query(max_length=MAX_FILTER_CHARS)] = None,
        image: bool = False,
        html: Annotated[
            bool, Query(description="Also the text rendered as sanitised HTML (the preview).")
        ] = False,
    ) -> Response:
        """One indexed note (or one `section` of it), secrets redacted; for a document, one
        `page`, `slide` or `sheet` of it; for an image with `image=true`, the image itself
        (its recognised text without). Only notes the index holds; absolute paths, '..',
        symlinks and encoded traversal are 404."""
        if image:
            found = await pool.run(lambda index: index.read_image(path))
            # The type is the one its bytes showed (every reply is nosniff); not cached, since
            # the file may change under the same path.
            return Response(
                found.data, media_type=found.media_type, headers={"cache-control": "no-store"}
            )

        def work(index: Index) -> dict[str, Any]:
            found = index.read_note(path, section=section, page=page, slide=slide, sheet=sheet)
            body = found.to_json()
            if html:
                resolved: dict[str, str] = {}
                try:
                    outlinks = index.links(found.path).outlinks
                except NoteseekError:  # a document: no wiki-links to resolve
                    outlinks = ()
                for link in outlinks:
                    if link.path is not None:
                        resolved.setdefault(link.target, link.path)
                        resolved.setdefault(link.target.split("#", 1)[0].strip(), link.path)
                body["html"] = render_note(found.text, resolved)
            return body

        return JSONResponse(await pool.run(work))

    @app.get("/api/status", response_model=StatusReply, responses=ERRORS)
    async def status() -> Response:
        """What `noteseek status --json` says."""
        return JSONResponse(await pool.run(lambda index: index.status().to_json()))

    @app.get("/api/folders", response_model=FoldersReply, responses=ERRORS)
    async def folders() -> Response:
        """The folders holding indexed notes (for a folder filter) and the vault's name."""

        def work(index: Index) -> dict[str, Any]:
            root = index.vault_root
            return {
                "vault_name": PurePosixPath(Path(root).as_posix()).name if root else None,
                "folders": [{"path": p, "notes": n} for p, n in index.folders().items()],
            }

        return JSONResponse(await pool.run(work))

    @app.get("/api/tags", response_model=TagsReply, responses=ERRORS)
    async def tags() -> Response:
        """The tags of the indexed notes and the parents of nested ones (for a tag filter)."""

        def work(index: Index) -> dict[str, Any]:
            return {"tags": [{"tag": t, "notes": n} for t, n in index.tags().items()]}

        return JSONResponse(await pool.run(work))


def _add_error_handlers(app: FastAPI) -> None:
    async def bad_request(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        detail = [
            {"loc": [str(part) for part in e.get("loc", ())], "msg": str(e.get("msg", ""))}
            for e in exc.errors()
        ]
        where = "; ".join(f"{'.'.join(d['loc'][1:]) or 'request'}: {d['msg']}" for d in detail)
        return _error(422, f"bad parameter: {where}", detail=detail)

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, StarletteHTTPException)
        message = {404: "no such endpoint; see /openapi.json"}.get(exc.status_code, exc.detail)
        return _error(exc.status_code, str(message), headers=exc.headers)  # 405 keeps Allow

    async def note_error(request: Request, exc: Exception) -> Response:
        # Unsafe, unknown and unreadable paths alike are 404: nothing outside the index exists.
        return _error(404, str(exc), sections=getattr(exc, "available", None))

    async def timeout(request: Request, exc: Exception) -> Response:
        return _error(503, f"{exc}; try a shorter query or fewer filters")

    async def locked(request: Request, exc: Exception) -> Response:
        return _error(503, f"{exc}; try again in a moment")

    async def no_index(request: Request, exc: Exception) -> Response:
        # The file was removed while the server runs: it answers again once it is rebuilt.
        return _error(503, str(exc))

    async def bad_date(request: Request, exc: Exception) -> Response:
        return _error(422, f"bad parameter: {exc}")

    async def refused(request: Request, exc: Exception) -> Response:
        # Past the library's search limits: a bad parameter, as a schema violation is.
        assert isinstance(exc, SearchRequestError)
        name = _PARAMETERS.get(exc.option, exc.option)
        detail = [{"loc": ["query", name], "msg": str(exc)}]
        return _error(422, f"bad parameter: {name}: {exc}", detail=detail)

    async def domain_error(request: Request, exc: Exception) -> Response:
        return _error(500, str(exc))

    app.add_exception_handler(RequestValidationError, bad_request)
    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(NoteAccessError, note_error)
    app.add_exception_handler(InvalidDateError, bad_date)
    app.add_exception_handler(SearchRequestError, refused)
    app.add_exception_handler(PoolTimeoutError, timeout)
    app.add_exception_handler(IndexLockedError, locked)
    app.add_exception_handler(IndexNotFoundError, no_index)
    app.add_exception_handler(NoteseekError, domain_error)
    # Any other exception is the GuardMiddleware's (security.py): a JSON 500 with its headers.
