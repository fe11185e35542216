"""Writes an agent may make (`noteseek mcp --allow-writes`): save a new note through intake, or
append to an existing note. Both scrub first, write atomically, log to intake's decision log and
index the written file at once; `noteseek intake --undo RUN` takes either back.

- `save_note` scrubs the title, text and tags, writes the note into a staging folder of its own
  (`.noteseek/agent-inbox/RUN/` in the vault: a dot-folder, which no index reads), and runs
  intake on that folder: scored, then routed to a domain folder, queued for review or set aside,
  as `noteseek intake` files an inbox item, except that nothing is set aside: a note below the
  review threshold is queued for review (`_intake/review/`, searched like the rest), since the
  user asked for it to be kept. Undo moves it back into the staging folder, out of the vault's
  searchable part.
- `append_to_note` adds scrubbed text at the end of a note, or at the end of one section when a
  heading is named (a new section at the end when the note has no such heading). Only a Markdown
  note inside the vault: no absolute path, no `..`, no symlink on the way, no dot-folder, no
  document (PDF, drawing, ...). The log keeps the inserted text and its offset, so undo removes
  exactly it (and refuses when the note was edited there since).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import re
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from ..core.file_kinds import is_note_file_name
from ..engine.index import Index
from ..engine.note_access import check_note_path, normalise_note_path
from ..errors import NoteAccessError, UnsafeNotePathError
from ..secrets.scrubber import scrub
from .config import IntakeConfig
from .domains import VaultModel
from .errors import IntakeError
from .log import DecisionLog
from .run import default_domains, new_run_id, run_intake

__all__ = ["AppendResult", "SavedNote", "append_to_note", "save_note", "vault_model"]

STAGING = ".noteseek/agent-inbox"
MAX_WRITE_CHARS = 200_000  # one call's text: a note, not a dump
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t#]*$")
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")


@dataclass(frozen=True)
class SavedNote:
    """Where `save_note` filed the note, why, and the run id that undoes it."""

    path: str  # vault-relative
    decision: str  # route | review | set_aside
    domain: str | None
    reason: str
    run_id: str
    searchable: bool  # False when set aside: kept, but out of the index
    secrets_scrubbed: int


@dataclass(frozen=True)
class AppendResult:
    """What `append_to_note` wrote, where, and the run id that undoes it."""

    path: str
    heading: str | None  # the section appended to (None: the end of the note)
    created_heading: bool  # the note had no such heading: a new section was added at its end
    run_id: str
    secrets_scrubbed: int


def _check_text(text: str, what: str) -> None:
    if not isinstance(text, str) or not text.strip():
        raise IntakeError(f"{what} is empty; give the text to write")
    if len(text) > MAX_WRITE_CHARS:
        raise IntakeError(
            f"{what} has {len(text):,} characters, more than {MAX_WRITE_CHARS:,}; "
            "split it into several notes"
        )


def _slug(title: str) -> str:
    name = re.sub(r"[\\/:*?\"<>|#^\[\]\x00-\x1f]+", " ", title)
    name = " ".join(name.split()).strip(" .")
    return (name[:80].rstrip(" .") or "note") + ".md"


def _yaml_string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a YAML string


def _atomic_write(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """Replace `path` with `data` in one rename (a reader sees the old file or the new one)."""
    temp = path.parent / f".noteseek-{uuid.uuid4().hex}.tmp"
    try:
        with temp.open("xb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(temp, mode)
        os.replace(temp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()


def save_note(
    title: str,
    text: str,
    *,
    vault: str | Path,
    index: Index,
    tags: list[str] | None = None,
    config: IntakeConfig | None = None,
    model: VaultModel | None = None,
) -> SavedNote:
    """Scrub, write and file one new note through intake; index it at once. `model`: the vault's
    domain model from `vault_model` (a long-lived caller keeps one: it takes seconds to build on
    a large vault, and a few notes more do not change what the domains are about)."""
    _check_text(title, "the title")
    _check_text(text, "the text")
    allow = index.options.allow
    clean_title = scrub(" ".join(title.split()), allow=allow)
    clean_text = scrub(text, allow=allow)
    clean_tags = [scrub(t.strip().lstrip("#"), allow=allow) for t in tags or () if t.strip()]
    scrubbed = (
        sum(clean_title.counts.values())
        + sum(clean_text.counts.values())
        + sum(sum(t.counts.values()) for t in clean_tags)
    )
    root = Path(vault).expanduser()
    if not root.is_dir():
        raise IntakeError(f"vault folder {str(root)!r} does not exist")
    head = ["---", f"title: {_yaml_string(clean_title.text)}"]
    if clean_tags:
        head.append("tags: [" + ", ".join(_yaml_string(t.text) for t in clean_tags) + "]")
    head += ["---", f"# {clean_title.text}", ""]
    body = clean_text.text.rstrip("\n") + "\n"
    # Only scrubbed text is ever written: the credential never reaches the disk, not even the
    # staging folder.
    data = ("\n".join(head) + "\n" + body).encode("utf-8")
    staging = root / STAGING / uuid.uuid4().hex[:12]
    staging.mkdir(parents=True)
    _atomic_write(staging / _slug(clean_title.text), data)
    # The floor is the review queue: a note saved at the user's request must stay searchable, so
    # what intake would set aside is queued for review instead (still scored, still undoable).
    config = dataclasses.replace(config or IntakeConfig(), review_threshold=0.0)
    report = run_intake(
        staging, vault=root, index=index, config=config, refresh=False, targeted=True, model=model
    )
    with contextlib.suppress(OSError):
        staging.rmdir()  # empty once filed; an undo makes it again to put the note back
    if not report.items or report.items[0].destination is None:
        problem = report.skipped[0].reason if report.skipped else "intake did not file it"
        raise IntakeError(f"the note was not saved: {problem}")
    item = report.items[0]
    a = item.assessment
    assert item.destination is not None
    return SavedNote(
        path=item.destination,
        decision=a.decision,
        domain=a.domain,
        reason=a.reason,
        run_id=report.run_id,
        searchable=a.decision != "set_aside",
        secrets_scrubbed=scrubbed,
    )


def vault_model(
    vault: str | Path, *, index: Index, config: IntakeConfig | None = None
) -> VaultModel:
    """The domain model `save_note` scores against, as `run_intake` builds it for the staging
    folder (the same domains and ignored folders)."""
    config = config or IntakeConfig()
    root = Path(vault).expanduser()
    managed = (config.review_folder, config.set_aside_folder, "_intake", STAGING)
    domains = config.domains or default_domains(root, skip=(STAGING,))
    return VaultModel.from_index(
        index, domains=domains, ignore=managed, neighbours=config.neighbours
    )


def _note_target(root: Path, path: str) -> tuple[str, Path]:
    """The vault-relative path and file of a note an agent may append to, or an error."""
    rel = normalise_note_path(path)
    parts = rel.split("/")
    if any(p.startswith(".") for p in parts):
        raise UnsafeNotePathError(
            f"{rel!r} is in a hidden folder or is a hidden file; only notes of the vault can be "
            "written"
        )
    if not is_note_file_name(parts[-1]):
        raise NoteAccessError(
            f"{rel!r} is not a Markdown note (documents and drawings are never written); "
            "give a .md note's path, or use save_note for a new note"
        )
    info = check_note_path(root, rel)  # symlinks anywhere on the way are refused here
    if not os.path.isfile(root / rel) or info.st_nlink < 1:
        raise NoteAccessError(f"{rel!r} is not a regular file")
    target = (root / rel).resolve()
    if not target.is_relative_to(root.resolve()):
        raise UnsafeNotePathError(f"{rel!r} leads outside the vault")
    return rel, target


def _insertion(lines: list[str], heading: str) -> tuple[int | None, int]:
    """(index of the line to insert before, level of the heading found) — None when the note has
    no heading of that text (case-insensitive; headings inside code blocks do not count)."""
    wanted = " ".join(heading.strip().lstrip("#").split()).casefold()
    fence: str | None = None
    found: int | None = None
    level = 0
    for i, line in enumerate(lines):
        opened = _FENCE.match(line)
        if opened:
            mark = opened.group(1)
            fence = (
                None
                if fence and mark[0] == fence[0] and len(mark) >= len(fence)
                else (fence or mark)
            )
            continue
        if fence:
            continue
        m = _HEADING.match(line.rstrip("\r\n"))
        if not m:
            continue
        if found is not None and len(m.group(1)) <= level:
            return i, level
        if found is None and " ".join(m.group(2).split()).casefold() == wanted:
            found, level = i, len(m.group(1))
    return (len(lines), level) if found is not None else (None, 0)


def append_to_note(
    path: str,
    text: str,
    *,
    vault: str | Path,
    index: Index,
    heading: str | None = None,
    config: IntakeConfig | None = None,
) -> AppendResult:
    """Append scrubbed `text` to an existing note (under `heading` when given); log and index it."""
    _check_text(text, "the text")
    if heading is not None and (not heading.strip() or "\n" in heading):
        raise IntakeError("the heading must be one line of text (or left out)")
    config = config or IntakeConfig()
    root = Path(vault).expanduser()
    if not root.is_dir():
        raise IntakeError(f"vault folder {str(root)!r} does not exist")
    rel, target = _note_target(root, path)
    allow = index.options.allow
    clean = scrub(text.strip("\n"), allow=allow)
    clean_heading = scrub(" ".join(heading.split()), allow=allow).text if heading else None
    old = target.read_bytes()
    try:
        content = old.decode("utf-8")
    except UnicodeDecodeError:
        raise NoteAccessError(f"{rel!r} is not UTF-8 text; it is left as it is") from None
    newline = "\r\n" if "\r\n" in content else "\n"
    lines = content.splitlines(keepends=True)
    created = False
    block = clean.text.replace("\n", newline)
    if clean_heading is None:
        at = len(lines)
    else:
        found, _ = _insertion(lines, clean_heading)
        if found is None:
            created = True
            at = len(lines)
            block = f"## {clean_heading}{newline}{newline}{block}"
        else:
            at = found
    before = "".join(lines[:at])
    after = "".join(lines[at:])
    if not before or before.endswith(("\n\n", "\r\n\r\n")):
        lead = ""
    elif before.endswith("\n"):
        lead = newline  # one blank line between the old text and the new
    else:
        lead = newline * 2
    inserted = f"{lead}{block}{newline}"
    if after:
        inserted += newline  # a blank line before the next section's heading
    offset = len(before.encode("utf-8"))
    data = before.encode("utf-8") + inserted.encode("utf-8") + after.encode("utf-8")
    run_id = new_run_id()
    log = DecisionLog(root / config.log_file)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    log.append(
        {"event": "run", "run": run_id, "at": stamp, "kind": "append", "vault": str(root.resolve())}
    )
    record = {
        "event": "append",
        "run": run_id,
        "path": rel,
        "dst": str(target),
        "inserted": inserted,
        "offset": offset,
        "sha256": hashlib.sha256(data).hexdigest(),
    }
    log.append({**record, "phase": "start"})
    _atomic_write(target, data, mode=os.stat(target).st_mode & 0o7777)
    log.append({**record, "phase": "done"})
    index.update(root, paths=[rel])
    return AppendResult(rel, clean_heading, created, run_id, sum(clean.counts.values()))
