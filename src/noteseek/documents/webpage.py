"""HTML with selectolax (the Lexbor HTML5 parser): headings open sections; scripts and styles go.

Measured on 652 real pages (gnuplot's HTML manual, bench/documents_libraries.py, three runs on a
shared machine): selectolax 17-82 MB/s, lxml.html 3.3-26 MB/s, the standard library's html.parser
1.5-7.8 MB/s, the same words within 1 %. lxml comes with python-docx anyway; selectolax costs 8 MB
installed for 2.6-13x lxml's speed and a parser that builds the tree as browsers do (HTML5).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .encoding import decode_text
from .errors import DocumentTooLargeError
from .formats import library_version, require
from .model import DocumentMetadata, ExtractedDocument, ExtractionLimits, TextUnit

__all__ = ["extract_html"]

_DROP = frozenset(
    {"script", "style", "noscript", "template", "head", "svg", "math", "iframe", "object"}
)
_HEADINGS = {f"h{i}": i for i in range(1, 7)}
_BLOCKS = frozenset(
    {
        "p",
        "div",
        "br",
        "li",
        "ul",
        "ol",
        "tr",
        "table",
        "section",
        "article",
        "header",
        "footer",
        "blockquote",
        "pre",
        "dd",
        "dt",
        "dl",
        "main",
        "nav",
        "aside",
        "figure",
        "figcaption",
        "hr",
        "form",
        "fieldset",
        "address",
        "details",
        "summary",
        "caption",
        "thead",
        "tbody",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
    }
)
_CELLS = frozenset({"td", "th"})
_META = ("author", "description", "keywords")
# Lexbor's tree building is quadratic in nesting depth (measured: 20,000 nested <div>s parse in
# 1.7 s, 100,000 in 45 s), so a page nested deeper than any real one is refused before parsing.
# Only elements that never close implicitly are counted, so old HTML with unclosed <p> passes.
_NESTING = re.compile(
    rb"<(/?)(div|span|section|article|blockquote|table|ul|ol|dl|main|aside|nav)\b", re.I
)
_MAX_DEPTH = 5000


def _check_depth(data: bytes) -> None:
    depth = 0
    for match in _NESTING.finditer(data):
        depth += -1 if match.group(1) else 1
        if depth > _MAX_DEPTH:
            raise DocumentTooLargeError(f"nests elements more than {_MAX_DEPTH:,} levels deep")


def _metadata(tree: Any) -> DocumentMetadata:
    fields: list[tuple[str, str]] = []
    title_node = tree.css_first("title")
    if title_node is not None:
        title = " ".join(title_node.text(deep=True).split())
        if title:
            fields.append(("title", title))
    for node in tree.css("meta[name]"):
        name = (node.attributes.get("name") or "").lower()
        content = " ".join((node.attributes.get("content") or "").split())
        if name in _META and content:
            fields.append((name, content))
    values = dict(fields)
    return DocumentMetadata(
        title=values.get("title"), author=values.get("author"), fields=tuple(fields)
    )


def extract_html(path: Path, limits: ExtractionLimits) -> ExtractedDocument:
    """Text in document order, one unit per heading section, breadcrumb = the headings above."""
    lexbor = require("selectolax.lexbor", what="HTML files")
    data = path.read_bytes()
    _check_depth(data)
    text, _encoding = decode_text(data, html=True)
    tree = lexbor.LexborHTMLParser(text)
    metadata = _metadata(tree)
    root = tree.body or tree.root
    units: list[TextUnit] = []
    stack: list[tuple[int, str]] = []
    buffer: list[str] = []

    def flush() -> None:
        body = "\n".join(" ".join(line.split()) for line in "".join(buffer).split("\n"))
        body = "\n".join(
            line.removesuffix(" |").removesuffix("|").rstrip() for line in body.split("\n") if line
        )
        if body:
            units.append(TextUnit(body, tuple(t for _, t in stack)))
        buffer.clear()

    # An explicit stack, not recursion: hostile pages nest thousands of elements deep.
    todo: list[Any] = [root] if root is not None else []
    while todo:
        node = todo.pop()
        if isinstance(node, str):
            buffer.append(node)
            continue
        tag = node.tag
        if tag == "-text":
            buffer.append(node.text_content or "")
            continue
        if tag in _DROP or tag.startswith("-"):
            continue
        if tag in _HEADINGS:
            heading = " ".join(node.text(deep=True).split())
            if heading:
                flush()
                level = _HEADINGS[tag]
                while stack and stack[-1][0] >= level:
                    stack.pop()
                stack.append((level, heading))
                buffer.append(heading + "\n")
                continue
        children = list(node.iter(include_text=True))
        if tag in _BLOCKS:
            todo.append("\n")
        elif tag in _CELLS:
            todo.append(" | ")
        todo.extend(reversed(children))
        if tag in _BLOCKS:
            buffer.append("\n")
    flush()
    return ExtractedDocument(
        kind="html", engine=library_version("selectolax"), units=tuple(units), metadata=metadata
    )
