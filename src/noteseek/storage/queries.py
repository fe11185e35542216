"""What a search asks storage for: a keyword query (`keyword_search`) and a file filter
(`files_matching`), one value each, so both backends take the same object instead of restating
the same argument list.

NamedTuples, not dataclasses: every search imports this module, and defining a frozen dataclass
costs a process several times what a NamedTuple costs (rows.py keeps a search to two dataclasses
for that reason). Immutable either way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

__all__ = ["FileFilter", "KeywordQuery"]


class KeywordQuery(NamedTuple):
    """A BM25 query: planned terms (any one matching), at most `limit` chunks, the weights of
    the text, section, title and tags columns, and when given only chunks of files in `allowed`
    (filtered before `limit`)."""

    terms: Sequence[str]
    limit: int
    column_weights: tuple[float, float, float, float]
    allowed: set[int] | None = None


class FileFilter(NamedTuple):
    """Which files a filtered search keeps: under any of `folders` (prefixes, '' = all),
    carrying every tag in `tags` (a tag also matches its nested tags: `project` matches
    `project/alpha`), whose path is one of `files` (exact vault-relative paths), and whose date
    (`FileRecord.date`) falls on a day within [since, until] (ISO days `YYYY-MM-DD`, inclusive;
    a file without a date is not kept). None or empty: that filter is off."""

    folders: Sequence[str] | None = None
    tags: Sequence[str] | None = None
    files: Sequence[str] | None = None
    since: str | None = None
    until: str | None = None

    def day_bounds(self) -> list[tuple[str, str]]:
        """(SQL comparison, ISO day) of each end of the date range that is set: a file is kept
        when the first ten characters of its date compare so with the day."""
        ends = ((">=", self.since), ("<=", self.until))
        return [(op, day) for op, day in ends if day is not None]

    def folder_prefixes(self) -> list[str] | None:
        """The folders, distinct and sorted, when they filter at all; None when unset or empty,
        or when one is the vault root '' (which contains everything)."""
        if not self.folders or "" in self.folders:
            return None
        return sorted(set(self.folders))

    def all_tags(self) -> list[str]:
        """The tags a file must all carry, distinct and sorted (empty: no tag filter)."""
        return sorted(set(self.tags or ()))
