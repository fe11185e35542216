"""Phase 3 of an update, per note: read, scrub, chunk and describe one note for storage (no I/O
but the read)."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from ...core.chunker import chunk_note, content_hash, embedding_text
from ...core.field_caps import FieldCaps
from ...core.frontmatter import (
    FrontmatterError,
    ParsedNote,
    parse_frontmatter,
    split_frontmatter,
)
from ...core.inline_tags import inline_tags
from ...core.language import note_language
from ...core.links import fold_name, parse_links
from ...core.note_dates import frontmatter_date, note_date
from ...core.query import name_key, tag_key
from ...secrets.scrubber import NO_SECRETS, Allowlist, KnownSecrets, ScrubResult, scrub
from ...storage.records import ChunkRecord, FileRecord, FileState
from ..vault_walk import NoteFile, decode_note, read_note
from .options import IndexOptions

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["Prepared", "Skip", "file_names", "prepare_note"]

log = logging.getLogger("noteseek.indexer")
# Rounds of scrubbing a note with the values its fields revealed; the second finds nothing new
# in practice (each round must find a new value to go on), the cap bounds a hostile note.
_MAX_ROUNDS = 4


@dataclass
class Prepared:
    record: FileRecord
    chunks: list[ChunkRecord]
    embed_texts: list[str]
    is_new: bool
    secrets: int
    ocr_pages: int = 0  # documents: pages (an image is one) whose text OCR read in this run
    ocr_reused: bool = False  # an image whose OCR text was taken from its copy under another path
    # int8 vectors of the chunks, when a worker process embedded them (workers.py); else the
    # writer embeds the batch, reusing stored vectors by content hash.
    vectors: npt.NDArray[np.int8] | None = None


def file_names(
    rel_path: str,
    allow: Allowlist | None = None,
    *,
    stem: str | None = None,
    known: KnownSecrets | None = None,
) -> list[str]:
    """Names a file is known by: its stem, and its folder's name for `index.md` / `README.md`
    (and `index.html`); `stem` when the file name's suffix is longer than one dot. `known`:
    values found in the file's text, removed from its names too."""
    parts = rel_path.split("/")
    stem = stem if stem is not None else parts[-1].rsplit(".", 1)[0]
    if stem.lower() in ("index", "readme", "_index"):
        # `files/en-us/web/api/fetch_api/index.md` is known as `fetch_api`, not as `index`.
        names = [parts[-2]] if len(parts) > 1 else []
    else:
        names = [stem]
    return [
        scrub(n, allow=allow, known=known).text.replace("_", " ").replace("-", " ") for n in names
    ]


@dataclass(frozen=True)
class Skip:
    """Why a note is not indexed; `recheck`: look again next run even if the file is unchanged."""

    reason: str
    recheck: bool = False


def parsable_frontmatter(
    scrubbed: str, raw: str, clean: Callable[[str], str]
) -> tuple[str, ParsedNote | None]:
    """`scrubbed` with a frontmatter block that parses, when scrubbing broke a valid one, and
    its parse when there is one to hand on to the chunker.

    A marker where YAML reads structure (a token as a key, `ghp_…: x`, becomes a list there; one
    after a backslash in a quoted string is a bad escape) made valid frontmatter invalid: the
    note lost its title, tags, aliases and date, with a warning blaming the user's YAML. Then
    the fields the index reads are taken from the raw note's YAML, each passed to `clean`, and
    written as plain YAML; the rest of a block is never stored anyway.
    """
    # As the chunker reads a note: no byte-order mark, `\n` line ends.
    scrubbed, raw = (t.lstrip("\ufeff").replace("\r\n", "\n") for t in (scrubbed, raw))
    split = None
    try:
        split = split_frontmatter(scrubbed)
        if split is None:
            return scrubbed, None
        meta, body = parse_frontmatter(scrubbed)
        return scrubbed, ParsedNote(scrubbed, meta, body)
    except FrontmatterError:
        if split is None:  # never closed: the raw note's is not either
            return scrubbed, None
    try:
        meta, _ = parse_frontmatter(raw)
    except FrontmatterError:  # the note's own YAML is broken: its warning stands
        return scrubbed, None
    fields: dict[str, object] = {}
    if meta.title:
        fields["title"] = clean(meta.title)
    if meta.type:
        fields["type"] = clean(meta.type)
    if meta.tags:
        fields["tags"] = [clean(tag) for tag in meta.tags]
    if meta.aliases:
        fields["aliases"] = [clean(alias) for alias in meta.aliases]
    date = frontmatter_date(meta.raw)
    if date:
        fields["date"] = date
    block = yaml.safe_dump(fields, allow_unicode=True, sort_keys=False) if fields else ""
    return f"---\n{block}---\n{split[1]}", None


