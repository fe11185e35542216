"""A Model2Vec encoder that loads in milliseconds: the weights memory-mapped, no model2vec import.

`model2vec.StaticModel.from_pretrained` imports joblib, safetensors, huggingface_hub and the model
card code, then copies the whole embedding matrix into memory (~370 ms in a fresh process for
potion-base-8M). A query needs a few hundred of the matrix's rows, so here the `model.safetensors`
header is parsed by hand and the matrix is an `np.memmap`: only the pages of the rows a query
touches are read. Tokenising uses the same HF `tokenizers` file with the same settings as model2vec
(through piece_cache.py: each distinct word tokenised once, the same ids), and the pooling below repeats `StaticModel._encode_batch` operation by operation (same batches,
same buckets, same numpy calls on the same dtypes), so the vectors are the ones model2vec gives,
bit for bit; tests/test_embedder.py checks that on many strings.

Only the plain model2vec layout is supported (model_files.py reads it); anything else is left to
model2vec: `load_static_model` returns None and the caller falls back.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from .model_files import load_tokenizer, read_model_layout, read_safetensors_header
from .piece_cache import PieceTokenizer, piece_tokenizer

__all__ = ["StaticModel", "load_static_model", "read_safetensors_header"]

_BATCH_SIZE = 1024  # StaticModel.encode's default batch size; batches decide the buckets below


@dataclass(frozen=True)
class StaticModel:
    """Token embeddings + tokenizer of a Model2Vec folder; `encode` mirrors model2vec's."""

    embedding: npt.NDArray[np.float32]
    tokenizer: Any  # tokenizers.Tokenizer, configured as model2vec configures it
    unk_token_id: int | None
    max_length: int | None
    normalize: bool
    # The same ids through a cache of pieces, for tokenizers where that is exact (piece_cache.py).
    pieces: PieceTokenizer | None = None

    @property
    def dim(self) -> int:
        """Vector dimension."""
        return int(self.embedding.shape[1])

    @cached_property
    def _median_token_length(self) -> int:
        # model2vec cuts each text to max_length * this many characters before tokenising.
        # (cached_property stores into __dict__ directly, which a frozen dataclass allows.)
        lengths = [len(token) for token in self.tokenizer.get_vocab()]
        return int(np.median(lengths))

    def tokenize(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids per text: no special tokens, unknown tokens dropped (as model2vec does)."""
        return [
            row if isinstance(row, list) else list(map(int, row)) for row in self._token_ids(texts)
        ]

    def _token_ids(self, texts: Sequence[str]) -> Sequence[Sequence[int] | npt.NDArray[Any]]:
        if self.pieces is not None:
            return self.pieces.ids(texts)
        encodings = self.tokenizer.encode_batch_fast(list(texts), add_special_tokens=False)
        ids = [encoding.ids for encoding in encodings]
        if self.unk_token_id is not None:
            ids = [[t for t in row if t != self.unk_token_id] for row in ids]
        return ids

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Mean of the token vectors per text (normalised when the config says so)."""
        texts = list(texts)
        # Every token is at least one character, so no text of at most max_length characters is
        # cut: the vocabulary scan for the median runs only for long texts.
        if self.max_length is not None and any(len(t) > self.max_length for t in texts):
            limit = self.max_length * self._median_token_length
            texts = [t[:limit] for t in texts]
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        batches = [
            self._encode_batch(texts[i : i + _BATCH_SIZE])
            for i in range(0, len(texts), _BATCH_SIZE)
        ]
        return np.concatenate(batches, axis=0)

    def _encode_batch(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        # Same steps as model2vec's StaticModel._encode_batch for a float32 matrix without
        # token mapping or weights: texts of equal token count are pooled together.
        ids = self._token_ids(texts)
        out = np.zeros((len(ids), self.dim), dtype=np.float32)
        buckets: dict[int, list[int]] = defaultdict(list)
        for i, row in enumerate(ids):
            if len(row):
                buckets[len(row)].append(i)
        for indices in buckets.values():
            matrix = np.array([ids[i] for i in indices], dtype=np.int64)
            out[indices] = self.embedding[matrix].mean(axis=1)
        if self.normalize:
            out32 = out.astype(np.float32)
            norm = np.linalg.norm(out32, axis=1, keepdims=True) + 1e-32
            normalised: npt.NDArray[np.float32] = (out32 / norm).astype(out.dtype)
            return normalised
        return out


def load_static_model(folder: Path) -> StaticModel | None:
    """The folder's model, or None when its layout needs model2vec itself."""
    layout = read_model_layout(folder)
    tokenizer = None if layout is None else load_tokenizer(layout)
    if layout is None or tokenizer is None:
        return None
    # Little-endian float32 is what safetensors stores; on x86/ARM that is the native float32.
    mapped = np.memmap(
        layout.weights, dtype="<f4", mode="r", offset=layout.offset, shape=(layout.rows, layout.dim)
    )
    embedding: npt.NDArray[np.float32] = mapped.view(np.ndarray)  # indexing gives plain arrays
    hf = tokenizer.tokenizer
    pieces = piece_tokenizer(
        hf,
        vocab_size=layout.rows,
        max_length=layout.max_length,
        unk_token_id=tokenizer.unk_token_id,
    )
    return StaticModel(
        embedding=embedding,
        tokenizer=hf,
        unk_token_id=tokenizer.unk_token_id,
        max_length=layout.max_length,
        normalize=layout.normalize,
        pieces=pieces,
    )
