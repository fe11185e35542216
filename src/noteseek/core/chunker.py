"""Split a Markdown note into searchable sections. Pure and deterministic: text in, chunks out.

Rules (SPEC, reference design): frontmatter gives title/type/tags/aliases; the title is the frontmatter
`title`, else the first `# H1`, else the file name. Notes split at H2; a section over `max_chars` splits
again at H3, then at paragraph breaks. Link-list sections (Related, See Also, ...) are skipped (and
named in `ChunkedNote.skipped_sections`), and a `#` line inside a fenced code block is code, not a
heading. Only ATX headings (`## x`) split; setext underlines are left as text.

No word is lost: the reference design drops sections shorter than `min_chars`; here a short
section, its heading line included, is merged into the chunk before it (or, at the start of a note,
the one after it), as long as that stays within `max_chars`; short sections that do not fit start a
chunk of their own, which later short sections join. Only a skipped link section leaves text out.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass

from .frontmatter import FrontmatterError, NoteMeta, ParsedNote, parse_frontmatter

__all__ = [
    "DEFAULT_SKIP_SECTIONS",
    "ChunkOptions",
    "ChunkedNote",
    "NoteChunk",
    "chunk_note",
    "content_hash",
    "embedding_text",
    "prose_text",
    "scan_headings",
]

DEFAULT_SKIP_SECTIONS: tuple[str, ...] = (
    "related",
    "see also",
    "links",
    "references",
    "siehe auch",  # German vaults use the same link-list sections
)
SECTION_SEPARATOR = " › "

_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*))?$")
_CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+$")
_NEWLINES = re.compile(r"\r\n?")
_SKIP_NORMALISE = re.compile(r"[\s:#*_`]+")
# A line that is nothing but one inline code span: `du -sh {{path}}`.
_CODE_LINE = re.compile(r"^\s*`[^`\n]*`\s*$")
# First characters after the indentation: of a fence or a code line; of a heading or a fence.
_FENCE_CHARS = ("`", "~")
_HEADING_OR_FENCE_CHARS = ("#", "`", "~")


@dataclass(frozen=True)
class ChunkOptions:
    """Tunable chunking rules; the defaults are the reference design's."""

    max_chars: int = 2000
    min_chars: int = 30
    skip_sections: tuple[str, ...] = DEFAULT_SKIP_SECTIONS


@dataclass(frozen=True)
class NoteChunk:
    """One searchable section of a note."""

    seq: int
    section: str
    text: str
    heading_context: str


def prose_text(text: str) -> str:
    """A chunk's text without its code: fenced code blocks and lines that are one inline code span.

    The embedding model is a static model of natural language: a chunk vector is the mean of its
    token vectors, and code tokens (flags, placeholders, identifiers) pull that mean away from what
    the prose says (docs/ranking.md). Code stays in the keyword index, where identifiers match exactly.
    """
    kept: list[str] = []
    fence: str | None = None
    for line in text.split("\n"):
        if fence is not None:
            if fence[0] in line and _closes_fence(line, fence):
                fence = None
            continue
        # Only a line whose first non-blank character is ` or ~ can open a fence or be a code
        # line (the two patterns' first character): the rest are kept without trying either.
        if line.lstrip()[:1] not in _FENCE_CHARS:
            kept.append(line)
            continue
        opened = _opens_fence(line)
        if opened is not None:
            fence = opened
            continue
        if not _CODE_LINE.match(line):
            kept.append(line)
    return "\n".join(kept).strip("\n")


def embedding_text(title: str, section: str, text: str) -> str:
    """The text that is embedded: title and section give an isolated chunk its context, and the
    chunk's prose its meaning (its code is left out unless the chunk is nothing but code)."""
    # A document's chunk named by its place alone (a PDF page without bookmarks) has no section.
    head = title if section in (title, "") else f"{title}{SECTION_SEPARATOR}{section}"
    body = prose_text(text)
    return f"{head}\n\n{body if body.strip() else text}"


def content_hash(text: str) -> int:
    """Address of embedded content (64 bits of sha256): equal hashes mean a vector can be reused."""
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


@dataclass(frozen=True)
class ChunkedNote:
    """A note's metadata and its chunks, plus a problem that did not stop it from being indexed."""

    title: str
    meta: NoteMeta
    chunks: tuple[NoteChunk, ...]
    warning: str | None = None
    # Link-list sections left out of the chunks (their headings), for `status` to report.
    skipped_sections: tuple[str, ...] = ()


