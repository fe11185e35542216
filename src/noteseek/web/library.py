"""Every place the web adapter reaches past noteseek's public surface, in one module.

The reorganisation (issue 12) brings a sealed `Index` facade and one `open_index(db=None,
vault=None)` for all adapters; until then these few helpers stand in for what the facade must
offer, so part 2 swaps this file and nothing else:

- `open_index`: the CLI's index resolution (`--db`, `$NOTESEEK_DB`, `--vault`, cwd, the only one).
- `degraded`: why a search did not use vectors (today `Index.searcher.vector_problem`).
- `read_note`: one indexed note or section, path-safe and scrubbed (today needs `Index.store`).
- `note_folders`: the vault's folders, for the page's filter (today `Store.file_states()`).
- `budget`: the search budget applied after the web's file post-filter (today `noteseek.budget`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from noteseek import Hit, Index, IndexNotFoundError, NoteText, locate_index
from noteseek.core.budget import fit_to_budget

__all__ = ["NoteText", "budget", "degraded", "note_folders", "open_index", "read_note", "resolve"]


def resolve(db: str | None = None, vault: str | None = None) -> Path:
    """The index file an adapter means, refusing one that does not exist yet."""
    path = locate_index(db=db, vault=vault)
    if not path.exists():
        raise IndexNotFoundError.at(path)
    return path


def open_index(path: Path) -> Index:
    """Open an existing index file (never creates one)."""
    return Index(path, create=False)


def degraded(index: Index, mode: str) -> str | None:
    """Why vectors were not used for a search in `mode` (None when they were or not wanted)."""
    return index.vector_problem if mode != "bm25" else None


def read_note(index: Index, path: str, *, section: str | None = None) -> NoteText:
    """An indexed note (or one section), scrubbed; raises NoteAccessError subclasses otherwise."""
    return index.read_note(path, section=section)


def note_folders(index: Index) -> dict[str, int]:
    """Every folder that holds indexed notes (at any depth), with how many notes it holds."""
    counts: dict[str, int] = {}
    skipped = {path for path, _status, _why in index.status().problems if _status == "skipped"}
    for path in index.note_paths():
        if path in skipped:
            continue
        parts = path.split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            folder = "/".join(parts[:depth])
            counts[folder] = counts.get(folder, 0) + 1
    return dict(sorted(counts.items()))


def budget(hits: Sequence[Hit], max_tokens: int) -> list[Hit]:
    """Whole hits, best first, within `max_tokens` (the library's `max_tokens` rule)."""
    return fit_to_budget(list(hits), max_tokens)
