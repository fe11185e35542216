"""Obsidian syntax out of text shown to a person or an agent: what a note means, not how it is
written. Pure.

Snippets, MCP replies and the hook's block show a section's stored text; wiki-link brackets,
embeds and callout markers in it are noise to a reader (`[[Back up your Obsidian files|backup
guide]]` reads as "backup guide"). The index keeps the raw text (search matches link targets);
only what is shown is cleaned.
"""

from __future__ import annotations

import re

__all__ = ["readable"]

# ![[file.png]], ![[Note#Heading|300]]: an embed shows another file's content, not words of its own.
_EMBED = re.compile(r"!\[\[[^\[\]\n]*\]\]")
# [[Target|label]] -> label; [[Target#Heading]] -> Target > Heading; [[#Heading]] -> Heading.
_WIKILINK = re.compile(r"\[\[([^\[\]|\n]*)(?:\|([^\[\]\n]*))?\]\]")
# > [!tip]- Title / > [!NOTE] : the callout's type marker (the title and body stay).
_CALLOUT = re.compile(r"^([ \t]*>[ \t>]*)\[![A-Za-z][\w-]*\][+-]?[ \t]*", re.MULTILINE)
# Quote markers at line starts (callout bodies are block quotes).
_QUOTE = re.compile(r"^[ \t]*(?:>[ \t]?)+", re.MULTILINE)
# ![alt](image.png): Markdown images say nothing in text; [label](url) -> label.
_MD_IMAGE = re.compile(r"!\[[^\]\n]*\]\([^)\n]*\)")
# %% comment %%: Obsidian comments are not rendered.
_COMMENT = re.compile(r"%%.*?%%", re.DOTALL)
# Inline HTML of the kinds notes use for layout (not `Array<string>` in code).
_HTML_TAG = re.compile(
    r"</?(?:span|div|button|br|img|a|p|sup|sub|font|center|details|summary|iframe|u|b|i)\b[^<>\n]*>",
    re.IGNORECASE,
)
_MD_LINK = re.compile(r"\[([^\]\n]+)\]\((?:[^)\s\n]+)(?:\s+\"[^\"\n]*\")?\)")


def _link_text(match: re.Match[str]) -> str:
    target, label = match.group(1), match.group(2)
    if label is not None and label.strip():
        return label.strip()
    note, _, heading = target.partition("#")
    note, heading = note.strip(), heading.strip().lstrip("^")
    if note and heading:
        return f"{note} › {heading}"
    return note or heading


def readable(text: str) -> str:
    """`text` with wiki-links as their labels, embeds, images, comments and layout HTML dropped,
    callout markers and quote markers removed, Markdown links as their labels."""
    if "[" not in text and ">" not in text and "%%" not in text:
        return text
    out = _COMMENT.sub("", text)
    out = _HTML_TAG.sub("", out)
    out = _EMBED.sub("", out)
    out = _MD_IMAGE.sub("", out)
    out = _WIKILINK.sub(_link_text, out)
    out = _MD_LINK.sub(r"\1", out)
    out = _CALLOUT.sub(r"\1", out)
    return _QUOTE.sub("", out)
