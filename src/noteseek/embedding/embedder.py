"""Text embedders: the bundled Model2Vec model (default), any other Model2Vec model, and a protocol.

The bundled model ships inside the package and loads from disk only; the Hugging Face hub is contacted
solely when a user names a hub model id explicitly. A local model in the plain Model2Vec layout is
read by `static_model.py` (memory-mapped, no model2vec import, same vectors); other models load
through model2vec. Indexing goes through `Model2VecEmbedder.embed`. Every query path (one-shot and
`noteseek serve`) goes through `query_vector`, so the same query gives the same bytes everywhere; for
a plain local model that is `query_encoder.py`, which needs no numpy.

The model code is imported on first use: only the model asked for, and numpy only for
indexing.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..errors import ModelLoadError
from .quantize import quantize_query

if TYPE_CHECKING:  # numpy and the numpy reader load only when texts are embedded for the index
    import numpy as np
    import numpy.typing as npt

    from .query_encoder import QueryEncoder

    Vectors = npt.NDArray[np.float32]

__all__ = [
    "BUNDLED_MODEL_NAME",
    "Embedder",
    "Model2VecEmbedder",
    "bundled_model_path",
    "default_embedder",
    "query_vector",
]

BUNDLED_MODEL_NAME = "potion-base-8M"


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
    # The package is installed as files (the model is memory-mapped), so its folder is next to
    # this module; importlib.resources would cost ~6 ms of imports per process for the same path.
    return Path(__file__).parent / "models" / BUNDLED_MODEL_NAME


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
        self._query_encoder: QueryEncoder | None = None
        self._query_encoder_checked = False
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
            import hashlib  # deferred: only `status` and indexing need the fingerprint

            weights = Path(self._source) / "model.safetensors"
            try:
                stat = weights.stat()
                # Size + first MiB digest: cheap, and changes when the weights do.
                with weights.open("rb") as fh:
                    head = hashlib.sha256(fh.read(1 << 20)).hexdigest()[:16]
                return f"{self._name}:{stat.st_size}:{head}:{self.dim}"
            except OSError:
                pass
        model = self._load()  # a hub model: always model2vec's StaticModel
        return f"{self._name}:{len(model.tokens)}:{model.dim}"

    def _load(self) -> Any:
        """The model: our memory-mapped reader for a plain local Model2Vec folder, else model2vec."""
        with self._lock:
            if self._model is None and self._local:
                # deferred: the reader imports numpy (~100 ms); a query vector needs no model
                from .static_model import load_static_model

                try:
                    self._model = load_static_model(Path(self._source))
                except (OSError, ValueError) as exc:
                    raise ModelLoadError(
                        f"cannot load embedding model {self._source!r}: {exc}"
                    ) from exc
            if self._model is None:
                try:
                    from model2vec import StaticModel as Model2VecStaticModel
                except ImportError as exc:  # pragma: no cover - core dependency
                    raise ModelLoadError(
                        "model2vec is not installed: pip install model2vec"
                    ) from exc
                try:
                    self._model = Model2VecStaticModel.from_pretrained(self._source)
                except Exception as exc:
                    hint = "" if self._local else " (a hub id needs the network once)"
                    raise ModelLoadError(
                        f"cannot load embedding model {self._source!r}{hint}: {exc}"
                    ) from exc
            return self._model

    def _encoder(self) -> QueryEncoder | None:
        """The pure-Python query encoder, for a plain local model; None otherwise."""
        with self._lock:
            if not self._query_encoder_checked and self._local:
                # deferred: ~16 ms to import, once a query is encoded (status and indexing never)
                from .query_encoder import load_query_encoder

                folder = Path(self._source)
                try:
                    self._query_encoder = load_query_encoder(
                        folder, bert_uncased=folder == bundled_model_path()
                    )
                except (OSError, ValueError) as exc:
                    raise ModelLoadError(
                        f"cannot load embedding model {self._source!r}: {exc}"
                    ) from exc
            self._query_encoder_checked = True
            return self._query_encoder

    def query_vector(self, text: str) -> bytes | None:
        """The int8 query vector of a text (None when it has no known token)."""
        encoder = self._encoder()
        if encoder is not None:
            return encoder.encode(text)
        return quantize_query(self.embed([text])[0].tolist())

    def knows_word(self, word: str) -> bool:
        """Whether a word is one whole token of the model's vocabulary (the known-words gate:
        the model has seen it, so its vector means something); False without a query encoder."""
        encoder = self._encoder()
        return encoder is not None and len(encoder.token_ids(word)) == 1

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed texts into unit-length float32 rows."""
        # deferred: numpy and its model reader (~100 ms), to embed texts only, never for a query
        import numpy as np

        from .static_model import StaticModel

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._load()
        if isinstance(model, StaticModel):
            vectors = model.encode(texts)
        else:
            # No multiprocessing: deterministic, and the indexer already batches.
            vectors = model.encode(list(texts), use_multiprocessing=False, show_progress_bar=False)
        vectors = np.asarray(vectors, dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return np.ascontiguousarray(vectors / norms, dtype=np.float32)


def default_embedder() -> Model2VecEmbedder:
    """The bundled potion-base-8M model."""
    return Model2VecEmbedder()


def knows_word(embedder: Embedder, word: str) -> bool:
    """Whether the embedder's vocabulary holds the word whole (False for embedders without one)."""
    return isinstance(embedder, Model2VecEmbedder) and embedder.knows_word(word)


def query_vector(embedder: Embedder, text: str) -> bytes | None:
    """The int8 query vector of a text with any embedder (None when it has nothing to embed)."""
    if isinstance(embedder, Model2VecEmbedder):
        return embedder.query_vector(text)
    return quantize_query(embedder.embed([text])[0].tolist())