@dataclass
class _Heading:
    level: int
    text: str
    line: int


def _opens_fence(line: str) -> str | None:
    """The fence marker a line opens (CommonMark: ``` or ~~~, indented at most 3 spaces)."""
    opened = _FENCE_OPEN.match(line)
    if opened is None or (opened.group(1)[0] == "`" and "`" in opened.group(2)):
        return None
    return opened.group(1)


def _closes_fence(line: str, fence: str) -> bool:
    """Whether a line closes a fence: same character, at least as long, nothing after it."""
    stripped = line.strip()
    return (
        stripped.startswith(fence)
        and stripped.rstrip(fence[0]) == ""
        and len(line) - len(line.lstrip(" ")) <= 3
    )


def _heading_text(raw: str | None) -> str:
    text = (raw or "").strip()
    return _CLOSING_HASHES.sub("", text).strip()


def scan_headings(lines: list[str]) -> list[_Heading]:
    """ATX headings outside fenced code blocks."""
    found: list[_Heading] = []
    fence: str | None = None
    for number, line in enumerate(lines):
        if fence is not None:
            if fence[0] in line and _closes_fence(line, fence):
                fence = None
            continue
        if line.lstrip(" ")[:1] not in _HEADING_OR_FENCE_CHARS:
            continue  # neither a heading nor a fence can start here
        fence = _opens_fence(line)
        if fence is None and line.lstrip(" ").startswith("#"):
            heading = _ATX.match(line)
            if heading:
                found.append(
                    _Heading(len(heading.group(1)), _heading_text(heading.group(2)), number)
                )
    return found


def _blocks(text: str) -> list[str]:
    """Paragraph-level blocks: split at blank lines, but never inside a fenced code block."""
    lines = text.split("\n")
    blocks: list[str] = []
    current: list[str] = []
    fence: str | None = None
    for line in lines:
        if fence is None:
            fence = _opens_fence(line)
            if fence is None and not line.strip():
                if current:
                    blocks.append("\n".join(current))
                    current = []
                continue
        elif _closes_fence(line, fence):
            fence = None
        current.append(line)
    if current:
        blocks.append("\n".join(current))
    return blocks


