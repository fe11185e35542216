"""A Model2Vec encoder that loads in milliseconds: the weights memory-mapped, no model2vec import.

`model2vec.StaticModel.from_pretrained` imports joblib, safetensors, huggingface_hub and the model
card code, then copies the whole embedding matrix into memory (~370 ms in a fresh process for
potion-base-8M). A query needs a few hundred of the matrix's rows, so here the `model.safetensors`
header is parsed by hand and the matrix is an `np.memmap`: only the pages of the rows a query
touches are read. Tokenising uses the same HF `tokenizers` file with the same settings as model2vec,
and the pooling below repeats `StaticModel._encode_batch` operation by operation (same batches,
same buckets, same numpy calls on the same dtypes), so the vectors are the ones model2vec gives,
bit for bit; tests/test_embedder.py checks that on many strings.

Only the plain model2vec layout is supported: `model.safetensors` with one float32 `embeddings`
tensor, `tokenizer.json` and `config.json`. Anything else (vocabulary-quantised models with a
token mapping or weights, other dtypes, the sentence-transformers layouts) is left to model2vec:
`load_static_model` returns None and the caller falls back.
"""

from __future__ import annotations

import json
import struct
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["StaticModel", "load_static_model", "read_safetensors_header"]

# The defaults model2vec uses when config.json does not say (model2vec/model.py).
_DEFAULT_MAX_LENGTH = 512
_DEFAULT_NORMALIZE = False
_BATCH_SIZE = 1024  # StaticModel.encode's default batch size; batches decide the buckets below
_MAX_HEADER_BYTES = 100_000_000  # the safetensors format's own limit


def read_safetensors_header(path: Path) -> tuple[dict[str, Any], int]:
    """The header of a safetensors file and the byte offset where its data starts.

    Format: an unsigned 64-bit little-endian header length N, N bytes of JSON, then the data;
    each tensor's `data_offsets` are relative to the start of the data.
    """
    with path.open("rb") as fh:
        prefix = fh.read(8)
        if len(prefix) != 8:
            raise ValueError(f"{path} is too short to be a safetensors file")
        (length,) = struct.unpack("<Q", prefix)
        if length > _MAX_HEADER_BYTES:
            raise ValueError(f"{path}: safetensors header of {length} bytes is implausible")
        header = json.loads(fh.read(length))
    if not isinstance(header, dict):
        raise ValueError(f"{path}: safetensors header is not a JSON object")
    return header, 8 + length


def _embeddings_memmap(path: Path) -> npt.NDArray[np.float32] | None:
    """The `embeddings` tensor as a read-only memory map, or None if the file holds more or other."""
    header, data_start = read_safetensors_header(path)
    tensors = {k: v for k, v in header.items() if k != "__metadata__"}
    entry = tensors.get("embeddings")
    # Any other tensor ("weights", "mapping") changes the pooling: model2vec's job, not ours.
    if set(tensors) != {"embeddings"} or not isinstance(entry, dict):
        return None
    shape = entry.get("shape")
    begin, end = entry.get("data_offsets", (0, -1))
    if entry.get("dtype") != "F32" or not isinstance(shape, list) or len(shape) != 2:
        return None
    rows, dim = int(shape[0]), int(shape[1])
    if end - begin != rows * dim * 4 or data_start + end > path.stat().st_size:
        raise ValueError(f"{path}: tensor 'embeddings' does not fit its declared shape")
    # Little-endian float32 is what safetensors stores; on x86/ARM that is the native float32.
    mapped = np.memmap(path, dtype="<f4", mode="r", offset=data_start + begin, shape=(rows, dim))
    view: npt.NDArray[np.float32] = mapped.view(np.ndarray)
    return view  # plain ndarray view: indexing then returns plain arrays


@dataclass(frozen=True)
class StaticModel:
    """Token embeddings + tokenizer of a Model2Vec folder; `encode` mirrors model2vec's."""

    embedding: npt.NDArray[np.float32]
    tokenizer: Any  # tokenizers.Tokenizer, configured as model2vec configures it
    unk_token_id: int | None
    max_length: int | None
    normalize: bool

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
        ids = self.tokenize(texts)
        out = np.zeros((len(ids), self.dim), dtype=np.float32)
        buckets: dict[int, list[int]] = defaultdict(list)
        for i, row in enumerate(ids):
            if row:
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


def _unk_token_id(tokenizer: Any) -> int | None:
    # As model2vec's _get_unk_token_id: WordPiece, BPE and WordLevel name their unknown token;
    # Unigram keeps an id in its serialised form.
    model = tokenizer.model
    if hasattr(model, "unk_token"):
        token = model.unk_token
        return None if token is None else tokenizer.token_to_id(token)
    unk = json.loads(tokenizer.to_str())["model"].get("unk_id")
    return None if unk is None else int(unk)


def load_static_model(folder: Path) -> StaticModel | None:
    """The folder's model, or None when its layout needs model2vec itself."""
    weights, tokenizer_file, config_file = (
        folder / "model.safetensors",
        folder / "tokenizer.json",
        folder / "config.json",
    )
    if not (weights.is_file() and tokenizer_file.is_file() and config_file.is_file()):
        return None
    config = json.loads(config_file.read_text("utf-8"))
    if not isinstance(config, dict):
        return None
    embedding = _embeddings_memmap(weights)
    if embedding is None:
        return None
    from tokenizers import Tokenizer  # 25 ms to import, so only when a text is embedded

    tokenizer = Tokenizer.from_file(str(tokenizer_file))
    if tokenizer.get_vocab_size() != len(embedding):
        return None  # model2vec would refuse (or need a token mapping)
    padding = tokenizer.padding
    if padding is not None:  # model2vec keeps the pad token but never pads
        tokenizer.enable_padding(
            pad_id=padding["pad_id"],
            pad_token=padding["pad_token"],
            pad_type_id=padding["pad_type_id"],
            length=0,
        )
    max_length = config.get("max_length", _DEFAULT_MAX_LENGTH)
    if max_length is None:
        tokenizer.no_truncation()
    else:
        max_length = int(max_length)
        tokenizer.enable_truncation(max_length)
    return StaticModel(
        embedding=embedding,
        tokenizer=tokenizer,
        unk_token_id=_unk_token_id(tokenizer),
        max_length=max_length,
        normalize=bool(config.get("normalize", _DEFAULT_NORMALIZE)),
    )
