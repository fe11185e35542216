"""Query planning for BM25: which query words a keyword search leaves out as too common.

A word whose stem is in more than `max_share` of all chunks has a low IDF, so it moves a BM25
ranking little (above half of all chunks FTS5 clamps its IDF to ~0 and it moves it not at all),
yet its posting list is the longest and costs the most in an OR query (docs/ranking.md). The
storage records how many chunks hold each frequent stem and says which stems a word has; the
decision is made here, so every backend leaves out the same words.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...storage.protocol import Storage

__all__ = ["CommonTerms"]


class CommonTerms:
    """The common-word test for one storage, recomputed only when its term counts change."""

    def __init__(self, storage: Storage) -> None:
        self._storage = storage
        self._shares: Mapping[str, float] | None = None
        self._share: float | None = None
        self._common: frozenset[str] = frozenset()

    def test(self, max_share: float) -> Callable[[str], bool] | None:
        """A test for query words whose every stem is in more than `max_share` of all chunks, or
        None when no stem is that common."""
        shares = self._storage.term_shares()
        # The storage hands out the same mapping until its counts change: cache on identity.
        if shares is not self._shares or max_share != self._share:
            self._shares, self._share = shares, max_share
            self._common = frozenset(t for t, share in shares.items() if share > max_share)
        common = self._common
        if not common:
            return None
        stems = self._storage.index_stems

        def is_common(term: str) -> bool:
            found = stems(term)
            return bool(found) and all(stem in common for stem in found)

        return is_common
