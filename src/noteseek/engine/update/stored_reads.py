"""What a stored file's `engine` field says about how it was read, and when to read it again.

`engine` names the library that read a document (`pypdfium2 5.15.2`); two values mean it is
waiting: `missing:<module>` (unsupported, or a PDF whose scanned pages needed the OCR engine) and
`ocr-off[:<reader>]` (stored while OCR was off). The update's plan asks these on every run, for
every stored document, so this module imports nothing of the document readers until a stored
state names a missing library.
"""

from __future__ import annotations

from importlib.util import find_spec
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...storage.records import FileState

__all__ = ["MISSING", "OCR_OFF", "library_now_installed", "ocr_now_on"]

# The engine of a document stored while OCR was off (`ocr-off`, or `ocr-off:pypdfium2 …` for a
# PDF whose text layer was read): a run with OCR on reads it again.
OCR_OFF = "ocr-off"
# The engine of a document whose library was missing: `missing:<module>`.
MISSING = "missing:"


def library_now_installed(state: FileState) -> bool:
    """Whether a document stored for a missing library (`missing:<module>`: unsupported, or a
    PDF whose scanned pages needed the OCR engine) can be read now."""
    if not state.engine or not state.engine.startswith(MISSING) or state.kind is None:
        return False
    module = state.engine.split(":", 1)[1]
    try:
        found = find_spec(module) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        return False
    # deferred: the document readers' registry, needed only once a missing library turned up
    from ...documents import missing_libraries

    return not missing_libraries(state.kind)


def ocr_now_on(state: FileState, ocr: bool) -> bool:
    """Whether a document stored while OCR was off is to be read again (OCR is on now)."""
    return ocr and state.engine is not None and state.engine.startswith(OCR_OFF)
