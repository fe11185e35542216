"""BM25 in SQL over noteseek's own term statistics, matching SQLite FTS5's bm25() (docs/postgres.md).

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

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from ...core.query import fts_query
from .terms import Tokenizer

__all__ = [
    "BM25_COLOCATED_SQL",
    "BM25_SQL",
    "COMMON_TERMS_SQL",
    "K1",
    "B",
    "Bm25Query",
    "bm25_params",
    "bm25_sql",
    "prepare_query",
    "query_phrases",
]

K1 = 1.2
B = 0.75

# Which collections: one (`= %(collection)s`, the statement measured in bench/results/pg_bm25.md)
# or several (`= ANY(%(collections)s)`: N, the token count and each df summed over them, as if
# they were one table, which is what searching them together means).
_ONE = "= %(collection)s"
_MANY = "= ANY(%(collections)s)"


def _head(where: str) -> str:
    """The shared head: N and avgdl of the collections, each query stem with its phrase number."""
    df = "t.df::float8" if where == _ONE else "sum(t.df)::float8"
    group = "" if where == _ONE else "\n    GROUP BY u.phrase, u.term"
    return f"""
WITH stats AS (
    SELECT sum(chunk_count)::float8 AS n,
           sum(token_count)::float8 / greatest(sum(chunk_count), 1)::float8 AS avgdl
    FROM collections WHERE id {where}
), q AS (
    SELECT u.phrase, u.term, {df} AS df
    FROM unnest(%(phrases)s::int[], %(terms)s::text[]) AS u(phrase, term)
    JOIN term_stats t ON t.collection_id {where} AND t.term = u.term{group}
)"""


# FTS5's arithmetic, in FTS5's order (fts5_aux.c): the scores come out bit for bit the same, so
# ties fall the same way too; sum(... ORDER BY phrase) adds the phrases in FTS5's order.
_TERM = "idf * ((f * (%(k1)s + 1.0)) / (f + %(k1)s * (1 - %(b)s + %(b)s * doc_len / stats.avgdl)))"
_IDF = "greatest(ln((stats.n - {df} + 0.5) / ({df} + 0.5)), 1e-6)"
_F = (
    "p.tf_text * %(w_text)s::float8 + p.tf_section * %(w_section)s::float8"
    " + p.tf_title * %(w_title)s::float8 + p.tf_tags * %(w_tags)s::float8"
)
_TOP = "\nORDER BY score DESC, chunk_id\nLIMIT %(limit)s"


def _plain(where: str) -> str:
    """One stem per phrase (every English query): one pass over the stems' postings, an
    index-only scan of postings_pkey per stem, one aggregate per chunk."""
    return f"""{_head(where)}
SELECT chunk_id, sum({_TERM} ORDER BY phrase) AS score
FROM (
    SELECT p.chunk_id, w.phrase, p.doc_len, w.idf, {_F} AS f
    FROM (SELECT q.phrase, q.term, {_IDF.format(df="q.df")} AS idf FROM q, stats) w
    JOIN postings p ON p.collection_id {where} AND p.term = w.term
) x CROSS JOIN stats
GROUP BY chunk_id"""


def _colocated(where: str) -> str:
    """Colocated alternatives (Porter and German stems of one word, in a vault with German
    notes): their frequencies add up per chunk before BM25's saturation, and n(p) counts the
    chunks that hold any of them."""
    return f"""{_head(where)}, hits AS (
    SELECT p.chunk_id, q.phrase, min(p.doc_len) AS doc_len, sum({_F}) AS f
    FROM q JOIN postings p ON p.collection_id {where} AND p.term = q.term
    GROUP BY p.chunk_id, q.phrase
), n_p AS (
    SELECT phrase, count(*)::float8 AS df FROM hits GROUP BY phrase
)
SELECT chunk_id, sum({_TERM} ORDER BY phrase) AS score
FROM (
    SELECT h.chunk_id, h.phrase, h.doc_len, h.f, {_IDF.format(df="n_p.df")} AS idf
    FROM hits h JOIN n_p USING (phrase) CROSS JOIN stats
) x CROSS JOIN stats
GROUP BY chunk_id"""


BM25_SQL = _plain(_ONE) + _TOP
BM25_COLOCATED_SQL = _colocated(_ONE) + _TOP


def bm25_sql(
    query: Bm25Query, *, with_files: bool = True, several: bool = False, filtered: bool = False
) -> str:
    """The BM25 statement for a query; `with_files` adds each winner's file id (the search's
    form, joined only for the `limit` rows that won); `several` collections (`collections`
    parameter); `filtered`: only chunks of `allowed` files, filtered before the limit."""
    colocated = any(len(alternatives) > 1 for alternatives in query.phrases)
    body = (_colocated if colocated else _plain)(_MANY if several else _ONE)
    if filtered:
        return (
            f"SELECT x.chunk_id, x.score, c.file_id FROM ({body}) x "
            "JOIN chunks c ON c.id = x.chunk_id WHERE c.file_id = ANY(%(allowed)s) "
            "ORDER BY x.score DESC, x.chunk_id LIMIT %(limit)s"
        )
    if not with_files:
        return body + _TOP
    return (
        f"SELECT x.chunk_id, x.score, c.file_id FROM ({body}{_TOP}) x "
        "JOIN chunks c ON c.id = x.chunk_id ORDER BY x.score DESC, x.chunk_id"
    )


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
    return query_phrases([part[1:-1] for part in match.split(" OR ")], tokenizer)


def query_phrases(words: Sequence[str], tokenizer: Tokenizer) -> Bm25Query | None:
    """The phrases to score for planned query words (`core.query.search_terms`): each word an
    FTS5 phrase, as the SQLite backend's MATCH expression makes it; None when none has a token."""
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
    collection: int | Sequence[int],
    weights: Sequence[float],
    limit: int,
    allowed: Iterable[int] | None = None,
) -> dict[str, object]:
    """Parameters of `bm25_sql` for one collection (an id) or several (ids), with FTS5's
    column weights; `allowed` file ids for the filtered form."""
    phrase_ids = [i for i, alts in enumerate(query.phrases) for _ in alts]
    terms = [term for alts in query.phrases for term in alts]
    w_text, w_section, w_title, w_tags = (float(w) for w in weights)
    return {
        "phrases": phrase_ids,
        "terms": terms,
        "collection": collection if isinstance(collection, int) else None,
        "collections": [collection] if isinstance(collection, int) else list(collection),
        "allowed": None if allowed is None else sorted(allowed),
        "w_text": w_text,
        "w_section": w_section,
        "w_title": w_title,
        "w_tags": w_tags,
        "k1": K1,
        "b": B,
        "limit": int(limit),
    }
