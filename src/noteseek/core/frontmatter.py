"""Split YAML frontmatter off a note and read the fields the index uses. Pure: text in, values out."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any

__all__ = [
    "FrontmatterError",
    "NoteMeta",
    "ParsedNote",
    "parse_frontmatter",
    "split_frontmatter",
]


@cache
def _yaml() -> tuple[Any, Any]:
    """PyYAML and its loader, imported with the first block to parse (~15 ms): a run that reads no
    note (a no-op update, a deletion) imports this module through the chunker's options."""
    import yaml  # deferred: ~15 ms, only once a note has a frontmatter block

    # The C loader is ~10x faster; fall back where PyYAML was built without libyaml.
    return yaml, getattr(yaml, "CSafeLoader", yaml.SafeLoader)


# Frontmatter must start on the very first line; the closing fence may be `---` or `...`.
_OPEN = re.compile(r"\A---[ \t]*\r?\n")
_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*$", re.MULTILINE)
_TAG_SPLIT = re.compile(r"[,\s]+")


class FrontmatterError(ValueError):
    """The frontmatter block is not usable (bad YAML, not a mapping, never closed)."""


@dataclass(frozen=True)
class NoteMeta:
    """The frontmatter fields noteseek indexes."""

    title: str | None = None
    type: str | None = None
    tags: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class ParsedNote:
    """What `parse_frontmatter(text)` gave for exactly this `text`, handed on so a caller that
    parsed a note already (the indexer checks that its block parses) is not parsed twice: the
    YAML is most of the cost of reading a note's frontmatter."""

    text: str
    meta: NoteMeta
    body: str


def _as_strings(value: Any, *, split: bool) -> tuple[str, ...]:
    """Normalise a YAML scalar or list into a tuple of non-empty strings."""
    if value is None:
        return ()
    items: list[Any] = list(value) if isinstance(value, (list, tuple, set)) else [value]
    out: list[str] = []
    for item in items:
        if item is None or isinstance(item, (dict, list)):
            continue
        text = str(item).strip()
        parts = _TAG_SPLIT.split(text) if split else [text]
        for part in parts:
            part = part.strip().lstrip("#").strip() if split else part
            if part and part not in out:
                out.append(part)
    return tuple(out)


def _scalar(value: Any) -> str | None:
    if value is None or isinstance(value, (dict, list)):
        return None
    text = str(value).strip()
    return text or None


def split_frontmatter(text: str) -> tuple[str, str] | None:
    """The frontmatter block's YAML and the body after it; None when the note has no block.

    Raises FrontmatterError when a block starts but is never closed.
    """
    opened = _OPEN.match(text)
    if not opened:
        return None
    closing = _CLOSE.search(text, opened.end())
    if closing is None:
        raise FrontmatterError("frontmatter block starts with '---' but is never closed")
    return text[opened.end() : closing.start()], text[closing.end() :].lstrip("\r\n")


def parse_frontmatter(text: str) -> tuple[NoteMeta, str]:
    """Return the note's metadata and its body with the frontmatter removed.

    Raises FrontmatterError when a block starts but is invalid; the caller decides whether
    to index the note without metadata (the indexer does, and reports the problem).
    """
    split = split_frontmatter(text)
    if split is None:
        return NoteMeta(), text
    block, body = split
    yaml, loader = _yaml()
    try:
        data = yaml.load(block, Loader=loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 2})" if mark is not None else ""
        raise FrontmatterError(f"frontmatter is not valid YAML{where}") from None
    if data is None:
        return NoteMeta(), body
    if not isinstance(data, dict):
        raise FrontmatterError(f"frontmatter is a YAML {type(data).__name__}, not a mapping")
    tags = _as_strings(data.get("tags", data.get("tag")), split=True)
    aliases = _as_strings(data.get("aliases", data.get("alias")), split=False)
    meta = NoteMeta(
        title=_scalar(data.get("title")),
        type=_scalar(data.get("type")),
        tags=tags,
        aliases=aliases,
        raw=data,
    )
    return meta, body
