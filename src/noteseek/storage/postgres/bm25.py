"""BM25 in SQL over noteseek's own term statistics, matching SQLite FTS5's bm25() (docs/postgres-design.md).

FTS5's bm25(chunks_fts, w_text, w_section, w_title, w_tags), which the SQLite backend ranks by, is

    score(D) = Σ_phrases IDF(p) · f(p, D) · (k1 + 1) / (f(p, D) + k1 · (1 − b + b · |D| / avgdl))
    f(p, D)  = Σ_fields w_field · (occurrences of p in that field of D)
    IDF(p)   = ln((N − n(p) + 0.5) / (n(p) + 0.5)), or 1e-6 where that is ≤ 0
    k1 = 1.2, b = 0.75, |D| = tokens over all fields (unweighted), avgdl = Σ|D| / N

with N and n(p) counted over the whole table (the filtered search still uses them). Each query
word is one FTS5 phrase; a word the tokenizer turns into several tokens would be an FTS5 phrase
of adjacent tokens, which postings without positions cannot check, so each such token is scored
as a phrase of its own (bench/pg_bm25.py counts how often that happens: never in the judged sets).
Colocated alternatives (Porter and German stems of one query word) form one phrase: their
frequencies add up, and n(p) is the number of chunks holding any of them.

The query words are chosen by `query.fts_query` (stopwords and too-common stems dropped) and
tokenised by terms.Tokenizer, so the stems are the SQLite backend's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ...query import fts_query
from .terms import Tokenizer

__all__ = [
    "BM25_HITS_SQL",
    "BM25_SQL",
    "COMMON_TERMS_SQL",
    "K1",
    "B",
    "Bm25Query",
    "bm25_params",
    "prepare_query",
]

K1 = 1.2
B = 0.75

# One row of (phrase, term) per stem of the query. Scoring touches only the postings index
# (index-only scan on (collection_id, term)); n(p) of a one-stem phrase is term_stats.df, of a
# colocated phrase the distinct chunks of its postings.
BM25_SQL = """
WITH q(phrase, term) AS (
    SELECT * FROM unnest(%(phrases)s::int[], %(terms)s::text[])
), stats AS (
    SELECT chunk_count::float8 AS n,
           token_count::float8 / greatest(chunk_count, 1) AS avgdl
    FROM collections WHERE id = %(collection)s
), hits AS (
    SELECT p.chunk_id, q.phrase, min(p.doc_len) AS doc_len,
           sum(p.tf_text * %(w_text)s::float8 + p.tf_section * %(w_section)s::float8
               + p.tf_title * %(w_title)s::float8 + p.tf_tags * %(w_tags)s::float8) AS f
    FROM q JOIN postings p ON p.collection_id = %(collection)s AND p.term = q.term
    GROUP BY p.chunk_id, q.phrase
), df AS (
    SELECT q.phrase,
           CASE WHEN count(*) = 1 THEN max(t.df)
                ELSE (SELECT count(DISTINCT h.chunk_id) FROM hits h WHERE h.phrase = q.phrase)
           END AS n_p
    FROM q JOIN term_stats t ON t.collection_id = %(collection)s AND t.term = q.term
    GROUP BY q.phrase
), idf AS (
    SELECT df.phrase, greatest(ln((stats.n - df.n_p + 0.5) / (df.n_p + 0.5)), 1e-6) AS idf
    FROM df, stats
)
SELECT h.chunk_id,
       sum(idf.idf * h.f * (%(k1)s + 1) /
           (h.f + %(k1)s * (1 - %(b)s + %(b)s * h.doc_len / stats.avgdl))) AS score
FROM hits h JOIN idf USING (phrase) CROSS JOIN stats
GROUP BY h.chunk_id
ORDER BY score DESC, h.chunk_id
LIMIT %(limit)s
"""


# The search's form: each winner with its note, joined only for the `limit` rows that won.
BM25_HITS_SQL = f"""
SELECT x.chunk_id, x.score, c.file_id FROM ({BM25_SQL}) x
JOIN chunks c ON c.id = x.chunk_id
ORDER BY x.score DESC, x.chunk_id
"""

# Stems in more than a share of the collection's chunks: left out of the query (query.fts_query's
# `drop`, SearchSettings.max_term_share), as the SQLite backend does with its stored counts.
COMMON_TERMS_SQL = """
SELECT t.term FROM term_stats t JOIN collections c ON c.id = t.collection_id
WHERE t.collection_id = %(collection)s AND t.df > %(share)s * c.chunk_count
"""


@dataclass(frozen=True)
class Bm25Query:
    """The stems of a query: one tuple per phrase (a stem and its colocated alternatives)."""

    phrases: tuple[tuple[str, ...], ...]
    split_words: int = 0  # query words that became several tokens (scored token by token)


def prepare_query(
    text: str, tokenizer: Tokenizer, *, drop: Callable[[str], bool] | None = None
) -> Bm25Query | None:
    """The phrases to score for user text, or None when nothing is searchable."""
    match = fts_query(text, drop=drop)
    if match is None:
        return None
    # fts_query quotes each word; its words hold only letters, digits and private-use chars.
    words = [part[1:-1] for part in match.split(" OR ")]
    phrases: list[tuple[str, ...]] = []
    split = 0
    for word in words:
        tokens = tokenizer.query(word)
        split += len(tokens) > 1
        # Not de-duplicated: two words with one stem are two FTS5 phrases, scored twice there.
        phrases.extend(tuple(dict.fromkeys(token)) for token in tokens)
    return Bm25Query(tuple(phrases), split) if phrases else None


def bm25_params(
    query: Bm25Query,
    *,
    collection: int,
    weights: Sequence[float],
    limit: int,
) -> dict[str, object]:
    """Parameters of BM25_SQL for one collection, with FTS5's column weights."""
    phrase_ids = [i for i, alts in enumerate(query.phrases) for _ in alts]
    terms = [term for alts in query.phrases for term in alts]
    w_text, w_section, w_title, w_tags = (float(w) for w in weights)
    return {
        "phrases": phrase_ids,
        "terms": terms,
        "collection": int(collection),
        "w_text": w_text,
        "w_section": w_section,
        "w_title": w_title,
        "w_tags": w_tags,
        "k1": K1,
        "b": B,
        "limit": int(limit),
    }
