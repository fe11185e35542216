"""Lab copy of the part-1 prototype model evaluator (linear and LightGBM trees, bench only; the shipped one is noteseek.core.rerank_model), in pure Python (issue 16).

Two formats, both written by `bench/rerank_lab.py --export`: a linear model (`weights`, `bias`,
`features`) and LightGBM's own `Booster.dump_model()` JSON (a list of binary trees). Neither needs
LightGBM, scikit-learn or numpy at run time; the training dependencies stay in the bench. Checked
by `bench/rerank_lab.py --export` against the libraries' own scores on 12,000 candidates (max
difference 0 for trees, 4e-15 linear); 13 µs per candidate linear, 322 µs for 300 trees.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["LinearModel", "TreeModel", "load_model"]


@dataclass(frozen=True)
class LinearModel:
    """score = bias + Σ weight_i · feature_i."""

    features: tuple[str, ...]
    weights: tuple[float, ...]
    bias: float

    def score(self, row: Sequence[float]) -> float:
        """The model's score of one feature vector (higher ranks first)."""
        return self.bias + sum(w * x for w, x in zip(self.weights, row))


# A tree node, flattened: (feature, threshold, default_left, left, right) for splits, where
# left/right index into the node list; leaves are (-1, value, False, 0, 0).
_Node = tuple[int, float, bool, int, int]


def _flatten(tree: dict[str, Any]) -> list[_Node]:
    nodes: list[_Node] = []

    def visit(node: dict[str, Any]) -> int:
        at = len(nodes)
        if "leaf_value" in node:
            nodes.append((-1, float(node["leaf_value"]), False, 0, 0))
            return at
        if node.get("decision_type", "<=") != "<=":
            raise ValueError(f"unsupported split {node.get('decision_type')!r}")
        nodes.append((0, 0.0, False, 0, 0))
        left = visit(node["left_child"])
        right = visit(node["right_child"])
        nodes[at] = (
            int(node["split_feature"]),
            float(node["threshold"]),
            bool(node.get("default_left", True)),
            left,
            right,
        )
        return at

    visit(tree["tree_structure"])
    return nodes


@dataclass(frozen=True)
class TreeModel:
    """A sum of binary regression trees (LightGBM's numerical `<=` splits)."""

    features: tuple[str, ...]
    trees: tuple[tuple[_Node, ...], ...]

    def score(self, row: Sequence[float]) -> float:
        """The model's score of one feature vector (higher ranks first)."""
        total = 0.0
        for nodes in self.trees:
            i = 0
            while True:
                feature, value, default_left, left, right = nodes[i]
                if feature < 0:
                    total += value
                    break
                x = row[feature]
                go_left = default_left if x != x else x <= value  # NaN: LightGBM's default side
                i = left if go_left else right
        return total


def load_model(path: str | Path) -> LinearModel | TreeModel:
    """A model from its JSON file (linear or LightGBM dump), by its shape."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if "tree_info" in data:
        return TreeModel(
            features=tuple(data.get("feature_names", ())),
            trees=tuple(tuple(_flatten(t)) for t in data["tree_info"]),
        )
    return LinearModel(
        features=tuple(data["features"]),
        weights=tuple(float(w) for w in data["weights"]),
        bias=float(data["bias"]),
    )
