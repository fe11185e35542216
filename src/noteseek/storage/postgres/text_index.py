"""BM25 over noteseek's own postings (bm25.py), the shares of frequent stems, the language state.

The term statistics are kept exact by every file write (files.py), so nothing here is ever
stale: `term_shares` reads them live (cached until a collection's `version` moves), and the
SQLite backend's end-of-run recount (`refresh_common_terms`) has nothing to do.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from .. import meta
from .bm25 import bm25_params, bm25_sql, query_phrases
from .connection import PostgresConnection

if TYPE_CHECKING:
    from ..protocol import KeywordMatch
    from ..queries import KeywordQuery

__all__ = ["COMMON_TERM_FLOOR", "TextIndex"]

log = logging.getLogger("noteseek.search")

# Stems in more than this share of chunks are reported by term_shares (as on SQLite).
COMMON_TERM_FLOOR = 0.01


class TextIndex:
    """Keyword search and its statistics."""

    def __init__(self, conn: PostgresConnection) -> None:
        self.conn = conn
        self._shares_key: Any = None
        self._shares: Mapping[str, float] = MappingProxyType({})

    def keyword_search(self, query: KeywordQuery) -> list[KeywordMatch]:
        """FTS5's bm25() computed in SQL over the selected collections (bit for bit FTS5's
        scores; docs/postgres.md)."""
        limit, allowed = query.limit, query.allowed
        phrases = query_phrases(list(query.terms), self.conn.tokenizer)
        if phrases is None or limit <= 0 or (allowed is not None and not allowed):
            return []
        several = self.conn.collections.multi
        ids = self.conn.collections.ids
        params = bm25_params(
            phrases,
            collection=ids if several else ids[0],
            weights=query.column_weights,
            limit=limit,
            allowed=allowed,
        )
        sql = bm25_sql(phrases, several=several, filtered=allowed is not None)
        return [(int(r[0]), float(r[1]), int(r[2])) for r in self.conn.rows(sql, params)]

    # -- term statistics --------------------------------------------------------------------

    def _counts_key(self) -> tuple[int, int, int]:
        rows = self.conn.collection_counts()
        return sum(r[2] for r in rows), sum(r[3] for r in rows), sum(r[1] for r in rows)

    def term_shares(self) -> Mapping[str, float]:
        """Share of chunks holding each stem in more than COMMON_TERM_FLOOR of them, over the
        selected collections; the same object until a collection's counts change."""
        key = self._counts_key()
        if key == self._shares_key:
            return self._shares
        total = key[0]
        # A stem above the floor over several collections is above it in at least one of them,
        # so each collection's candidates come from the (collection, df) index.
        rows = self.conn.rows(
            "WITH cand AS (SELECT DISTINCT t.term FROM term_stats t JOIN collections c "
            "ON c.id = t.collection_id WHERE t.collection_id = ANY(%(ids)s) "
            "AND t.df > floor(c.chunk_count * %(floor)s)) "
            "SELECT t.term, sum(t.df) FROM term_stats t JOIN cand USING (term) "
            "WHERE t.collection_id = ANY(%(ids)s) GROUP BY t.term "
            "HAVING sum(t.df) > floor(%(total)s * %(floor)s)",
            {"ids": self.conn.collections.ids, "floor": COMMON_TERM_FLOOR, "total": total},
        )
        self._shares = MappingProxyType({str(t): int(d) / max(total, 1) for t, d in rows})
        self._shares_key = key
        return self._shares

    def index_stems(self, word: str) -> list[str]:
        """The Porter stems of a query word: the terms `term_shares` counts (as on SQLite)."""
        return self.conn.tokenizer.porter_stems(word)

    def common_terms_outdated(self) -> bool:
        """Never: the statistics are updated with every file (see the module docstring)."""
        return False

    def refresh_common_terms(self) -> None:
        """Nothing to recount; forget the cached shares."""
        self._shares_key = None

    def refresh_languages(self) -> None:
        """Record whether any chunk of the collection is German (inside `write()`)."""
        german = bool(
            self.conn.scalar(
                "SELECT EXISTS(SELECT 1 FROM chunks WHERE collection_id = %s AND lang = 'de')",
                (self.conn.collections.only,),
            )
        )
        self.conn.set_meta(meta.GERMAN_NOTES, "1" if german else "0")
        self.conn.tokenizer.options.german_queries = german

    def optimize_text_index(self) -> None:
        """Nothing to merge: deleted postings are gone at once, their space is autovacuum's."""
