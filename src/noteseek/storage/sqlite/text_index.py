"""The FTS5 text index: BM25 search, the counts of frequent stems, and the language state.

The table itself is external-content FTS5 over the chunks (schema.py), kept in step by triggers
and tokenized by noteseek's own tokenizer (tokenizer.py). Which query words to leave out of a
search is decided by the engine (engine/query_plan.py) from `term_shares` and `index_stems`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import apsw

from ...core.query import match_expression
from .. import meta
from .connection import SqliteConnection

if TYPE_CHECKING:
    from ..protocol import KeywordMatch

__all__ = ["COMMON_TERM_FLOOR", "TextIndex"]

# The search module's logger name, kept from before the package split so logs read the same.
log = logging.getLogger("noteseek.search")

# Stems in more than this share of chunks get their document count recorded (term_shares).
COMMON_TERM_FLOOR = 0.01
_PORTER = ["unicode61", "remove_diacritics", "2"]


class TextIndex(SqliteConnection):
    """Searches and maintenance of the FTS5 table."""

    _shares_raw: str | None = None
    _shares: Mapping[str, float] = MappingProxyType({})
    _porter: Any = None

    def keyword_search(
        self,
        terms: Sequence[str],
        *,
        limit: int,
        column_weights: tuple[float, float, float, float],
        allowed: set[int] | None = None,
    ) -> list[KeywordMatch]:
        """(chunk id, BM25 score, file id), best first: FTS5 `bm25()` (negated, so higher is
        better) over the terms OR-ed; only notes in `allowed` when given."""
        match = match_expression(list(terms))
        w = column_weights
        if allowed is None:
            # Rank inside, join outside: the join then touches only the `limit` winners.
            sql = (
                "SELECT x.id, x.s, c.file_id FROM (SELECT rowid AS id, "
                "bm25(chunks_fts, ?, ?, ?, ?) AS s FROM chunks_fts WHERE chunks_fts MATCH ? "
                "ORDER BY s, rowid LIMIT ?) x JOIN chunks c ON c.id = x.id ORDER BY x.s, x.id"
            )
            params: tuple[object, ...] = (w[0], w[1], w[2], w[3], match, limit)
        else:
            # Filtered: every match is scored and the filter applied before the limit, so a
            # narrow folder still gets its full `limit` rather than what survived the top rows.
            sql = (
                "SELECT x.id, x.s, c.file_id FROM (SELECT rowid AS id, "
                "bm25(chunks_fts, ?, ?, ?, ?) AS s FROM chunks_fts WHERE chunks_fts MATCH ?) x "
                "JOIN chunks c ON c.id = x.id "
                "WHERE c.file_id IN (SELECT value FROM json_each(?)) ORDER BY x.s, x.id LIMIT ?"
            )
            params = (w[0], w[1], w[2], w[3], match, json.dumps(sorted(allowed)), limit)
        try:
            rows = self.db.execute(sql, params)
            return [(int(r[0]), -float(r[1]), int(r[2])) for r in rows]
        except apsw.Error as exc:  # defensive: the sanitiser should make this unreachable
            log.warning("keyword search failed for a query, returning no keyword hits: %s", exc)
            return []

    # -- term statistics --------------------------------------------------------------------

    def term_shares(self) -> Mapping[str, float]:
        """Share of chunks containing each recorded stem (only stems above COMMON_TERM_FLOOR);
        the same object until the stored counts change.

        The document counts are computed at the end of each update and stored in meta; a stem in
        many chunks has a low IDF, so it moves a BM25 ranking little (above half of all chunks,
        FTS5 clamps its IDF to ~0 and it moves it not at all), yet its posting list is the longest
        and costs the most in an OR query (see engine/query_plan.py).
        """
        raw = self.get_meta(meta.COMMON_TERMS) or self.get_meta(meta.COMMON_TERMS_STALE)
        # Parsed once per stored value, not once per query: this runs on every search.
        if raw != self._shares_raw:
            self._shares_raw = raw
            # Both are rewritten by the same end-of-run transaction, so a long-lived reader (the
            # daemon, a watched MCP server) learns here that German notes came (or went).
            self.stem_options.german_queries = self.get_meta(meta.GERMAN_NOTES) == "1"
            data = json.loads(raw) if raw else {}
            if isinstance(data, list):  # written before 0.2: only the stems in > 50 % of chunks
                self._shares = dict.fromkeys(data, 1.0)
            else:
                total = max(int(data.get("chunks", 0)), 1)
                self._shares = {t: d / total for t, d in data.get("terms", {}).items()}
        return self._shares

    def index_stems(self, word: str) -> list[str]:
        """The Porter stems FTS5 gives a query word: the terms `term_shares` counts."""
        if self._porter is None:
            self._porter = self.db.fts5_tokenizer("porter", _PORTER)
        tokens = self._porter(word.encode("utf-8"), apsw.FTS5_TOKENIZE_QUERY, None)
        return [token[2] for token in tokens]

    def common_terms_outdated(self) -> bool:
        """True when the stored term counts are missing or in the pre-0.2 format."""
        raw = self.get_meta(meta.COMMON_TERMS)
        return raw is None or not raw.startswith("{")

    def refresh_common_terms(self) -> None:
        """Recompute the document counts of stems in more than COMMON_TERM_FLOOR of all chunks
        (call inside `write()`)."""
        total = int(self.scalar("SELECT count(*) FROM chunks"))
        self.db.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.chunks_vocab "
            "USING fts5vocab(main, chunks_fts, 'row')"
        )
        rows = self.db.execute(
            "SELECT term, doc FROM temp.chunks_vocab WHERE doc > ?",
            (int(total * COMMON_TERM_FLOOR),),
        )
        terms = {str(term): int(doc) for term, doc in rows}
        self.set_meta(meta.COMMON_TERMS, json.dumps({"chunks": total, "terms": terms}, sort_keys=True))
        self.db.execute("DELETE FROM meta WHERE key = ?", (meta.COMMON_TERMS_STALE,))

    def _chunks_changed(self) -> None:
        # The ubiquitous-term list describes the chunks as they were at the end of the last
        # complete run. A run killed after writing files but before recomputing the list would
        # leave it describing the old text, and the next run, finding nothing to do, would never
        # recompute it. So the first chunk write moves the list aside: the indexer recomputes a
        # missing list at the end of every run, and search keeps using the moved list meanwhile.
        self.db.execute(
            "UPDATE OR REPLACE meta SET key = ? WHERE key = ?", (meta.COMMON_TERMS_STALE, meta.COMMON_TERMS)
        )

    # -- maintenance ------------------------------------------------------------------------

    def optimize_text_index(self) -> None:
        """Merge the FTS5 index into one segment, dropping deleted rows' terms (inside `write()`)."""
        self.db.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('optimize')")

    def refresh_languages(self) -> None:
        """Record whether any chunk is German, for the query tokenizer (call inside `write()`)."""
        german = self.scalar("SELECT EXISTS(SELECT 1 FROM chunks WHERE lang = 'de')")
        self.set_meta(meta.GERMAN_NOTES, "1" if german else "0")
        self.stem_options.german_queries = bool(german)
