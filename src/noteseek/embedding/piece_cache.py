"""Token ids of many texts through a cache of their pieces and words: the library's ids, cheaper.

Indexing tokenises every chunk with the HF `tokenizers` library, and that was the largest single
cost of a build: on MDN (59,354 chunks, 40 M characters, 11.2 M tokens) `encode_batch_fast` took
12.7 CPU-s of the embedding's 15. Notes repeat their words: the same chunks hold 5.1 M
whitespace-separated pieces, 253 K of them distinct, made of 56 K distinct words (runs between
ASCII punctuation). So a text is split at whitespace (`str.split`, in C), a piece seen before is
looked up, a new piece is split into words, and only words never seen are given to the same
library with the same settings; a text's ids are its pieces' ids joined
(bench/results/tokenise_pieces.txt has the figures).

Exact by construction, for the tokenizers it accepts: BERT's normalizer and pre-tokenizer with a
WordPiece model. The pre-tokenizer ends a word at every whitespace character and makes every
ASCII punctuation character a word of its own, so no token spans such a boundary, and the pieces
and words cut here are cut there too. The normalizer works character by character (control
characters dropped, whitespace made a space, spaces around CJK ideographs, lowercase) and leaves
ASCII punctuation as it is, so a boundary cut here in the raw text is one after normalising;
where it makes a new one (NFD turns U+037E into ";") that falls inside a word, which the library
splits itself. Its accent stripping (NFD, then nonspacing marks dropped) cannot reach across a
boundary: a combining mark after one is dropped or kept the same either way. WordPiece sees one word at a time. Two cases go to the library whole
instead: a text holding U+000B, U+000C, U+001C–U+001F or U+0085 (whitespace to Python's
`str.split` but control characters BERT's normalizer drops, so "a\x0bb" is one word there), and
a piece holding an added token such as "[CLS]" (matched in the raw text before anything else, and
made of punctuation and letters).
Truncation stays the library's: the joined ids are cut at `max_length` (a cut keeps a prefix, and
a piece's tokens are a prefix of its text's), then unknown tokens are dropped, as model2vec does.
tests/test_embedder.py compares the vectors with model2vec's, bit for bit, on edge cases.

The cache is per process and bounded (`MAX_PIECES` entries and `MAX_CHARS` characters of keys);
when full it is emptied and fills again with the pieces in use. Measured on MDN: a worker's half
of the notes leaves 165 K entries (24 MB); one process over all of them would need 281 K (42 MB)
and empties it once.
"""

from __future__ import annotations

import json
import re
from array import array
from collections.abc import Sequence
from itertools import chain
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["MAX_CHARS", "MAX_PIECES", "PieceTokenizer", "piece_tokenizer"]

MAX_PIECES = 1 << 18
MAX_CHARS = 1 << 24  # a vault of long unique pieces (minified code, base64) must not grow it
# Whitespace to Python's str.split() but control characters to BERT's normalizer, which drops
# them (so "a\x0bb" is one word there).
_SPLIT_ONLY_IN_PYTHON = re.compile("[\x0b\x0c\x1c-\x1f\x85]")
# A piece's words: each ASCII punctuation character, and each run between them.
_WORDS = re.compile(r"[!-/:-@\[-`{-~]|[^!-/:-@\[-`{-~]+")


def piece_tokenizer(
    tokenizer: Any, *, vocab_size: int, max_length: int | None, unk_token_id: int | None
) -> PieceTokenizer | None:
    """A PieceTokenizer over `tokenizer` (a tokenizers.Tokenizer configured as model2vec does),
    or None when its ids could differ from the library's."""
    spec = json.loads(tokenizer.to_str())
    normalizer = spec.get("normalizer") or {}
    pre_tokenizer = spec.get("pre_tokenizer") or {}
    model = spec.get("model") or {}
    added = tuple(str(token.get("content", "")) for token in spec.get("added_tokens") or ())
    if not (
        normalizer.get("type") == "BertNormalizer"
        and pre_tokenizer.get("type") == "BertPreTokenizer"
        and model.get("type") == "WordPiece"
        # Added tokens are looked for inside pieces; one with whitespace could span two.
        and all(token and not any(ch.isspace() for ch in token) for token in added)
    ):
        return None
    return PieceTokenizer(
        tokenizer,
        vocab_size=vocab_size,
        max_length=max_length,
        unk_token_id=unk_token_id,
        added_tokens=added,
    )


