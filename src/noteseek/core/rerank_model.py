"""The linear reranker's model: weights from a plain JSON document, evaluated in pure Python.

`bench/rerank_train.py` trains scikit-learn's logistic regression (standardised features,
relevant vs not) on the development sets and writes the weights with the standardisation folded in
(`engine/search/rerank-linear.json`, ~1 KB); no training library is needed at run time. Pure: the engine
reads the file and hands the decoded document here. Checked against scikit-learn's own
`decision_function` in the training script (max |difference| printed). A LightGBM LambdaRank model
was measured and dropped (it does not transfer across corpora, docs/ranking.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["LinearModel"]


class LinearModel:
    """score = bias + Σ weight_i · feature_i, features named in order."""

    __slots__ = ("bias", "features", "weights")

    def __init__(self, features: Sequence[str], weights: Sequence[float], bias: float) -> None:
        if len(features) != len(weights):
            raise ValueError(f"{len(features)} feature names but {len(weights)} weights")
        self.features = tuple(features)
        self.weights = tuple(float(w) for w in weights)
        self.bias = float(bias)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LinearModel:
        """The model of a decoded JSON document (`features`, `weights`, `bias`)."""
        return cls(data["features"], data["weights"], data["bias"])

    def to_json(self) -> dict[str, Any]:
        """The JSON document of this model."""
        return {"kind": "linear", "features": list(self.features), "weights": list(self.weights), "bias": self.bias}

    def score(self, row: Sequence[float]) -> float:
        """The score of one feature row (higher ranks first)."""
        return self.bias + sum(w * x for w, x in zip(self.weights, row))
