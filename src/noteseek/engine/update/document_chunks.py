"""A document's extraction result as rows to store: scrubbed chunks with their locations, the
file record with its outcome. No I/O: values in, values out.

One chunk per extracted `TextUnit` (the extraction already split long units, each part keeping
its location), not `chunk_note`: a unit's size and its place in the document are decided by
the document's own structure (page, slide, sheet rows). Everything that is text is scrubbed
before it is stored: the units (as one text, so a rule that needs a keyword elsewhere in the
document still fires), their sections, sheet names and page labels, and the metadata.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...core.chunker import SECTION_SEPARATOR, content_hash, embedding_text
from ...core.document_location import OUTCOME_LABELS
from ...core.field_caps import FieldCaps
from ...core.language import note_language
from ...core.note_dates import note_date
from ...core.query import name_key
from ...documents import ExtractionResult, Outcome, TextUnit
from ...secrets.scrubber import NO_SECRETS, Allowlist, KnownSecrets, scrub
from ...storage.records import ChunkRecord, FileRecord
from .stored_reads import MISSING, OCR_OFF

__all__ = ["DocumentRows", "document_rows", "document_stem", "failed_record"]



def _engine(result: ExtractionResult, read_by: str | None) -> str | None:
    if result.missing_package:
        return f"{MISSING}{result.missing_package}"
    if result.ocr_wanted:
        return f"{OCR_OFF}:{read_by}" if read_by else OCR_OFF
    return read_by

# Units are joined by this for one scrub and split again after: extraction removes NUL from
# every unit, and a rule that swallowed one (or a newline beside it) shows as a miscount.
_JOIN = "\n\x00\n"
# PDF producers put the file name in the title ("Binder1.pdf", "Microsoft Word - x.docx").
_FILE_NAME_TITLE = re.compile(
    r"(^microsoft (word|powerpoint|excel) - )|\.(pdf|docx?|pptx?|xlsx?|odt|ods|txt|tex|dvi|ps)$",
    re.IGNORECASE,
)
_SPACES = re.compile(r"\s+")
# Metadata fields that describe the document (the rest are dates and producing programs).
_DESCRIBING = ("subject", "keywords", "description", "category", "comments")


@dataclass(frozen=True)
class DocumentRows:
    """What one extracted document becomes: its record, chunks, the texts to embed, secrets."""

    record: FileRecord
    chunks: list[ChunkRecord]
    embed_texts: list[str]
    secrets: int


def document_stem(rel_path: str, kind: str) -> str:
    """The file name without its document suffix (`x.excalidraw.md` → `x`)."""
    name = rel_path.rsplit("/", 1)[-1]
    if kind == "excalidraw":
        return name[: -len(".excalidraw.md")] or name
    return name.rsplit(".", 1)[0] or name


def problem_text(outcome: Outcome, reason: str, shown_path: str) -> str:
    """`encrypted: is password-protected`: the outcome's name, then the reason without the path
    it starts with (status and the run summary name the file already)."""
    prefix = f"'{shown_path}' "
    bare = reason[len(prefix) :] if reason.startswith(prefix) else reason
    if outcome is Outcome.OK:
        return bare
    label = OUTCOME_LABELS[outcome.value]
    return f"{label}: {bare}" if bare else label


def failed_record(
    rel_path: str,
    *,
    kind: str,
    mtime_ns: int,
    size: int,
    content_hash_hex: str | None,
    result: ExtractionResult,
    shown_path: str,
    allow: Allowlist | None,
) -> FileRecord:
    """The row of a document whose extraction did not give text: skipped, with its outcome."""
    engine = _engine(result, None)
    reason = scrub(problem_text(result.outcome, result.reason, shown_path), allow=allow).text
    return FileRecord(
        path=rel_path,
        mtime_ns=mtime_ns,
        size=size,
        content_hash=content_hash_hex,
        title=None,
        status="skipped",
        problem=reason,
        kind=kind,
        outcome=result.outcome.value,
        engine=engine,
    )


def _clean_field(value: str | None) -> str:
    return _SPACES.sub(" ", (value or "").replace("\x00", " ")).strip()


def _scrub_units(
    units: tuple[TextUnit, ...], allow: Allowlist | None, known: KnownSecrets
) -> tuple[list[str], int, KnownSecrets]:
    """Every unit's text scrubbed as one document (see the module docstring); the values found
    (with ``known``) come back for the document's other fields."""
    joined = scrub(_JOIN.join(u.text for u in units), allow=allow, known=known)
    parts = joined.text.split(_JOIN)
    if len(parts) == len(units):
        return parts, sum(joined.counts.values()), joined.found
    # A redaction ran over a join: scrub unit by unit instead (never less than that is removed),
    # each with every value the whole document gave.
    results = [scrub(u.text, allow=allow, known=joined.found) for u in units]
    found = joined.found
    for r in results:
        found = found | r.found
    return [r.text for r in results], sum(sum(r.counts.values()) for r in results), found