class PieceTokenizer:
    """`ids(texts)`: per text its token ids (no special tokens), cut at `max_length`, unknown
    tokens dropped — what model2vec pools — as a numpy array."""

    def __init__(
        self,
        tokenizer: Any,
        *,
        vocab_size: int,
        max_length: int | None,
        unk_token_id: int | None,
        added_tokens: Sequence[str] = (),
        max_pieces: int = MAX_PIECES,
        max_chars: int = MAX_CHARS,
    ) -> None:
        self._tokenizer = tokenizer
        self._max_length = max_length
        self._unk = unk_token_id
        self._added = (
            re.compile("|".join(re.escape(token) for token in added_tokens))
            if added_tokens
            else None
        )
        self._max_pieces = max_pieces
        self._max_chars = max_chars
        self._chars = 0  # of the pieces in the cache
        # Ids stored as packed bytes: a text's ids are then one bytes join, and the cache a
        # third of the size of lists of ints.
        self._code = "H" if vocab_size <= 1 << 16 else "I"
        self._dtype: np.dtype[Any] = np.dtype(np.uint16 if self._code == "H" else np.uint32)
        if array(self._code).itemsize != self._dtype.itemsize:  # "I" is 4 bytes everywhere known
            self._code, self._dtype = "q", np.dtype(np.int64)
        self._cache: dict[str, bytes] = {}

    def clear(self) -> None:
        """Empty the cache (ids are the same with or without it)."""
        self._cache, self._chars = {}, 0

    def ids(self, texts: Sequence[str]) -> list[npt.NDArray[np.integer[Any]]]:
        """The token ids of each text."""
        splits = [None if _SPLIT_ONLY_IN_PYTHON.search(text) else text.split() for text in texts]
        # A local reference: another thread emptying the cache cannot take a piece this call
        # still needs.
        cache = self._cache
        seen = dict.fromkeys(chain.from_iterable(pieces for pieces in splits if pieces))
        new = [p for p in seen if p not in cache]
        chars = sum(map(len, new))
        if len(cache) + len(new) > self._max_pieces or self._chars + chars > self._max_chars:
            cache = {}
            self._cache, self._chars = cache, 0
            new = list(seen)
            chars = sum(map(len, new))
        self._chars += chars
        if new:
            self._add(cache, new)
        whole = [text for text, pieces in zip(texts, splits) if pieces is None]
        direct = iter(
            self._tokenizer.encode_batch_fast(whole, add_special_tokens=False) if whole else ()
        )
        get, dtype, limit, unk = cache.__getitem__, self._dtype, self._max_length, self._unk
        out: list[npt.NDArray[np.integer[Any]]] = []
        for pieces in splits:
            if pieces is None:  # the library truncates these itself
                row = np.array(next(direct).ids, dtype=dtype)
            else:
                row = np.frombuffer(b"".join(map(get, pieces)), dtype=dtype)
                if limit is not None:
                    row = row[:limit]
            if unk is not None and (row == unk).any():
                row = row[row != unk]
            out.append(row)
        return out

    def _add(self, cache: dict[str, bytes], pieces: list[str]) -> None:
        """Put the ids of `pieces` (none of them in `cache`) into it, with those of their words."""
        added = self._added
        whole = [p for p in pieces if added.search(p)] if added is not None else []
        if whole:
            skip = set(whole)
            pieces = [p for p in pieces if p not in skip]
        split = [_WORDS.findall(p) for p in pieces]
        words = list(dict.fromkeys(w for ws in split for w in ws if w not in cache))
        self._chars += sum(map(len, words))
        code, encode = self._code, self._tokenizer.encode_batch_fast
        for batch in (words, whole):  # the words first: the pieces below are made of them
            if batch:
                encodings = encode(batch, add_special_tokens=False)
                cache.update(zip(batch, [array(code, e.ids).tobytes() for e in encodings]))
        get = cache.__getitem__
        cache.update(zip(pieces, [b"".join(map(get, ws)) for ws in split]))
