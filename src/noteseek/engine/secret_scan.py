"""Dry run of the scrubber over a vault: which notes hold what kind of secret, never the values.

``scan_secrets(vault)`` reads every note the indexer would read (same folder rules,
same decoding), runs the scrubber's detection on the note's text, on the frontmatter
fields the indexer scrubs again after YAML parsing (title, aliases, tags, type) and on
the note's path, and returns frozen dataclasses.  Nothing is written anywhere.

Documents (PDF, Office, spreadsheets, CSV, HTML, ...) are read as the indexer reads them, in
its extraction worker process with the same limits, and their text, section names and
properties are scanned; OCR is not run (an image or a scanned page is named as not scanned).

A path is an identity as well as text, so a secret in a file or folder name is
reported as a finding at line 0 and the path itself is shown scrubbed
(``FileScan.path``), so the report can be printed or shared without the value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

from ..core.file_kinds import IMAGE_KIND
from ..core.frontmatter import FrontmatterError, parse_frontmatter
from ..errors import VaultNotFoundError
from ..secrets.scrubber import Allowlist, AllowlistError, Finding, find_secrets, scrub
from ..settings import SHOWN_FINGERPRINT_CHARS
from .vault_walk import DEFAULT_EXCLUDE, DEFAULT_MAX_FILE_BYTES, decode_note, walk_vault

if TYPE_CHECKING:
    from ..documents import ExtractionPool

__all__ = ["DOCUMENT_LINE", "PATH_LINE", "FileScan", "ScanReport", "load_allowlist", "scan_secrets"]

#: ``Finding.line`` of a secret found in the note's path rather than in its text.
PATH_LINE = 0
#: ``Finding.line`` of a secret in a document's text (its lines are the reader's, not the file's).
DOCUMENT_LINE = -1


@dataclass(frozen=True)
class FileScan:
    """One note with findings: its path (scrubbed), counts per pattern, and each finding."""

    path: str
    findings: tuple[Finding, ...]
    counts: Mapping[str, int] = field(hash=False)
    path_has_secret: bool = False


@dataclass(frozen=True)
class ScanReport:
    """A whole vault: notes read, notes with findings, totals per pattern, notes passed over."""

    vault: str
    files_scanned: int
    files: tuple[FileScan, ...]
    totals: Mapping[str, int] = field(hash=False)
    skipped: tuple[tuple[str, str], ...] = ()

    @property
    def findings(self) -> int:
        """Number of values the indexer would redact."""
        return sum(self.totals.values())

    def to_json(self) -> dict[str, object]:
        """One JSON-ready document: files -> {pattern: count}, totals, fingerprints (no values)."""
        return {
            "vault": self.vault,
            "files_scanned": self.files_scanned,
            "files_with_findings": len(self.files),
            "findings": self.findings,
            "totals": dict(self.totals),
            "files": {f.path: dict(f.counts) for f in self.files},
            "fingerprints": [
                {
                    "path": f.path,
                    "line": finding.line,
                    "pattern": finding.pattern,
                    "sha256": finding.fingerprint[:SHOWN_FINGERPRINT_CHARS],
                }
                for f in self.files
                for finding in f.findings
            ],
            "skipped": [{"path": p, "reason": r} for p, r in self.skipped],
        }


def load_allowlist(path: str | Path) -> Allowlist:
    """Read an allow file (``regex:<pattern>`` / ``sha256:<prefix>`` lines, ``#`` comments)."""
    file = Path(path).expanduser()
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise AllowlistError(f"cannot read allow file {file}: {exc.strerror or exc}") from None
    return Allowlist.parse(text, source=str(file))


def scan_secrets(
    vault: str | Path,
    *,
    allow: Allowlist | None = None,
    include: Sequence[str] = (),
    exclude: Sequence[str] = DEFAULT_EXCLUDE,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    documents: bool = True,
) -> ScanReport:
    """Find what indexing ``vault`` would scrub, per note, document and pattern; reads, never
    writes. `documents=False` scans the Markdown notes only."""
    root = Path(vault).expanduser()
    if not root.is_dir():
        raise VaultNotFoundError(f"vault folder {root} does not exist or is not a folder")
    notes, passed_over = walk_vault(root, include=include, exclude=exclude, documents=documents)
    skipped = [(scrub(p, allow=allow).text, reason) for p, reason in passed_over]
    files: list[FileScan] = []
    seen_paths: set[str] = set()
    with _DocumentReader() as reader:
        for note in notes:
            shown = scrub(note.rel_path, allow=allow).text
            if note.size > max_file_bytes:
                skipped.append((shown, "too large"))
                continue
            if note.is_document:
                text, problem = reader.text(note.abs_path, note.kind)
            else:
                text, problem = _note_text(note.abs_path)
            if text is None:
                skipped.append((shown, problem or "unread"))
                continue
            in_path = tuple(
                Finding(f.pattern, PATH_LINE, f.fingerprint)
                for f in find_secrets(note.rel_path, allow=allow)
            )
            found = find_secrets(text, allow=allow)
            if note.is_document:
                found = tuple(Finding(f.pattern, DOCUMENT_LINE, f.fingerprint) for f in found)
            else:
                found += _frontmatter_findings(text, allow)
            findings = in_path + found
            if not findings:
                continue
            path = _unique(shown, seen_paths)
            files.append(FileScan(path, findings, _count(findings), path_has_secret=bool(in_path)))
    totals = _count(tuple(f for scan in files for f in scan.findings))
    return ScanReport(str(root), len(notes), tuple(files), totals, tuple(skipped))


def _note_text(path: Path) -> tuple[str | None, str | None]:
    """A note's text as the indexer decodes it, or (None, why not)."""
    try:
        decoded = decode_note(path.read_bytes())
    except OSError as exc:
        return None, f"cannot read: {exc}"
    return decoded.text, decoded.problem


class _DocumentReader:
    """Documents read as the indexer reads them: in its extraction worker, OCR off. The worker
    starts with the first document, so a vault of notes only starts none."""

    def __init__(self) -> None:
        self._pool: ExtractionPool | None = None

    def __enter__(self) -> _DocumentReader:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._pool is not None:
            self._pool.close()

    def text(self, path: Path, kind: str | None) -> tuple[str | None, str | None]:
        """Everything of the document the indexer scrubs, as one text, or (None, why not)."""
        if kind == IMAGE_KIND:
            return None, "an image: its text is read by OCR when indexed, and scan runs no OCR"
        if self._pool is None:
            # deferred: the document readers and their worker process, with the first document
            from ..documents import ExtractionLimits, ExtractionPool

            self._pool = ExtractionPool(workers=1, limits=ExtractionLimits(ocr=False))
        result = self._pool.extract(path)
        if result.document is None:
            return None, result.reason or str(result.outcome.value)
        doc = result.document
        parts = [v for _, v in doc.metadata.fields]
        parts += [f"{unit.breadcrumb}\n{unit.text}" for unit in doc.units]
        return "\n".join(parts), None


def _frontmatter_findings(text: str, allow: Allowlist | None) -> tuple[Finding, ...]:
    """Secrets the raw text hid from the scrubber but YAML parsing reveals (escapes, folding)."""
    try:
        meta, _body = parse_frontmatter(scrub(text, allow=allow).text)
    except FrontmatterError:
        return ()
    values = [meta.title or "", meta.type or "", *meta.aliases, *meta.tags]
    return tuple(
        Finding(f.pattern, 1, f.fingerprint)
        for value in values
        if value
        for f in find_secrets(value, allow=allow)
    )


def _count(findings: tuple[Finding, ...]) -> Mapping[str, int]:
    counts: dict[str, int] = {}
    for finding in findings:
        counts[finding.pattern] = counts.get(finding.pattern, 0) + 1
    return MappingProxyType(dict(sorted(counts.items())))


def _unique(path: str, seen: set[str]) -> str:
    """Two paths may scrub to the same text; keep report keys distinct."""
    candidate, n = path, 1
    while candidate in seen:
        n += 1
        candidate = f"{path} ({n})"
    seen.add(candidate)
    return candidate
