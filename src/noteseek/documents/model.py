"""What extraction returns: frozen values that cross the worker-process boundary by pickle.

A document becomes a list of `TextUnit`s, each about one section (a PDF page or the part of it under
one bookmark, a slide, a Word heading's section, a batch of spreadsheet rows) and never longer than
`ExtractionLimits.max_unit_chars`: a long page is split further, each part keeping its location.
Metadata is kept apart from the text so the indexer can scrub it before storing or showing it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

__all__ = [
    "BREADCRUMB_SEPARATOR",
    "DocumentMetadata",
    "ExtractedDocument",
    "ExtractionLimits",
    "ExtractionResult",
    "Location",
    "Outcome",
    "TextUnit",
]

BREADCRUMB_SEPARATOR = " › "  # the same separator as a note's heading context
_MIB = 1024 * 1024


class Outcome(str, enum.Enum):
    """How extracting one file ended. Only `OK` carries a document."""

    OK = "ok"
    ENCRYPTED = "encrypted"
    NO_TEXT = "no_text"  # no text layer: image-only pages, and OCR is off or not installed
    NO_TEXT_FOUND = "no_text_found"  # OCR ran and read no word (a photo, a drawing, noise)
    CORRUPT = "corrupt"
    TIMED_OUT = "timed_out"
    TOO_LARGE = "too_large"
    UNSUPPORTED = "unsupported"


@dataclass(frozen=True)
class Location:
    """Where a unit's text is in its document; every field is None where it does not apply."""

    page: int | None = None  # 1-based PDF page
    page_label: str | None = (
        None  # the PDF's own label for that page ("xii", "A-3"), when it has labels
    )
    slide: int | None = None  # 1-based slide
    sheet: str | None = None  # spreadsheet sheet name
    rows: tuple[int, int] | None = None  # first and last 1-based row (spreadsheets, CSV)


@dataclass(frozen=True)
class TextUnit:
    """One searchable piece of a document: its text, the headings above it, and where it is."""

    text: str
    section: tuple[
        str, ...
    ] = ()  # outermost first: bookmark path, Word headings, slide title, sheet
    location: Location = field(default_factory=Location)
    # Characters at the start repeated from the end of the unit before (a long unit split inside
    # a paragraph), so a reader joining the parts back can leave them out: 0 for most units.
    overlap: int = 0

    @property
    def breadcrumb(self) -> str:
        """The section path as one line, `Part I › Installing`; empty when the unit has none."""
        return BREADCRUMB_SEPARATOR.join(self.section)


@dataclass(frozen=True)
class DocumentMetadata:
    """Document properties (PDF info, Office core properties, HTML <title>/<meta>); unscrubbed."""

    title: str | None = None
    author: str | None = None
    fields: tuple[tuple[str, str], ...] = ()  # every non-empty property, title and author included


@dataclass(frozen=True)
class ExtractedDocument:
    """The text of one document, in reading order."""

    kind: str  # "pdf", "pptx", "docx", "xlsx", "xls", "ods", "csv", "tsv", "html", "txt", ...
    engine: str  # the library that read it, e.g. "pypdfium2 5.15.2"
    units: tuple[TextUnit, ...]
    metadata: DocumentMetadata = field(default_factory=DocumentMetadata)
    page_count: int | None = None  # pages (PDF) or slides (PPTX) or sheets (spreadsheets)
    image_only_pages: tuple[int, ...] = ()  # 1-based pages with images but no text layer
    # 1-based pages (1 for a single image, frames of a TIFF) whose text came from OCR.
    ocr_pages: tuple[int, ...] = ()
    ocr_missing: str | None = None  # the OCR package not installed, when pages needed it
    # Pages that wanted OCR and were not read (OCR off or missing, past the page limit): the
    # image-only ones and those with a thin or broken text layer, which was kept.
    ocr_left: tuple[int, ...] = ()

    @property
    def char_count(self) -> int:
        """Characters over all units."""
        return sum(len(u.text) for u in self.units)


@dataclass(frozen=True)
class ExtractionResult:
    """The outcome for one file, with a reason a person can act on (empty for a clean `OK`)."""

    path: str
    outcome: Outcome
    reason: str = ""
    document: ExtractedDocument | None = None
    seconds: float = 0.0  # wall-clock time the extraction took, in the worker
    missing_package: str | None = None  # `unsupported` because this library is not installed
    # Pages that need OCR were found, and these limits had OCR off: the indexer extracts such a
    # file again with OCR once the text-only work of the run is stored.
    ocr_wanted: bool = False

    @property
    def ok(self) -> bool:
        """True when the document's text came back."""
        return self.outcome is Outcome.OK


@dataclass(frozen=True)
class ExtractionLimits:
    """Caps that keep one document from costing the indexer more than it is worth.

    The size caps are checked before a library opens the file; memory and time are enforced on the
    worker process (`ExtractionPool`), since no check before parsing can see every bomb.
    """

    max_file_bytes: int = 256 * _MIB
    max_unpacked_bytes: int = 1024 * _MIB  # zip-based formats: declared size of all members
    max_compression_ratio: float = (
        200.0  # ... checked once the unpacked size passes ratio_floor_bytes
    )
    ratio_floor_bytes: int = 16 * _MIB
    max_zip_members: int = 20_000
    max_pages: int = 10_000  # PDF pages, slides
    max_chars: int = 20_000_000  # extracted text over the whole document
    max_unit_chars: int = 1000  # longer units are split (source design: 1,000 chars, 100 overlap)
    unit_overlap_chars: int = 100
    min_unit_chars: int = (
        100  # a shorter split-off tail is merged into its neighbour, never dropped
    )
    rows_per_unit: int = 20  # spreadsheet and CSV rows under one repeated header
    max_rows_unit_chars: int = 2000  # ... unless they pass this (a note section's maximum) first
    memory_bytes: int | None = 2048 * _MIB  # address-space limit of a worker (POSIX); None = none
    timeout_seconds: float = 60.0  # wall clock per file in a worker
    # OCR (images, PDF pages without a text layer); the engine is the `ocr` extra.
    ocr: bool = True
    ocr_languages: str = "eng+deu"  # Tesseract language models, `+`-joined
    max_ocr_pages: int = 20  # per document; the pages past it are named in the reason
    max_image_pixels: int = 80_000_000  # an image (or a TIFF frame) past this is too large
    ocr_max_side: int = 4096  # longer images are downscaled to this many pixels first
    ocr_dpi: int = 200  # PDF pages are rendered at this resolution for OCR
