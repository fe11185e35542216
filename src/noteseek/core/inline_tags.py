"""Obsidian's inline tags: `#garden` or `#project/alpha` in a note's text. Pure.

Obsidian counts a `#` word in the text as a tag as much as one in the frontmatter's `tags:`, and
its users filter by both. A tag is `#` after whitespace or at a line's start, then letters,
digits, `_`, `-` and `/` with at least one that is not a digit (`#2024` is not a tag); a
heading's `# ` has a space and is not one; fenced code, inline code and the frontmatter are left
out; a URL's `page#anchor` has no whitespace before its `#`. The text itself is indexed as it
is, so BM25 matches the word already: these tags serve the tag filters and listings only.
"""

from __future__ import annotations

import re

__all__ = ["inline_tags"]

_TAG = re.compile(r"(?:^|(?<=\s))#([\w/-]+)")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_INLINE_CODE = re.compile(r"(`+).+?\1")


def inline_tags(text: str) -> list[str]:
    """The inline tags of a note's Markdown, without `#`, in order of first use, each once."""
    lines = text.split("\n")
    start = 0
    if lines and lines[0].strip() == "---":
        # The frontmatter is YAML, whose tags the frontmatter parser reads.
        end = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)
        start = end + 1 if end is not None else 0
    found: dict[str, None] = {}
    fence: str | None = None
    for line in lines[start:]:
        if fence is not None:  # only a line with the fence's character can close it
            opened = _FENCE.match(line) if fence[0] in line else None
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
            continue
        # Only ` or ~ after the indentation can open a fence.
        opened = _FENCE.match(line) if line.lstrip(" ")[:1] in ("`", "~") else None
        if opened:
            fence = opened.group(1)
            continue
        if "#" not in line:
            continue
        for match in _TAG.finditer(_INLINE_CODE.sub(" ", line)):
            tag = match.group(1).strip("/")
            if tag and not tag.replace("/", "").replace("-", "").replace("_", "").isdigit():
                found.setdefault(tag, None)
    return list(found)
