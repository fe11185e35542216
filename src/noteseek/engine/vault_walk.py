"""Find a vault's notes and read them safely: every problem becomes a reason, never an exception."""

from __future__ import annotations

import codecs
import errno
import os
import stat as stat_module
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

# The include/exclude and note-name rules live apart so the file watcher applies the same ones.
from ..core.vault_rules import IGNORE_MARKER, VaultRules
from ..settings import DEFAULT_EXCLUDE
from .folder_listings import FolderListings, folder_key, recordable, settled
from .regular_file import (
    CHANGING,
    LOOP,
    OUTSIDE,
    PERMISSION_DENIED,
    READ_ATTEMPTS,
    Unreadable,
    not_regular_reason,
    open_regular_file,
)

__all__ = [
    "DEFAULT_EXCLUDE",
    "DEFAULT_MAX_FILE_BYTES",
    "IGNORE_MARKER",
    "NoteFile",
    "RawNote",
    "ReadResult",
    "decode_note",
    "file_entry",
    "is_utf8_name",
    "printable_path",
    "read_note",
    "walk_vault",
]

DEFAULT_MAX_FILE_BYTES = 20 * 1024 * 1024

# C0 control bytes that plain text does not contain. Tab, newlines, form feed, vertical tab and ESC
# (ANSI colours in pasted terminal output) are left out; NUL is counted separately.
_BINARY_BYTES = bytes([*range(1, 9), *range(14, 27), *range(28, 32), 127])
# More than this share of such bytes (or NULs) is not a damaged note but a file of another kind:
# random or compressed data has ~11%, text in any 8-bit encoding ~0%.
_BINARY_SHARE = 0.05
_BINARY_MIN_BYTES = 8
# Formats that end up named `.md` by accident; used to name the kind in the skip reason.
_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "PNG image"),
    (b"\xff\xd8\xff", "JPEG image"),
    (b"GIF87a", "GIF image"),
    (b"GIF89a", "GIF image"),
    (b"%PDF-", "PDF document"),
    (b"PK\x03\x04", "ZIP archive or Office document"),
    (b"\x1f\x8b", "gzip archive"),
    (b"SQLite format 3\x00", "SQLite database"),
    (b"\x7fELF", "executable"),
)


@dataclass(frozen=True)
class NoteFile:
    """A file found in the vault: its path relative to the vault (always with '/'), its stat, and
    what it is: "note" (Markdown) or a document kind ("pdf", "excalidraw", ...)."""

    rel_path: str
    # Where it is: a plain string from the walk, since building 13,000 Path objects cost a no-op
    # run over MDN a quarter of a second; `abs_path` makes the Path when a file is read.
    location: str | os.PathLike[str]
    mtime_ns: int
    size: int
    kind: str = "note"

    @property
    def abs_path(self) -> Path:
        """The file's absolute path."""
        return Path(self.location)

    @property
    def is_document(self) -> bool:
        """Whether it is read by the document extractors rather than as a Markdown note."""
        return self.kind != "note"


@dataclass(frozen=True)
class ReadResult:
    """Decoded text, or None with the reason; `warning` names a problem that was worked around."""

    text: str | None
    problem: str | None = None
    warning: str | None = None


@dataclass(frozen=True)
class RawNote:
    """A note's bytes and the stat of what was read, or None with the reason it could not be read.

    `recheck` marks problems that can go away without the file changing (permissions, a file being
    written, the size limit), so the indexer must look at the file again on the next run.
    """

    data: bytes | None
    mtime_ns: int = 0
    size: int = 0
    problem: str | None = None
    recheck: bool = False


def printable_path(rel: str) -> str:
    """A path that can be stored and shown: bytes that are not UTF-8 become `\\xe9` escapes."""
    return os.fsencode(rel).decode("utf-8", "backslashreplace")


def is_utf8_name(rel: str) -> bool:
    # os.walk hands out undecodable name bytes as lone surrogates, which SQLite cannot store.
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _symlink_problem(path: Path, root: Path) -> str | None:
    """Why a symlink must not be followed, or None when its target is a file inside the vault."""
    try:
        target = path.resolve(strict=True)
    except FileNotFoundError:
        return "broken symlink: its target does not exist"
    except RuntimeError:  # Python < 3.13 reports a loop this way
        return LOOP
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return LOOP
        return f"cannot follow symlink: {exc.strerror or exc}"
    if not target.is_relative_to(root):
        return OUTSIDE
    return None


