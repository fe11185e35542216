"""Intake: score incoming notes and file them into the vault, queue them for review, or set them aside.

The layer before the index (docs/intake.md). `run_intake` is the library call; `noteseek intake`
is its command-line adapter.
"""

from __future__ import annotations

from .assess import Assessment, Explanations, assess_item
from .config import IntakeConfig, Weights, load_config
from .domains import DomainGuess, VaultModel
from .errors import InboxNotFoundError, IntakeConfigError, IntakeError, IntakeLogError
from .features import TextFeatures, text_features
from .run import IntakeReport, ItemResult, default_domains, run_intake
from .scoring import Duplicate, Scores
from .undo import UndoReport, undo_run

__all__ = [
    "Assessment",
    "DomainGuess",
    "Duplicate",
    "Explanations",
    "InboxNotFoundError",
    "IntakeConfig",
    "IntakeConfigError",
    "IntakeError",
    "IntakeLogError",
    "IntakeReport",
    "ItemResult",
    "Scores",
    "TextFeatures",
    "UndoReport",
    "VaultModel",
    "Weights",
    "assess_item",
    "default_domains",
    "load_config",
    "run_intake",
    "text_features",
    "undo_run",
]
