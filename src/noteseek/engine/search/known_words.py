"""The known-words gate: a query none of whose words anything knows gets no hits.

The bundled model averages the WordPiece pieces of a made-up word (`bo ##uda ##x`) into a vector
as "confident" as a real query's: 40 made-up queries had top cosines of 0.28-0.65 on the
development indexes, inside the range of real ones, so no cosine floor separates them without
emptying real vector answers (docs/ranking.md, "The known-words gate"). What does separate them is whether anything
knows the words: a word is known when one of its index forms is in some chunk (FTS5 document
count > 0), or when it is one whole token of the model's vocabulary, or, in a query whose words vote
German (core/language.query_language), when it splits into two known halves or into halves one
of which (5 letters or more) the vault has: a German compound (`Umzugswagen` beside a note on
`Umzug`) is rarely whole in either. Only German-voted queries: made-up words split into known
halves too (3-9 of 40 per index), and the vote calls none of them German. Measured
on every development index: bench/results/ranking.md (bench/known_words_eval.py).

Cheap by construction: when the BM25 list is not empty some word is known already, so the
storage is asked only when BM25 found nothing (vector mode, nonsense, a filter that left no match).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ...core.language import GERMAN, query_language
from ...core.query import STOPWORDS, query_terms

if TYPE_CHECKING:
    from ...storage.protocol import Storage

__all__ = ["content_words", "nothing_known"]


def content_words(query: str) -> list[str]:
    """The query's words without stopwords (all of them when it has only stopwords)."""
    words = query_terms(query)
    return [w for w in words if w not in STOPWORDS] or words


_MIN_PART = 3
_MIN_VAULT_PART = 5  # a half the vault knows, this long, is enough (`Umzug` + `wagen`)
_MAX_SPLIT_CHARS = 40


def _splits(word: str) -> list[tuple[str, str]]:
    """Two-part readings of a compound (German `Umzugswagen` = `umzug` + s + `wagen`)."""
    out: list[tuple[str, str]] = []
    if len(word) > _MAX_SPLIT_CHARS:
        return out
    for i in range(_MIN_PART, len(word) - _MIN_PART + 1):
        left, right = word[:i], word[i:]
        out.append((left, right))
        if left.endswith("s") and len(left) > _MIN_PART:  # the linking s of German compounds
            out.append((left[:-1], right))
    return out


def nothing_known(query: str, store: Storage, model_knows: Callable[[str], bool]) -> bool:
    """True when the query has words and neither the vault's index nor the model knows any
    (whole, or in a German query as a compound's halves)."""
    words = content_words(query)
    if not words:
        return False
    if any(model_knows(w) for w in words):
        return False
    if any(count for _, count in store.query_term_counts(words)):
        return False
    if query_language(query) != GERMAN:
        return True
    splits = [pair for w in words for pair in _splits(w)]
    parts = sorted({p for pair in splits for p in pair})
    if not parts:
        return True
    counts = dict(zip(parts, (c for _, c in store.query_term_counts(parts))))
    known = {p for p in parts if counts[p] or model_knows(p)}
    in_vault = {p for p in parts if counts[p] and len(p) >= _MIN_VAULT_PART}
    return not any(
        (left in known and right in known) or left in in_vault or right in in_vault
        for left, right in splits
    )