def walk_vault(
    root: Path,
    *,
    include: Sequence[str] = (),
    exclude: Sequence[str] = DEFAULT_EXCLUDE,
    documents: bool = True,
    under: str = "",
    remembered: FolderListings | None = None,
) -> tuple[list[NoteFile], list[tuple[str, str]]]:
    """All notes (and documents, unless `documents` is False) under `root`, sorted by path, plus
    (path, reason) for entries that were passed over.

    Dot-folders and folders holding an `IGNORE_MARKER` file are always excluded. `include` (folders
    relative to the vault) limits the walk when given. Symlinks are followed only when their
    target lies inside the vault. Documents follow exactly the same rules as notes. `under` (a
    vault-relative folder) walks only that folder, as the whole walk would see it; the caller has
    checked that the walk reaches it (`vault_targets.py`). `remembered`: folder listings of an
    earlier walk of the same vault under the same rules, used where a folder is unchanged, and
    filled with what this walk saw (`folder_listings.py`); the result is the same either way.
    """
    root = root.resolve()
    rules = VaultRules(include=include, exclude=exclude, documents=documents)
    notes: list[NoteFile] = []
    passed_over: list[tuple[str, str]] = []

    def listing(folder: str, rel_dir: str) -> list[os.DirEntry[str]] | None:
        try:
            with os.scandir(folder) as entries:
                # In the order the file system gives: what is found is sorted once at the end
                # (a sort per folder was a fifth of a no-op run over MDN's 13,000 folders).
                return list(entries)
        except OSError as error:
            shown = printable_path(rel_dir or ".")
            passed_over.append((shown, f"cannot read folder: {error.strerror or error}"))
            return None

    # Depth first, like os.walk(topdown=True); with os.scandir directly, so the type of
    # an entry (folder, symlink) comes from the listing instead of one more lstat per folder and
    # the ignore marker from the folder's own listing instead of one per folder again: 26,000
    # system calls fewer on MDN's 13,000 folders, a third of a no-op run.
    start = os.path.join(str(root), *under.split("/")) if under else str(root)
    stack: list[tuple[str, str]] = [(start, under)]
    while stack:
        folder, rel_dir = stack.pop()
        folder_stat = None
        if remembered is not None:
            try:
                folder_stat = os.lstat(folder)  # before the listing: a change during it shows
            except OSError:
                folder_stat = None
            record = remembered.old.get(rel_dir)
            if (
                record is not None
                and folder_stat is not None
                and record[0] == folder_key(folder_stat)
            ):
                remembered.hits += 1
                if _from_memory(root, folder, rel_dir, record[2], rules, notes, passed_over):
                    remembered.found[rel_dir] = record
                prefix, at = (f"{rel_dir}/" if rel_dir else ""), f"{folder}{os.sep}"
                stack.extend((at + name, prefix + name) for name in reversed(record[1]))
                continue
            remembered.misses += 1
        entries = listing(folder, rel_dir)
        if entries is None:
            continue
        if rel_dir and any(entry.name == IGNORE_MARKER for entry in entries):
            continue
        if rel_dir and not is_utf8_name(rel_dir):
            reason = "folder name is not valid UTF-8; rename it to index its notes"
            passed_over.append((printable_path(rel_dir), reason))
            continue
        subfolders: list[tuple[str, str]] = []
        taken: list[str] = []
        passed_before = len(passed_over)
        keep = remembered is not None  # whether this folder's listing may be remembered
        take_files = rules.includes_folder(rel_dir)
        for entry in entries:
            name = entry.name
            rel = f"{rel_dir}/{name}" if rel_dir else name
            try:
                is_dir = entry.is_dir()  # follows a symlink, as os.walk does
            except OSError:
                is_dir = False
            if keep and entry.is_symlink():
                # What a symlink is taken as follows its target, which can change without its
                # folder changing (a link to a folder becomes one to a note): never remembered.
                keep = False
            if is_dir:
                # Symlinked folders are not followed.
                if not entry.is_symlink() and not rules.skips_folder(rel, parents_checked=True):
                    subfolders.append((entry.path, rel))
                continue
            kind = rules.file_kind(name) if take_files else None
            if kind is None:
                hidden = rules.hidden_reason(name) if take_files else None
                if hidden is not None:
                    passed_over.append((printable_path(rel), hidden))
                continue
            found = file_entry(root, rel, entry.path, kind, entry)
            if isinstance(found, NoteFile):
                notes.append(found)
                taken.append(name)
            elif found is not None:
                passed_over.append(found)
            else:
                keep = False  # a folder named like a note, seen as a file
        if (
            keep
            and remembered is not None
            and folder_stat is not None
            and len(passed_over) == passed_before  # nothing passed over in this folder
            and settled(folder_stat, remembered.started_ns)
        ):
            names = tuple(os.path.basename(path) for path, _ in subfolders)
            if recordable([rel_dir, *names, *taken]):
                remembered.found[rel_dir] = (folder_key(folder_stat), names, tuple(taken))
        stack.extend(reversed(subfolders))
    notes.sort(key=lambda n: n.rel_path)
    passed_over.sort()
    return notes, passed_over


