"""What an update indexes (`IndexOptions`) and what it did (`IndexStats`)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field

from ...core.chunker import ChunkOptions
from ...documents import ExtractionLimits
from ...secrets.allowlist import Allowlist
from ...secrets.rules_fingerprint import RULES_FINGERPRINT
from ..vault_walk import DEFAULT_EXCLUDE, DEFAULT_MAX_FILE_BYTES

__all__ = ["EMBED_BATCH_CHUNKS", "PIPELINE_VERSION", "IndexOptions", "IndexStats", "Progress"]

# Bump when chunking or the embedded text changes in a way that should re-process every note.
PIPELINE_VERSION = "13"  # 2: title/tags fields and note names (m002); 3: note_tags (m003);
# 4: code left out of the embedded text (chunker.prose_text); 5: German stems (m004);
# 6: bare secrets scrubbed (secrets/entropy.py), short sections merged instead of dropped,
# left-out counts per file (m005)
# 7: each note's title/tags/heading token sets for the reranker (m007)
# 8: a value found anywhere in a file is removed from all of it (text, title, aliases, tags,
# names, metadata); context rules, normalised matching (secrets/tables.py, normalise.py)
# 9: each file's date and its source (m008 note_dates)
# 10: the links each note makes and its aliases (m009 links)
# 11: titles, aliases, tags and headings capped (core/field_caps.py), stored once per note (m010)
# 12: inline #tags are tags for the filters (core/inline_tags.py)
# 13: frontmatter that only the scrubber's markers made invalid keeps its fields (prepare.py)
EMBED_BATCH_CHUNKS = 512

Progress = Callable[[int, int, str], None]


@dataclass(frozen=True)
class IndexOptions:
    """What to index and how."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    chunking: ChunkOptions = field(default_factory=ChunkOptions)
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    # Known false positives the scrubber must leave alone (`noteseek scan` shows fingerprints).
    allow: Allowlist | None = None
    # Documents beside the notes (PDF, Office, CSV, HTML, canvases: noteseek.documents), read in
    # worker processes under these limits (file size, unpacked size, memory, time per file).
    documents: bool = True
    extraction: ExtractionLimits = field(default_factory=ExtractionLimits)
    # OCR of images and of PDF pages without a text layer (the `ocr` extra). Off: images are
    # named (`unsupported`, "OCR is turned off") and such pages listed, until it is on again.
    ocr: bool = True
    # Worker processes that prepare and embed notes beside the writer (engine/update/workers.py):
    # None picks the default (one per core, at most two), 0 prepares everything in-process. A
    # run with only a few notes to prepare (a watcher's batch) is always in-process.
    workers: int | None = None

    def scope(self) -> str:
        """The folders (and whether documents are) indexed, as stored in the index's meta (JSON)."""
        return json.dumps(
            {
                "include": list(self.include),
                "exclude": list(self.exclude),
                "documents": self.documents,
                "ocr": self.ocr,
            }
        )

    @classmethod
    def from_scope(cls, stored: str | None) -> IndexOptions:
        """Options with the folders of a stored `scope()` (defaults for everything else)."""
        try:
            data = json.loads(stored) if stored else {}
            include = tuple(str(f) for f in data.get("include", ()))
            exclude = tuple(str(f) for f in data.get("exclude", DEFAULT_EXCLUDE))
            documents = bool(data.get("documents", True))
            ocr = bool(data.get("ocr", True))
        except (ValueError, TypeError, AttributeError):
            return cls()
        return cls(include=include, exclude=exclude, documents=documents, ocr=ocr)

    def fingerprint(self) -> str:
        """Changes when re-chunking (and re-scrubbing) every note is needed."""
        c = self.chunking
        allow = self.allow.fingerprint if self.allow is not None else "-"
        raw = (
            f"{PIPELINE_VERSION}|{c.max_chars}|{c.min_chars}|{sorted(c.skip_sections)}|"
            f"{RULES_FINGERPRINT}|{allow}"
        )
        return hashlib.sha256(raw.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class IndexStats:
    """What one `update` did."""

    files_seen: int = 0
    added: int = 0
    changed: int = 0
    unchanged: int = 0
    removed: int = 0
    skipped: int = 0
    chunks: int = 0
    chunks_written: int = 0
    chunks_embedded: int = 0
    vectors_reused: int = 0
    secrets_scrubbed: int = 0
    seconds: float = 0.0
    interrupted: bool = False
    vectors: bool = True
    problems: tuple[tuple[str, str], ...] = ()
    # Only the named paths were looked at (files_seen counts the notes among them).
    targeted: bool = False
    documents: int = 0  # of files_seen: documents (PDF, Office, CSV, HTML, canvases, ...)
    documents_extracted: int = 0  # documents read by the extraction workers in this run
    ocr_files: int = 0  # of those: images and PDFs whose pages were read by OCR
    ocr_pages: int = 0  # pages (an image is one) read by OCR in this run
    ocr_reused: int = 0  # images not read again: their content was indexed under another path
    # Python packages a document of this run needed and did not find (`noteseek[documents]`).
    missing_libraries: tuple[str, ...] = ()
