"""Extract one file in this process: sniff, dispatch by kind (the `Format` registry), split long units, map errors to outcomes.

`extract_file` never raises for a bad document: every failure becomes an `ExtractionResult` with a
named outcome and a reason that starts with the path. It gives no protection against a library that
hangs or aborts; `ExtractionPool` runs it in worker processes for that.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from ..core.file_kinds import format_of
from .errors import DocumentError, DocumentTooLargeError, NoTextLayerError, UnsupportedDocumentError
from .formats import document_kind, install_hint
from .model import ExtractedDocument, ExtractionLimits, ExtractionResult, Outcome, TextUnit
from .sniff import sniff
from .textsplit import split_unit

__all__ = ["MEMORY_REASON_END", "extract_file"]

_MIB = 1024 * 1024
MEMORY_REASON_END = "of memory extraction may use"
Extractor = Callable[[Path, ExtractionLimits, bool], ExtractedDocument]


def _extractor(kind: str) -> Extractor:
    """The reader of a kind's `Format` record; imported on first use so a worker loads only the
    libraries it needs."""
    record = format_of(kind)
    if record is None:
        raise UnsupportedDocumentError(f"is a {kind!r} file, which noteseek does not read")
    module, _, function = record.reader.partition(":")
    reader = getattr(importlib.import_module(f"{__package__}.{module}"), function)

    def read(path: Path, limits: ExtractionLimits, fallback: bool) -> ExtractedDocument:
        options = {"kind": kind, "fallback": fallback}
        document: ExtractedDocument = reader(
            path, limits, **{name: options[name] for name in record.options}
        )
        return document

    return read


def _clean(text: str) -> str:
    lines = text.replace("\x00", "").replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "\n".join(line.rstrip() for line in lines).strip("\n")


def _finish(doc: ExtractedDocument, limits: ExtractionLimits) -> ExtractedDocument:
    """Clean every unit's text and split the long ones; empty units go (they hold no word)."""
    units: list[TextUnit] = []
    for unit in doc.units:
        text = _clean(unit.text)
        if not text.strip():
            continue
        # Row batches were sized by `row_units` already; only free text is split here.
        budget = limits.max_rows_unit_chars if unit.location.rows else limits.max_unit_chars
        units.extend(
            split_unit(
                replace(unit, text=text),
                max_chars=budget,
                overlap=limits.unit_overlap_chars,
                min_chars=limits.min_unit_chars,
            )
        )
    result = replace(doc, units=tuple(units))
    if result.char_count > limits.max_chars:
        raise DocumentTooLargeError(
            f"has {result.char_count:,} characters of text (the limit is {limits.max_chars:,})"
        )
    return result


def _pages(pages: tuple[int, ...]) -> str:
    shown = ", ".join(str(p) for p in pages[:20])
    return shown + (f" and {len(pages) - 20} more" if len(pages) > 20 else "")


def extract_file(
    path: str | Path,
    *,
    limits: ExtractionLimits | None = None,
    fallback: bool = False,
    kind: str | None = None,
) -> ExtractionResult:
    """Extract `path` in this process; `fallback` picks a format's second reader (openpyxl)."""
    limits = limits or ExtractionLimits()
    name = str(path)
    file = Path(path)
    started = time.perf_counter()

    def result(
        outcome: Outcome,
        reason: str,
        doc: ExtractedDocument | None = None,
        missing: str | None = None,
        ocr_wanted: bool = False,
    ) -> ExtractionResult:
        return ExtractionResult(
            path=name,
            outcome=outcome,
            reason=f"'{name}' {reason}" if reason else "",
            document=doc,
            seconds=time.perf_counter() - started,
            missing_package=missing,
            ocr_wanted=ocr_wanted,
        )

    kind = kind or document_kind(file)
    if kind is None:
        return result(Outcome.UNSUPPORTED, "is not a document type noteseek reads")
    try:
        sniff(file, kind, limits=limits)
        doc = _finish(_extractor(kind)(file, limits, fallback), limits)
    except NoTextLayerError as exc:
        reason = f"{exc} (image-only pages: {_pages(exc.image_only_pages)})"
        if exc.missing_package:
            reason += f": {install_hint([exc.missing_package])}"
        return result(
            Outcome.NO_TEXT, reason, missing=exc.missing_package, ocr_wanted=exc.ocr_wanted
        )
    except DocumentError as exc:
        return result(exc.outcome, str(exc), missing=getattr(exc, "missing_package", None))
    except MemoryError:
        memory = f"{limits.memory_bytes / _MIB:,.0f} MiB" if limits.memory_bytes else "available"
        return result(Outcome.TOO_LARGE, f"needs more than the {memory} {MEMORY_REASON_END}")
    except RecursionError:
        return result(Outcome.CORRUPT, "is nested too deeply to read")
    except OSError as exc:
        return result(Outcome.CORRUPT, f"cannot be read ({exc.strerror or exc})")
    except Exception as exc:  # a library's own error on a malformed file
        return result(Outcome.CORRUPT, f"cannot be read: {type(exc).__name__}: {exc}"[:500])
    if doc.image_only_pages:
        pages = _pages(doc.image_only_pages)
        if doc.ocr_pages:
            why = (
                f"has more pages to OCR than the {limits.max_ocr_pages} read per document; "
                f"not read: {pages}"
            )
        elif not limits.ocr:
            why = f"has pages that are images only, without text (OCR is off): {pages}"
        else:
            hint = f": {install_hint([doc.ocr_missing])}" if doc.ocr_missing else ""
            why = f"has pages that are images only, without text (they need OCR{hint}): {pages}"
        return result(Outcome.OK, why, doc, missing=doc.ocr_missing, ocr_wanted=not limits.ocr)
    # Only thin or broken text layers wanted OCR: kept as they are, read again with OCR on.
    wanted = not limits.ocr and bool(doc.ocr_left)
    return result(Outcome.OK, "", doc, missing=doc.ocr_missing, ocr_wanted=wanted)