def _from_memory(
    root: Path,
    folder: str,
    rel_dir: str,
    files: tuple[str, ...],
    rules: VaultRules,
    notes: list[NoteFile],
    passed_over: list[tuple[str, str]],
) -> bool:
    """Take a remembered folder's files as its listing would (each stat-ed now: an edit in place
    changes only the file); whether every one was taken as it is, so the record still holds."""
    clean = True
    prefix = f"{rel_dir}/" if rel_dir else ""
    at = f"{folder}{os.sep}"
    is_regular = stat_module.S_ISREG
    for name in files:
        kind = rules.file_kind(name)
        if kind is None:  # cannot happen under the same rules; the record is only a shortcut
            clean = False
            continue
        full = at + name
        try:
            st = os.lstat(full)
        except OSError:
            st = None
        if st is not None and is_regular(st.st_mode):
            # The common case inline (file_entry's, for a name that passed its checks when it
            # was recorded): a function call per note was a tenth of a no-op run over MDN.
            notes.append(NoteFile(prefix + name, full, st.st_mtime_ns, st.st_size, kind))
            continue
        found = file_entry(root, prefix + name, full, kind, None)
        if isinstance(found, NoteFile):
            notes.append(found)
        else:
            clean = False
            if found is not None:
                passed_over.append(found)
    return clean


