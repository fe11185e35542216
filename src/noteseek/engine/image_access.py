"""An indexed image's bytes, for a preview beside its recognised text (`/api/notes/…?image=true`).

The same checks as reading a note (`note_access`): a vault-relative path without '..', a file the
index holds as an image, no symlink on the way, read at open without following one. The media
type comes from the bytes, not from the name, so a file renamed `.png` is never served as one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.file_kinds import IMAGE_KIND
from ..errors import NoteNotIndexedError, NoteUnreadableError
from .note_access import check_note_path, normalise_note_path
from .vault_walk import NoteFile, read_note

if TYPE_CHECKING:
    from ..storage.protocol import Storage

__all__ = ["MAX_IMAGE_BYTES", "ImageFile", "image_media_type", "read_indexed_image"]

MAX_IMAGE_BYTES = 64 * 1024 * 1024  # a preview, not a file server
_TYPES = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"II*\x00", "image/tiff"),
    (b"MM\x00*", "image/tiff"),
    (b"BM", "image/bmp"),
)


@dataclass(frozen=True)
class ImageFile:
    """An indexed image: its vault-relative path, media type and bytes."""

    path: str
    media_type: str
    data: bytes


def image_media_type(data: bytes) -> str | None:
    """The media type the first bytes show (PNG, JPEG, GIF, TIFF, BMP, WebP), else None."""
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return next((media for magic, media in _TYPES if data.startswith(magic)), None)


def read_indexed_image(store: Storage, path: str) -> ImageFile:
    """The bytes of an image the index holds (indexed, or named with a reason such as "no text
    found"); NoteNotIndexedError for anything else, NoteUnreadableError when it cannot be read."""
    rel = normalise_note_path(path)
    known = store.indexed_file(rel)
    if known is None or known.kind != IMAGE_KIND:
        raise NoteNotIndexedError(
            f"{rel!r} is not an image the index holds; search returns the paths of those "
            "(kind: image)"
        )
    location = store.vault_location(rel)
    if location is None:
        raise NoteNotIndexedError("this index has no notes yet: run 'noteseek index VAULT' first")
    root, inner = Path(location[0]), location[1]
    info = check_note_path(root, inner)
    raw = read_note(
        NoteFile(inner, root / inner, info.st_mtime_ns, info.st_size),
        root.resolve(),
        max_bytes=MAX_IMAGE_BYTES,
    )
    if raw.data is None:
        raise NoteUnreadableError(f"cannot read {rel!r}: {raw.problem}")
    media = image_media_type(raw.data)
    if media is None:
        raise NoteUnreadableError(f"{rel!r} is not an image any more (its content changed)")
    return ImageFile(rel, media, raw.data)
