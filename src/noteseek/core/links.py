"""Links between notes: finding them in a note's text and resolving them as Obsidian does.

Pure: text in, links out; paths in, a path out. The update stores every link a note makes
(`parse_links`, at index time); reading a note's links resolves them against the paths the index
holds at that moment (`resolve_link`), so a link to a note that appears later resolves then.

What counts as a link:
- `[[target]]`, `[[target|shown]]`, `[[target#Heading]]`, `[[target#^block]]`, and the same with
  `!` in front (an embed); inside a table the pipe is written `\\|`;
- Markdown links `[shown](target.md)` and `![alt](image.png)` to a vault file (no URL scheme,
  percent-escapes decoded, `<…>` allowed);
- in the frontmatter too (Obsidian lists a property's `"[[link]]"` among the backlinks);
- not inside fenced code blocks, inline code or `%% comments %%`.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from dataclasses import dataclass
from urllib.parse import unquote

__all__ = [
    "CONTEXT_CHARS",
    "MAX_LINKS_PER_NOTE",
    "ParsedLink",
    "file_key",
    "fold_name",
    "link_key",
    "parse_links",
    "resolve_link",
]

CONTEXT_CHARS = 300  # the most of a linking line kept as its context
# The most links kept of one note: each costs a row with its context line, so a note made of
# nothing but links must not grow the index past a bounded multiple of its size.
MAX_LINKS_PER_NOTE = 10_000

_WIKI = re.compile(r"(!?)\[\[([^\[\]\n]+?)\]\]")
# [shown](target) and ![alt](target "title"); the shown text may hold one level of brackets.
_MARKDOWN = re.compile(
    r"(!?)\[(?:[^\[\]\n]|\[[^\[\]\n]*\])*\]\(\s*(<[^>\n]+>|[^)\s]+)(?:\s+[\"'][^\n]*?[\"'])?\s*\)"
)
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")


@dataclass(frozen=True)
class ParsedLink:
    """One link as written: its line (1-based), target path and `#…` part, kind, and the line."""

    line: int
    target: str  # the link path as written, without `#heading` / `^block` or a shown text
    fragment: str  # "" or "#Heading" or "#^block"
    kind: str  # wiki | embed | markdown
    context: str  # the linking line, trimmed to CONTEXT_CHARS around the link
    key: str  # link_key(target): what the store looks backlinks up by


def fold_name(text: str) -> str:
    """A name folded for link matching: NFC and case-folded."""
    return unicodedata.normalize("NFC", text).casefold()


def file_key(path: str) -> str:
    """The name a file is linked by, folded: `Folder/My Note.md` → `my note`; other files keep
    their suffix (`scan.pdf`)."""
    name = path.rsplit("/", 1)[-1]
    if name.lower().endswith(".md"):
        name = name[:-3]
    return fold_name(name)


def link_key(target: str) -> str:
    """The file name a link path points at, folded the same way: `sub/My Note` → `my note`."""
    return file_key(target.strip().replace("\\", "/").rstrip("/"))


def _context(line: str, start: int, end: int) -> str:
    text = line.strip()
    if len(text) <= CONTEXT_CHARS:
        return text
    # Keep the link and as much around it as fits, cut at spaces.
    offset = len(line) - len(line.lstrip())
    start, end = max(start - offset, 0), max(end - offset, 0)
    room = max(CONTEXT_CHARS - (end - start), 0)
    left = max(start - room // 2, 0)
    right = min(left + CONTEXT_CHARS, len(text))
    left = max(right - CONTEXT_CHARS, 0)
    piece = text[left:right]
    return ("…" if left else "") + piece.strip() + ("…" if right < len(text) else "")


def _blank(match: re.Match[str]) -> str:
    return " " * len(match.group(0))


def _visible_lines(text: str) -> list[tuple[int, str, str]]:
    """(line number, line, the line with code and comments blanked) of lines outside code
    blocks. Blanking keeps columns, so a link's place in the line is its place in the original."""
    out: list[tuple[int, str, str]] = []
    fence: str | None = None
    in_comment = False
    for number, line in enumerate(text.splitlines(), start=1):
        # A fence needs ` or ~ after the indentation, and a closing one the opening's character:
        # other lines skip the pattern.
        if fence is not None:
            opened = _FENCE.match(line) if fence[0] in line else None
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
            continue
        opened = _FENCE.match(line) if line.lstrip()[:1] in ("`", "~") else None
        if opened and not in_comment:
            fence = opened.group(1)
            continue
        if not in_comment and "%%" not in line and "[" not in line:
            # No link can start here and no comment opens: the blanking below would not matter.
            out.append((number, line, line))
            continue
        visible = _INLINE_CODE.sub(_blank, line) if "`" in line else line
        # %% comments %% may span lines; what lies between the markers is no link.
        pieces = visible.split("%%")
        kept = []
        for i, piece in enumerate(pieces):
            if i > 0:
                in_comment = not in_comment
                kept.append("  ")
            kept.append(" " * len(piece) if in_comment else piece)
        out.append((number, line, "".join(kept)))
    return out


