"""How many notes each folder and tag filter would keep: the lists a search page offers. Pure.

A folder counts every note below it at any depth, and a tag every note carrying it or one of its
nested tags (`project` counts a note tagged `project/alpha`), so each count is the number of
notes the same `folders=[…]` or `tags=[…]` filter of a search keeps (tests/test_filters.py).
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["folder_counts", "tag_counts"]


def _prefixes(key: str) -> list[str]:
    """'a/b/c' -> ['a', 'a/b', 'a/b/c']."""
    parts = key.split("/")
    return ["/".join(parts[:depth]) for depth in range(1, len(parts) + 1)]


def folder_counts(paths: Iterable[str]) -> dict[str, int]:
    """Every folder holding one of the vault-relative `paths` (at any depth), sorted, with how
    many of the paths lie below it; the vault root is not listed."""
    counts: dict[str, int] = {}
    for path in paths:
        folder = path.rpartition("/")[0]
        for prefix in _prefixes(folder) if folder else ():
            counts[prefix] = counts.get(prefix, 0) + 1
    return dict(sorted(counts.items()))


def tag_counts(tags_per_note: Iterable[Iterable[str]]) -> dict[str, int]:
    """Every tag (tag_key()s) and every parent of a nested one, sorted, with how many notes
    carry it or a tag nested below it (a note counts once per tag)."""
    counts: dict[str, int] = {}
    for tags in tags_per_note:
        for tag in {prefix for t in tags for prefix in _prefixes(t) if prefix}:
            counts[tag] = counts.get(tag, 0) + 1
    return dict(sorted(counts.items()))
