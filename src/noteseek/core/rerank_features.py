"""Features of one candidate note of the fused head, for the linear reranker. Pure.

The shipped set is the lab's "cheap" set without link in-degree (docs/ranking.md, "The
learned rerank"): what each list said about the note (normalised score, reciprocal rank, presence, how many of
its chunks the list matched), the fused score and rank, IDF-weighted query-term coverage of the
note's title field, tags and headings, exact-name and title-equals-query flags, chunk count and
size. Features that need section bodies tokenized (proximity, phrase, body coverage) measured no
gain in the lab and cost most of its time, so they are not here; in-degree helps only the sets
built from links. Plain tuples and lists, no dataclasses: a one-shot search imports this module,
and each dataclass costs a process ~0.5 ms to create.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["FEATURE_NAMES", "candidate_features", "term_weights"]

FEATURE_NAMES: tuple[str, ...] = (
    "fused_score",
    "fused_rrank",
    "bm25_norm",
    "bm25_rrank",
    "bm25_present",
    "cosine",
    "vec_norm",
    "vec_rrank",
    "vec_present",
    "bm25_chunks",
    "vec_chunks",
    "cov_title",
    "cov_tags",
    "cov_headings",
    "exact_name",
    "title_equal_terms",
    "log_chunks",
    "log_note_bytes",
    "query_terms",
)


def term_weights(counts: Sequence[int], total_chunks: int) -> list[float]:
    """BM25-style IDF per query word (0 for a word in no chunk), plus a little so that a very
    common word still counts for coverage."""
    n = max(total_chunks, 1)
    return [
        (max(math.log((n - df + 0.5) / (df + 0.5)), 0.0) if df else 0.0) + 1e-3 for df in counts
    ]


def _share(weights: Sequence[float], forms: Sequence[tuple[str, ...]], field: frozenset[str]) -> float:
    if not field:
        return 0.0
    total = hit = 0.0
    for w, f in zip(weights, forms):
        total += w
        if any(x in field for x in f):
            hit += w
    return hit / total if total > 0 else 0.0


def candidate_features(
    forms: Sequence[tuple[str, ...]],
    weights: Sequence[float],
    lists: tuple[int, float, int | None, float, int | None, float | None, float, int, int, bool],
    note: tuple[frozenset[str], frozenset[str], frozenset[str], int, int],
) -> list[float]:
    """The feature row of one candidate, in `FEATURE_NAMES` order.

    `forms`/`weights`: per query word its index forms and `term_weights` weight. `lists`: fused
    rank (1-based), fused score, BM25 rank (None = absent), BM25 normalised score, vector rank,
    best cosine, vector normalised score, BM25 and vector chunk counts, exact-name match. `note`:
    title, tags and heading token sets, chunk count, size in bytes (`Storage.note_terms`).
    """
    fused_rank, fused, bm25_rank, bm25_norm, vec_rank, cosine, vec_norm, kw_n, vec_n, exact = lists
    title, tags, headings, chunks, size = note
    in_title = [any(x in title for x in f) for f in forms]
    title_equal = bool(forms) and bool(title) and all(in_title) and len(title) <= 2 * len(forms)
    return [
        fused,
        1.0 / fused_rank,
        bm25_norm,
        1.0 / bm25_rank if bm25_rank else 0.0,
        float(bm25_rank is not None),
        cosine if cosine is not None else 0.0,
        vec_norm,
        1.0 / vec_rank if vec_rank else 0.0,
        float(vec_rank is not None),
        math.log1p(kw_n),
        math.log1p(vec_n),
        _share(weights, forms, title),
        _share(weights, forms, tags),
        _share(weights, forms, headings),
        float(exact),
        float(title_equal),
        math.log1p(chunks),
        math.log1p(size),
        math.log1p(len(forms)),
    ]
