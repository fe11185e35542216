"""Intake settings: weights, thresholds, folders, domains and source lists, with a TOML loader.

Defaults are documented in docs/intake.md; every value can be overridden in a TOML file
(`noteseek intake --config FILE`, or `<vault>/_intake/config.toml` when it exists).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from .errors import IntakeConfigError

__all__ = [
    "DEFAULT_CONFIG_NAME",
    "IntakeConfig",
    "Weights",
    "config_from_mapping",
    "load_config",
]

DEFAULT_CONFIG_NAME = "_intake/config.toml"

# A deliberately short default list: primary documentation and reference sources. Users extend it.
DEFAULT_TRUSTED: tuple[str, ...] = (
    "developer.mozilla.org",
    "docs.python.org",
    "wikipedia.org",
    "arxiv.org",
    "doi.org",
    "github.com",
    "w3.org",
    "ietf.org",
    "rfc-editor.org",
)


@dataclass(frozen=True)
class Weights:
    """Weights of the four sub-scores in the total (normalised to sum to 1 when used)."""

    relevance: float = 0.40
    actionability: float = 0.15
    depth: float = 0.30
    authority: float = 0.15

    def normalised(self) -> Weights:
        """The same weights scaled to sum to 1."""
        total = self.relevance + self.actionability + self.depth + self.authority
        return Weights(
            self.relevance / total,
            self.actionability / total,
            self.depth / total,
            self.authority / total,
        )


@dataclass(frozen=True)
class IntakeConfig:
    """Everything intake can be told. Folders are relative to the vault."""

    weights: Weights = field(default_factory=Weights)
    route_threshold: float = 0.55
    review_threshold: float = 0.40
    # Empty: the vault's top-level folders (minus dot/underscore folders and the inbox).
    domains: tuple[str, ...] = ()
    review_folder: str = "_intake/review"
    set_aside_folder: str = "_intake/set-aside"
    log_file: str = "_intake/log.jsonl"
    trusted: tuple[str, ...] = DEFAULT_TRUSTED
    distrusted: tuple[str, ...] = ()
    # Nearest notes that vote on the domain and whose similarity measures relevance.
    neighbours: int = 10
    # A near-duplicate is never filed automatically: it goes to review at most.
    duplicates_to_review: bool = True
    include_txt: bool = True

    def __post_init__(self) -> None:
        w = self.weights
        values = (w.relevance, w.actionability, w.depth, w.authority)
        if any(v < 0 for v in values) or sum(values) <= 0:
            raise IntakeConfigError(
                f"weights must be >= 0 and not all 0, got {values} (relevance, actionability, "
                "depth, authority)"
            )
        if not 0 <= self.review_threshold <= self.route_threshold <= 1:
            raise IntakeConfigError(
                f"thresholds must satisfy 0 <= review ({self.review_threshold}) <= route "
                f"({self.route_threshold}) <= 1"
            )
        if self.neighbours < 1:
            raise IntakeConfigError(f"neighbours must be >= 1, got {self.neighbours}")
        for name in ("review_folder", "set_aside_folder", "log_file"):
            _check_relative(name, getattr(self, name))
        for domain in self.domains:
            _check_relative("domains", domain)


def _check_relative(name: str, value: str) -> None:
    path = Path(value)
    if not value.strip("/") or path.is_absolute() or ".." in path.parts:
        raise IntakeConfigError(
            f"{name} must be a folder inside the vault (relative, no '..'), got {value!r}"
        )


def _read_toml(path: Path) -> dict[str, Any]:
    # deferred: without tomli (Python 3.10) reading a config fails with IntakeConfigError, and
    # importing intake does not fail at all.
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10 only
        try:
            import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]
        except ImportError as exc:
            raise IntakeConfigError(
                f"reading {path} needs Python >= 3.11 or the 'tomli' package (pip install tomli)"
            ) from exc
    try:
        with path.open("rb") as handle:
            data: dict[str, Any] = tomllib.load(handle)
    except OSError as exc:
        raise IntakeConfigError(f"cannot read config {path}: {exc.strerror or exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise IntakeConfigError(f"config {path} is not valid TOML: {exc}") from exc
    return data


def _strings(path: Path, key: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise IntakeConfigError(f"{path}: '{key}' must be a list of strings")
    return tuple(value)


def _number(path: Path, key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise IntakeConfigError(f"{path}: '{key}' must be a number, got {value!r}")
    return float(value)


def config_from_mapping(
    data: Mapping[str, Any], *, source: Path, base: IntakeConfig
) -> IntakeConfig:
    """Apply a parsed TOML document to `base`; unknown keys are errors (typos must not pass)."""
    known = {"weights", "thresholds", "domains", "folders", "authority", "routing"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise IntakeConfigError(
            f"{source}: unknown key(s) {', '.join(unknown)}; expected {', '.join(sorted(known))}"
        )
    changes: dict[str, Any] = {}
    weights = data.get("weights", {})
    if weights:
        names = {f.name for f in fields(Weights)}
        bad = sorted(set(weights) - names)
        if bad:
            raise IntakeConfigError(f"{source}: unknown weight(s) {', '.join(bad)}")
        changes["weights"] = replace(
            base.weights, **{k: _number(source, f"weights.{k}", v) for k, v in weights.items()}
        )
    thresholds = data.get("thresholds", {})
    for key, attr in (("route", "route_threshold"), ("review", "review_threshold")):
        if key in thresholds:
            changes[attr] = _number(source, f"thresholds.{key}", thresholds[key])
    if "domains" in data:
        changes["domains"] = tuple(
            d.strip("/") for d in _strings(source, "domains", data["domains"])
        )
    folders = data.get("folders", {})
    for key, attr in (
        ("review", "review_folder"),
        ("set_aside", "set_aside_folder"),
        ("log", "log_file"),
    ):
        if key in folders:
            changes[attr] = str(folders[key])
    authority = data.get("authority", {})
    for key in ("trusted", "distrusted"):
        if key in authority:
            changes[key] = _strings(source, f"authority.{key}", authority[key])
    routing = data.get("routing", {})
    if "neighbours" in routing:
        changes["neighbours"] = int(_number(source, "routing.neighbours", routing["neighbours"]))
    if "duplicates_to_review" in routing:
        changes["duplicates_to_review"] = bool(routing["duplicates_to_review"])
    return replace(base, **changes)


def load_config(path: str | Path | None = None, *, vault: str | Path | None = None) -> IntakeConfig:
    """The config in `path`, else `<vault>/_intake/config.toml` if present, else the defaults."""
    if path is None and vault is not None:
        candidate = Path(vault) / DEFAULT_CONFIG_NAME
        path = candidate if candidate.is_file() else None
    if path is None:
        return IntakeConfig()
    source = Path(path)
    return config_from_mapping(_read_toml(source), source=source, base=IntakeConfig())
