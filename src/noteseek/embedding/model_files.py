"""The files of a plain Model2Vec folder, read without numpy or model2vec.

A plain folder holds `model.safetensors` with one float32 `embeddings` tensor, `tokenizer.json` and
`config.json`. Two readers build on this module: `static_model.py` (numpy, bit-identical to
model2vec, for indexing) and `query_encoder.py` (pure Python, for the query vector of a one-shot
search, which must not pay numpy's import). Both tokenise with the tokenizer configured here, the
way model2vec configures it.

Anything else (vocabulary-quantised models with a token mapping or weights, other dtypes, the
sentence-transformers layouts) is left to model2vec: `read_model_files` returns None.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "ModelLayout",
    "ModelTokenizer",
    "load_tokenizer",
    "read_model_layout",
    "read_safetensors_header",
]

# The defaults model2vec uses when config.json does not say (model2vec/model.py).
_DEFAULT_MAX_LENGTH = 512
_DEFAULT_NORMALIZE = False
_MAX_HEADER_BYTES = 100_000_000  # the safetensors format's own limit


@dataclass(frozen=True)
class ModelLayout:
    """Where the embedding matrix lies in its file, and the pooling settings from config.json."""

    folder: Path
    weights: Path
    offset: int  # byte offset of row 0 in `weights`; rows are little-endian float32
    rows: int
    dim: int
    max_length: int | None
    normalize: bool


@dataclass(frozen=True)
class ModelTokenizer:
    """The folder's tokenizer, configured as model2vec configures it."""

    tokenizer: Any  # tokenizers.Tokenizer
    unk_token_id: int | None


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


def _embeddings_layout(path: Path) -> tuple[int, int, int] | None:
    """(offset, rows, dim) of the `embeddings` tensor, or None if the file holds more or other."""
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
    return data_start + begin, rows, dim


def _unk_token_id(tokenizer: Any) -> int | None:
    # As model2vec's _get_unk_token_id: WordPiece, BPE and WordLevel name their unknown token;
    # Unigram keeps an id in its serialised form.
    model = tokenizer.model
    if hasattr(model, "unk_token"):
        token = model.unk_token
        return None if token is None else tokenizer.token_to_id(token)
    unk = json.loads(tokenizer.to_str())["model"].get("unk_id")
    return None if unk is None else int(unk)


def read_model_layout(folder: Path) -> ModelLayout | None:
    """The folder's matrix layout and settings, or None when its layout needs model2vec itself."""
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
    layout = _embeddings_layout(weights)
    if layout is None:
        return None
    offset, rows, dim = layout
    max_length = config.get("max_length", _DEFAULT_MAX_LENGTH)
    return ModelLayout(
        folder=folder,
        weights=weights,
        offset=offset,
        rows=rows,
        dim=dim,
        max_length=None if max_length is None else int(max_length),
        normalize=bool(config.get("normalize", _DEFAULT_NORMALIZE)),
    )


def load_tokenizer(layout: ModelLayout) -> ModelTokenizer | None:
    """The folder's HF tokenizer, configured as model2vec does; None if its vocabulary does not
    match the matrix."""
    from tokenizers import Tokenizer  # 9 ms to import and ~20 ms to parse: only when needed

    tokenizer = Tokenizer.from_file(str(layout.folder / "tokenizer.json"))
    if tokenizer.get_vocab_size() != layout.rows:
        return None  # model2vec would refuse (or need a token mapping)
    padding = tokenizer.padding
    if padding is not None:  # model2vec keeps the pad token but never pads
        tokenizer.enable_padding(
            pad_id=padding["pad_id"],
            pad_token=padding["pad_token"],
            pad_type_id=padding["pad_type_id"],
            length=0,
        )
    if layout.max_length is None:
        tokenizer.no_truncation()
    else:
        tokenizer.enable_truncation(layout.max_length)
    return ModelTokenizer(tokenizer, _unk_token_id(tokenizer))
