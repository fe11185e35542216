"""`IndexStatus`: what `noteseek status`, the MCP status tool and `GET /api/status` report.

Its own module so that `engine/index.py` (the facade) stays one job and under the size limit.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["IndexStatus", "install_hint"]


def install_hint(missing: tuple[str, ...] = ()) -> str:
    """The line naming the extra(s) that install the `missing` document libraries."""
    # deferred: only when a library is missing: the documents package brings the worker pool's
    # imports (~25 ms).
    from ..documents import install_hint as hint

    return hint(missing)


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


@dataclass(frozen=True)
class IndexStatus:
    """What `noteseek status` reports."""

    db_path: str
    db_bytes: int
    schema_version: int
    vault_root: str | None
    files: int
    chunks: int
    vectors: int
    model: str | None
    model_fingerprint: str | None
    vector_support: bool
    vector_problem: str | None
    last_run: dict[str, Any] | None
    problems: tuple[tuple[str, str, str], ...]
    # Text left out of search on purpose, per file: (path, skipped link sections, secrets).
    left_out: tuple[tuple[str, int, int], ...] = ()
    # (kind, outcome, files) of the documents beside the notes; outcome "unread" for documents
    # the indexer could not open.
    documents: tuple[tuple[str, str, int], ...] = ()
    # Python packages that documents in the index need and that were missing when they were
    # read; `install` is then the command that brings them.
    missing_libraries: tuple[str, ...] = ()
    install: str | None = None
    # The OCR pass of the running update, or of the last one that had files to OCR: {"total",
    # "done", "running", "with_text", "pages", "finished_at"} (files, except pages; an older
    # noteseek stored only the first three); None when no update has read anything by OCR.
    ocr_progress: dict[str, Any] | None = None
    # The deep lane (docs/deep-lane.md): {"done", "total", "built", "seconds_per_chunk",
    # "eta_seconds"}; None when the index has none.
    deep_lane: dict[str, Any] | None = None

    def deep_summary(self) -> str | None:
        """`412 of 1,114 chunks (37 %), about 12 min left`; None without a lane."""
        lane = self.deep_lane
        if not lane:
            return None
        done, total = int(lane.get("done") or 0), int(lane.get("total") or 0)
        share = f" ({100 * done / total:.0f} %)" if total else ""
        line = f"{done:,} of {total:,} chunks{share}"
        if done >= total:
            return line + ", complete"
        eta = lane.get("eta_seconds")
        if eta is None:
            return line + ", filled while a watcher runs ('noteseek index --deep' to finish now)"
        return line + f", about {_duration(float(eta))} left at the last build's pace"

    def ocr_summary(self) -> str | None:
        """`5 files read by OCR in the update at 2026-12-02 13:38: 4 with text (5 pages), 1
        without`; None without OCR. The counts are files (a PDF's scanned pages are one file),
        and the update named is the last one that read anything by OCR, not the last one."""
        progress = self.ocr_progress
        if not progress or not progress.get("total"):
            return None
        done, total = int(progress.get("done") or 0), int(progress.get("total") or 0)
        finished_at = progress.get("finished_at")
        when = (
            f"in the update at {time.strftime('%Y-%m-%d %H:%M', time.localtime(finished_at))}"
            if isinstance(finished_at, int | float)
            else "in the last update that used OCR"  # stored by an older noteseek
        )
        files = "file" if total == 1 else "files"
        if progress.get("running"):
            line = f"{done} of {total} {files} read by OCR so far (an update is reading the rest)"
        elif done < total:
            line = f"{done} of {total} {files} read by OCR {when} (it stopped early)"
        else:
            line = f"{total} {files} read by OCR {when}"
        with_text, pages = progress.get("with_text"), progress.get("pages")
        if isinstance(with_text, int) and isinstance(pages, int) and done:
            if not with_text:
                line += ": no text found"
            else:
                line += f": {with_text} with text ({pages} page{'s' if pages != 1 else ''})"
                line += f", {done - with_text} without" if done > with_text else ""
        return line

    @property
    def skipped_sections(self) -> int:
        """Link-list sections (Related, See also, ...) left out of search, over all files."""
        return sum(sections for _, sections, _ in self.left_out)

    @property
    def secrets_scrubbed(self) -> int:
        """Values the scrubber replaced, over all files."""
        return sum(secrets for _, _, secrets in self.left_out)

    def left_out_summary(self) -> str | None:
        """The left-out totals in words, as `status` and the MCP status tool print them; None
        when nothing was left out."""
        if not self.left_out:
            return None
        files_with = sum(1 for _, n, _ in self.left_out if n)
        secret_files = sum(1 for _, _, k in self.left_out if k)
        return (
            f"{self.skipped_sections} link section(s) in {files_with} notes (skip list), "
            f"{self.secrets_scrubbed} scrubbed secret(s) in {secret_files} notes"
        )

    def to_json(self) -> dict[str, Any]:
        """Every field, as `noteseek status --json` prints it (problems and left_out as objects,
        documents as {kind: {outcome: files}}, then the left-out totals)."""
        data = asdict(self)
        data["problems"] = [{"path": p, "status": s, "problem": r} for p, s, r in self.problems]
        data["left_out"] = [
            {"path": p, "skipped_sections": n, "secrets_scrubbed": k} for p, n, k in self.left_out
        ]
        documents: dict[str, dict[str, int]] = {}
        for kind, outcome, files in self.documents:
            documents.setdefault(kind, {})[outcome] = files
        data["documents"] = documents
        data["missing_libraries"] = list(self.missing_libraries)
        data["skipped_sections"] = self.skipped_sections
        data["secrets_scrubbed"] = self.secrets_scrubbed
        return data
