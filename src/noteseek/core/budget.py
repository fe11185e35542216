"""Fit hits into a token budget. Pure. A token is counted as about four characters."""

from __future__ import annotations

import dataclasses
import math
from typing import Protocol, TypeVar

__all__ = ["CHARS_PER_TOKEN", "estimate_tokens", "fit_to_budget", "truncate_at_word"]

CHARS_PER_TOKEN = 4


class _HasText(Protocol):
    @property
    def text(self) -> str: ...


H = TypeVar("H", bound=_HasText)


def estimate_tokens(text: str) -> int:
    """Approximate token count (≈ 4 characters per token, the usual figure for English)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def truncate_at_word(text: str, max_chars: int) -> str:
    """At most `max_chars` characters, cut at a word boundary, with an ellipsis when cut."""
    if len(text) <= max_chars:
        return text
    if max_chars <= 1:
        return ""
    cut = text[: max_chars - 1]
    space = max(cut.rfind(" "), cut.rfind("\n"))
    if space > 0:
        cut = cut[:space]
    else:
        return ""
    return cut.rstrip() + "…"


def fit_to_budget(hits: list[H], max_tokens: int) -> list[H]:
    """The longest prefix of whole hits within the budget; if even the first is too long, it is
    shortened at a word boundary rather than dropped."""
    kept: list[H] = []
    used = 0
    for hit in hits:
        cost = estimate_tokens(hit.text)
        if used + cost > max_tokens:
            if not kept and max_tokens > 0:
                short = truncate_at_word(hit.text, max_tokens * CHARS_PER_TOKEN)
                if short and dataclasses.is_dataclass(hit):
                    kept.append(dataclasses.replace(hit, text=short))
            break
        kept.append(hit)
        used += cost
    return kept
