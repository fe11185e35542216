"""Countable facts about an item's text, the raw material of the sub-scores. Pure: text in, values out."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

__all__ = ["TextFeatures", "shingles", "source_host", "text_features"]

_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_WORD = re.compile(r"[^\W_]+(?:['’.-][^\W_]+)*", re.UNICODE)
_URL = re.compile(r"https?://\S+|www\.\S+")
_MD_LINK = re.compile(r"!?\[([^\]]*)\]\(([^)\s]*)(?:\s+\"[^\"]*\")?\)")
_WIKI_LINK = re.compile(r"!?\[\[([^\]|#]*)(?:[#|][^\]]*)?\]\]")
_LIST_MARK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_STEP = re.compile(r"^\s*\d+[.)]\s+\S")
_CHECKBOX = re.compile(r"^\s*[-*+]\s+\[[ xX]\]\s+")
_SHELL = re.compile(r"^\s*(?:\$|#|>|PS>)\s+\S")
_INLINE_CODE = re.compile(r"`[^`\n]+`")
_FOOTNOTE = re.compile(r"\[\^[^\]]+\]:")
_DOI = re.compile(r"\b(?:doi:\s*10\.\d{4,}|10\.\d{4,}/\S+|arxiv:\s*\d{4}\.\d{4,})", re.IGNORECASE)
_CITATION_HEADING = re.compile(
    r"^#{1,6}\s*(?:references|sources|citations|bibliography|further reading|see also)\b",
    re.IGNORECASE,
)
_DECISION = re.compile(
    r"^\s*(?:[-*+]\s+)?(?:\*\*)?(?:decision|decided|todo|action item|next steps?|do not|don't|"
    r"always|never|must|should)\b",
    re.IGNORECASE,
)
# Lines that begin with an instruction: the shape of a how-to, in English.
_IMPERATIVE = re.compile(
    r"^\s*(?:[-*+]\s+|\d+[.)]\s+)?(?:add|install|run|create|set|open|use|configure|enable|"
    r"disable|remove|delete|replace|call|check|make|copy|click|select|choose|type|start|stop|"
    r"restart|update|upgrade|import|export|define|write|edit|go|navigate|download|build|deploy|"
    r"test|verify|ensure|avoid|prefer|try|pass|return|rename|move|save)\b",
    re.IGNORECASE,
)
# Web-page furniture that a clipper drags along: not content.
_BOILERPLATE = re.compile(
    r"\b(?:cookies?|subscribe|newsletter|all rights reserved|privacy policy|terms of "
    r"(?:use|service)|sign (?:in|up)|log ?in|share (?:this|on)|follow us|lorem ipsum|"
    r"advertisement|sponsored|click here|accept all|skip to (?:main )?content|back to top|"
    r"read more|related posts|leave a (?:comment|reply)|copyright|©|powered by|"
    r"table of contents|previous post|next post|you may also like|unsubscribe)\b",
    re.IGNORECASE,
)
_AUTHOR_KEYS = ("author", "authors", "by", "creator", "byline")
_SOURCE_KEYS = ("source", "url", "link", "source_url", "canonical", "origin")


@dataclass(frozen=True)
class TextFeatures:
    """What the scores are computed from; every field is a count or a share."""

    words: int  # prose and code words, links reduced to their anchor text, bare URLs left out
    lines: int  # non-empty lines
    code_blocks: int
    shell_lines: int  # `$ cmd` lines inside code blocks
    steps: int  # numbered list items
    checkboxes: int
    imperative_lines: int
    decision_lines: int
    inline_code: int
    link_lines: int  # non-empty lines that are nothing but links (a link dump)
    links: int
    boilerplate_lines: int
    repeated_lines: int  # non-empty lines that already occurred earlier in the item
    citations: int  # footnote definitions, DOIs, links under a References/Sources heading
    author: str | None
    source: str | None  # URL or host from the frontmatter

    @property
    def link_share(self) -> float:
        """Share of non-empty lines that are bare links."""
        return self.link_lines / self.lines if self.lines else 0.0

    @property
    def boilerplate_share(self) -> float:
        """Share of non-empty lines that are page furniture or repeats."""
        if not self.lines:
            return 0.0
        return min(1.0, (self.boilerplate_lines + self.repeated_lines) / self.lines)


def _first_string(meta: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = meta.get(key)
        if isinstance(value, list):
            value = next((v for v in value if isinstance(v, (str, dict))), None)
        if isinstance(value, dict):
            value = value.get("name") or value.get("url")
        if isinstance(value, (str, int, float)) and str(value).strip():
            return str(value).strip()
    return None


def _is_link_line(line: str) -> bool:
    rest = _LIST_MARK.sub("", line, count=1)
    rest = _MD_LINK.sub("", rest)
    rest = _WIKI_LINK.sub("", rest)
    rest = _URL.sub("", rest)
    # What is left besides the links is punctuation or a word or two ("- PDF:")
    return len(_WORD.findall(rest)) <= 2 and rest != line


def text_features(body: str, meta: dict[str, Any] | None = None) -> TextFeatures:
    """Count the features of an item's body (frontmatter already split off into `meta`)."""
    meta = meta or {}
    in_code = False
    counts: Counter[str] = Counter()
    seen: set[str] = set()
    words = 0
    under_citations = False
    for raw in body.split("\n"):
        line = raw.rstrip()
        if _FENCE.match(line):
            if not in_code:
                counts["code_blocks"] += 1
            in_code = not in_code
            continue
        if not line.strip():
            continue
        counts["lines"] += 1
        key = " ".join(line.split()).lower()
        if key in seen and len(key) > 3:
            counts["repeated"] += 1
        seen.add(key)
        if in_code:
            words += len(_WORD.findall(line))
            counts["shell"] += bool(_SHELL.match(line))
            continue
        if line.lstrip().startswith("#"):
            under_citations = bool(_CITATION_HEADING.match(line.lstrip()))
        links = (
            len(_MD_LINK.findall(line)) + len(_WIKI_LINK.findall(line)) + len(_URL.findall(line))
        )
        counts["links"] += links
        if under_citations:
            counts["citations"] += links
        if links and _is_link_line(line):
            counts["link_lines"] += 1
        prose = _MD_LINK.sub(r"\1", line)
        prose = _WIKI_LINK.sub(r"\1", prose)
        prose = _URL.sub(" ", prose)
        words += len(_WORD.findall(prose))
        counts["steps"] += bool(_STEP.match(line))
        counts["checkboxes"] += bool(_CHECKBOX.match(line))
        counts["imperative"] += bool(_IMPERATIVE.match(line))
        counts["decision"] += bool(_DECISION.match(line))
        counts["inline_code"] += len(_INLINE_CODE.findall(line))
        counts["boilerplate"] += bool(_BOILERPLATE.search(line)) and len(line) < 200
        counts["citations"] += len(_FOOTNOTE.findall(line)) + len(_DOI.findall(line))
    return TextFeatures(
        words=words,
        lines=counts["lines"],
        code_blocks=counts["code_blocks"],
        shell_lines=counts["shell"],
        steps=counts["steps"],
        checkboxes=counts["checkboxes"],
        imperative_lines=counts["imperative"],
        decision_lines=counts["decision"],
        inline_code=counts["inline_code"],
        link_lines=counts["link_lines"],
        links=counts["links"],
        boilerplate_lines=counts["boilerplate"],
        repeated_lines=counts["repeated"],
        citations=counts["citations"],
        author=_first_string(meta, _AUTHOR_KEYS),
        source=_first_string(meta, _SOURCE_KEYS),
    )


def source_host(source: str | None) -> str | None:
    """The host name of a source URL (`https://www.x.org/a` -> `x.org`), or None."""
    if not source:
        return None
    text = source.strip()
    if "://" not in text:
        text = "//" + text
    try:
        host = urlsplit(text).hostname
    except ValueError:
        return None
    if not host or "." not in host:
        return None
    return host.removeprefix("www.")


def shingles(text: str, size: int = 5) -> frozenset[int]:
    """Hashed word `size`-grams of a text (lower-cased), for near-duplicate tests."""
    tokens = [t.lower() for t in _WORD.findall(text)]
    if len(tokens) < size:
        return frozenset()
    return frozenset(hash(tuple(tokens[i : i + size])) for i in range(len(tokens) - size + 1))
