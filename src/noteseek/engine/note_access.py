"""Read one indexed note, or one section of it, safely: for adapters that hand notes to an agent.

Three guarantees, each enforced here rather than in the adapters:

- **Inside the vault only.** A path is vault-relative: absolute paths, drive letters, `~`, `..`
  and NUL are refused before anything touches the disk, and no path component may be a symlink
  (checked with `lstat`, component by component, so a symlinked folder is never traversed).
- **Indexed notes only.** A file the index does not list as indexed (never seen, skipped, in a
  dot-folder, not a note or document) is refused, with the next step in the message. A document
  (PDF, slides, sheets) is read from its stored, scrubbed chunks (`document_access`).
- **Never an unscrubbed secret.** The file is read and the whole text goes through the same
  scrubbing the indexer applies (`note_scrub.scrub_note`: with the values its frontmatter fields
  reveal), before a section is cut out of it. Why read the file instead of
  rebuilding the note from its stored (already scrubbed) chunks: the chunker drops frontmatter,
  sections under 30 characters and link-list sections (Related, See Also), so the chunks are not
  the note. Scrubbing the whole text first, as the indexer does, keeps rules that need note-wide
  context (a Mailgun key only counts in a note that says "mailgun") working. No allow-list is
  applied, so a known false positive may be redacted here: the safe direction.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import asdict, dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from ..core.chunker import SECTION_SEPARATOR, scan_headings
from ..core.display import bounded_repr
from ..core.field_caps import NAME_CHARS, cap_text
from ..core.frontmatter import FrontmatterError, parse_frontmatter
from ..errors import (
    NoteAccessError,
    NoteNotIndexedError,
    NoteUnreadableError,
    SectionNotFoundError,
    UnsafeNotePathError,
)
from .document_access import DocumentPart, document_text
from .note_scrub import scrub_note
from .vault_walk import DEFAULT_MAX_FILE_BYTES, NoteFile, decode_note, read_note

if TYPE_CHECKING:
    from ..storage.protocol import Storage

__all__ = [
    "NoteAccessError",
    "NoteNotIndexedError",
    "NoteText",
    "NoteUnreadableError",
    "SectionNotFoundError",
    "UnsafeNotePathError",
    "check_note_path",
    "extract_section",
    "normalise_note_path",
    "note_path_spellings",
    "note_sections",
    "read_indexed_note",
]

_DRIVE = re.compile(r"^[A-Za-z]:")
_SPACES = re.compile(r"\s+")
_NEWLINES = re.compile(r"\r\n?")
_SHOWN_PATH_CHARS = 200
_SUGGESTIONS = 3


@dataclass(frozen=True)
class NoteText:
    """A note (or one section of it) as an agent may see it: scrubbed, with its section names."""

    path: str
    title: str | None
    text: str
    section: str | None  # the section returned, or None for the whole note
    sections: tuple[str, ...]  # every section name, as search shows them
    redacted: int  # secrets replaced by [REDACTED:...] in the whole note
    changed_since_indexed: bool  # the file on disk differs from what was indexed
    # Documents: the kind ("pdf", ...; None for a note), the page, slide or sheet returned (None:
    # all of it), and every page/slide/sheet it has (`p. 1`, `slide 2`, `sheet Data`).
    kind: str | None = None
    page: int | None = None
    slide: int | None = None
    sheet: str | None = None
    locations: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """Every field (sections as a list), as the web API's `/api/notes/{path}` sends it."""
        data = asdict(self)
        data["sections"] = list(self.sections)
        data["locations"] = list(self.locations)
        return data


def _shown(path: str) -> str:
    return repr(path if len(path) <= _SHOWN_PATH_CHARS else path[:_SHOWN_PATH_CHARS] + "…")


def normalise_note_path(path: str) -> str:
    """The vault-relative, '/'-separated form of `path`; refuses anything that could leave the vault.

    Pure: looks at the string only. `./a//b.md` becomes `a/b.md`; surrounding spaces go and a
    '\\' is read as '/' (see `note_path_spellings` for the path exactly as written).
    """
    raw = path.strip()
    if not raw or "\x00" in raw:
        raise UnsafeNotePathError(
            "give a note's path relative to the vault, as search returns it (e.g. 'howto/x.md')"
        )
    posix = raw.replace("\\", "/")  # a Windows separator must not smuggle in `..\\..`
    if posix.startswith(("/", "~")) or _DRIVE.match(posix):
        raise UnsafeNotePathError(
            f"{_shown(path)} is absolute; give the path relative to the vault, as search returns it"
        )
    if ".." in posix.split("/"):
        raise UnsafeNotePathError(
            f"{_shown(path)} contains '..'; only notes inside the indexed vault can be read"
        )
    return str(PurePosixPath(posix))


