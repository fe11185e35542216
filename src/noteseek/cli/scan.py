"""`noteseek scan`: a dry run of the secret scrubber over a vault. A thin adapter over
`noteseek.scan_secrets`."""

from __future__ import annotations

import json
from pathlib import Path

import click

from .. import load_allowlist, scan_secrets
from ..settings import SHOWN_FINGERPRINT_CHARS
from .output import echo_line

__all__ = ["scan_cmd"]


@click.command("scan")
@click.argument("vault", type=click.Path(file_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="One JSON document.")
@click.option(
    "--allow-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Known false positives: 'regex:<pattern>' or 'sha256:<prefix>' per line.",
)
def scan_cmd(vault: Path, as_json: bool, allow_file: Path | None) -> None:
    """Dry run: which notes and documents hold secrets the index would scrub (counts and
    fingerprints only; documents are read without OCR)."""
    allow = load_allowlist(allow_file) if allow_file is not None else None
    report = scan_secrets(vault, allow=allow)
    if as_json:
        click.echo(json.dumps(report.to_json(), ensure_ascii=False, indent=2))
        return
    for file in report.files:
        counts = ", ".join(f"{name} x{n}" for name, n in file.counts.items())
        echo_line(f"  ({counts})", bold=file.path)
        for finding in file.findings:
            # Line 0: the file's name; below 0: a document's text (scan_secrets' conventions).
            where = (
                "file name" if finding.line == 0 else "text" if finding.line < 0
                else f"line {finding.line}"
            )
            sha = finding.fingerprint[:SHOWN_FINGERPRINT_CHARS]
            echo_line(f"    {where:<10} {finding.pattern:<28} sha256:{sha}")
    for path, reason in report.skipped:
        echo_line(f"skipped {path}: {reason}", err=True)
    totals = ", ".join(f"{name} x{n}" for name, n in report.totals.items()) or "none"
    echo_line(
        f"{report.findings} secret(s) in {len(report.files)} of {report.files_scanned} files "
        f"would be scrubbed: {totals}"
    )
    if report.files:
        echo_line(
            "to keep a false positive, add its 'sha256:<prefix>' line to a file and pass "
            "--allow-file FILE"
        )
