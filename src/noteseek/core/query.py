"""Turn any user text into a safe FTS5 query. Pure: no user string can make FTS5 raise.

Every term becomes a double-quoted FTS5 string, so operators (AND, OR, NOT, NEAR), column filters
(`a:b`), prefixes (`*`), `-`, `^`, parentheses and stray quotes lose their meaning and are searched as
text. Terms are OR-ed, as in classic BM25 retrieval: a note needs not contain every word.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

__all__ = [
    "MAX_QUERY_TERMS",
    "STOPWORDS",
    "file_keys",
    "folder_key",
    "folder_keys",
    "fts_query",
    "identifiers",
    "looks_like_identifier",
    "match_expression",
    "name_key",
    "query_terms",
    "search_terms",
    "tag_key",
]

MAX_QUERY_TERMS = 32

# Split where FTS5's unicode61 tokenizer would: anything not a letter, number or private-use char.
# `_` is a separator for unicode61 too, so snake_case is matched as its parts.
_SEPARATOR = re.compile(r"[\W_]+", re.UNICODE)

# Very frequent function words match most chunks, cost the most time in FTS5, and add almost
# nothing to BM25 (their IDF is near zero). English and German, the languages of our users.
# fmt: off
STOPWORDS = frozenset((
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "has", "have", "how",
    "i", "in", "is", "it", "its", "of", "on", "or", "that", "the", "this", "to", "was",
    "were", "what", "when", "where", "which", "who", "why", "will", "with", "do", "does",
    "did", "can", "you", "your", "my", "we", "our", "not", "no", "der", "die", "das", "den",
    "dem", "des", "ein", "eine", "einer", "eines", "einem", "einen", "und", "oder", "ist",
    "sind", "im", "in", "am", "zu", "zum", "zur", "mit", "von", "vom", "für", "auf", "bei",
    "wie", "was", "wer", "wo", "ich", "du", "er", "sie", "es", "wir", "ihr", "nicht",
    "kein", "keine", "auch", "als", "an",
))
# fmt: on


def _is_word_char(ch: str) -> bool:
    return unicodedata.category(ch)[0] in "LN" or unicodedata.category(ch) == "Co"


def query_terms(text: str) -> list[str]:
    """The distinct search terms in user text, lower-cased, in order of first appearance."""
    terms: list[str] = []
    seen: set[str] = set()
    for raw in _SEPARATOR.split(text.lower()):
        term = "".join(ch for ch in raw if _is_word_char(ch))
        if term and term not in seen:
            seen.add(term)
            terms.append(term)
    return terms


_HUMP = re.compile(r"[a-z][A-Z]")
# A count, a time or a size: digits and at most three letters (`25th`, `6pm`, `10x`, `64GB`).
_QUANTITY = re.compile(r"[0-9]+[^\W\d_]{0,3}")


def looks_like_identifier(word: str) -> bool:
    """A word written as an error code, a key or an API name is: three characters or more, and
    letters with a digit (`E0597`, `INC-2291`, `p53`), an inner underscore
    (`idle_in_transaction`) or a lower-to-upper hump (`ProgressDeadlineExceeded`, `EStG`); not
    a count, a time or a size (`25th`, `6pm`, `10x`, `100ms`). Such a word names one thing
    wherever it is written; a plain word ("ok", "hallo") that happens to be rare in a vault does
    not."""
    if len(word) < 3 or not any(ch.isalpha() for ch in word) or _QUANTITY.fullmatch(word):
        return False
    return (
        any(ch.isdigit() for ch in word)
        or "_" in word.strip("_")
        or _HUMP.search(word) is not None
    )


def identifiers(text: str) -> list[tuple[str, ...]]:
    """The words of `text` that look like identifiers, each as its query terms (`query_terms`:
    `INC-2291` is `("inc", "2291")`), in order, once each; a word is what stands between spaces,
    without the punctuation around it."""
    out: list[tuple[str, ...]] = []
    for piece in text.split():
        start, end = 0, len(piece)
        while start < end and not _is_word_char(piece[start]) and piece[start] != "_":
            start += 1
        while end > start and not _is_word_char(piece[end - 1]) and piece[end - 1] != "_":
            end -= 1
        word = piece[start:end]
        if looks_like_identifier(word):
            terms = tuple(query_terms(word))
            if terms and terms not in out:
                out.append(terms)
    return out


def search_terms(text: str, *, drop: Callable[[str], bool] | None = None) -> list[str]:
    """The terms a keyword search looks for: the query's words without stopwords, at most
    MAX_QUERY_TERMS; empty when the text has nothing searchable.

    `drop` may veto further terms (the index's ubiquitous terms, which cost time but cannot change
    a BM25 ranking); a query left with nothing keeps its terms.
    """
    terms = query_terms(text)
    content = [t for t in terms if t not in STOPWORDS and not (drop and drop(t))]
    # A query made only of stopwords ("the who") still deserves an answer.
    return (content or terms)[:MAX_QUERY_TERMS]


def match_expression(terms: list[str]) -> str:
    """Terms as an FTS5 MATCH expression: each a quoted string, OR-ed."""
    return " OR ".join(f'"{term}"' for term in terms)


def fts_query(text: str, *, drop: Callable[[str], bool] | None = None) -> str | None:
    """An FTS5 MATCH expression for user text, or None when it has nothing searchable.

    `drop` may veto further terms (see `search_terms`).
    """
    chosen = search_terms(text, drop=drop)
    if not chosen:
        return None
    return match_expression(chosen)


def name_key(text: str) -> str:
    """A note name or query reduced for exact-name matching: case, accents and punctuation dropped.

    `Mietvertrag Kündigung §3` and `mietvertrag-kundigung 3` give the same key.
    """
    folded = unicodedata.normalize("NFKD", text.casefold())
    folded = "".join(ch for ch in folded if not unicodedata.combining(ch))
    return " ".join(t for t in _SEPARATOR.split(folded) if t)


def tag_key(tag: str) -> str:
    """A tag as stored and filtered: without `#`, case-folded, NFC. `#Project/Alpha` → `project/alpha`."""
    return unicodedata.normalize("NFC", tag.strip().lstrip("#").strip().casefold())


def _path_key(text: str, *, backslash_separates: bool) -> str:
    if backslash_separates:
        text = text.replace("\\", "/")
    return "/".join(p for p in text.split("/") if p not in ("", "."))


def folder_key(folder: str) -> str:
    """A vault-relative folder as a path prefix: '/'-separated, no leading './' or outer slashes,
    and a '\\' read as '/' (a Windows spelling).

    The vault root ('', '.', '/') gives ''. Only a filter, never used to open files.
    """
    return _path_key(folder, backslash_separates=True)


def folder_keys(folder: str) -> tuple[str, ...]:
    """The prefixes a `folders` filter entry stands for: the folder as written (a '\\' is a
    character of a name on Linux and macOS: `a\\b` is a folder of its own there) and, where it
    differs, with '\\' read as '/'. Spaces are kept: ' x' is a folder named ' x'."""
    return tuple(dict.fromkeys((_path_key(folder, backslash_separates=False), folder_key(folder))))


def file_keys(path: str) -> tuple[str, ...]:
    """The vault-relative paths a `files` filter entry stands for: the path as hits spell it
    (no './' or outer slashes; as written, then with '\\' read as '/', as for `folder_keys`),
    each also with `.md` added when it has none, since agents and people drop it
    ('howto/rebase' means 'howto/rebase.md', as for note access).

    Empty for the vault root or an empty string (no file). Only a filter, never used to open files.
    """
    keys: list[str] = []
    for key in folder_keys(path):
        if key:
            keys += [key] if key.endswith(".md") else [key, key + ".md"]
    return tuple(dict.fromkeys(keys))
