"""Text embedders: the bundled Model2Vec model (default), any other Model2Vec model, and a protocol.

The bundled model ships inside the package and loads from disk only; the Hugging Face hub is contacted
solely when a user names a hub model id explicitly.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from .errors import ModelLoadError

__all__ = [
    "BUNDLED_MODEL_NAME",
    "Embedder",
    "Model2VecEmbedder",
    "bundled_model_path",
    "default_embedder",
]

BUNDLED_MODEL_NAME = "potion-base-8M"
Vectors = npt.NDArray[np.float32]


@runtime_checkable
class Embedder(Protocol):
    """What the index needs from an embedding model."""

    @property
    def name(self) -> str:
        """Human-readable model name, shown by `status`."""
        ...

    @property
    def dim(self) -> int:
        """Vector dimension."""
        ...

    @property
    def fingerprint(self) -> str:
        """Changes whenever the vectors this model produces would change."""
        ...

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Unit-length float32 vectors, one row per text."""
        ...


def bundled_model_path() -> Path:
    """Folder of the model that ships inside the package."""
    return Path(str(resources.files("noteseek") / "models" / BUNDLED_MODEL_NAME))


def _read_config(path: Path) -> dict[str, Any]:
    try:
        data = json.loads((path / "config.json").read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


class Model2VecEmbedder:
    """A Model2Vec static model, loaded lazily on the first `embed` call.

    `model` is a local folder or, only if no such folder exists, a hub id such as
    `minishlab/potion-base-32M` (which needs the network the first time).
    """

    def __init__(self, model: str | os.PathLike[str] | None = None) -> None:
        self._source = str(model) if model is not None else str(bundled_model_path())
        self._local = Path(self._source).is_dir()
        self._model: Any = None
        self._lock = threading.Lock()
        config = _read_config(Path(self._source)) if self._local else {}
        self._declared_dim = int(config.get("hidden_dim", 0) or 0)
        if self._local and Path(self._source) == bundled_model_path():
            self._name = BUNDLED_MODEL_NAME
        else:
            self._name = Path(self._source).name if self._local else self._source

    @property
    def source(self) -> str:
        """Local folder or hub id the model loads from."""
        return self._source

    @property
    def name(self) -> str:
        """Model name (bundled, folder name, or hub id)."""
        return self._name

    @property
    def dim(self) -> int:
        """Vector dimension, read from config.json without loading the weights when possible."""
        if self._declared_dim:
            return self._declared_dim
        return int(self._load().dim)

    @property
    def fingerprint(self) -> str:
        """Name, vocabulary size, dimension and a digest of the weights file's identity."""
        if self._local:
            weights = Path(self._source) / "model.safetensors"
            try:
                stat = weights.stat()
                # Size + first MiB digest: cheap, and changes when the weights do.
                with weights.open("rb") as fh:
                    head = hashlib.sha256(fh.read(1 << 20)).hexdigest()[:16]
                return f"{self._name}:{stat.st_size}:{head}:{self.dim}"
            except OSError:
                pass
        model = self._load()
        return f"{self._name}:{len(model.tokens)}:{model.dim}"

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    from model2vec import StaticModel
                except ImportError as exc:  # pragma: no cover - core dependency
                    raise ModelLoadError(
                        "model2vec is not installed: pip install model2vec"
                    ) from exc
                try:
                    self._model = StaticModel.from_pretrained(self._source)
                except Exception as exc:
                    hint = "" if self._local else " (a hub id needs the network once)"
                    raise ModelLoadError(
                        f"cannot load embedding model {self._source!r}{hint}: {exc}"
                    ) from exc
            return self._model

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed texts into unit-length float32 rows."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._load()
        # No multiprocessing: deterministic, and the indexer already batches.
        vectors = model.encode(list(texts), use_multiprocessing=False, show_progress_bar=False)
        vectors = np.asarray(vectors, dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return np.ascontiguousarray(vectors / norms, dtype=np.float32)


def default_embedder() -> Model2VecEmbedder:
    """The bundled potion-base-8M model."""
    return Model2VecEmbedder()
