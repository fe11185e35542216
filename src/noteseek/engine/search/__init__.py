"""Answering a query: the request and its limits, the lanes (BM25, the in-memory vectors, the
deep lane), fusion, the linear rerank, calibration and the hits it returns.

`Searcher` (searcher.py) runs one search; the modules beside it are its parts. The names below
are imported on first use (PEP 562), as in `noteseek/__init__.py`: a hook process that needs only
`request.py` or `hits.py` does not pay for the searcher's imports.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # as in noteseek/__init__.py: importing typing costs a hook process
if TYPE_CHECKING:
    from typing import Any

    from .hits import Explanation as Explanation
    from .hits import Hit as Hit
    from .request import SearchRequest as SearchRequest
    from .request import SearchResult as SearchResult
    from .searcher import Searcher as Searcher
    from .searcher import SearchSettings as SearchSettings

_EXPORTS: dict[str, str] = {
    "Explanation": "hits",
    "Hit": "hits",
    "SearchRequest": "request",
    "SearchResult": "request",
    "SearchSettings": "searcher",
    "Searcher": "searcher",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    """Import a name's module on first access and cache the name in this package."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
