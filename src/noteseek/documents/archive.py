"""Caps for zip-based formats (OOXML, ODF), checked on the central directory before a library opens it.

A zip bomb is cheap to make and some readers allocate whatever a member declares (python-calamine
aborts the whole process when an allocation fails). The declared sizes can lie, so the worker's memory
limit stays the last line of defence; these checks turn the honest bombs into a clear `too_large`.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from .errors import CorruptDocumentError, DocumentTooLargeError, over_limit
from .model import ExtractionLimits

__all__ = ["check_zip"]

_MIB = 1024 * 1024


def check_zip(path: Path, *, limits: ExtractionLimits) -> frozenset[str]:
    """Check member count, unpacked size and compression ratio; return the member names."""
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError) as exc:
        raise CorruptDocumentError(f"is not a readable zip container ({exc})") from exc
    if len(members) > limits.max_zip_members:
        raise DocumentTooLargeError(
            f"holds {len(members):,} zip members (the limit is {limits.max_zip_members:,})"
        )
    unpacked = sum(m.file_size for m in members)
    packed = sum(m.compress_size for m in members)
    if unpacked > limits.max_unpacked_bytes:
        raise DocumentTooLargeError(
            f"has members that unpack to {over_limit(unpacked, limits.max_unpacked_bytes)}: "
            "that is how a zip bomb looks"
        )
    ratio = unpacked / max(packed, 1)
    if unpacked > limits.ratio_floor_bytes and ratio > limits.max_compression_ratio:
        raise DocumentTooLargeError(
            f"is compressed {ratio:,.0f}:1 ({unpacked / _MIB:,.0f} MiB unpacked; the limit is "
            f"{limits.max_compression_ratio:,.0f}:1), which is how a zip bomb looks"
        )
    return frozenset(m.filename for m in members)
