"""The FTS5 text index: BM25 search, the counts of frequent stems, and the language state.

The table itself is external-content FTS5 over the chunks (schema.py), kept in step by triggers
and tokenized by noteseek's own tokenizer (tokenizer.py). Which query words to leave out of a
search is decided by the engine (engine/search/query_plan.py) from `term_shares` and `index_stems`.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import apsw

from ...core.query import match_expression
from .. import meta
from ..tokenizer import TOKENIZER_NAME
from .connection import SqliteConnection

if TYPE_CHECKING:
    from ..protocol import KeywordMatch
    from ..queries import KeywordQuery

__all__ = ["COMMON_TERM_FLOOR", "TextIndex"]

# The search module's logger name, kept from before the package split so logs read the same.
log = logging.getLogger("noteseek.search")

# Stems in more than this share of chunks get their document count recorded (term_shares).
COMMON_TERM_FLOOR = 0.01
_PORTER = ["unicode61", "remove_diacritics", "2"]
# Above this many chunks written in a run, the full recount is cheaper than a lookup per stem.
_INCREMENTAL_MAX_CHUNKS = 2_000


class TextIndex:
    """Searches and maintenance of the FTS5 table."""

    def __init__(self, conn: SqliteConnection) -> None:
        self.conn = conn
        self.db = conn.db
        self._shares_raw: str | None = None
        self._shares: Mapping[str, float] = MappingProxyType({})
        self._porter: Any = None
        self._tokenizer: Any = None
        # Since this connection moved a fresh term list aside: the chunks written (and still
        # there), and the stems of the chunks deleted that the list had counted, per stem the
        # number of such chunks holding it. None: not known (the full recount).
        self._written_chunks: set[int] | None = None
        self._deleted_terms: Counter[str] = Counter()
        self._deleted_chunks = 0
        self._version = 0  # PRAGMA data_version when the list was moved aside
        conn.on_rollback.append(self._forget_writes)

    def keyword_search(self, query: KeywordQuery) -> list[KeywordMatch]:
        """FTS5's `bm25()`, negated (FTS5 ranks lower as better), over the terms OR-ed."""
        match = match_expression(list(query.terms))
        w, limit, allowed = query.column_weights, query.limit, query.allowed
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
        and costs the most in an OR query (see engine/search/query_plan.py).
        """
        raw = self.conn.get_meta(meta.COMMON_TERMS) or self.conn.get_meta(meta.COMMON_TERMS_STALE)
        # Parsed once per stored value, not once per query: this runs on every search.
        if raw != self._shares_raw:
            self._shares_raw = raw
            # Both are rewritten by the same end-of-run transaction, so a long-lived reader (the
            # daemon, a watched MCP server) learns here that German notes came (or went).
            self.conn.stem_options.german_queries = self.conn.get_meta(meta.GERMAN_NOTES) == "1"
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
        raw = self.conn.get_meta(meta.COMMON_TERMS)
        return raw is None or not raw.startswith("{")

    def refresh_common_terms(self) -> None:
        """Recompute the document counts of stems in more than COMMON_TERM_FLOOR of all chunks
        (call inside `write()`)."""
        total = int(self.conn.scalar("SELECT count(*) FROM chunks"))
        floor = int(total * COMMON_TERM_FLOOR)
        self.db.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.chunks_vocab "
            "USING fts5vocab(main, chunks_fts, 'row')"
        )
        terms = self._common_terms_after_few_writes(floor)
        if terms is None:
            rows = self.db.execute(
                "SELECT term, doc FROM temp.chunks_vocab WHERE doc > ?", (floor,)
            )
            terms = {str(term): int(doc) for term, doc in rows}
        self.conn.set_meta(
            meta.COMMON_TERMS, json.dumps({"chunks": total, "terms": terms}, sort_keys=True)
        )
        self.db.execute("DELETE FROM meta WHERE key = ?", (meta.COMMON_TERMS_STALE,))
        self._written_chunks = None
        self._deleted_terms = Counter()
        self._deleted_chunks = 0

    def _common_terms_after_few_writes(self, floor: int) -> dict[str, int] | None:
        """The counts of the full recount, found from the stale list and the chunks written and
        deleted since it was moved aside; None when that cannot be known exactly (or costs more
        than a recount).

        The full recount reads every term's document list (fts5vocab), ~1 s on MDN for a
        one-note change, and a lookup of one frequent stem reads its whole list too (~0.1 ms:
        a one-note change looked up the 900 stems of MDN's list, 0.1 s). So the counts are
        carried forward instead: a chunk row holds a stem or not, so a stem's new count is its
        old one plus the written chunks that hold it minus the deleted ones that did. That is
        exact for the stems of the old list. A stem not in it held at most the old floor's count
        of chunks, so with a floor that did not fall, only a stem whose written chunks outnumber
        its deleted ones by enough to pass the floor can be above it now; each such stem is
        counted exactly by a lookup of that one term.
        """
        written = self._written_chunks
        raw = self.conn.get_meta(meta.COMMON_TERMS_STALE)
        if (
            written is None
            or raw is None
            or len(written) + self._deleted_chunks > _INCREMENTAL_MAX_CHUNKS
            or self._data_version() != self._version  # another connection wrote meanwhile
        ):
            return None
        try:
            old = json.loads(raw)
            old_floor = int(int(old["chunks"]) * COMMON_TERM_FLOOR)
            old_counts = {str(t): int(d) for t, d in old["terms"].items()}
        except (ValueError, TypeError, KeyError, AttributeError):
            return None
        if floor < old_floor:
            return None
        added = self._chunk_stems(sorted(written))
        deleted = self._deleted_terms
        found: dict[str, int] = {}
        for term, count in old_counts.items():
            now = count + added[term] - deleted[term]
            if now > floor:
                found[term] = now
        for term in sorted(t for t in added if t not in old_counts):
            if old_floor + added[term] - deleted[term] <= floor:
                continue  # at most the old floor before, and no more than this gained since
            for _, doc in self.db.execute(
                "SELECT term, doc FROM temp.chunks_vocab WHERE term = ?", (term,)
            ):
                if int(doc) > floor:
                    found[term] = int(doc)
        return found

    def _chunk_stems(self, chunk_ids: Iterable[int]) -> Counter[str]:
        """Per stem, how many of these chunk rows hold it, as FTS5 indexes them: the chunk's text
        and section and its file's title and tags fields, in the file's language."""
        if self._tokenizer is None:
            self._tokenizer = self.db.fts5_tokenizer(TOKENIZER_NAME, [])
        rows = self.db.execute(
            "SELECT f.lang, c.chunk_text, c.section, f.title_field, f.tags_field FROM chunks c "
            "JOIN files f ON f.id = c.file_id WHERE c.id IN (SELECT value FROM json_each(?))",
            (json.dumps(list(chunk_ids)),),
        )
        counts: Counter[str] = Counter()
        for lang, *fields in rows:
            stems: set[str] = set()
            for text in fields:
                if text:
                    tokens = self._tokenizer(
                        str(text).encode("utf-8"), apsw.FTS5_TOKENIZE_DOCUMENT, lang
                    )
                    stems.update(str(t[2]) for t in tokens)
            counts.update(stems)
        return counts

    def chunks_changed(self) -> None:
        """Note that chunks are about to be written or deleted (inside `write()`)."""
        # The ubiquitous-term list describes the chunks as they were at the end of the last
        # complete run. A run killed after writing files but before recomputing the list would
        # leave it describing the old text, and the next run, finding nothing to do, would never
        # recompute it. So the first chunk write moves the list aside: the indexer recomputes a
        # missing list at the end of every run, and search keeps using the moved list meanwhile.
        self.db.execute(
            "UPDATE OR REPLACE meta SET key = ? WHERE key = ?",
            (meta.COMMON_TERMS_STALE, meta.COMMON_TERMS),
        )
        if self.db.changes():
            # A fresh list was moved aside just now: every chunk written or deleted from here on
            # is seen (`written`, `deleting`), which lets a small run count only what it touched.
            self._written_chunks = set()
            self._deleted_terms = Counter()
            self._deleted_chunks = 0
            self._version = self._data_version()

    def _data_version(self) -> int:
        # Moves only when another connection commits (a process killed before its recount
        # leaves the list aside with chunks this connection never saw).
        return int(self.conn.scalar("PRAGMA data_version"))

    def _forget_writes(self) -> None:
        """A write transaction rolled back: the rows noted since the list was moved aside may not
        be there, nor the deleted ones gone, so the next recount is the full one."""
        self._written_chunks = None
        self._deleted_terms = Counter()
        self._deleted_chunks = 0

    def written(self, chunk_id: int) -> None:
        """Note a chunk row written since the term counts were moved aside."""
        if self._written_chunks is not None:
            self._written_chunks.add(chunk_id)

    def deleting(self, chunk_ids: list[int]) -> None:
        """Note chunk rows about to be deleted, while their file row is still the one they
        were indexed with (after `chunks_changed`, inside `write()`)."""
        written = self._written_chunks
        if written is None:
            return
        counted = [i for i in chunk_ids if i not in written]  # the moved list counted these
        written.difference_update(chunk_ids)
        self._deleted_chunks += len(counted)
        if len(written) + self._deleted_chunks > _INCREMENTAL_MAX_CHUNKS:
            self._written_chunks = None  # the full recount will be cheaper
            self._deleted_terms = Counter()
            return
        if counted:
            self._deleted_terms.update(self._chunk_stems(counted))

    # -- maintenance ------------------------------------------------------------------------

    def optimize_text_index(self) -> None:
        """Merge the FTS5 index into one segment, dropping deleted rows' terms (inside `write()`)."""
        self.db.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('optimize')")

    def refresh_languages(self) -> None:
        """Record whether any chunk is German, for the query tokenizer (call inside `write()`)."""
        german = self.conn.scalar(
            "SELECT EXISTS(SELECT 1 FROM files WHERE lang = 'de' AND chunk_count > 0)"
        )
        self.conn.set_meta(meta.GERMAN_NOTES, "1" if german else "0")
        self.conn.stem_options.german_queries = bool(german)
