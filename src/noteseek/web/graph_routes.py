"""`GET /api/links/{path}` and `GET /api/related/{path}`: a note's links and the notes like it.

Kept beside `app.py` so the graph endpoints stay one module: they parse, call `Index.links` /
`Index.related` on a pool thread and send the library's JSON. An unknown note is a 404 with the
library's message, as for `/api/notes` (app.py's NoteAccessError handler).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import FastAPI, Query
from fastapi import Path as PathParam
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, Field

from noteseek import Index

from .models import HitModel
from .pool import IndexPool

__all__ = ["LinksReply", "RelatedReply", "add_graph_routes"]


class BacklinkModel(BaseModel):
    path: str = Field(description="The linking note.")
    line: int = Field(description="1-based line of the link in it.")
    text: str = Field(description="That line (secrets redacted), trimmed around the link.")


class OutlinkModel(BaseModel):
    target: str = Field(description="The link as written, with its #heading or #^block part.")
    path: str | None = Field(description="The note it opens, or null (unresolved).")


class LinksReply(BaseModel):
    """The document `noteseek links --json` prints."""

    note: str
    backlinks: list[BacklinkModel]
    outlinks: list[OutlinkModel]


class RelatedReply(BaseModel):
    """The document `noteseek related --json` prints."""

    note: str
    hits: list[HitModel]


def add_graph_routes(app: FastAPI, pool: IndexPool, errors: dict[int | str, Any]) -> None:
    """Add the links and related endpoints to `app`."""

    @app.get("/api/links/{path:path}", response_model=LinksReply, responses=errors)
    async def links(
        path: Annotated[str, PathParam(examples=["howto/git-rebase-recipes.md"])],
    ) -> Response:
        """Backlinks (with the linking line) and outlinks of one indexed note, resolved as
        Obsidian resolves them; unresolved outlinks have `path` null."""
        return JSONResponse(await pool.run(lambda index: index.links(path).to_json()))

    @app.get("/api/related/{path:path}", response_model=RelatedReply, responses=errors)
    async def related(
        path: Annotated[str, PathParam(examples=["howto/git-rebase-recipes.md"])],
        limit: Annotated[int, Query(ge=1, le=100)] = 10,
    ) -> Response:
        """The notes most like one indexed note (meaning, links, tags), never the note itself."""

        def work(index: Index) -> dict[str, Any]:
            return {"note": path, "hits": [h.to_json() for h in index.related(path, limit=limit)]}

        return JSONResponse(await pool.run(work))
