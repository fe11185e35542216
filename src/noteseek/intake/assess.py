"""Score one inbox item against the vault: embed it, place it among the domains, and judge it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from ..core.chunker import ChunkOptions, chunk_note, embedding_text
from ..secrets.scrubber import scrub
from .config import IntakeConfig
from .domains import VaultModel
from .features import text_features
from .items import InboxItem
from .scoring import Decision, Scores, actionability, authority, decide, depth, relevance, total

__all__ = ["Assessment", "Explanations", "TextEmbedder", "assess_item"]


class TextEmbedder(Protocol):
    """What scoring needs from a model: unit vectors for texts (an `Index` embeds with its own)."""

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]: ...


@dataclass(frozen=True)
class Explanations:
    """One line per sub-score."""

    relevance: str
    actionability: str
    depth: str
    authority: str


@dataclass(frozen=True)
class Assessment:
    """The verdict on one item."""

    path: str  # relative to the inbox
    total: float
    scores: Scores
    explanations: Explanations
    decision: Decision
    domain: str | None
    runner_up: str | None
    margin: float
    reason: str
    duplicate_of: str | None
    neighbours: tuple[tuple[str, float], ...]


def assess_item(
    item: InboxItem,
    *,
    model: VaultModel,
    embedder: TextEmbedder,
    config: IntakeConfig,
    chunking: ChunkOptions | None = None,
) -> Assessment:
    """Score `item` on the four dimensions and decide where it goes."""
    # Scrubbed first, like the index: a secret must not reach the embedder, the scores or the log.
    text = scrub(item.text).text
    stem = item.rel.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    chunked = chunk_note(text, file_stem=scrub(stem).text, options=chunking)
    texts = [embedding_text(chunked.title, c.section, c.text) for c in chunked.chunks]
    vectors = embedder.embed(texts or [chunked.title])
    mean = vectors.mean(axis=0)
    norm = float(np.linalg.norm(mean))
    vector = (mean / norm if norm else mean).astype(np.float32)
    guess = model.guess(vector)
    body_text = "\n\n".join(c.text for c in chunked.chunks)
    duplicate = model.duplicate(vector, vectors if texts else vectors[:0], body_text)
    features = text_features(scrub(item.body).text, item.meta)
    rel = relevance(guess.percentile, similarity=guess.similarity, domain=guess.calibrated_on)
    act = actionability(features)
    dep = depth(features, duplicate=duplicate)
    auth = authority(features, trusted=config.trusted, distrusted=config.distrusted)
    scores = Scores(rel.value, act.value, dep.value, auth.value)
    value = total(scores, config.weights)
    decision, reason = decide(value, config=config, domain=guess.domain, duplicate=duplicate)
    return Assessment(
        path=item.rel,
        total=value,
        scores=scores,
        explanations=Explanations(rel.why, act.why, dep.why, auth.why),
        decision=decision,
        domain=guess.domain,
        runner_up=guess.runner_up,
        margin=guess.margin,
        reason=reason,
        duplicate_of=duplicate.path if duplicate else None,
        neighbours=guess.neighbours,
    )
