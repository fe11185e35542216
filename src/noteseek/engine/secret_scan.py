"""Dry run of the scrubber over a vault: which notes hold what kind of secret, never the values.

``scan_secrets(vault)`` reads every note the indexer would read (same folder rules,
same decoding), runs the scrubber's detection on the note's text, on the frontmatter
fields the indexer scrubs again after YAML parsing (title, aliases, tags, type) and on
the note's path, and returns frozen dataclasses.  Nothing is written anywhere.

A path is an identity as well as text, so a secret in a file or folder name is
reported as a finding at line 0 and the path itself is shown scrubbed
(``FileScan.path``), so the report can be printed or shared without the value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from ..core.frontmatter import FrontmatterError, parse_frontmatter
from ..errors import VaultNotFoundError
from ..secrets.scrubber import Allowlist, AllowlistError, Finding, find_secrets, scrub
from ..settings import SHOWN_FINGERPRINT_CHARS
from .vault_walk import DEFAULT_EXCLUDE, DEFAULT_MAX_FILE_BYTES, decode_note, walk_vault

__all__ = ["FileScan", "ScanReport", "load_allowlist", "scan_secrets"]

#: ``Finding.line`` of a secret found in the note's path rather than in its text.
PATH_LINE = 0


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
) -> ScanReport:
    """Find what indexing ``vault`` would scrub, per note and pattern; reads, never writes."""
    root = Path(vault).expanduser()
    if not root.is_dir():
        raise VaultNotFoundError(f"vault folder {root} does not exist or is not a folder")
    # Documents are scrubbed when indexed too, but this scan reads Markdown notes only.
    notes, passed_over = walk_vault(root, include=include, exclude=exclude, documents=False)
    skipped = [(scrub(p, allow=allow).text, reason) for p, reason in passed_over]
    files: list[FileScan] = []
    seen_paths: set[str] = set()
    for note in notes:
        if note.size > max_file_bytes:
            skipped.append((scrub(note.rel_path, allow=allow).text, "too large"))
            continue
        try:
            decoded = decode_note(note.abs_path.read_bytes())
        except OSError as exc:
            skipped.append((scrub(note.rel_path, allow=allow).text, f"cannot read: {exc}"))
            continue
        if decoded.text is None:
            skipped.append((scrub(note.rel_path, allow=allow).text, decoded.problem or "unread"))
            continue
        in_path = tuple(
            Finding(f.pattern, PATH_LINE, f.fingerprint)
            for f in find_secrets(note.rel_path, allow=allow)
        )
        findings = in_path + find_secrets(decoded.text, allow=allow)
        findings += _frontmatter_findings(decoded.text, allow)
        if not findings:
            continue
        path = _unique(scrub(note.rel_path, allow=allow).text, seen_paths)
        files.append(FileScan(path, findings, _count(findings), path_has_secret=bool(in_path)))
    totals = _count(tuple(f for scan in files for f in scan.findings))
    return ScanReport(str(root), len(notes), tuple(files), totals, tuple(skipped))


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