def document_rows(
    rel_path: str,
    *,
    kind: str,
    mtime_ns: int,
    size: int,
    content_hash_hex: str,
    result: ExtractionResult,
    shown_path: str,
    file_names: list[str],
    allow: Allowlist | None,
) -> DocumentRows:
    """The rows of a document whose text came back (`result.ok`); `file_names` are the names it
    is known by (scrubbed), as for a note."""
    doc = result.document
    assert doc is not None
    meta = doc.metadata
    # A value found anywhere in the document goes from all of it: the units first (as one text),
    # then every field with those values known; a field with a value of its own (a secret in the
    # title only) has the units scrubbed again with it.
    texts, secrets, known = _scrub_units(doc.units, allow, NO_SECRETS)
    from_units = len(known)
    fields = [meta.title, meta.author, *(v for k, v in meta.fields if k.lower() in _DESCRIBING)]
    fields += [s for u in doc.units for s in (*u.section, u.location.page_label, u.location.sheet)]
    for value in fields:
        if value:
            known = scrub(_clean_field(value), allow=allow, known=known).found
    if len(known) > from_units:
        texts, secrets, known = _scrub_units(doc.units, allow, known)

    def clean(value: str | None) -> str:
        nonlocal secrets
        scrubbed = scrub(_clean_field(value), allow=allow, known=known)
        secrets += sum(scrubbed.counts.values())
        return scrubbed.text

    # Metadata is capped once per file, as a note's frontmatter is (core/field_caps.py): a PDF
    # with a 142 KB /Title over 200 pages must not store it 200 times.
    caps = FieldCaps()
    stem = caps.name("file name", clean(document_stem(rel_path, kind)))
    given = caps.name("title", clean(meta.title))
    title = given if given and not _FILE_NAME_TITLE.search(given) else stem
    author = caps.name("author", clean(meta.author))
    described = caps.items(
        "metadata fields", [clean(v) for k, v in meta.fields if k.lower() in _DESCRIBING]
    )
    chunks: list[ChunkRecord] = []
    embed_texts: list[str] = []
    context = caps.field("heading context", " | ".join(p for p in (title, kind, author) if p))
    for seq, (unit, text) in enumerate(zip(doc.units, texts)):
        where = unit.location
        section = SECTION_SEPARATOR.join(clean(s) for s in unit.section if s.strip())
        # A unit without headings is named by its place (`p. 12`) where it has one, as a note's
        # preamble is by the title.
        placed = where.page is not None or where.slide is not None or where.rows is not None
        section = caps.section(section or ("" if placed else title))
        embed = embedding_text(title, section, text)
        embed_texts.append(embed)
        chunks.append(
            ChunkRecord(
                seq=seq,
                section=section,
                text=text,
                content_hash=content_hash(embed),
                page=where.page,
                page_label=clean(where.page_label) or None,
                slide=where.slide,
                sheet=clean(where.sheet) if where.sheet is not None else None,
                row_first=where.rows[0] if where.rows else None,
                row_last=where.rows[1] if where.rows else None,
                # A redaction inside the repeated start changes it; then keep the repeat.
                overlap=unit.overlap if text.startswith(unit.text[: unit.overlap]) else 0,
            )
        )
    names = [title, *(scrub(n, allow=allow, known=known).text for n in file_names)]
    dated = note_date(document_stem(rel_path, kind), document=meta.fields, mtime_ns=mtime_ns)
    title_field = caps.field("title field", " ".join(dict.fromkeys(n for n in names if n)))
    tags_field = caps.field("tags field", " ".join(p for p in (kind, author, *described) if p))
    reason = problem_text(result.outcome, result.reason, shown_path) if result.reason else None
    warnings = [w for w in (clean(reason) if reason else None, caps.warning()) if w]
    record = FileRecord(
        path=rel_path,
        mtime_ns=mtime_ns,
        size=size,
        content_hash=content_hash_hex,
        title=title,
        status="warning" if warnings else "ok",
        problem="; ".join(warnings) or None,
        title_field=title_field,
        tags_field=tags_field,
        heading_context=context,
        names=tuple(k for k in (name_key(n) for n in names) if k),
        lang=note_language("\n".join(texts[:50])),
        secrets_scrubbed=secrets,  # status counts them as for a note (none of it is skipped)
        kind=kind,
        outcome=Outcome.OK.value,
        engine=_engine(result, doc.engine),
        date=dated.value,
        date_source=dated.source,
    )
    return DocumentRows(record, chunks, embed_texts, secrets)
