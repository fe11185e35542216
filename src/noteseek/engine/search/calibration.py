"""The bundled relevance calibration: `relevance-model.json`, read once per process.

The model (core/calibration.py) turns each hit's features into P(relevant | query, hit); the file
is trained by bench/relevance_train.py on the development sets only (docs/ranking.md,
"Calibrated relevance"). `capture` keeps the last query's feature rows for that script.
"""

from __future__ import annotations

import json
from pathlib import Path

from ...core.calibration import Calibrator

__all__ = ["MODEL_FILE", "Calibration", "bundled_calibrator"]

MODEL_FILE = Path(__file__).with_name("relevance-model.json")
_bundled: Calibrator | None = None


def bundled_calibrator() -> Calibrator:
    """The calibrator shipped in the package, read once per process."""
    global _bundled
    if _bundled is None:
        _bundled = Calibrator.from_json(json.loads(MODEL_FILE.read_text(encoding="utf-8")))
    return _bundled


class Calibration:
    """The calibrator a searcher uses (the bundled one unless given) and, for the training
    script, the last query's (mode, paths, feature rows) and list heads."""

    def __init__(self, model: Calibrator | None = None) -> None:
        self._model = model
        self.capture = False
        self.last: tuple[str, list[str], list[list[float]]] | None = None
        # ...and what `head_features` read: (BM25 scores, cosines, IDF mass, content words), with
        # the index's chunk count (bench/relevance_gate.py compares other head features on them).
        self.heads: tuple[list[float], list[float], float, int, int] | None = None

    @property
    def model(self) -> Calibrator:
        if self._model is None:
            self._model = bundled_calibrator()
        return self._model