def file_entry(
    root: Path, rel: str, full: str, kind: str, entry: os.DirEntry[str] | None
) -> NoteFile | tuple[str, str] | None:
    """A listed file of an indexed kind as the walk keeps it: a NoteFile, (path, reason) when it
    is passed over (a FIFO, a symlink out of the vault, ...), or None (a folder). `entry`: its
    listing entry, when there is one."""
    if not is_utf8_name(rel):
        return (printable_path(rel), "file name is not valid UTF-8; rename the file to index it")
    try:
        stat = entry.stat(follow_symlinks=False) if entry is not None else os.lstat(full)
        if stat_module.S_ISLNK(stat.st_mode):
            problem = _symlink_problem(Path(full), root)
            if problem is not None:
                return (rel, problem)
            stat = os.stat(full)
    except (OSError, RuntimeError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        return (rel, f"cannot stat: {reason}")
    if stat_module.S_ISDIR(stat.st_mode):
        return None  # a folder named `x.md`: the walk lists folders on their own
    if not stat_module.S_ISREG(stat.st_mode):
        # A FIFO (reading one would wait for a writer), a socket, a device: named, never opened.
        return (rel, not_regular_reason(stat.st_mode))
    return NoteFile(rel, full, stat.st_mtime_ns, stat.st_size, kind)


def _size(size: int) -> str:
    """`50 MB`, `20.5 MB`, `64 KB`: sizes as a user sets and reads them."""
    value, unit = (size / 1_048_576, "MB") if size >= 1_048_576 else (size / 1024, "KB")
    return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"


def _too_large(size: int, limit: int) -> str:
    return (
        f"too large: {_size(size)} is over the {_size(limit)} limit; "
        "raise IndexOptions(max_file_bytes=...) to index it"
    )


def read_note(note: NoteFile, root: Path, *, max_bytes: int) -> RawNote:
    """Read a listed note's bytes, re-checking at read time what the listing saw (`root` resolved).

    Never raises on the file: it may have vanished, changed, grown past `max_bytes` or been
    replaced by a symlink or a FIFO since it was listed (`open_regular_file`).
    """
    if note.size > max_bytes:  # decided from the listing, so a huge file is not even opened
        return RawNote(None, problem=_too_large(note.size, max_bytes), recheck=True)
    for _ in range(READ_ATTEMPTS):
        opened = open_regular_file(note.location, root)
        if isinstance(opened, Unreadable):
            return RawNote(None, problem=opened.problem, recheck=True)
        before = opened.stat
        if before.st_size > max_bytes:
            opened.handle.close()
            return RawNote(None, problem=_too_large(before.st_size, max_bytes), recheck=True)
        try:
            with opened.handle as handle:
                # Never more than the limit in memory, even if the file grows while it is read;
                # one byte past the size seen tells a file that grew (asking for the limit
                # itself cost an allocation of 20 MiB per note).
                data = handle.read(min(before.st_size, max_bytes) + 1)
                after = os.fstat(handle.fileno())
        except PermissionError:
            return RawNote(None, problem=PERMISSION_DENIED, recheck=True)
        except OSError as exc:
            return RawNote(None, problem=f"cannot read: {exc.strerror or exc}", recheck=True)
        if len(data) > max_bytes:
            size = max(after.st_size, len(data))
            return RawNote(None, problem=_too_large(size, max_bytes), recheck=True)
        stable = (before.st_mtime_ns, before.st_size) == (after.st_mtime_ns, after.st_size)
        if stable and len(data) == after.st_size:
            return RawNote(data, mtime_ns=after.st_mtime_ns, size=after.st_size)
        # Written to while we read: a torn read would index half a note, so read it again.
    return RawNote(None, problem=CHANGING, recheck=True)


def _binary_kind(data: bytes) -> str | None:
    """What kind of non-text file this is, or None when it reads as (possibly damaged) text."""
    named = next((name for magic, name in _SIGNATURES if data.startswith(magic)), None)
    suspicious = data.count(b"\x00") + len(data) - len(data.translate(None, _BINARY_BYTES))
    # A handful of stray bytes in a short note is damage, not a file format.
    if suspicious > max(len(data) * _BINARY_SHARE, _BINARY_MIN_BYTES):
        return named or "binary data"
    if named is not None:
        # A known format that is also not UTF-8 (a PDF's compressed streams) is that format.
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return named
    return None


def _bomless_utf16(data: bytes) -> str | None:
    """The codec of UTF-16 text saved without a byte-order mark, judged from where its NULs sit."""
    head = data[:8192]
    if len(data) % 2 or head.count(b"\x00") < len(head) // 4:
        return None
    even, odd = head[0::2].count(0), head[1::2].count(0)
    # ASCII-range characters put their zero byte on one side only: the high byte.
    codec = "utf-16-le" if odd > 9 * even else "utf-16-be" if even > 9 * odd else None
    if codec is None:
        return None
    # Arrays of small 16-bit numbers look the same, but decode to control characters.
    sample = data[:8192].decode(codec, errors="replace")
    controls = sum(1 for ch in sample if ch < " " and ch not in "\t\n\r\x0c")
    return codec if controls <= len(sample) // 100 else None


def _decode_wide(data: bytes, codec: str, label: str) -> ReadResult:
    try:
        return ReadResult(data.decode(codec))
    except UnicodeDecodeError as exc:
        # Keep the readable text, as for UTF-8: often just a cut-off last byte.
        return ReadResult(
            data.decode(codec, errors="replace"),
            warning=f"invalid {label} at byte {exc.start}; undecodable bytes replaced",
        )


def _legacy_8bit(body: bytes) -> str | None:
    """The text of a note saved in Windows-1252 / Latin-1 (older Windows editors), or None.

    Only when not one non-ASCII character of it decodes as UTF-8: then every byte above 0x7F is a
    character of an 8-bit code page (`Käse` as `K\xe4se`), not damage in a UTF-8 file, where
    reading the whole file as Windows-1252 would garble every correct character.
    """
    repaired = body.decode("utf-8", errors="replace")
    if any(ord(c) > 0x7F and c != "\ufffd" for c in repaired):
        return None
    try:
        return body.decode("cp1252")
    except UnicodeDecodeError:  # one of its five unassigned bytes: Latin-1 has them all
        return body.decode("latin-1")


def decode_note(data: bytes) -> ReadResult:
    """Decode a note's bytes: UTF-8 (with or without BOM), UTF-16/32 with BOM, else UTF-8 with repair.

    Damage is repaired and named in `warning` (invalid bytes replaced, NUL bytes removed) so the
    readable text stays searchable; only files that are not text at all get a `problem`.
    """
    # UTF-32's marks begin with UTF-16's, so they are tested first.
    if data.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        return _decode_wide(data, "utf-32", "UTF-32")
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return _decode_wide(data, "utf-16", "UTF-16")
    codec = _bomless_utf16(data)
    if codec is not None:
        decoded = _decode_wide(data, codec, codec.upper())
        note = f"UTF-16 without a byte-order mark, read as {codec.upper()}"
        return ReadResult(decoded.text, warning="; ".join(filter(None, (note, decoded.warning))))
    # Zero padding at the end (a crash while saving, a preallocating sync tool) is not content,
    # so it must not make a damaged note look like a binary file.
    body = data.rstrip(b"\x00")
    if data and not body:
        return ReadResult(None, problem="contains only NUL bytes, no text")
    kind = _binary_kind(body)
    if kind is not None:
        return ReadResult(None, problem=f"binary file ({kind}), not a text note")
    warnings: list[str] = []
    try:
        text = body.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        legacy = _legacy_8bit(body)
        if legacy is not None:
            text = legacy
            warnings.append("not UTF-8: read as Windows-1252 (Latin-1); save it as UTF-8")
        else:
            # Keep the readable text: a few bad bytes must not hide a whole note.
            text = body.decode("utf-8-sig", errors="replace")
            warnings.append(f"invalid UTF-8 at byte {exc.start}; undecodable bytes replaced")
    nuls = data.count(b"\x00")
    if nuls:
        # NUL is never text; dropping it silently (as the chunker would) would hide the damage.
        text = text.replace("\x00", "")
        warnings.append(f"{nuls} NUL byte{'s' if nuls > 1 else ''} removed")
    return ReadResult(text, warning="; ".join(warnings) or None)
