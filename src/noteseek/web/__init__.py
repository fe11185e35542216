"""`noteseek web`: a local HTTP API and a search page over one index.

Needs the `web` extra (FastAPI and uvicorn): `pip install 'noteseek[web]'`. An adapter on the
public facade only (`open_index`/`LazyIndex`, `SearchRequest`, the results' `to_json`), like
the CLI and the MCP server. Modules: `app` (routes and error replies), `pool` (warm indexes, one
per worker thread, reopened when the file is replaced), `security` (Host, sizes, token), `models`
(the schema of the replies, from the library's dataclasses), `server` (uvicorn). The command
is `noteseek.cli.web`.
"""

from __future__ import annotations

from ..extras import require

# Checked once, here, so every entry point names the extra.
require("web", "fastapi", what="noteseek's web server")
require("web", "uvicorn", what="noteseek's web server")

__all__: list[str] = []
