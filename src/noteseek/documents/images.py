"""Images (PNG, JPEG, WebP, TIFF, GIF, BMP; Excalidraw and canvas PNG exports): their text by OCR.

Pillow reads the header first, so an image past `max_image_pixels` is refused before its pixels
are decoded (a 100,000 × 100,000 PNG is a few kilobytes on disk). A multi-page TIFF is a document
of pages (up to `max_ocr_pages`, the rest named); a GIF's first frame is its picture.
"""

from __future__ import annotations

from pathlib import Path

from .errors import (
    CorruptDocumentError,
    DocumentTooLargeError,
    NoTextFoundError,
    UnsupportedDocumentError,
)
from .formats import require
from .model import ExtractedDocument, ExtractionLimits, Location, TextUnit
from .ocr import ocr_engine_name, recognise

__all__ = ["extract_image"]


def extract_image(path: Path, limits: ExtractionLimits) -> ExtractedDocument:
    """The recognised text of an image, one unit per page (frame of a multi-page TIFF)."""
    if not limits.ocr:
        raise UnsupportedDocumentError("is an image, and OCR is turned off")
    pil = require("PIL.Image", what="images")
    require("tesserocr", what="text in images (OCR)")
    # Our own pixel cap is checked below, before any decoding; Pillow's warning would only
    # repeat it (and its error comes at twice the default, not at our limit).
    setattr(pil, "MAX_IMAGE_PIXELS", None)  # noqa: B010 (a module attribute mypy cannot see)
    try:
        image = pil.open(path)
    except (pil.UnidentifiedImageError, SyntaxError, ValueError) as exc:
        raise CorruptDocumentError(f"cannot be read as an image ({exc})") from exc
    with image:
        width, height = image.size
        if width * height > limits.max_image_pixels:
            raise DocumentTooLargeError(
                f"is {width:,} × {height:,} pixels (the limit is {limits.max_image_pixels:,} "
                "pixels)"
            )
        frames = getattr(image, "n_frames", 1) if image.format == "TIFF" else 1
        units: list[TextUnit] = []
        read: list[int] = []
        for index in range(min(frames, limits.max_ocr_pages)):
            image.seek(index)
            try:
                image.load()
            except (OSError, SyntaxError, ValueError) as exc:
                raise CorruptDocumentError(f"cannot be decoded ({exc})") from exc
            text = recognise(image, limits)
            read.append(index + 1)
            if text:
                location = Location(page=index + 1) if frames > 1 else Location()
                units.append(TextUnit(text, (), location))
        left = tuple(range(limits.max_ocr_pages + 1, frames + 1))
        if not units and not left:
            raise NoTextFoundError("has no text that OCR could read")
        return ExtractedDocument(
            kind="image",
            engine=ocr_engine_name(),
            units=tuple(units),
            page_count=frames,
            image_only_pages=left,
            ocr_pages=tuple(read),
        )