def note_path_spellings(path: str) -> tuple[str, ...]:
    """The vault-relative paths `path` may name, most literal first: as written (only './' and
    doubled slashes dropped: ' leading space.md' and 'a\\b/x.md' are real names on Linux and
    macOS, and search returns them so), then `normalise_note_path`'s form. Refuses what that
    refuses, so neither can leave the vault: the literal one has no '..' or absolute start
    under either reading of '\\'."""
    lenient = normalise_note_path(path)
    return tuple(dict.fromkeys((str(PurePosixPath(path)), lenient)))


def check_note_path(root: Path, rel: str) -> os.stat_result:
    """`lstat` of the file at `root/rel`, after checking that no component is a symlink.

    `rel` must come from `normalise_note_path`. Raises UnsafeNotePathError for a symlink anywhere
    on the way and NoteUnreadableError when the file is missing or not a regular file.
    """
    current = root
    parts = rel.split("/")
    for depth, part in enumerate(parts, start=1):
        current = current / part
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            raise NoteUnreadableError(
                f"{_shown(rel)} does not exist in the vault (moved or deleted?): "
                "run 'noteseek index VAULT' to update the index, then search again"
            ) from None
        except OSError as exc:
            raise NoteUnreadableError(f"cannot read {_shown(rel)}: {exc.strerror or exc}") from None
        if stat.S_ISLNK(info.st_mode):
            what = "is a symlink" if depth == len(parts) else "goes through a symlinked folder"
            raise UnsafeNotePathError(
                f"{_shown(rel)} {what}; symlinks are not followed, read the note by its real "
                f"path{_link_target(root, current, parts[depth:])}"
            )
    if not stat.S_ISREG(info.st_mode):
        raise NoteUnreadableError(f"{_shown(rel)} is not a regular file")
    return info


def _link_target(root: Path, link: Path, rest: list[str]) -> str:
    """' (…)' naming where a symlink leads when that is inside the vault; '' otherwise."""
    try:
        target = link.resolve(strict=True).joinpath(*rest)
        rel = target.relative_to(root.resolve())
    except (OSError, RuntimeError, ValueError):
        return ""  # a loop, a dangling link or a target outside the vault: name nothing
    return f" ({str(rel.as_posix())!r})"


@dataclass(frozen=True)
class _Section:
    names: tuple[str, ...]  # the name search shows first, then other names it answers to
    start: int  # first line (the heading itself; 0 for the preamble)
    end: int


def _key(name: str) -> str:
    return _SPACES.sub(" ", name).strip().casefold()


def _sections(body: str, title: str) -> list[_Section]:
    """The note's sections with the names the chunker gives them (H2, `H2 › H3`), plus deeper headings."""
    lines = body.split("\n")
    headings = scan_headings(lines)
    first_h1 = next((h for h in headings if h.level == 1 and h.text), None)
    out: list[_Section] = []
    first_split = next((h.line for h in headings if h.level <= 2 and h is not first_h1), len(lines))
    h1_line = first_h1.line if first_h1 is not None else -1
    if any(line.strip() for n, line in enumerate(lines[:first_split]) if n != h1_line):
        out.append(_Section((title,), 0, first_split))
    parent = ""
    for i, heading in enumerate(headings):
        if heading is first_h1 or not heading.text:
            continue
        end = next((h.line for h in headings[i + 1 :] if h.level <= heading.level), len(lines))
        if heading.level <= 2:
            parent = heading.text
            names: tuple[str, ...] = (heading.text,)
        elif parent:
            names = (f"{parent}{SECTION_SEPARATOR}{heading.text}", heading.text)
        else:
            names = (heading.text,)
        out.append(_Section(names, heading.line, end))
    return out


def _split_note(text: str, title: str | None) -> tuple[str, str]:
    """(body without frontmatter, title for the preamble)."""
    try:
        meta, body = parse_frontmatter(text)
    except FrontmatterError:
        meta, body = None, text
    return body, title or (meta.title if meta and meta.title else "") or "(top of the note)"


def note_sections(text: str, *, title: str | None = None) -> tuple[str, ...]:
    """Section names of a note, in order, as search reports them (the preamble is the title)."""
    body, heading = _split_note(_NEWLINES.sub("\n", text), title)
    return tuple(s.names[0] for s in _sections(body, heading))


def extract_section(text: str, section: str, *, title: str | None = None) -> str:
    """The text of the first section named `section` (case and spacing ignored), heading included.

    A section runs to the next heading of the same or a higher level, so an H2 includes its H3s.
    Raises SectionNotFoundError listing the note's sections.
    """
    return _find_section(text, section, title=title)[1]