def _hard_split(text: str, limit: int) -> Iterator[str]:
    """Split an oversized block at line breaks, then at spaces, then anywhere."""
    for line in text.split("\n"):
        while len(line) > limit:
            cut = line.rfind(" ", limit // 2, limit)
            cut = cut if cut > 0 else limit
            yield line[:cut]
            line = line[cut:].lstrip(" ")
        yield line


def _pack(text: str, limit: int) -> list[str]:
    """Greedily pack paragraphs into pieces of at most `limit` characters."""
    pieces: list[str] = []
    current = ""
    for block in _blocks(text):
        parts = [block] if len(block) <= limit else list(_hard_split(block, limit))
        for part in parts:
            joiner = "\n\n" if part is block else "\n"
            if current and len(current) + len(joiner) + len(part) > limit:
                pieces.append(current)
                current = ""
            current = f"{current}{joiner}{part}" if current else part
    if current:
        pieces.append(current)
    return pieces


def _heading_context(title: str, meta: NoteMeta) -> str:
    parts = [title, meta.type or "", ", ".join(meta.tags), ", ".join(meta.aliases)]
    while parts and not parts[-1]:
        parts.pop()
    return " | ".join(parts)


def _normalise_heading(text: str) -> str:
    return _SKIP_NORMALISE.sub(" ", text).strip().lower()


def chunk_note(
    text: str,
    *,
    file_stem: str,
    options: ChunkOptions | None = None,
    parsed: ParsedNote | None = None,
) -> ChunkedNote:
    """Chunk one note. Never raises on content: a broken frontmatter is reported in `warning`.
    `parsed`: the note's frontmatter parsed already, used when it was parsed from the very text
    this reads."""
    opts = options or ChunkOptions()
    text = _NEWLINES.sub("\n", text.lstrip("\ufeff")).replace("\x00", "")
    warning = None
    try:
        if parsed is not None and parsed.text == text:
            meta, body = parsed.meta, parsed.body
        else:
            meta, body = parse_frontmatter(text)
    except FrontmatterError as exc:
        # Keep the whole note searchable; only its metadata is lost.
        meta, body, warning = NoteMeta(), text, str(exc)

    lines = body.split("\n")
    headings = scan_headings(lines)
    first_h1 = next((h for h in headings if h.level == 1 and h.text), None)
    title = meta.title or (first_h1.text if first_h1 else None) or file_stem
    if first_h1 is not None and first_h1.text == title:
        # The title is stored in the heading context, not repeated; an H1 under a frontmatter
        # title is text of its own and stays.
        lines[first_h1.line] = ""
    context = _heading_context(title, meta)
    skip = {_normalise_heading(s) for s in opts.skip_sections}

    def text_of(first: int, end: int) -> str:
        return "\n".join(lines[first:end]).strip("\n")

    # Top-level sections: the preamble, then one per H2 (a later H1 also starts a section).
    sections: list[tuple[str, int, int]] = []  # (name, first body line, end line)
    start, name = 0, title
    for heading in headings:
        if heading.level <= 2 and heading is not first_h1:
            sections.append((name, start, heading.line))
            start, name = heading.line + 1, heading.text or title
    sections.append((name, start, len(lines)))

    h3_lines = {h.line: h.text for h in headings if h.level == 3}
    pieces: list[_Piece] = []
    skipped: list[str] = []
    for name, first, end in sections:
        own_heading = lines[first - 1].strip() if first > 0 else ""  # the section's heading line
        if name != title and _normalise_heading(name) in skip:
            skipped.append(name)
            continue
        section_text = text_of(first, end)
        if len(section_text) <= opts.max_chars:
            pieces.append(_Piece(name, section_text, own_heading))
            continue
        # Too long: split at H3, then pack paragraphs.
        sub_start, sub_name, sub_heading = first, name, own_heading
        for n in range(first, end + 1):
            if n == end or n in h3_lines:
                packed = _pack(text_of(sub_start, n), opts.max_chars)
                pieces.extend(
                    _Piece(sub_name, p, sub_heading if k == 0 else "") for k, p in enumerate(packed)
                )
                if not packed:
                    pieces.append(_Piece(sub_name, "", sub_heading))  # an empty H3 keeps its words
                if n < end:
                    label = h3_lines[n]
                    sub_name = f"{name}{SECTION_SEPARATOR}{label}" if label else name
                    sub_start, sub_heading = n + 1, lines[n].strip()

    kept = _merge_short(pieces, min_chars=opts.min_chars, max_chars=opts.max_chars)
    if not kept and first_h1 is not None and first_h1.text == title:
        # A note that is only its `# Title`: the heading is all its text, and must stay findable.
        kept = [(title, f"# {title}")]
    chunks = tuple(
        NoteChunk(seq=i, section=n, text=t, heading_context=context)
        for i, (n, t) in enumerate(kept)
    )
    return ChunkedNote(
        title=title, meta=meta, chunks=chunks, warning=warning, skipped_sections=tuple(skipped)
    )


@dataclass(frozen=True)
class _Piece:
    section: str
    text: str
    heading: str  # the Markdown heading line that opened it, "" for the preamble and fragments


def _merge_short(pieces: list[_Piece], *, min_chars: int, max_chars: int) -> list[tuple[str, str]]:
    """(section, text) chunks where no piece is dropped: short ones join a neighbour (see module doc)."""
    out: list[list[str]] = []  # [section, text]
    short_only: list[bool] = []  # the chunk holds nothing but merged short pieces so far
    for piece in pieces:
        body = piece.text.strip("\n")
        if body.strip() and len(body.strip()) >= min_chars:
            if out and short_only[-1] and len(out[-1][1]) + 2 + len(body) <= max_chars:
                # Short pieces before it (a note's tiny preamble, a run of headings) lead into it.
                out[-1] = [piece.section, f"{out[-1][1]}\n\n{body}"]
                short_only[-1] = False
            else:
                out.append([piece.section, body])
                short_only.append(False)
            continue
        # Short or empty: keep its heading line with it, so the heading's words stay searchable.
        merged = "\n".join(part for part in (piece.heading, body) if part.strip())
        if not merged.strip():
            continue  # nothing but blank lines
        if out and len(out[-1][1]) + 2 + len(merged) <= max_chars:
            out[-1][1] = f"{out[-1][1]}\n\n{merged}"
        else:
            out.append([piece.section, merged])
            short_only.append(True)
    return [(section, text) for section, text in out]
