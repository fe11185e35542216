"""The page's note preview: a note's Markdown rendered to sanitised HTML, its wiki-links made
links that open the linked note in the preview.

Rendered here rather than in the browser so the page stays free of script libraries: markdown-it-py
(CommonMark, tables, strikethrough) renders, nh3 (the ammonia sanitiser) then keeps only harmless
tags and attributes, so a note's own `<script>`, event handlers or `javascript:` links never reach
the page as markup (they are dropped; the page's Content-Security-Policy forbids inline script
besides). Both are kept, offline libraries of the `web` extra; nothing loads from a CDN.

A `[[Target#heading|label]]` whose target the index resolves becomes `<a href="#note=PATH">label</a>`
(the page opens PATH in the preview); an unresolved one stays its label;
an `![[embed]]` becomes a short `embed: name` line, since the page shows one note at a time.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from typing import TYPE_CHECKING
from urllib.parse import quote

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

__all__ = ["render_note"]

_FRONTMATTER = re.compile(r"\A---[ \t]*\n.*?\n(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.S)
_WIKI = re.compile(r"(!?)\[\[([^\]\n|]+?)(?:\|([^\]\n]*))?\]\]")
_FENCE = re.compile(r"^(```|~~~)", re.M)
# Tags a rendered note may keep: text structure, no media, forms or frames.
_TAGS = {
    "a", "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "em", "b", "i", "s", "del",
    "code", "pre", "kbd", "blockquote", "ul", "ol", "li", "table", "thead", "tbody", "tr", "th",
    "td", "span", "mark", "sub", "sup", "details", "summary",
}  # fmt: skip


@cache
def _markdown() -> MarkdownIt:
    from markdown_it import MarkdownIt

    # html=False: raw HTML in a note is shown as text, not parsed (the sanitiser is a second wall).
    return MarkdownIt("commonmark", {"html": False, "linkify": False}).enable(
        ["table", "strikethrough"]
    )


def _wiki_links(text: str, resolved: Mapping[str, str]) -> str:
    """The note's wiki-links and embeds as Markdown the renderer keeps (code blocks untouched)."""

    def link(match: re.Match[str]) -> str:
        embed, target, label = match.group(1), match.group(2).strip(), match.group(3)
        name = target.split("#", 1)[0].strip()
        shown = (label or target).strip().replace("[", "(").replace("]", ")")
        if embed:
            return f"*embed: {shown}*"
        path = resolved.get(target) or resolved.get(name)
        if path is None:
            return shown
        return f"[{shown}](#note={quote(path, safe='/')})"

    # Only outside fenced code: a code sample's [[…]] is code.
    parts = re.split(r"(^(?:```|~~~).*?^(?:```|~~~)[^\n]*$)", text, flags=re.M | re.S)
    return "".join(
        part if _FENCE.match(part) else _WIKI.sub(link, part) for part in parts
    )


def render_note(text: str, resolved: Mapping[str, str]) -> str:
    """Sanitised HTML of a note's text (its frontmatter left out); `resolved` maps each wiki-link
    target as written (and without its `#…` part) to the note path it opens."""
    import nh3

    body = _FRONTMATTER.sub("", text, count=1)
    html = _markdown().render(_wiki_links(body, resolved))
    return nh3.clean(
        html,
        tags=_TAGS,
        attributes={"a": {"href", "title"}, "code": {"class"}, "th": {"align"}, "td": {"align"}},
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer",
    )
