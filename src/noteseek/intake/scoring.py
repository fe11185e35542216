"""The four sub-scores, the total and the decision. Pure: values in, values out, no I/O.

Each sub-score lies in [0, 1] and comes with a one-line explanation, so a user can see why an
item was filed, queued or set aside. Relevance is calibrated elsewhere (domains.py) against the
vault's own notes; here it arrives as a percentile.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from .config import IntakeConfig, Weights
from .features import TextFeatures, source_host

__all__ = [
    "Decision",
    "Duplicate",
    "Scored",
    "Scores",
    "actionability",
    "authority",
    "decide",
    "depth",
    "relevance",
    "total",
]

Decision = Literal["route", "review", "set_aside"]

# Depth: an item of FULL_WORDS words or more is full length; STUB_WORDS or fewer is a stub.
STUB_WORDS = 20
FULL_WORDS = 400
# Link dumps: up to a quarter of the lines may be bare links (a reading list at the end) for free.
FREE_LINK_SHARE = 0.25
# Actionability saturates: ACTION_SCALE points give 1 - 1/e ≈ 0.63.
ACTION_SCALE = 4.0
# Relevance: an item as close to the vault as its median note is fully relevant.
RELEVANCE_ANCHOR = 0.5


@dataclass(frozen=True)
class Scores:
    """The four sub-scores, each in [0, 1]."""

    relevance: float
    actionability: float
    depth: float
    authority: float


@dataclass(frozen=True)
class Scored:
    """One sub-score and why."""

    value: float
    why: str


@dataclass(frozen=True)
class Duplicate:
    """An existing note that an item nearly repeats."""

    path: str
    overlap: float  # share of the item's word 5-grams found in that note


def _clip(value: float) -> float:
    return min(1.0, max(0.0, value))


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def relevance(percentile: float, *, similarity: float, domain: str | None) -> Scored:
    """Relevance from the item's percentile among the vault's own notes (median note = 1.0)."""
    value = _clip(percentile / RELEVANCE_ANCHOR)
    where = f"{domain}'s" if domain else "the vault's"
    return Scored(
        value,
        f"nearest notes at cosine {similarity:.2f}: closer than {percentile:.0%} of {where} own "
        "notes are to theirs",
    )


def actionability(f: TextFeatures) -> Scored:
    """Concrete steps, commands, code, checklists and decisions, saturating."""
    parts = [
        (2.0, f.code_blocks, "code block"),
        (1.0, f.shell_lines, "shell command"),
        (1.0, f.steps, "numbered step"),
        (1.0, f.checkboxes, "checklist item"),
        (1.0, f.decision_lines, "decision/rule line"),
        (0.5, f.imperative_lines, "instruction line"),
        (0.25, f.inline_code, "inline code span"),
    ]
    points = sum(weight * count for weight, count, _ in parts)
    value = 1.0 - math.exp(-points / ACTION_SCALE)
    found = [_plural(count, name) for _, count, name in parts if count]
    return Scored(value, ", ".join(found) if found else "no steps, commands, code or decisions")


def depth(f: TextFeatures, *, duplicate: Duplicate | None = None) -> Scored:
    """Substance: length on a log scale, less link dumps, page furniture and near-duplicates."""
    if f.words <= STUB_WORDS:
        length = 0.0
    else:
        length = _clip(math.log(f.words / STUB_WORDS) / math.log(FULL_WORDS / STUB_WORDS))
    link_penalty = _clip((f.link_share - FREE_LINK_SHARE) / (1 - 2 * FREE_LINK_SHARE))
    value = length * (1 - link_penalty) * (1 - f.boilerplate_share)
    why = [_plural(f.words, "word") + (" (a stub)" if f.words <= STUB_WORDS else "")]
    if link_penalty:
        why.append(f"{f.link_share:.0%} of lines are bare links")
    if f.boilerplate_share >= 0.05:
        why.append(f"{f.boilerplate_share:.0%} of lines are boilerplate or repeated")
    if duplicate is not None:
        value = 0.0
        why.append(
            f"near-duplicate of {duplicate.path} ({duplicate.overlap:.0%} of its text there)"
        )
    return Scored(_clip(value), "; ".join(why))


def _matches(host: str, domains: tuple[str, ...]) -> str | None:
    for domain in domains:
        d = domain.lower().strip().removeprefix("www.")
        if d and (host == d or host.endswith("." + d)):
            return d
    return None


def authority(f: TextFeatures, *, trusted: tuple[str, ...], distrusted: tuple[str, ...]) -> Scored:
    """The source: trusted or distrusted site, a named author, citations. 0.5 when nothing is known."""
    host = source_host(f.source)
    why: list[str] = []
    value = 0.5
    bad = _matches(host, distrusted) if host else None
    good = _matches(host, trusted) if host else None
    if bad:
        why.append(f"source {host} is distrusted")
    elif good:
        value = 0.85
        why.append(f"source {host} is trusted")
    elif host:
        why.append(f"source {host} is neither trusted nor distrusted")
    else:
        why.append("no source given")
    if f.author:
        value += 0.1
        why.append("named author")
    if f.citations:
        value += min(0.2, 0.05 * f.citations)
        why.append(_plural(f.citations, "citation"))
    if bad:
        value = min(value, 0.15)  # a distrusted site stays distrusted, however it dresses up
    return Scored(_clip(value), "; ".join(why))


def total(scores: Scores, weights: Weights) -> float:
    """The weighted sum of the sub-scores (weights normalised to sum to 1)."""
    w = weights.normalised()
    return _clip(
        w.relevance * scores.relevance
        + w.actionability * scores.actionability
        + w.depth * scores.depth
        + w.authority * scores.authority
    )


def decide(
    score: float,
    *,
    config: IntakeConfig,
    domain: str | None,
    duplicate: Duplicate | None = None,
) -> tuple[Decision, str]:
    """Route, review or set aside by the thresholds, and the one-line reason."""
    where = domain or "the vault root"
    if score >= config.route_threshold:
        if duplicate is not None and config.duplicates_to_review:
            return "review", (
                f"total {score:.2f} >= {config.route_threshold:.2f}, but it nearly duplicates "
                f"{duplicate.path}: review before filing"
            )
        return "route", f"total {score:.2f} >= {config.route_threshold:.2f}: filed into {where}"
    if score >= config.review_threshold:
        return "review", (
            f"total {score:.2f} between {config.review_threshold:.2f} and "
            f"{config.route_threshold:.2f}: review, proposed {where}"
        )
    return "set_aside", f"total {score:.2f} < {config.review_threshold:.2f}: set aside"