def prepare_note(
    note: NoteFile, root: Path, old: FileState | None, options: IndexOptions, force: bool
) -> Prepared | Skip | None:
    """Read and chunk one note. Returns None if unchanged, a Skip if it must be skipped.

    A value the scrubber finds anywhere in the note is removed from everything stored for it:
    the whole text is scrubbed first (its values go from every other place in the text), then
    every field parsed from it (title, aliases, tags, type, headings, the file's names) with
    those values known. A field that reveals a value of its own (YAML escapes can hide one
    from the raw-text pass) has the whole note scrubbed and chunked again with it.
    """
    found = NO_SECRETS

    def clean(text: str) -> ScrubResult:
        nonlocal found
        result = scrub(text, allow=options.allow, known=found)
        found = result.found
        return result

    raw = read_note(note, root, max_bytes=options.max_file_bytes)
    if raw.data is None:
        return Skip(raw.problem or "unreadable", recheck=raw.recheck)
    data = raw.data
    file_hash = hashlib.sha256(data).hexdigest()
    if not force and old is not None and old.content_hash == file_hash and old.status != "skipped":
        return None
    decoded = decode_note(data)
    if decoded.text is None:
        return Skip(decoded.problem or "unreadable")
    stem = note.rel_path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    for _ in range(_MAX_ROUNDS):
        scrubbed = clean(decoded.text)
        from_text = len(found)
        # After `from_text`: a field scrubbed here that reveals a value makes another round.
        readable, parsed = parsable_frontmatter(
            scrubbed.text, decoded.text, lambda t: clean(t).text
        )
        note_chunks = chunk_note(
            readable, file_stem=clean(stem).text, options=options.chunking, parsed=parsed
        )
        # Chunk text and sections are cut from already-scrubbed text; title and context come from
        # parsed YAML (escapes resolved), so they pass the scrubber once more. Each is scrubbed
        # and capped once per note, not once per chunk (core/field_caps.py: a note-wide field is
        # paid for by every chunk).
        caps = FieldCaps()
        meta = note_chunks.meta
        title = caps.name("title", clean(note_chunks.title).text)
        aliases = caps.items("aliases", [clean(a).text for a in meta.aliases])
        tags = caps.items("tags", [clean(t).text for t in meta.tags])
        # Inline `#tags` filter like frontmatter ones; BM25 already reads them in the text, so
        # they stay out of the tags field (core/inline_tags.py).
        inline = caps.items("inline tags", inline_tags(scrubbed.text))
        context = ""
        if note_chunks.chunks:
            context = caps.field(
                "heading context", clean(note_chunks.chunks[0].heading_context).text
            )
        chunks: list[ChunkRecord] = []
        texts: list[str] = []
        for chunk in note_chunks.chunks:
            section = caps.section(chunk.section)
            embed_text = embedding_text(title, section, chunk.text)
            texts.append(embed_text)
            chunks.append(
                ChunkRecord(
                    seq=chunk.seq,
                    section=section,
                    text=chunk.text,
                    content_hash=content_hash(embed_text),
                )
            )
        tags_field = caps.field(
            "tags field", clean(" ".join([meta.type or "", *tags]).strip()).text
        )
        names_of_file = file_names(note.rel_path, options.allow, known=found)
        if len(found) == from_text:
            break  # no field held a value the text did not: everything is scrubbed with all
    names = [title, *aliases, *names_of_file]
    title_field = caps.field("title field", " ".join(names))
    warnings = [w for w in (decoded.warning, note_chunks.warning, caps.warning()) if w]
    if scrubbed.counts:
        summary = ", ".join(f"{name} x{n}" for name, n in sorted(scrubbed.counts.items()))
        log.info(
            "scrubbed %d secret(s) from %s: %s",
            sum(scrubbed.counts.values()),
            note.rel_path,
            summary,
        )
    dated = note_date(stem, frontmatter=meta.raw, mtime_ns=raw.mtime_ns)
    record = FileRecord(
        path=note.rel_path,
        # The stat of the bytes actually read: the file may have changed since it was listed.
        mtime_ns=raw.mtime_ns,
        size=raw.size,
        content_hash=file_hash,
        title=title,
        status="warning" if warnings else "ok",
        problem="; ".join(warnings) or None,
        title_field=title_field,
        tags_field=tags_field,
        heading_context=context,
        names=tuple(k for k in (name_key(n) for n in names) if k),
        tags=tuple(dict.fromkeys(k for k in (tag_key(t) for t in (*tags, *inline)) if k)),
        lang=note_language(scrubbed.text),
        skipped_sections=len(note_chunks.skipped_sections),
        secrets_scrubbed=sum(scrubbed.counts.values()),
        date=dated.value,
        date_source=dated.source,
        # From the scrubbed text: a linking line shown as context holds no secret.
        links=tuple(parse_links(scrubbed.text)),
        # The capped aliases (core/field_caps.py): 2,000 aliases must not grow the alias table.
        aliases=tuple(k for k in (fold_name(a.strip()) for a in aliases) if k),
    )
    return Prepared(record, chunks, texts, old is None, sum(scrubbed.counts.values()))