def _split_wiki(inner: str) -> tuple[str, str]:
    # `[[a\|b]]` in a table: the backslash escapes the pipe, it is not part of the target.
    target = re.split(r"\\?\|", inner, maxsplit=1)[0]
    path, _, fragment = target.partition("#")
    return path.strip(), ("#" + fragment.strip()) if fragment.strip() else ""


def _split_markdown(raw: str) -> tuple[str, str] | None:
    raw = raw[1:-1] if raw.startswith("<") and raw.endswith(">") else raw
    if not raw or _SCHEME.match(raw) or raw.startswith("//"):
        return None  # a URL (http:, mailto:, obsidian:, file:), not a vault file
    path, _, fragment = raw.partition("#")
    path = unquote(path).strip()
    if not path:
        return None  # `[x](#heading)`: a place in the same note
    return path, ("#" + unquote(fragment)) if fragment else ""


def parse_links(text: str) -> list[ParsedLink]:
    """Every link of a note's text (frontmatter included), in order of appearance."""
    links: list[ParsedLink] = []
    if "[" not in text:
        return links
    for number, line, visible in _visible_lines(text):
        if "[" not in visible:
            continue
        found: list[tuple[int, int, str, str, str]] = []
        for m in _WIKI.finditer(visible):
            path, fragment = _split_wiki(m.group(2))
            if path:  # `[[#Heading]]` points into the note itself
                found.append(
                    (m.start(), m.end(), path, fragment, "embed" if m.group(1) else "wiki")
                )
        # Markdown links outside the wiki links' spans (`[[a]](b)` is not a Markdown link).
        # Sorted, disjoint spans (finditer's order): one bisect per Markdown link, not a scan of
        # every wiki link of the line (a line of 100k links of each kind would be quadratic).
        starts = [s for s, *_ in found]
        ends = [e for _, e, *_ in found]
        for m in _MARKDOWN.finditer(visible):
            i = bisect_right(starts, m.start()) - 1
            if i >= 0 and m.start() < ends[i]:
                continue
            parts = _split_markdown(m.group(2))
            if parts is not None:
                found.append((m.start(), m.end(), parts[0], parts[1], "markdown"))
        for start, end, path, fragment, kind in sorted(found):
            context = _context(line, start, end)
            links.append(ParsedLink(number, path, fragment, kind, context, link_key(path)))
            if len(links) >= MAX_LINKS_PER_NOTE:
                return links
    return links


def _with_suffix(path: str) -> list[str]:
    folded = fold_name(path)
    return [folded] if folded.rsplit("/", 1)[-1].endswith(".md") else [folded + ".md", folded]


def _normalise(parts: list[str]) -> str | None:
    out: list[str] = []
    for part in parts:
        if part in ("", "."):
            continue
        if part == "..":
            if not out:
                return None  # above the vault root
            out.pop()
        else:
            out.append(part)
    return "/".join(out)


def resolve_link(
    target: str, source: str, candidates: list[str], *, aliased: list[str] | None = None
) -> str | None:
    """The vault path a link from `source` to `target` opens, or None (unresolved).

    `candidates` are the indexed paths whose `file_key` is the link's `link_key`. As Obsidian:
    a path relative to the source's folder (`./`, `../`) or from the vault root, matched without
    case; else a file of that name whose path ends with the link's folders, the one in the
    source's folder first, then the shortest path (the form Obsidian writes: the shortest path
    that is unique). `aliased`: notes with the target as an alias, used when no file matches.
    """
    wanted = target.strip().replace("\\", "/").lstrip("/")
    by_folded = {fold_name(p): p for p in candidates}
    folder = source.rsplit("/", 1)[0] if "/" in source else ""
    if wanted.startswith(("./", "../")):
        joined = _normalise([*folder.split("/"), *wanted.split("/")])
        for form in _with_suffix(joined) if joined else []:
            if form in by_folded:
                return by_folded[form]
        return None
    forms = _with_suffix(wanted)
    for form in forms:
        if form in by_folded:
            return by_folded[form]
    matching = [p for p in candidates if any(fold_name(p).endswith("/" + form) for form in forms)]
    if matching:
        source_folder = fold_name(folder)

        def rank(path: str) -> tuple[int, int, str]:
            here = path.rsplit("/", 1)[0] if "/" in path else ""
            return (0 if fold_name(here) == source_folder else 1, path.count("/"), path)

        return min(matching, key=rank)
    if aliased:
        return min(aliased, key=lambda p: (p.count("/"), p))
    return None
