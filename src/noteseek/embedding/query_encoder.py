"""The query vector of a plain Model2Vec model, in pure Python: no numpy import.

A one-shot search (a hook, the CLI) embeds one short text. numpy costs ~65 ms to import, more than
the whole encoding; this reads the few rows a query needs straight from the memory-mapped
`model.safetensors` with `struct` and averages them with `math.fsum`. For the bundled model the
tokenizer is wordpiece.py over the model's `vocab.txt` (~3 ms to load) instead of the `tokenizers`
library (~30 ms to import and parse); other models use the library.

The vector is the mean of the token rows (the tokens model2vec would pool), quantised to int8 like a
stored row (quantize.quantize_query). It is *defined* here, not an approximation of another path:
every process, the daemon included, builds query vectors with this code, so the same query gives
the same bytes everywhere. Stored (document) vectors still come from static_model.py, which matches
model2vec bit for bit; the two differ only in float rounding before quantisation.
"""

from __future__ import annotations

import math
import mmap
import struct
from collections.abc import Callable
from pathlib import Path

from .model_files import ModelLayout, load_tokenizer, read_model_layout
from .quantize import quantize_query
from .wordpiece import WordPiece

__all__ = ["QueryEncoder", "load_query_encoder"]

# The bundled model's tokenizer.json is bert-base-uncased's: these are its settings, and
# tests/test_wordpiece.py checks that they still are.
_UNK_TOKEN = "[UNK]"


class QueryEncoder:
    """Token rows read on demand from the weights file; `encode` gives int8 query bytes."""

    def __init__(
        self, layout: ModelLayout, tokenize: Callable[[str], list[int]], unk_id: int | None
    ) -> None:
        self._layout = layout
        self._tokenize = tokenize
        self._unk_id = unk_id
        self._row = struct.Struct(f"<{layout.dim}f")
        with layout.weights.open("rb") as fh:
            # The map outlives the file object (mmap keeps its own handle).
            self._map = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)

    @property
    def dim(self) -> int:
        """Vector dimension."""
        return self._layout.dim

    def token_ids(self, text: str) -> list[int]:
        """Token ids as model2vec pools them: no special tokens, at most max_length of them,
        unknown tokens dropped."""
        limit = self._layout.max_length
        if limit is not None:
            # Tokens past max_length are dropped anyway; cutting the text first keeps a pasted
            # megabyte from being tokenised in full (64 characters per token is generous).
            text = text[: limit * 64]
        ids = self._tokenize(text)
        if limit is not None:
            ids = ids[:limit]
        return ids if self._unk_id is None else [t for t in ids if t != self._unk_id]

    def encode(self, text: str) -> bytes | None:
        """The int8 query vector of a text; None when no token of it is in the vocabulary."""
        ids = self.token_ids(text)
        if not ids:
            return None
        base, size, unpack = self._layout.offset, self._row.size, self._row.unpack_from
        rows = [unpack(self._map, base + token * size) for token in ids]
        count = len(rows)
        # fsum: exactly rounded, so the mean does not depend on summation order or platform.
        return quantize_query(math.fsum(column) / count for column in zip(*rows))


def _read_vocab(path: Path) -> dict[str, int]:
    tokens = path.read_text("utf-8").split("\n")
    if tokens and tokens[-1] == "":
        tokens.pop()
    return {token: i for i, token in enumerate(tokens)}


def load_query_encoder(folder: Path, *, bert_uncased: bool = False) -> QueryEncoder | None:
    """The folder's query encoder, or None when its layout needs model2vec.

    `bert_uncased`: the folder's tokenizer is known to be bert-base-uncased's WordPiece (the
    bundled model), so its `vocab.txt` and wordpiece.py stand in for the `tokenizers` library.
    """
    layout = read_model_layout(folder)
    if layout is None:
        return None
    vocab_file = folder / "vocab.txt"
    if bert_uncased and vocab_file.is_file():
        vocab = _read_vocab(vocab_file)
        if len(vocab) == layout.rows and _UNK_TOKEN in vocab:
            return QueryEncoder(
                layout, WordPiece(vocab, unk_token=_UNK_TOKEN).ids, vocab[_UNK_TOKEN]
            )
    tokenizer = load_tokenizer(layout)
    if tokenizer is None:
        return None
    hf = tokenizer.tokenizer

    def tokenize(text: str) -> list[int]:
        ids: list[int] = hf.encode(text, add_special_tokens=False).ids
        return ids

    return QueryEncoder(layout, tokenize, tokenizer.unk_token_id)
