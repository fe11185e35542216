"""Lab copy of the part-1 prototype feature extractor (all 29 features, bench only; the shipped, cheaper set is noteseek.core.rerank_features). Pure (issue 16).

A prototype: `bench/rerank_lab.py` feeds it from the bench pools and measures it (docs/ranking.md
§10). Everything here is computed from what one search already has (each list's rank and score,
the chunks it matched) plus per-note facts an index stores cheaply (title field, headings, chunk
count, length, link in-degree, mtime). Tokens are the index's own (the `noteseek` FTS5 tokenizer),
so "covers a query term" means exactly "FTS5 would match it". Cost measured in the lab: ~40 µs
per candidate in pure Python once a note's tokens are at hand; on the development sets the
features that need section bodies (proximity, phrase, body coverage) added nothing measurable
(docs/ranking.md §10.4), so a shipped version can drop them and their tokenizing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["FEATURE_NAMES", "Candidate", "NoteTokens", "QueryTerms", "features"]


@dataclass(frozen=True)
class QueryTerms:
    """The query's terms: per position the colocated forms FTS5 matches, and each one's weight."""

    forms: tuple[frozenset[str], ...]
    idf: tuple[float, ...]  # BM25-style idf per position (0 for a term in no chunk)


@dataclass(frozen=True)
class NoteTokens:
    """A note's tokens by field; `chunks` are token sequences (positions matter for proximity)."""

    title: frozenset[str]  # title, aliases, file name
    tags: frozenset[str]
    headings: frozenset[str]
    chunks: tuple[tuple[str, ...], ...]
    best: int  # index into `chunks` of the section search would show


@dataclass(frozen=True)
class Candidate:
    """One note of the fused head: what each list said about it, and its stored facts."""

    fused_rank: int
    fused_score: float
    bm25_rank: int | None
    bm25_norm: float  # min-max normalised in the BM25 head (0 when absent)
    vec_rank: int | None
    cosine: float | None
    vec_norm: float
    bm25_chunks: int  # chunks of the note in the BM25 list (100 deep)
    vec_chunks: int
    exact_name: bool
    chunk_count: int
    note_chars: int
    indegree: int
    recency: float  # 1 = newest of the candidates, 0 = oldest


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
    "cov_body",
    "cov_best",
    "cov_body_count",
    "all_terms_note",
    "all_terms_chunk",
    "proximity",
    "phrase",
    "exact_name",
    "title_equal_terms",
    "log_chunks",
    "log_note_chars",
    "log_best_len",
    "log_indegree",
    "recency",
    "query_terms",
)


def _share(weights: Sequence[float], hit: Sequence[bool]) -> float:
    total = sum(weights)
    if total <= 0:
        return 0.0
    return sum(w for w, h in zip(weights, hit) if h) / total


def _window(tokens: Sequence[str], forms: Sequence[frozenset[str]]) -> int | None:
    """Length of the smallest window of `tokens` holding every matched position's term."""
    slot = {form: i for i, f in enumerate(forms) for form in f}
    hits = [(pos, slot[tok]) for pos, tok in enumerate(tokens) if tok in slot]
    wanted = len({i for _, i in hits})
    if wanted < 2:
        return None
    count: dict[int, int] = {}
    best: int | None = None
    left = 0
    for _right, (pos, i) in enumerate(hits):
        count[i] = count.get(i, 0) + 1
        while len(count) == wanted:
            span = pos - hits[left][0] + 1
            best = span if best is None else min(best, span)
            j = hits[left][1]
            count[j] -= 1
            if not count[j]:
                del count[j]
            left += 1
    return best


def _has_phrase(tokens: Sequence[str], forms: Sequence[frozenset[str]]) -> bool:
    n = len(forms)
    if n < 2:
        return False
    for start in range(len(tokens) - n + 1):
        if all(tokens[start + k] in forms[k] for k in range(n)):
            return True
    return False


def features(query: QueryTerms, cand: Candidate, note: NoteTokens) -> list[float]:
    """The feature vector of one candidate, in `FEATURE_NAMES` order."""
    forms, idf = query.forms, query.idf
    weights = [max(w, 0.0) + 1e-3 for w in idf]  # a zero-idf term still counts a little
    sets = [frozenset(c) for c in note.chunks]
    body: frozenset[str] = frozenset().union(*sets) if sets else frozenset()
    best = note.chunks[note.best] if note.chunks else ()
    best_set = sets[note.best] if sets else frozenset()
    in_title = [bool(f & note.title) for f in forms]
    in_tags = [bool(f & note.tags) for f in forms]
    in_head = [bool(f & note.headings) for f in forms]
    in_body = [bool(f & body) for f in forms]
    in_best = [bool(f & best_set) for f in forms]
    anywhere = [a or b or c or d for a, b, c, d in zip(in_title, in_tags, in_head, in_body)]
    # Positions are only walked in sections that hold every query term (phrase) or several (window).
    full = [c for c, cs in zip(note.chunks, sets) if forms and all(f & cs for f in forms)]
    window = _window(best, forms) if sum(in_best) >= 2 else None
    matched_best = sum(in_best)
    proximity = matched_best / window if window else 0.0
    phrase = len(forms) >= 2 and any(_has_phrase(c, forms) for c in full)
    any_chunk_all = bool(full)
    title_equal = (
        bool(forms) and len(note.title) > 0 and all(in_title) and len(note.title) <= 2 * len(forms)
    )
    return [
        cand.fused_score,
        1.0 / cand.fused_rank,
        cand.bm25_norm,
        1.0 / cand.bm25_rank if cand.bm25_rank else 0.0,
        float(cand.bm25_rank is not None),
        cand.cosine if cand.cosine is not None else 0.0,
        cand.vec_norm,
        1.0 / cand.vec_rank if cand.vec_rank else 0.0,
        float(cand.vec_rank is not None),
        math.log1p(cand.bm25_chunks),
        math.log1p(cand.vec_chunks),
        _share(weights, in_title),
        _share(weights, in_tags),
        _share(weights, in_head),
        _share(weights, in_body),
        _share(weights, in_best),
        float(sum(anywhere)) / max(len(forms), 1),
        float(all(anywhere)) if forms else 0.0,
        float(any_chunk_all),
        proximity,
        float(phrase),
        float(cand.exact_name),
        float(title_equal),
        math.log1p(cand.chunk_count),
        math.log1p(cand.note_chars),
        math.log1p(len(best)),
        math.log1p(cand.indegree),
        cand.recency,
        math.log1p(len(forms)),
    ]