def _find_section(text: str, section: str, *, title: str | None) -> tuple[str, str]:
    """(the section's name as search shows it, its text)."""
    body, heading = _split_note(_NEWLINES.sub("\n", text), title)
    wanted = _key(section)
    found = _sections(body, heading)
    lines = body.split("\n")
    for part in found:
        # A heading past NAME_CHARS is indexed (and shown by search) cut: both spellings answer.
        names = (*part.names, *(cap_text(n, NAME_CHARS) for n in part.names if len(n) > NAME_CHARS))
        if any(_key(name) == wanted for name in names):
            return part.names[0], "\n".join(lines[part.start : part.end]).strip("\n")
    available = tuple(s.names[0] for s in found)
    raise SectionNotFoundError(
        f"no section {bounded_repr(section)} in this note; its sections are: "
        + "; ".join(bounded_repr(name, 100) for name in available[:40])
        + (" …" if len(available) > 40 else ""),
        available,
    )


def _suggestions(store: Storage, rel: str) -> list[str]:
    """Indexed notes with the same file name (case-insensitive), for a 'did you mean'."""
    name = rel.rsplit("/", 1)[-1].casefold()
    if not name.endswith(".md"):
        name += ".md"
    return store.similar_paths(name, _SUGGESTIONS)


def read_indexed_note(
    store: Storage,
    path: str,
    *,
    section: str | None = None,
    part: DocumentPart | None = None,
) -> NoteText:
    """A note of the index's vault by its vault-relative path, scrubbed; one section if named.
    A document is read from its stored chunks (see `document_access`); `part` narrows it to one
    page, slide or sheet."""
    spellings = note_path_spellings(path)
    rel = spellings[0]
    if store.vault_location(rel) is None and not store.file_paths():
        raise NoteNotIndexedError("this index has no notes yet: run 'noteseek index VAULT' first")
    known = None
    # The path as written first: a name search returned must read back exactly.
    for spelling in spellings:
        # Agents often drop the extension ('howto/git-rebase-recipes').
        suffixed = () if spelling.endswith(".md") else (spelling + ".md",)
        for candidate in (spelling, *suffixed):
            known = store.indexed_file(candidate)
            if known is not None:
                rel = candidate
                break
        if known is not None:
            break
    if known is None or known.status == "skipped":
        why = f" (it was skipped: {known.problem})" if known is not None and known.problem else ""
        hint = _suggestions(store, rel)
        maybe = f"; did you mean {', '.join(repr(p) for p in hint)}?" if hint else ""
        raise NoteNotIndexedError(
            f"{_shown(rel)} is not an indexed note{why}{maybe or '.'} Use search to find notes "
            "by content, or run 'noteseek index VAULT' if the note is new"
        )
    mtime_ns, size, title = known.mtime_ns, known.size, known.title
    location = store.vault_location(rel)
    if location is None:
        raise NoteNotIndexedError("this index has no notes yet: run 'noteseek index VAULT' first")
    root, inner = Path(location[0]), location[1]
    info = check_note_path(root, inner)
    asked = part or DocumentPart()
    if known.kind is not None:
        chunks = store.file_chunks(rel)
        found = document_text(chunks, part=asked, section=section)
        return NoteText(
            path=rel,
            title=title,
            text=found.text,
            section=found.section,
            sections=found.sections,
            redacted=sum(c.text.count("[REDACTED:") for c in chunks),
            changed_since_indexed=(info.st_mtime_ns, info.st_size) != (mtime_ns, size),
            kind=known.kind,
            page=asked.page,
            slide=asked.slide,
            sheet=asked.sheet,
            locations=found.locations,
        )
    # read_note re-checks at read time (resolves inside the vault, opens with O_NOFOLLOW), so a
    # symlink swapped in after the lstat walk still cannot lead out of the vault.
    raw = read_note(
        NoteFile(inner, root / inner, info.st_mtime_ns, info.st_size),
        root,
        max_bytes=DEFAULT_MAX_FILE_BYTES,
    )
    if raw.data is None:
        raise NoteUnreadableError(f"cannot read {_shown(rel)}: {raw.problem}")
    decoded = decode_note(raw.data)
    if decoded.text is None:
        raise NoteUnreadableError(f"cannot read {_shown(rel)}: {decoded.problem}")
    # The whole note is scrubbed before anything is cut from it (see the module docstring).
    scrubbed = scrub_note(_NEWLINES.sub("\n", decoded.text.lstrip("\ufeff")))
    text = scrubbed.text
    sections = note_sections(text, title=title)
    if asked != DocumentPart():
        raise SectionNotFoundError(
            f"{_shown(rel)} is a Markdown note: it has sections, not pages, slides or sheets; "
            "ask for one of its sections instead",
            sections,
        )
    name = None
    if section is not None and section.strip():
        name, text = _find_section(text, section, title=title)
    return NoteText(
        path=rel,
        title=title,
        text=text,
        section=name,
        sections=sections,
        redacted=sum(scrubbed.counts.values()),
        changed_since_indexed=(raw.mtime_ns, raw.size) != (mtime_ns, size),
    )
