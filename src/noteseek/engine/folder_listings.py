"""Folder listings remembered between whole passes, so that a pass over an unchanged vault stats
each folder instead of listing it.

A folder's entries change only through the folder: creating, deleting or renaming an entry
updates the folder's ctime and mtime, and no program can set a ctime back (setting the mtime
sets the ctime to now). A folder whose (device, inode, ctime, mtime) is the one recorded
therefore holds the names it held when it was listed, and the walk takes them from the record
and stats only its files; an edit in place changes the file's own stat, never its folder's.
This is what git's untracked cache does for `git status`.

- **Racy folders**: a change in the same clock tick as the listing could leave the ctime
  unchanged, so a folder is recorded only when its ctime and mtime are `SETTLED_NS` (2 s, FAT's
  timestamp step) older than the time the walk began; a folder changed since is listed again.
- **What is recorded**: a listing only of a folder whose every entry the walk took as it is (a
  note or document, a subfolder it walks, a file of no indexed kind, a folder it skips by rule),
  never one with an entry it passed over or with a symlink (what a link is taken as follows its
  target, which changes without its folder), and only names the index holds anyway: a folder is
  kept when it, each subfolder and each file it yields are (on) the path of an indexed note, so
  a name holding a secret (a note the index refuses) or an empty folder's name is never stored.
- **When it is used**: by whole passes of the same vault under the same folder and file-kind
  rules, by the same user and groups (`context`: a user who cannot list a folder must not walk
  it from another's record);
  never by `--full`, which lists every folder, and never on Windows (`TRUSTED`), where `st_ctime`
  is the creation time and a folder's last-write time can be set back by any program.

Measured on MDN (13,065 folders, 13,062 notes, unloaded): a plain os.scandir listing of every
folder with a stat per note took 0.19 s, a stat of each folder and each note 0.10 s; the record
is 0.25 MB (zlib of one tab-separated text, base64 for the text `meta` table) and reads in
14 ms. JSON of the same records read in 18-25 ms, hence the flat text.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain

from ..core.file_kinds import DOCUMENT_SUFFIXES, EXCALIDRAW_SUFFIX, NOTE_SUFFIXES

__all__ = [
    "SETTLED_NS",
    "TRUSTED",
    "FolderListings",
    "Listing",
    "context_of",
    "decode",
    "encode",
    "folder_key",
    "indexed_only",
    "recordable",
    "settled",
]

SETTLED_NS = 2_000_000_000
TRUSTED = os.name != "nt"
# Part of every record's context: raise it when the walk takes an entry otherwise than before
# (the kinds of file names are in the context already), so that no older record is used.
_FORMAT = "2"
# Fields are joined by tab and names within a field by "/", which no file name holds; a name
# holding a tab or a line break is never recorded (its folder is listed every time).
_SEP = "\t"
_UNSAFE = ("\t", "\n", "\r")
_ESCAPES = frozenset(("", ".", ".."))

# (key, subfolder names, file names): plain tuples, since a no-op pass over MDN reads 13,000.
Listing = tuple[str, tuple[str, ...], tuple[str, ...]]


@dataclass
class FolderListings:
    """What one walk may take from memory (`old`, by vault-relative folder, "" the vault) and
    what it saw (`found`: the listings it could record), with `hits` and `misses` counted."""

    old: Mapping[str, Listing]
    started_ns: int  # time.time_ns() when the walk began: the racy-folder test
    found: dict[str, Listing] = field(default_factory=dict)
    hits: int = 0
    misses: int = 0

    def changed(self) -> bool:
        """Whether what it found differs from what it had: worth storing again."""
        return self.misses > 0 or len(self.found) != len(self.old)


def folder_key(st: os.stat_result) -> str:
    return f"{st.st_dev}:{st.st_ino}:{st.st_ctime_ns}:{st.st_mtime_ns}"


def settled(st: os.stat_result, started_ns: int) -> bool:
    """Whether a folder's last change is old enough that a later one cannot share its stamps."""
    limit = started_ns - SETTLED_NS
    return st.st_ctime_ns < limit and st.st_mtime_ns < limit


def recordable(names: Iterable[str]) -> bool:
    return not any(bad in name for name in names for bad in _UNSAFE)


def context_of(root: str, include: Sequence[str], exclude: Sequence[str], documents: bool) -> str:
    """What the recorded listings depend on besides the folders: the vault, its folder rules, the
    file-kind rules (a release that reads a new kind must list every folder once), the user."""
    who = [os.getuid(), sorted(os.getgroups())] if hasattr(os, "getuid") else []
    kinds = [sorted(NOTE_SUFFIXES), sorted(DOCUMENT_SUFFIXES), EXCALIDRAW_SUFFIX]
    return json.dumps([_FORMAT, root, list(include), list(exclude), documents, kinds, who])


def indexed_only(found: Mapping[str, Listing], notes: Iterable[str]) -> dict[str, Listing]:
    """The listings that hold only names the index holds: the folder, each subfolder and each
    file it yields lie on the path of one of `notes` (the notes kept, secrets refused)."""
    kept = set(notes)
    folders = {""}
    for path in kept:
        cut = path.rfind("/")
        while cut > 0:
            folder = path[:cut]
            if folder in folders:
                break
            folders.add(folder)
            cut = path.rfind("/", 0, cut)
    out: dict[str, Listing] = {}
    for rel, listing in found.items():
        if rel not in folders:
            continue
        prefix = f"{rel}/" if rel else ""
        if all(prefix + name in folders for name in listing[1]) and all(
            prefix + name in kept for name in listing[2]
        ):
            out[rel] = listing
    return out


def encode(listings: Mapping[str, Listing], context: str) -> str:
    fields = [context]
    for rel, (key, subfolders, files) in listings.items():
        fields += (rel, key, "/".join(subfolders), "/".join(files))
    return base64.b64encode(zlib.compress(_SEP.join(fields).encode("utf-8"), 6)).decode("ascii")


def decode(text: str | None, context: str) -> dict[str, Listing]:
    """The listings recorded for this `context`; none when there are none, they were recorded for
    another vault or other rules, or the record cannot be read (it is only a shortcut)."""
    if not text:
        return {}
    try:
        raw = zlib.decompress(base64.b64decode(text, validate=True)).decode("utf-8")
    except (binascii.Error, zlib.error, UnicodeDecodeError, ValueError):
        return {}
    if not raw.startswith(context + _SEP) or "\x00" in raw:
        return {}
    parts = raw[len(context) + 1 :].split(_SEP)
    if len(parts) % 4:
        return {}
    subfolders = [tuple(s.split("/")) if s else () for s in parts[2::4]]
    files = [tuple(f.split("/")) if f else () for f in parts[3::4]]
    # The walk joins these names to folder paths: none may lead out of its folder (a record is
    # only written by the index, but the index file is not the vault).
    if not _ESCAPES.isdisjoint(chain.from_iterable(chain(subfolders, files))):
        return {}
    return dict(zip(parts[0::4], zip(parts[1::4], subfolders, files)))
