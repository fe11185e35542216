"""Structured replies of `search` and `get_note` that continue where the budget ended.

Each call returns the text it always did (`format.py`: budgeted plain text, for clients that
read only `content`) and a `structuredContent` page within the same `max_tokens`: the hits (or
the piece of the note's text) that fit whole, and a `cursor` when more remains. The same call
with that cursor returns the next page, never an item of an earlier one. A cursor names the
index generation it was made against (`Index.generation()`); once an update changed a note it
is refused with a message that says to start again (`core/pages.py`).

Claude Code shows the model `structuredContent` when both are present, so the page itself is
budgeted: it never carries more than `max_tokens` of hit text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict

from ..core.budget import estimate_tokens, truncate_at_word
from ..core.pages import Cursor, hit_page, request_digest, text_page
from .format import format_hits, format_note

if TYPE_CHECKING:
    from mcp.types import CallToolResult

    from .. import Hit, NoteText

__all__ = ["CURSOR_ARG", "NotePage", "PageAsk", "SearchPage", "note_result", "search_result"]

CURSOR_ARG = "The cursor a previous reply gave, for its next page (with the same other arguments)."


@dataclass(frozen=True)
class PageAsk:
    """Which page a call asks for: its arguments (what a cursor must repeat), the index
    generation read before the call, the cursor given (None: the first page) and the budget."""

    request: tuple[object, ...]
    generation: str
    cursor: str | None
    max_tokens: int


# What a page's own fields cost besides the hits' text (keys, path, scores).
_PAGE_OVERHEAD = 30


class SearchPage(TypedDict):
    """The structured reply of `search`."""

    hits: list[dict[str, Any]]  # as `noteseek search --json` prints each hit
    hidden: int  # hits within the limit held back as below the relevance threshold
    cursor: str | None  # pass it back as `cursor` for the next page; null: nothing more


class NotePage(TypedDict):
    """The structured reply of `get_note`."""

    path: str
    title: str | None
    section: str | None
    text: str  # this page's piece of the note's text; pieces join to the whole text
    offset: int  # where in the whole text this piece starts (characters)
    total_tokens: int  # the whole text's size
    redacted: int
    changed_since_indexed: bool
    cursor: str | None


def _text_result(text: str, structured: dict[str, Any]) -> CallToolResult:
    # The mcp extra, imported when a reply is built.
    from mcp.types import CallToolResult, TextContent

    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=structured
    )


def _hit_cost(hit: dict[str, Any]) -> int:
    return estimate_tokens(json.dumps(hit, ensure_ascii=False))


def search_result(
    query: str,
    hits: list[Hit],
    ask: PageAsk,
    *,
    mode: str,
    degraded: str | None,
    filters: str,
    hidden: int = 0,
) -> CallToolResult:
    """The text of today's reply (of this page's hits when continuing) and the page."""
    generation, cursor, max_tokens = ask.generation, ask.cursor, ask.max_tokens
    digest = request_digest("search", *ask.request, max_tokens)
    start = 0
    if cursor:
        start = Cursor.decode(cursor, generation=generation, request=digest).offset
    items = [hit.to_json() for hit in hits]
    budget = max(max_tokens - _PAGE_OVERHEAD, 1)
    page, following = hit_page(items, [_hit_cost(i) for i in items], start=start, max_tokens=budget)
    if page and _hit_cost(page[0]) > budget:
        # One hit longer than the whole budget: its text is cut, as the text reply cuts it.
        first = dict(page[0])
        room = max(budget - _hit_cost({**first, "text": ""}), 10)
        first["text"] = truncate_at_word(first["text"], room * 4) or first["text"][: room * 4]
        page = [first]
    shown = hits[start : start + len(page)]
    text = format_hits(
        query, hits if not cursor else shown, mode=mode, max_tokens=max_tokens,
        degraded=degraded, filters=filters, hidden=hidden,
    )  # fmt: skip
    if cursor and not shown:
        text = f'No more notes for "{query}": the last page was the end.'
    next_cursor = Cursor(generation, digest, following).encode() if following is not None else None
    structured: dict[str, Any] = {"hits": page, "hidden": hidden, "cursor": next_cursor}
    return _text_result(text, structured)


def note_result(note: NoteText, ask: PageAsk) -> CallToolResult:
    """The text of today's reply (this piece when continuing) and the note's page."""
    generation, cursor, max_tokens = ask.generation, ask.cursor, ask.max_tokens
    digest = request_digest("get_note", *ask.request, max_tokens)
    start = 0
    if cursor:
        start = Cursor.decode(cursor, generation=generation, request=digest).offset
        if start > len(note.text):
            start = len(note.text)
    piece, following = text_page(note.text, start=start, max_tokens=max(max_tokens - 60, 20))
    next_cursor = Cursor(generation, digest, following).encode() if following is not None else None
    if cursor:
        head = f"{note.path} (continued from character {start:,})"
        text = f"{head}\n\n{piece}" + (
            "\n\n[more: call again with the cursor]" if next_cursor else ""
        )
    else:
        text = format_note(note, max_tokens=max_tokens)
    structured: dict[str, Any] = {
        "path": note.path,
        "title": note.title,
        "section": note.section,
        "text": piece,
        "offset": start,
        "total_tokens": estimate_tokens(note.text),
        "redacted": note.redacted,
        "changed_since_indexed": note.changed_since_indexed,
        "cursor": next_cursor,
    }
    return _text_result(text, structured)
