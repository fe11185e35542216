"""BM25 term statistics of a chunk, tokenised exactly as the SQLite backend's FTS5 table does.

PostgreSQL has no BM25 (its `ts_rank_cd` has no IDF), so noteseek keeps the statistics itself:
per chunk and stem the term frequency in each of the four fields (chunk text, section, title,
tags: FTS5's column order), the chunk's length in tokens over all four fields (FTS5's
`xColumnSize(-1)`, which its bm25() uses as the document length), and per stem the number of
chunks that hold it.

The tokens come from noteseek's own FTS5 tokenizer (`noteseek.storage.tokenizer`), called outside FTS5
through an in-memory apsw connection, so a stem here is byte for byte the stem the SQLite index
holds (Porter over unicode61 with diacritics removed; German Snowball for German notes; Porter
and German stems colocated in queries of a vault with German notes). Checked against FTS5's own
vocabulary on real indexes by bench/pg_bm25.py (`check_tokens`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import apsw

from ..tokenizer import TOKENIZER_NAME, StemOptions, register

__all__ = ["FIELDS", "ChunkTerms", "Tokenizer", "chunk_terms"]

# FTS5's column order in the SQLite backend, and so the order of SearchSettings.column_weights.
FIELDS = ("chunk_text", "section", "title", "tags")
# The tokenizer the SQLite backend's `index_stems` asks (text_index._PORTER): the stems of its
# frequent-term counts, so both backends leave out the same query words.
_PORTER = ["unicode61", "remove_diacritics", "2"]


@dataclass(frozen=True)
class ChunkTerms:
    """One chunk's postings: stem -> term frequency per field, and its length in tokens."""

    tf: dict[str, tuple[int, int, int, int]]
    doc_len: int


class Tokenizer:
    """noteseek's FTS5 tokenizer outside FTS5. Not thread-safe: one per thread."""

    def __init__(self, *, german_queries: bool = False) -> None:
        self._db = apsw.Connection(":memory:")
        self.options = StemOptions(german_queries=german_queries)
        register(self._db, self.options)
        self._tokenize: Any = self._db.fts5_tokenizer(TOKENIZER_NAME, [])
        self._porter: Any = None

    def document(self, text: str, lang: str | None) -> list[str]:
        """The stems FTS5 indexes for one field of a chunk in language `lang` (None = default)."""
        if not text:
            return []
        tokens = self._tokenize(text.encode("utf-8"), apsw.FTS5_TOKENIZE_DOCUMENT, lang)
        return [str(t[2]) for t in tokens]

    def query(self, term: str) -> list[tuple[str, ...]]:
        """The tokens of one query term: each a stem and its colocated alternatives."""
        tokens = self._tokenize(term.encode("utf-8"), apsw.FTS5_TOKENIZE_QUERY, None)
        return [tuple(str(s) for s in t[2:]) for t in tokens]

    def porter_stems(self, word: str) -> list[str]:
        """The Porter stems of a query word, as the SQLite backend's `index_stems` gives them."""
        if self._porter is None:
            self._porter = self._db.fts5_tokenizer("porter", _PORTER)
        tokens = self._porter(word.encode("utf-8"), apsw.FTS5_TOKENIZE_QUERY, None)
        return [str(t[2]) for t in tokens]


def chunk_terms(
    tokenizer: Tokenizer,
    *,
    text: str,
    section: str,
    title: str,
    tags: str,
    lang: str | None,
) -> ChunkTerms:
    """Per-field term frequencies and the token length of one chunk."""
    counts = [Counter(tokenizer.document(field, lang)) for field in (text, section, title, tags)]
    stems = set().union(*counts)
    # .get, not [ ]: a Counter's missing key goes through a Python __missing__ call.
    in_text, in_section, in_title, in_tags = (c.get for c in counts)
    tf = {
        s: (in_text(s, 0), in_section(s, 0), in_title(s, 0), in_tags(s, 0)) for s in sorted(stems)
    }
    return ChunkTerms(tf, sum(sum(c.values()) for c in counts))
