"""What names an index: a file path, or a server database URL (`postgresql://…`).

Below both `index.py` (an `Index` is opened at a locator) and `open.py` (which finds the locator
an adapter means), so neither imports the other for it. Light: the per-prompt hook imports it
through `open.py` before it knows whether it needs an index.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..core.locator import DatabaseUrl, is_url

__all__ = ["Locator", "as_locator"]

# An index file, or a server database (`postgresql://…`).
Locator = Path | DatabaseUrl


def as_locator(db: str | os.PathLike[str] | DatabaseUrl) -> Locator:
    """A `--db` value as a locator: a `DatabaseUrl` for `scheme://…`, else a file path."""
    if isinstance(db, DatabaseUrl):
        return db
    text = os.fspath(db)
    return DatabaseUrl(text) if is_url(text) else Path(text).expanduser()
