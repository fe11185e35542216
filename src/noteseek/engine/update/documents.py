"""Phase 3 of an update, for documents: hash each changed document here (never parse it here),
extract those whose content changed in one `ExtractionPool` per run, opened only when there is
one, and describe each for storage.

The indexer reads a document's bytes only to hash them, opened as a note is (`open_regular_file`:
the target must resolve inside the vault, no symlink is followed at open, only a regular file is
read, a FIFO never blocks) and read again when it changes while it is read; the extraction itself runs in the pool's worker processes, which
open the resolved target. A file whose stat changes between the hash and the extraction is
looked at again next run rather than stored with a hash of other bytes.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ...core.file_kinds import IMAGE_KIND
from ...documents import (
    ExtractedDocument,
    ExtractionPool,
    ExtractionResult,
    Location,
    Outcome,
    TextUnit,
    over_limit,
)
from ...secrets.scrubber import scrub
from ...storage.records import FileState, StoredChunk
from ..regular_file import (
    CHANGING,
    PERMISSION_DENIED,
    READ_ATTEMPTS,
    VANISHED,
    Unreadable,
    open_regular_file,
)
from ..vault_walk import NoteFile
from .document_chunks import document_rows, document_stem, failed_record
from .options import IndexOptions
from .prepare import Prepared, Skip, file_names

__all__ = [
    "MAX_WORKERS",
    "Reusable",
    "digest_document",
    "document_results",
]

log = logging.getLogger("noteseek.indexer")

# Extraction workers per run: one per core, at most two (the indexer itself embeds meanwhile).
MAX_WORKERS = 2
_READ_BLOCK = 1 << 20
_OCR_OFF_REASON = "is an image, and OCR is turned off (--no-ocr or NOTESEEK_OCR=0)"
# OCR'd text already indexed, by content hash: an image moved or copied is not read again.
_REUSED = "OCR text reused from"
Reusable = Callable[[str], "tuple[str, list[StoredChunk]] | None"]


@dataclass(frozen=True)
class DocumentDigest:
    """A document's content hash and the stat of the bytes hashed, or why it could not be read
    (`recheck`: look again next run even if the file is unchanged)."""

    target: Path | None
    content_hash: str | None = None
    mtime_ns: int = 0
    size: int = 0
    problem: str | None = None
    recheck: bool = False


def digest_document(doc: NoteFile, root: Path) -> DocumentDigest:
    """Hash a listed document (`root` resolved), re-checking at read time what the listing saw."""
    for _ in range(READ_ATTEMPTS):
        opened = open_regular_file(doc.abs_path, root)
        if isinstance(opened, Unreadable):
            return DocumentDigest(None, problem=opened.problem, recheck=True)
        digest = hashlib.sha256()
        try:
            with opened.handle as handle:
                while block := handle.read(_READ_BLOCK):
                    digest.update(block)
                after = os.fstat(handle.fileno())
        except PermissionError:
            return DocumentDigest(None, problem=PERMISSION_DENIED, recheck=True)
        except OSError as exc:
            return DocumentDigest(None, problem=f"cannot read: {exc.strerror or exc}", recheck=True)
        before = opened.stat
        if (before.st_mtime_ns, before.st_size) == (after.st_mtime_ns, after.st_size):
            return DocumentDigest(
                opened.target, digest.hexdigest(), after.st_mtime_ns, after.st_size
            )
    return DocumentDigest(None, problem=CHANGING, recheck=True)


def _ocr_off(doc: NoteFile) -> ExtractionResult:
    return ExtractionResult(
        path=doc.rel_path,
        outcome=Outcome.UNSUPPORTED,
        reason=f"'{doc.rel_path}' {_OCR_OFF_REASON}",
        ocr_wanted=True,
    )


def _reused(target: str, source: str, chunks: list[StoredChunk]) -> ExtractionResult:
    """The stored OCR text of the same bytes under another path, as an extraction result."""
    units = tuple(
        TextUnit(
            c.text,
            (),  # an image's units have no heading (a stored section is the old file's name)
            Location(page=c.page, page_label=c.page_label),
            overlap=c.overlap,
        )
        for c in chunks
    )
    doc = ExtractedDocument(
        kind=IMAGE_KIND,
        engine=f"{_REUSED} {source}",
        units=units,
        ocr_pages=tuple(sorted({c.page or 1 for c in chunks})),
    )
    return ExtractionResult(path=target, outcome=Outcome.OK, document=doc)


def _too_large(doc: NoteFile, limit: int) -> ExtractionResult:
    return ExtractionResult(
        path=doc.rel_path,
        outcome=Outcome.TOO_LARGE,
        reason=f"'{doc.rel_path}' is {over_limit(doc.size, limit)}",
    )


def _describe(
    doc: NoteFile,
    digest: DocumentDigest,
    result: ExtractionResult,
    old: FileState | None,
    options: IndexOptions,
) -> Prepared:
    shown = str(digest.target) if digest.target is not None else doc.rel_path
    mtime_ns, size = (digest.mtime_ns, digest.size) if digest.target else (doc.mtime_ns, doc.size)
    if not result.ok:
        record = failed_record(
            doc.rel_path,
            kind=doc.kind,
            mtime_ns=mtime_ns,
            size=size,
            content_hash_hex=digest.content_hash,
            result=result,
            shown_path=shown,
            allow=options.allow,
        )
        return Prepared(record, [], [], old is None, 0)
    assert digest.content_hash is not None
    rows = document_rows(
        doc.rel_path,
        kind=doc.kind,
        mtime_ns=mtime_ns,
        size=size,
        content_hash_hex=digest.content_hash,
        result=result,
        shown_path=shown,
        file_names=file_names(
            doc.rel_path, options.allow, stem=document_stem(doc.rel_path, doc.kind)
        ),
        allow=options.allow,
    )
    if rows.secrets:
        log.info("scrubbed %d secret(s) from %s", rows.secrets, doc.rel_path)
    assert result.document is not None
    reused = result.document.engine.startswith(_REUSED)
    return Prepared(
        rows.record,
        rows.chunks,
        rows.embed_texts,
        old is None,
        rows.secrets,
        ocr_pages=0 if reused else len(result.document.ocr_pages),
        ocr_reused=reused,
    )


def document_results(
    docs: Sequence[NoteFile],
    *,
    root: Path,
    known: dict[str, FileState],
    options: IndexOptions,
    force: bool,
    retry: set[str],
    stop: threading.Event,
    reusable: Reusable | None = None,
    before_ocr: Callable[[int], None] | None = None,
) -> Iterator[tuple[NoteFile, Prepared | Skip | None]]:
    """Each candidate document with what to store: rows (extracted, or a failed outcome), a Skip
    (it could not be read), or None (same content as indexed: only its stat is recorded).

    Hashing comes first, for all of them; the pool starts only if some content changed, and is
    closed (its workers ended) when this generator ends, however it ends. OCR comes last: the
    documents with a text layer are extracted first with OCR off, and only then the images and
    the PDFs that turned out to have scanned pages, in the same pool (`before_ocr(n)` is called
    once in between, with the number of files to OCR, so the caller can store what it has). An
    image whose bytes are indexed under another path (`reusable`) takes that text, unread.
    """
    limits = replace(options.extraction, ocr=options.extraction.ocr and options.ocr)
    text_only = replace(limits, ocr=False)
    # By resolved target: two paths of the vault (a symlink beside its target) are one extraction.
    todo: dict[str, list[tuple[NoteFile, DocumentDigest]]] = {}
    for doc in docs:
        if stop.is_set():
            return
        old = known.get(doc.rel_path)
        if doc.size > limits.max_file_bytes:  # not even read; kept until the file changes
            result = _too_large(doc, limits.max_file_bytes)
            yield doc, _describe(doc, DocumentDigest(None), result, old, options)
            continue
        if doc.kind == IMAGE_KIND and not limits.ocr:  # not even hashed: nothing reads it
            yield doc, _describe(doc, DocumentDigest(None), _ocr_off(doc), old, options)
            continue
        digest = digest_document(doc, root)
        if digest.problem is not None:
            yield doc, Skip(digest.problem, recheck=digest.recheck)
            continue
        unchanged = (
            old is not None
            and old.content_hash == digest.content_hash
            and old.kind == doc.kind
            and doc.rel_path not in retry
        )
        if unchanged and not force:
            yield doc, None
            continue
        assert digest.target is not None and digest.content_hash is not None
        found = reusable(digest.content_hash) if reusable and doc.kind == IMAGE_KIND else None
        if found is not None and found[0] != doc.rel_path:
            result = _reused(doc.rel_path, *found)
            yield doc, _checked(doc, digest, result, old, options)
            continue
        todo.setdefault(str(digest.target), []).append((doc, digest))
    if not todo or stop.is_set():
        return
    images = [t for t, entries in todo.items() if entries[0][0].kind == IMAGE_KIND]
    is_image = set(images)
    texts = [t for t in todo if t not in is_image]
    workers = max(1, min(MAX_WORKERS, os.cpu_count() or 1, len(todo)))
    held: dict[str, ExtractionResult] = {}  # text-layer results of PDFs that want OCR
    with ExtractionPool(workers=workers, limits=limits) as pool:
        for result in pool.extract_many(texts, limits=text_only):
            if result.ocr_wanted and limits.ocr:
                held[result.path] = result
                continue
            for doc, digest in todo[result.path]:
                yield doc, _checked(doc, digest, result, known.get(doc.rel_path), options)
            if stop.is_set():
                break
        scans = [*images, *held] if not stop.is_set() else []
        if scans and before_ocr is not None:
            before_ocr(sum(len(todo[t]) for t in scans))  # in paths, as the writer counts
        for result in pool.extract_many(scans) if scans else ():
            held.pop(result.path, None)
            for doc, digest in todo[result.path]:
                yield doc, _checked(doc, digest, result, known.get(doc.rel_path), options)
            if stop.is_set():
                break
    # Stopped before their OCR: store the text layer now (marked, so a later run OCRs them).
    for path, result in held.items():
        for doc, digest in todo[path]:
            yield doc, _checked(doc, digest, result, known.get(doc.rel_path), options)


def _checked(
    doc: NoteFile,
    digest: DocumentDigest,
    result: ExtractionResult,
    old: FileState | None,
    options: IndexOptions,
) -> Prepared | Skip:
    """The rows for a result, unless the file changed since it was hashed."""
    assert digest.target is not None
    try:
        now = os.stat(digest.target)
    except OSError:
        return Skip(VANISHED, recheck=True)
    if (now.st_mtime_ns, now.st_size) != (digest.mtime_ns, digest.size):
        return Skip("changed while it was read; it is read again next run", recheck=True)
    try:
        return _describe(doc, digest, result, old, options)
    except Exception as exc:  # one document must never abort the run
        log.exception("failed to index %s", scrub(doc.rel_path).text)
        return Skip(
            f"could not be indexed ({type(exc).__name__}); this is a bug in noteseek, "
            "please report it",
            recheck=True,
        )
