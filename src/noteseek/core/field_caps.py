"""How much of one file's metadata the index keeps: the caps on titles, aliases, tags and headings.

A note's title, aliases, type and tags describe the whole note, and search needs them beside
every chunk (they are BM25 fields of each chunk, and the embedded text starts with the title), so
whatever they hold is paid once per chunk. Without a cap a 140 KB frontmatter title over 200
short sections made a 70 MB index, and a 1.5 MB note a 1.9 GB one. Real titles are a line (the
longest in the development vaults has 104 characters, the longest section name 158: MDN), so the
caps below cut only text that is no title; the file is then indexed with a warning that names what
was cut (`noteseek status --files`). Measured: bench/index_bounds.py.

Pure: strings in, strings out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = [
    "FIELD_CHARS",
    "LIST_ITEMS",
    "NAME_CHARS",
    "FieldCaps",
    "cap_text",
]

# A title, an alias, a tag, a section heading, an author: one name.
NAME_CHARS = 300
# A whole field built from several names (title + aliases + file name; type + tags; the heading
# context a hit shows): what one chunk carries of its note.
FIELD_CHARS = 1_000
# Aliases and tags kept per note (a tag filter sees only these).
LIST_ITEMS = 100


def cap_text(text: str, limit: int) -> str:
    """`text` if it has at most `limit` characters, else its start cut at the last space before
    the limit (or at the limit, for a run without spaces)."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    cut = head.rfind(" ")
    return (head[:cut] if cut > limit // 2 else head).rstrip()


@dataclass
class FieldCaps:
    """Applies the caps to one file's fields and remembers what it cut, for the file's warning."""

    cuts: list[str] = field(default_factory=list)

    def name(self, what: str, text: str, limit: int = NAME_CHARS) -> str:
        """One name (a title, a heading), cut to `limit` characters."""
        kept = cap_text(text, limit)
        if len(kept) < len(text):
            self.cuts.append(f"{what} cut to {len(kept):,} of {len(text):,} characters")
        return kept

    def field(self, what: str, text: str) -> str:
        """A field of several names, cut to FIELD_CHARS."""
        return self.name(what, text, FIELD_CHARS)

    def items(self, what: str, values: Sequence[str]) -> list[str]:
        """The first LIST_ITEMS values, each cut to NAME_CHARS."""
        kept = list(values[:LIST_ITEMS])
        if len(values) > LIST_ITEMS:
            self.cuts.append(f"{what}: the first {LIST_ITEMS:,} of {len(values):,} kept")
        long = sum(1 for v in kept if len(v) > NAME_CHARS)
        if long:
            self.cuts.append(f"{what}: {long:,} cut to {NAME_CHARS:,} characters")
        return [cap_text(v, NAME_CHARS) for v in kept]

    def section(self, text: str) -> str:
        """A section name, cut to NAME_CHARS (counted once per file, however many chunks)."""
        kept = cap_text(text, NAME_CHARS)
        if len(kept) < len(text):
            note = f"section names cut to {NAME_CHARS:,} characters"
            if note not in self.cuts:
                self.cuts.append(note)
        return kept

    def warning(self) -> str | None:
        """What was cut, as one sentence for the file's warning; None if nothing was."""
        if not self.cuts:
            return None
        return "indexed with its metadata cut (" + "; ".join(self.cuts) + ")"
