"""The FTS5 tokenizer `noteseek`: Porter stems, German Snowball stems for German notes.

FTS5's `porter unicode61 remove_diacritics 2` is an English stemmer; on German it still conflates
some inflections but misses most (`akzeptierten Dateiformaten`). This tokenizer keeps exactly those
Porter tokens for every note except the ones `language.note_language` calls German, whose words get
German Snowball stems (PyStemmer) instead; the note's language reaches the tokenizer as the FTS5
locale (`fts5_locale()` in the triggers, schema m004).

A query has no language, so in a vault with German notes each query word is looked up under its
Porter stem *and* its German stem, as colocated tokens (one term to FTS5, not two OR-ed ones, which
measurably hurt English vaults). A vault without German notes gets today's query tokens exactly.
Measured: bench/results/ranking.md, "German stems".

Every connection that touches the chunks must register this tokenizer (`register`); the SQLite
store does. It sits above both backends: the PostgreSQL backend keeps its own BM25 statistics and
tokenises with this same tokenizer (`postgres/terms.py`, through an in-memory apsw connection), so
a stem is byte for byte the same on both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import apsw

from ..core.language import GERMAN

__all__ = ["TOKENIZER_NAME", "StemOptions", "register"]

TOKENIZER_NAME = "noteseek"
_UNICODE = ["remove_diacritics", "2"]


@dataclass
class StemOptions:
    """Per connection: whether queries also look words up under their German stems."""

    german_queries: bool = False


def register(db: apsw.Connection, options: StemOptions) -> None:
    """Register the `noteseek` tokenizer on a connection."""

    def factory(con: apsw.Connection, args: list[str]) -> Any:
        porter: Any = con.fts5_tokenizer("porter", ["unicode61", *_UNICODE])
        plain: Any = con.fts5_tokenizer("unicode61", _UNICODE)
        german: Any = None

        def german_stems(words: list[str]) -> list[str]:
            nonlocal german
            if german is None:
                # deferred: PyStemmer (~1 ms) loads with the first German word
                import Stemmer  # type: ignore[import-not-found]

                german = Stemmer.Stemmer("german")
            stems: list[str] = german.stemWords(words)
            return stems

        def tokenize(utf8: bytes, flags: int, locale: str | None) -> list[tuple[Any, ...]]:
            if locale == GERMAN:
                words = plain(utf8, flags, None)
                stems = german_stems([w[2] for w in words])
                return [(w[0], w[1], stem) for w, stem in zip(words, stems)]
            tokens: list[tuple[Any, ...]] = porter(utf8, flags, None)
            if not (flags & apsw.FTS5_TOKENIZE_QUERY) or not options.german_queries or not tokens:
                return tokens
            words = plain(utf8, flags, None)
            if [w[:2] for w in words] != [t[:2] for t in tokens]:  # never seen; stay exact
                return tokens
            stems = german_stems([w[2] for w in words])
            return [
                token if stem == token[2] else (token[0], token[1], token[2], stem)
                for token, stem in zip(tokens, stems)
            ]

        return tokenize

    db.register_fts5_tokenizer(TOKENIZER_NAME, factory)
