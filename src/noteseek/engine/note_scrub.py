"""A note's text scrubbed as the indexer scrubs it: with the values its frontmatter fields reveal.

The raw-text pass cannot see a value a YAML escape hides (``title: "pass\\x77ord: x"``); the parsed
field shows it, and then it must go from the whole text too (the same value written plainly in the
body). `read_note` uses this so an agent reading a note sees what the index stored.
"""

from __future__ import annotations

from ..core.frontmatter import FrontmatterError, parse_frontmatter
from ..secrets.scrubber import Allowlist, ScrubResult, scrub

__all__ = ["scrub_note"]

# Each round must reveal a new value to go on; the cap bounds a hostile note.
_MAX_ROUNDS = 4


def scrub_note(text: str, *, allow: Allowlist | None = None) -> ScrubResult:
    """``text`` scrubbed, again with every value found in its parsed title, type, tags, aliases."""
    result = scrub(text, allow=allow)
    for _ in range(_MAX_ROUNDS):
        try:
            meta, _body = parse_frontmatter(result.text)
        except FrontmatterError:
            return result
        known = result.found
        for value in (meta.title, meta.type, *meta.tags, *meta.aliases):
            if value:
                known = scrub(value, allow=allow, known=known).found
        if len(known) == len(result.found):
            return result
        result = scrub(text, allow=allow, known=known)
    return result
