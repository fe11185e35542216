"""`noteseek status`: counts, model, vector support, size and last run of an index; with
`--files`, every file's coverage (indexed, skipped, failed, pending)."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING

import click

from .. import open_index
from ..core.document_location import outcome_summary
from .options import collection_option, db_option
from .output import echo_line

if TYPE_CHECKING:
    from .. import Coverage

__all__ = ["status_cmd"]


def _seen(last: dict[str, object]) -> str:
    documents = last.get("documents") or 0
    if documents:
        return f"{last.get('files_seen')} files ({documents} document{'s' * (documents != 1)})"
    return f"{last.get('files_seen')} notes"


@click.command("status")
@db_option()
@collection_option()
@click.option("--vault", type=click.Path(file_okay=False), help="Status of this vault's index.")
@click.option("--json", "as_json", is_flag=True, help="One JSON document.")
@click.option(
    "--files",
    "per_file",
    is_flag=True,
    help="Every file: indexed, skipped, failed or pending (changed since the last update).",
)
@click.option(
    "--problems", is_flag=True, help="With --files: only files that are not cleanly indexed."
)
def status_cmd(
    db: str | None,
    collection: str | None,
    vault: str | None,
    as_json: bool,
    per_file: bool,
    problems: bool,
) -> None:
    """Files, chunks, model, vector support, size and last run of an index."""
    if problems and not per_file:
        raise click.UsageError("--problems goes with --files")
    with open_index(db, vault, collection=collection) as idx:
        if per_file:
            _print_files(idx.file_coverage(), as_json=as_json, problems=problems)
            return
        status = idx.status()
    if as_json:
        click.echo(json.dumps(status.to_json(), ensure_ascii=False, indent=2))
        return
    last = status.last_run or {}
    rows = [
        (
            "index",
            f"{status.db_path} ({status.db_bytes / 1_048_576:.1f} MB, schema {status.schema_version})",
        ),
        ("vault", status.vault_root or "-"),
        ("files", f"{status.files} ({len(status.problems)} with problems)"),
        *([("documents", outcome_summary(status.documents))] if status.documents else []),
        *([("ocr", status.ocr_summary())] if status.ocr_summary() else []),
        ("chunks", f"{status.chunks} ({status.vectors} with vectors)"),
        *([("deep lane", status.deep_summary())] if status.deep_summary() else []),
        ("model", f"{status.model} [{status.model_fingerprint or 'not yet used'}]"),
        (
            "vectors",
            ("pgvector" if "://" in status.db_path else "sqlite-vec") + " loaded"
            if status.vector_support and not status.vector_problem
            else f"unavailable, keyword search only: {status.vector_problem}",
        ),
    ]
    left_out = status.left_out_summary()
    if left_out:
        # Which notes held secrets is the scan's to say (fingerprints, never values).
        scan_hint = any(k for _, _, k in status.left_out)
        rows.append(
            ("left out", left_out + (" ('noteseek scan VAULT' lists them)" if scan_hint else ""))
        )
    if last:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(float(last.get("finished_at", 0))))
        rows.append(
            (
                "last run",
                f"{when}: {_seen(last)}, {last.get('seconds', 0):.1f} s"
                + (", changed paths only (a watcher)" if last.get("targeted") else "")
                + (", interrupted" if last.get("interrupted") else ""),
            )
        )
    if status.install:
        rows.append(
            (
                "install",
                f"{status.install} to read the documents that need "
                f"{', '.join(status.missing_libraries)}",
            )
        )
    for key, value in rows:
        echo_line(f"{key:<9} {value}")
    if status.problems:
        echo_line("problems:")
        for path, state, problem in status.problems:
            echo_line(f"  [{state}] {path}: {problem}")


def _print_files(coverage: Coverage, *, as_json: bool, problems: bool) -> None:
    if as_json:
        click.echo(
            json.dumps(coverage.to_json(problems_only=problems), ensure_ascii=False, indent=2)
        )
        return
    for f in coverage.files:
        if problems and f.state == "indexed" and not f.reason:
            continue
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(f.indexed_at)) if f.indexed_at else ""
        chunks = f"{f.chunks} chunks" if f.state == "indexed" else ""
        reason = f": {f.reason}" if f.reason else ""
        echo_line(f"{f.state:<8} {chunks:>10}  {when:<16}  {f.path}{reason}")
    counts = coverage.counts()
    echo_line(
        f"{len(coverage.files)} files: " + ", ".join(f"{counts[state]} {state}" for state in counts)
    )
    if not coverage.pending_checked:
        echo_line(f"pending not checked: {coverage.pending_problem}", err=True)
