"""Which stemmer a note's words need: German, or the default. Pure.

A vote of function words: a note with more German than English ones (and a few at least) is German.
These words are frequent in any running text of the language and rare in the other; neither set
holds a word the other language uses too ("in", "also", "will", "so"). On the development vaults
the vote labelled all 413 German notes German and 4 of ~28,000 English or code-heavy notes German
(bench/results/ranking.md, "German stems").
"""

from __future__ import annotations

import re

__all__ = ["GERMAN", "note_language", "query_language"]

GERMAN = "de"

_GERMAN_WORDS = frozenset(
    ["der", "die", "das", "und", "ist", "nicht", "ein", "eine", "einen", "einem", "einer", "dem", "den", "des", "mit", "sich", "auf", "für", "von", "zu", "im", "wird", "werden", "sind", "auch", "als", "wie", "oder", "aber", "bei", "nach", "aus", "kann", "können", "wenn", "noch", "nur", "über", "diese", "dieser", "dieses", "zum", "zur", "vom", "hat", "haben", "sie", "es", "wir", "ich", "du", "mir", "dich", "dass", "sehr", "schon", "hier", "wurde"]
)
_ENGLISH_WORDS = frozenset(
    ["the", "and", "is", "are", "not", "of", "to", "for", "on", "with", "that", "this", "it", "as", "be", "by", "or", "from", "at", "can", "you", "your", "we", "they", "have", "has", "was", "were", "if", "then", "only", "about", "these", "which", "when", "what", "how", "there", "their", "would", "should", "been", "into", "more"]
)
_WORD = re.compile(r"[^\W\d_]+")
_MIN_VOTES = 3
_SAMPLE_CHARS = 20_000  # the start of a note decides; enough words, bounded work


def note_language(text: str) -> str | None:
    """`GERMAN` for a German note, None for everything else (stemmed as today)."""
    german = english = 0
    for word in _WORD.findall(text[:_SAMPLE_CHARS].lower()):
        if word in _GERMAN_WORDS:
            german += 1
        elif word in _ENGLISH_WORDS:
            english += 1
    return GERMAN if german > english and german >= _MIN_VOTES else None


# A query is short: one function word decides, and question words count (they are most of what a
# short question has). Words with ä/ö/ü/ß vote German too. Measured on the development queries
# (bench/results/ranking.md): 91.7 % of German queries called German, 1 of 3,932 English ones, none
# of 40 made-up ones; what it misses are short aliases with no function word ("Globale Suche").
_GERMAN_QUERY_WORDS = _GERMAN_WORDS | frozenset(
    ["wer", "was", "wo", "wann", "warum", "welche", "welcher", "welches", "wieviel", "viele"]
) - frozenset(["sie", "dieses"])
_ENGLISH_QUERY_WORDS = _ENGLISH_WORDS | frozenset(["who", "why", "does", "did"])
_UMLAUT = re.compile("[äöüß]")


def query_language(text: str) -> str | None:
    """`GERMAN` when a query's words vote German, None otherwise (English or undecided)."""
    german = english = 0
    for word in _WORD.findall(text[:_SAMPLE_CHARS].lower()):
        if word in _GERMAN_QUERY_WORDS or _UMLAUT.search(word):
            german += 1
        elif word in _ENGLISH_QUERY_WORDS:
            english += 1
    return GERMAN if german > english else None
