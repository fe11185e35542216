"""The ASGI app: the JSON API over an `IndexPool`, the search page, and the error replies.

FastAPI rather than bare Starlette: the issue asks for the API to be documented by a served
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
import logging
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
from starlette.middleware.cors import CORSMiddleware
from starlette.staticfiles import StaticFiles

from noteseek import (
    Index,
    IndexLockedError,
    IndexNotFoundError,
    NoteAccessError,
    NoteseekError,
    SearchRequest,
    prompt_context,
)
from noteseek import __version__ as version

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
from .security import BearerAuthMiddleware, GuardMiddleware, Limits

__all__ = ["STATIC", "create_app"]

log = logging.getLogger("noteseek.web")

STATIC = Path(__file__).parent / "static"
MAX_QUERY_CHARS = 10_000
MAX_FILTER_VALUES = 50
MAX_FILTER_CHARS = 1_000
# Scripts, styles and fetches from this server only: a note's text can never run as script.
PAGE_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
ERRORS: dict[int | str, dict[str, Any]] = {
    "4XX": {"model": ErrorReply, "description": "Bad parameters, unknown note, or no token."},
    "5XX": {"model": ErrorReply, "description": "Timed out, index busy, or an internal error."},
}

# Declared in the schema (not only checked), so clients and the fuzzer know the limits.
FilterValue = Annotated[str, StringConstraints(max_length=MAX_FILTER_CHARS)]
Filter = Annotated[
    list[FilterValue], Query(max_length=MAX_FILTER_VALUES, description="Repeatable.")
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
            CORSMiddleware,
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
        limit: Annotated[int, Query(ge=1, le=100)] = 10,
        mode: Literal["hybrid", "bm25", "vector"] = "hybrid",
        folder: Filter = [],  # noqa: B006 (FastAPI copies defaults per request)
        tag: Filter = [],  # noqa: B006
        file: Filter = [],  # noqa: B006
        max_tokens: Annotated[int | None, Query(ge=1, le=1_000_000)] = None,
        explain: bool = False,
        all: Annotated[
            bool, Query(description="Also the hits scored below the relevance threshold.")
        ] = False,
    ) -> Response:
        """Best notes for `q`, each with its best section (the hits of `noteseek search --json`).
        `folder` keeps notes under any of the folders, `tag` notes with every tag, `file` only
        these vault-relative files. Hits below the relevance threshold are left out and counted
        in `hidden` unless `all` is true."""
        request = SearchRequest(
            q,
            limit=limit,
            mode=mode,
            max_tokens=max_tokens,
            explain=explain,
            folders=tuple(folder) or None,
            tags=tuple(tag) or None,
            files=tuple(file) or None,
        )
        if all:
            request = dataclasses.replace(request, min_score=0.0)
        submitted = time.perf_counter()

        def work(index: Index) -> tuple[bytes, str]:
            # The reply is encoded on the pool thread too, so the event loop only moves bytes.
            started = time.perf_counter()
            result = index.run_search(request)
            searched = time.perf_counter()
            body = _json_bytes(
                {
                    "query": q,
                    "mode": mode,
                    "degraded": result.degraded,
                    "hits": result.hits_json(),
                    "hidden": result.hidden,
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
    ) -> Response:
        """One indexed note (or one `section` of it), secrets redacted; for a document, one
        `page`, `slide` or `sheet` of it. Only notes the index holds; absolute paths, '..',
        symlinks and encoded traversal are 404."""
        return JSONResponse(
            await pool.run(
                lambda index: index.read_note(
                    path, section=section, page=page, slide=slide, sheet=sheet
                ).to_json()
            )
        )

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

    async def domain_error(request: Request, exc: Exception) -> Response:
        return _error(500, str(exc))

    async def internal(request: Request, exc: Exception) -> Response:
        log.error("request %s failed", request.url.path, exc_info=exc)
        return _error(
            500, f"internal error ({type(exc).__name__}); the server is still running, see its log"
        )

    app.add_exception_handler(RequestValidationError, bad_request)
    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(NoteAccessError, note_error)
    app.add_exception_handler(PoolTimeoutError, timeout)
    app.add_exception_handler(IndexLockedError, locked)
    app.add_exception_handler(IndexNotFoundError, no_index)
    app.add_exception_handler(NoteseekError, domain_error)
    app.add_exception_handler(Exception, internal)
