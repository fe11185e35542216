"""Replies that continue where a token budget ended: pages of hits or of a note's text, and the
cursor that asks for the next page. Pure: values in, values out.

A cursor is an opaque string holding what the next call must repeat: the index's generation
(`Index.generation()`, which every update that changes a note moves), a digest of the request
(query, filters, limit, mode; path and section for a note) and where the next page starts.
Continuing after the index changed, or with other arguments, is a `CursorError` that says to
start again: the hits (or the text) may have moved, and a page must never repeat or skip one.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from ..errors import CursorError
from .budget import CHARS_PER_TOKEN, truncate_at_word

__all__ = ["Cursor", "hit_page", "request_digest", "text_page"]

T = TypeVar("T")


def request_digest(*parts: object) -> str:
    """A short digest of a request's arguments (what a cursor must be used with)."""
    raw = json.dumps(parts, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class Cursor:
    """Where the next page starts, for which request, against which index generation."""

    generation: str
    request: str
    offset: int

    def encode(self) -> str:
        """The opaque cursor string."""
        raw = json.dumps([1, self.generation, self.request, self.offset], separators=(",", ":"))
        return base64.urlsafe_b64encode(raw.encode("utf-8")).decode("ascii").rstrip("=")

    @classmethod
    def decode(cls, text: str, *, generation: str, request: str) -> Cursor:
        """The cursor `text` stands for; CursorError when it is malformed, from another request
        or from before the index changed."""
        try:
            padded = text + "=" * (-len(text) % 4)
            version, gen, req, offset = json.loads(base64.urlsafe_b64decode(padded))
            if version != 1 or not isinstance(offset, int) or offset < 0:
                raise ValueError("bad cursor")
        except (ValueError, TypeError, UnicodeDecodeError):
            raise CursorError(
                "that cursor is not one this server gave out; repeat the call without cursor"
            ) from None
        if gen != generation:
            raise CursorError(
                "the index changed since that cursor was given (notes were added, edited or "
                "removed), so its next page could repeat or skip results; repeat the call "
                "without cursor to start again"
            )
        if req != request:
            raise CursorError(
                "that cursor belongs to a call with other arguments; continue with the same "
                "arguments, or repeat this call without cursor"
            )
        return cls(str(gen), str(req), offset)


def hit_page(
    items: Sequence[T], costs: Sequence[int], *, start: int, max_tokens: int
) -> tuple[list[T], int | None]:
    """Whole items from `start` while their `costs` (tokens) fit `max_tokens`, at least one; and
    the offset of the next page, or None when nothing remains."""
    taken: list[T] = []
    used = 0
    for i in range(start, len(items)):
        if taken and used + costs[i] > max_tokens:
            break
        taken.append(items[i])
        used += costs[i]
    end = start + len(taken)
    return taken, (end if end < len(items) else None)


def text_page(text: str, *, start: int, max_tokens: int) -> tuple[str, int | None]:
    """The piece of `text` from character `start` within about `max_tokens`, cut at a word
    boundary; and the offset of the next piece, or None when the text ends here."""
    rest = text[start:]
    budget = max(max_tokens, 1) * CHARS_PER_TOKEN
    if len(rest) <= budget:
        return rest, None
    piece = truncate_at_word(rest, budget)
    piece = piece[:-1] if piece.endswith("…") else piece
    if not piece:
        piece = rest[:budget]  # one word longer than the budget: cut inside it
    end = start + len(piece)
    return piece, end
