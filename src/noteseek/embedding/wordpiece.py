"""BERT's uncased WordPiece tokenizer in pure Python, for one-shot query vectors. Pure.

The HF `tokenizers` library costs ~30 ms per process before the first token (9 ms to import, 20 ms
to parse a 680 KB tokenizer.json). A hook process embeds one short prompt, so for the bundled
model (bert-base-uncased's vocabulary) the same steps are repeated here, in the library's order:

1. special tokens ([CLS], [MASK], …) written in the text are split off first and kept whole;
2. BertNormalizer: drop NUL, U+FFFD and control characters, map whitespace to a space, put spaces
   around CJK ideographs, strip accents (NFD, drop nonspacing marks), lowercase char by char;
3. BertPreTokenizer: split at whitespace, and every punctuation character (ASCII punctuation or a
   Unicode P* category) is a word of its own;
4. WordPiece: greedy longest match from the left, continuations prefixed with `##`; a word longer
   than 100 characters, or one with a piece not in the vocabulary, becomes the unknown token.

tests/test_wordpiece.py checks the ids against the `tokenizers` library on real notes in English
and German, code, and random Unicode. Whatever small difference remains on exotic input cannot make
two processes disagree: every query path uses this code for the bundled model.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence

__all__ = ["WordPiece"]

# Rust's char::is_whitespace (the Unicode White_Space property), which the normalizer uses.
_WHITESPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
_CJK = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B920, 0x2CEAF),
    (0xF900, 0xFAFF),
    (0x2F800, 0x2FA1F),
)
_ASCII_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
# What the normalizer drops as control characters (unassigned code points, Cn, are kept).
_CONTROL_CATEGORIES = frozenset({"Cc", "Cf", "Co", "Cs"})
_PUNCTUATION_CATEGORIES = frozenset({"Pc", "Pd", "Pe", "Pf", "Pi", "Po", "Ps"})


def _is_cjk(c: str) -> bool:
    code = ord(c)
    return any(low <= code <= high for low, high in _CJK)


def _is_punctuation(c: str) -> bool:
    return c in _ASCII_PUNCTUATION or unicodedata.category(c) in _PUNCTUATION_CATEGORIES


def _normalise(text: str) -> str:
    out: list[str] = []
    for c in text:
        if c in "\t\n\r":
            out.append(" ")
            continue
        if c == "\x00" or c == "\ufffd" or unicodedata.category(c) in _CONTROL_CATEGORIES:
            continue
        if c in _WHITESPACE:
            out.append(" ")
        elif c.isascii():
            out.append(c)
        elif _is_cjk(c):
            out.append(f" {c} ")
        else:
            out.append(c)
    cleaned = unicodedata.normalize("NFD", "".join(out))
    stripped = "".join(c for c in cleaned if c.isascii() or unicodedata.category(c) != "Mn")
    # Char by char, as the library does (str.lower() would make a final sigma 'ς').
    return stripped.lower() if "Σ" not in stripped else "".join(c.lower() for c in stripped)


def _words(text: str) -> list[str]:
    words: list[str] = []
    current: list[str] = []
    for c in text:
        if c == " " or c in _WHITESPACE:
            if current:
                words.append("".join(current))
                current = []
        elif _is_punctuation(c):
            if current:
                words.append("".join(current))
                current = []
            words.append(c)
        else:
            current.append(c)
    if current:
        words.append("".join(current))
    return words


class WordPiece:
    """Token ids of texts for one vocabulary, as `tokenizers` gives them without special tokens."""

    def __init__(
        self,
        vocab: Mapping[str, int],
        *,
        unk_token: str = "[UNK]",
        special_tokens: Sequence[str] = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"),
        prefix: str = "##",
        max_word_chars: int = 100,
    ) -> None:
        self._vocab = vocab
        self._unk = vocab[unk_token]
        self._prefix = prefix
        self._max_word_chars = max_word_chars
        specials = [t for t in special_tokens if t in vocab]
        # Longest first, so a special token that contains another one wins.
        alternation = "|".join(re.escape(t) for t in sorted(specials, key=len, reverse=True))
        self._specials = re.compile(f"({alternation})") if alternation else None

    def _word_ids(self, word: str, out: list[int]) -> None:
        if len(word) > self._max_word_chars:
            out.append(self._unk)
            return
        vocab, pieces, start = self._vocab, [], 0
        while start < len(word):
            end = len(word)
            found = None
            while start < end:
                piece = word[start:end] if start == 0 else self._prefix + word[start:end]
                found = vocab.get(piece)
                if found is not None:
                    break
                end -= 1
            if found is None:
                out.append(self._unk)
                return
            pieces.append(found)
            start = end
        out.extend(pieces)

    def ids(self, text: str) -> list[int]:
        """Token ids of a text, unknown pieces as the unknown token's id."""
        parts = self._specials.split(text) if self._specials else [text]
        out: list[int] = []
        for n, part in enumerate(parts):
            if n % 2:  # a special token, matched verbatim before normalisation
                out.append(self._vocab[part])
                continue
            for word in _words(_normalise(part)):
                self._word_ids(word, out)
        return out
