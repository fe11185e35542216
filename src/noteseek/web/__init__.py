"""`noteseek web`: a local HTTP API and a search page over one index (issue 17).

Needs the `web` extra (FastAPI and uvicorn): `pip install 'noteseek[web]'`. Modules:
`app` (routes and error replies), `pool` (warm indexes, one per worker thread), `scope` (one
request's search as a value), `security` (Host, sizes, token), `models` (the JSON and its
schema), `library` (the only place that reaches past the public facade), `command` (the CLI).
"""

from __future__ import annotations

try:
    import fastapi  # noqa: F401
    import uvicorn  # noqa: F401
except ImportError as exc:  # checked once, here, so every entry point names the extra
    raise ImportError(
        f"noteseek's web server needs {exc.name or 'fastapi'!r}: pip install 'noteseek[web]'",
        name=exc.name,
    ) from exc

__all__: list[str] = []
