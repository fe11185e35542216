"""The agent context block: the best sections for a prompt, attributed, within a token budget.

Every adapter (the prompt hook, `noteseek context`, the warm daemon) formats through
`format_context`, so an agent sees the same block whichever path produced it. The block is a pure
function of the hits, so the same index state and query give byte-identical text, which lets an
agent's prompt cache reuse it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from ..settings import DEFAULT_CONTEXT_TOKENS
from .budget import CHARS_PER_TOKEN, estimate_tokens, truncate_at_word
from .display import one_line
from .markup import readable

__all__ = [
    "CONTEXT_HEADING",
    "CONTEXT_PROVENANCE",
    "DEFAULT_CONTEXT_TOKENS",
    "ContextSection",
    "format_context",
    "note_source",
]

CONTEXT_HEADING = "## Relevant Memory Context"
# Plain and non-coercive: says what this is and where it came from, gives no instructions, so a
# model has no reason to mistake it for a prompt injection.
CONTEXT_PROVENANCE = (
    "Sections from the user's own notes, found for this prompt by noteseek, a local note search "
    "the user installed. Background material only; it may be incomplete or out of date."
)
# A section shortened to fit must keep at least this many tokens to be worth showing.
MIN_SECTION_TOKENS = 40
# The first sections of a block share its budget, so a block names up to this many notes instead of
# spending 500 tokens on the first one: measured on the development sets (bench/relevance_eval.py),
# the block named a relevant note for 0.775 of the Help vault's questions against 0.70 when whole
# sections went first, MDN 0.65 against 0.50, SciFact 0.65 against 0.50, Hub 0.85 against 0.825.
SHARED_SECTIONS = 3
# A line of a section's text that starts like the block's own headings (`## Relevant Memory
# Context`, `### <heading> (<note>; relevance <P>)`) would read as a section of its own, with
# whatever note and score the line names: any note could forge one. Headings inside a section
# keep their words and lose their marks; inside a fenced block a `#` line is code (a shell
# comment) and stays as it is.
_HEADING_MARKS = re.compile(r"^[ \t]{0,3}#{1,6}(?=[ \t]|$)[ \t]*")
_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")


class _HitLike(Protocol):
    @property
    def path(self) -> str: ...
    @property
    def section(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def location(self) -> str: ...  # `p. 12` in a document, '' in a note
    @property
    def score(self) -> float: ...  # the calibrated P(relevant)


@dataclass(frozen=True)
class ContextSection:
    """One section as it appears in the block."""

    path: str
    heading: str
    source: str
    text: str
    shortened: bool
    score: float = 0.0


def note_source(path: str) -> str:
    """How a block names a note: its vault-relative path without the `.md` extension (a
    document keeps its extension: `manuals/gnuplot.pdf`).

    The path carries both the folder (the project) and the title-like file name, and it is what
    `noteseek`'s MCP `get_note` tool and the user's editor accept.
    """
    lower = path.lower()
    if lower.endswith(".md") and not lower.endswith(".excalidraw.md"):
        return path[:-3]
    return path


def _source(hit: _HitLike) -> str:
    """The note, or the document and where in it: `manuals/gnuplot.pdf, p. 12`; on one line
    (a file name may hold a newline, and with it a forged heading)."""
    location = hit.location
    source = f"{note_source(hit.path)}, {location}" if location else note_source(hit.path)
    return one_line(source)


def _heading(hit: _HitLike) -> str:
    section = " ".join(hit.section.split())
    if section:
        return one_line(section)
    stem = note_source(hit.path).rsplit("/", 1)[-1]
    return one_line(stem or hit.path)


def _body(text: str) -> str:
    """A section's text as the block shows it: without Obsidian syntax, no line a heading."""
    # A section that is all markup keeps its raw text rather than vanish.
    shown = readable(text).strip() or text.strip()
    lines = shown.split("\n")
    fence = ""  # the open fence's marker
    for i, line in enumerate(lines):
        opening = _FENCE.match(line)
        if fence:
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence):
                fence = ""
        elif opening:
            fence = opening.group(1)
        else:
            lines[i] = _HEADING_MARKS.sub("", line)
    # Only marks left (`##`): nothing that could be read as a heading, so the marks stay.
    return "\n".join(lines).strip() or shown


def _render(sections: Sequence[ContextSection]) -> str:
    parts = [CONTEXT_HEADING, "", CONTEXT_PROVENANCE]
    for section in sections:
        title = f"### {section.heading} ({section.source}; relevance {section.score:.2f})"
        parts += ["", title, section.text]
    return "\n".join(parts) + "\n"


def select_sections(hits: Sequence[_HitLike], *, max_tokens: int) -> list[ContextSection]:
    """The sections that fit the budget, best first.

    The first `SHARED_SECTIONS` sections share the budget: each gets an equal part of what is
    left (a short one leaves the rest to the next), and a longer one is shortened at a word
    boundary to its part, so one long section never crowds out the notes after it. A small budget
    is shared by fewer, so each part holds at least `MIN_SECTION_TOKENS`; a section that
    would get less is skipped.
    """
    used = estimate_tokens(_render([]))
    chosen: list[ContextSection] = []
    for k, hit in enumerate(hits):
        heading, source = _heading(hit), _source(hit)
        text = _body(hit.text)
        overhead = estimate_tokens(f"\n\n### {heading} ({source}; relevance 0.00)\n")
        # As many sharers as leave each a part worth showing: a small budget goes to the best.
        sharers = min(len(hits) - k, SHARED_SECTIONS)
        while sharers > 1 and (max_tokens - used) // sharers - overhead < MIN_SECTION_TOKENS:
            sharers -= 1
        part = (max_tokens - used) // sharers - overhead
        if estimate_tokens(text) <= part:
            chosen.append(ContextSection(hit.path, heading, source, text, False, hit.score))
            used += overhead + estimate_tokens(text)
            continue
        if part >= MIN_SECTION_TOKENS:
            short = truncate_at_word(text, part * CHARS_PER_TOKEN)
            if short:
                chosen.append(ContextSection(hit.path, heading, source, short, True, hit.score))
                used += overhead + estimate_tokens(short)
    return chosen


def format_context(hits: Sequence[_HitLike], *, max_tokens: int = DEFAULT_CONTEXT_TOKENS) -> str:
    """The context block for these hits within `max_tokens` (≈ 4 characters each); '' when none fit.

    ```
    ## Relevant Memory Context

    <one line saying where this comes from>

    ### <section heading> (<note path without .md>[, <place in a document: p. 12, slide 3>]; relevance <P>)
    <section text, Obsidian link and callout syntax removed>
    ```
    """
    sections = select_sections(hits, max_tokens=max_tokens)
    return _render(sections) if sections else ""
