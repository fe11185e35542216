"""Where index files live by default: the user's data directory, one file per vault.

Not inside the vault, so sync tools (iCloud, Dropbox, Syncthing, Obsidian Sync) never copy a live
SQLite file and its WAL.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import platformdirs

from ..errors import IndexNotFoundError

__all__ = ["data_dir", "default_db_path", "known_indexes", "resolve_db"]

ENV_DB = "NOTESEEK_DB"
ENV_HOME = "NOTESEEK_HOME"


def data_dir() -> Path:
    """noteseek's data directory (override with NOTESEEK_HOME)."""
    override = os.environ.get(ENV_HOME)
    return Path(override) if override else Path(platformdirs.user_data_dir("noteseek", False))


def default_db_path(vault: str | os.PathLike[str]) -> Path:
    """The index file for a vault: `<data dir>/indexes/<name>-<hash of the absolute path>.db`."""
    root = Path(vault).expanduser().resolve()
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", root.name).strip("-") or "vault"
    digest = hashlib.sha256(str(root).encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return data_dir() / "indexes" / f"{slug}-{digest}.db"


def known_indexes() -> list[Path]:
    """Index files in the data directory."""
    folder = data_dir() / "indexes"
    return sorted(folder.glob("*.db")) if folder.is_dir() else []


def resolve_db(
    *, db: str | None = None, vault: str | None = None, cwd: str | os.PathLike[str] | None = None
) -> Path:
    """Which index file a reader means: `db`, $NOTESEEK_DB, `vault`'s index, the index of a vault
    that contains `cwd` (default: the current folder), or the only index there is."""
    if db:
        return Path(db).expanduser()
    if os.environ.get(ENV_DB):
        return Path(os.environ[ENV_DB]).expanduser()
    if vault:
        return default_db_path(vault)
    here = Path(cwd if cwd is not None else Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = default_db_path(folder)
        if candidate.exists():
            return candidate
    indexes = known_indexes()
    if len(indexes) == 1:
        return indexes[0]
    if not indexes:
        raise IndexNotFoundError("no index yet: run 'noteseek index PATH/TO/VAULT' first")
    names = ", ".join(p.name for p in indexes)
    raise IndexNotFoundError(
        f"several indexes exist ({names}): pass --vault PATH or --db FILE to choose one"
    )

