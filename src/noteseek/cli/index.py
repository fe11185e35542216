"""`noteseek index VAULT`: build or update a vault's index, with a progress bar and a summary."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .. import IndexOptions, load_allowlist, open_index
from ..documents import install_hint
from ..errors import IndexLockedError, ModelLoadError
from ..settings import DEFAULT_EXCLUDE, ENV_DB, ENV_WRITE_DB
from .options import collection_option, db_option, ocr_wanted, vault_rule_options
from .output import echo_line

if TYPE_CHECKING:
    from .. import IndexStats

__all__ = ["index_cmd"]


class _Progress:
    """A tqdm bar on a terminal, a plain line every few seconds otherwise; counted in files,
    since the candidates are notes and documents alike."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.tty = sys.stderr.isatty()
        self.bar: Any = None
        self.last = 0.0

    def __call__(self, done: int, total: int, path: str) -> None:
        if self.quiet:
            return
        if self.tty:
            if self.bar is None:
                from tqdm import tqdm

                self.bar = tqdm(total=total, unit="file", file=sys.stderr, leave=False)
            self.bar.update(1)
        elif time.monotonic() - self.last > 2.0 or done == total:
            self.last = time.monotonic()
            echo_line(f"indexed {done}/{total} files", err=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _print_stats(stats: IndexStats, db: object) -> None:
    verb = "stopped early (Ctrl-C)" if stats.interrupted else "done"
    seen = (
        f"{stats.files_seen} files seen ({stats.documents} "
        f"document{'s' if stats.documents != 1 else ''}, "
        f"{stats.documents_extracted} read)"
        if stats.documents
        else f"{stats.files_seen} notes seen"
    )
    echo_line(
        f"{verb} in {stats.seconds:.1f} s: {seen}, {stats.added} added, "
        f"{stats.changed} changed, {stats.removed} removed, {stats.unchanged} unchanged, "
        f"{stats.skipped} skipped; {stats.chunks} chunks in {db}"
    )
    if stats.secrets_scrubbed:
        echo_line(
            f"scrubbed {stats.secrets_scrubbed} secret(s) before indexing (values never stored)"
        )
    if not stats.vectors:
        echo_line("warning: vectors unavailable, the index supports keyword search only", err=True)
    if stats.problems:
        echo_line(f"{len(stats.problems)} file(s) with problems:", err=True)
        for path, reason in stats.problems[:50]:
            echo_line(f"  {path}: {reason}", err=True)
        if len(stats.problems) > 50:
            echo_line("  … see 'noteseek status' for the full list", err=True)
    if stats.ocr_pages or stats.ocr_reused:
        reused = (
            f", {stats.ocr_reused} image(s) moved or copied, not read again"
            if stats.ocr_reused
            else ""
        )
        echo_line(
            f"OCR read {stats.ocr_pages} page(s) or image(s) in {stats.ocr_files} file(s){reused}"
        )
    if stats.missing_libraries:
        hint = install_hint(stats.missing_libraries)
        extras = hint.split("[", 1)[1].split("]", 1)[0].split(",")
        named = (
            f"the {extras[0]} extra" if len(extras) == 1 else f"the {' and '.join(extras)} extras"
        )
        echo_line(
            f"to read these documents, install {named}: {hint} "
            f"(missing: {', '.join(stats.missing_libraries)})",
            err=True,
        )
    if stats.interrupted:
        echo_line("the index is consistent; run the same command again to finish", err=True)


@click.command("index")
@click.argument("vault", type=click.Path(file_okay=False, path_type=Path))
@db_option(f"${ENV_WRITE_DB}, else ${ENV_DB}, else a file per vault in the data dir")
@collection_option()
@click.option(
    "--full",
    is_flag=True,
    help="Re-read and re-embed every note and list every folder, instead of only changes.",
)
@click.option(
    "--model", help="Model2Vec model: a local folder or a hub id (default: bundled potion-base-8M)."
)
@vault_rule_options()
@click.option(
    "--deep",
    is_flag=True,
    help="Also build the deep lane (multilingual-e5 vectors of every chunk, fused into every "
    "search; needs noteseek[multilingual]; ~0.3-0.5 CPU-s per chunk, resumable).",
)
# The flag's name before the lane served every query; kept so that scripts keep working.
@click.option("--multilingual", is_flag=True, hidden=True)
@click.option(
    "--workers",
    type=click.IntRange(min=0),
    metavar="N",
    help="Processes that read, scrub, chunk and embed notes beside the writer "
    "(default: one per core, at most two; 0: all in this process).",
)
@click.option("-q", "--quiet", is_flag=True, help="No progress output.")
def index_cmd(
    vault: Path,
    db: str | None,
    collection: str | None,
    full: bool,
    model: str | None,
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    allow_file: Path | None,
    no_documents: bool,
    no_ocr: bool,
    deep: bool,
    multilingual: bool,
    workers: int | None,
    quiet: bool,
) -> None:
    """Index VAULT: new and changed notes and documents only, unless --full."""
    allow = load_allowlist(allow_file) if allow_file is not None else None
    options = IndexOptions(
        include=include,
        exclude=DEFAULT_EXCLUDE + exclude,
        allow=allow,
        documents=not no_documents,
        ocr=ocr_wanted(no_ocr),
        workers=workers,
    )
    progress = _Progress(quiet)
    with open_index(
        db,
        vault,
        create=True,
        model=model,
        options=options,
        collection=collection,
        write=True,
    ) as idx:
        try:
            try:
                stats = idx.update(vault, full=full, progress=progress, wait=0)
            except IndexLockedError as exc:
                # A watcher's batch takes a moment; a full run of another `index` longer.
                echo_line(f"{exc}; waiting for it to finish (Ctrl-C to stop)", err=True)
                stats = idx.update(vault, full=full, progress=progress)
        finally:
            progress.close()
        _print_stats(stats, idx.db_path)
        if include and not stats.files_seen and not stats.interrupted:
            # A mistyped --include indexes nothing: say so, rather than a quiet "0 notes seen".
            shown = ", ".join(repr(folder) for folder in include)
            echo_line(
                f"warning: --include {shown} matched no folder of {vault}: nothing is indexed",
                err=True,
            )
        if (deep or multilingual) and not stats.interrupted:
            _build_lane(idx, quiet)


class _LaneProgress:
    """A tqdm bar in chunks on a terminal (it shows the time left), a line every few seconds
    otherwise."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.tty = sys.stderr.isatty()
        self.bar: Any = None
        self.last = 0.0

    def __call__(self, done: int, total: int) -> None:
        if self.quiet:
            return
        if self.tty:
            if self.bar is None:
                from tqdm import tqdm

                self.bar = tqdm(total=total, unit="chunk", desc="deep lane", file=sys.stderr)
            self.bar.n = done
            self.bar.refresh()
        elif time.monotonic() - self.last > 5.0 or done == total:
            self.last = time.monotonic()
            echo_line(f"deep lane: {done}/{total} chunks", err=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _build_lane(idx: Any, quiet: bool) -> None:
    """`--deep`: fill the lane with a progress bar; Ctrl-C keeps what is done."""
    progress = _LaneProgress(quiet)
    try:
        lane = idx.build_deep_lane(progress=progress)
    except ModelLoadError as exc:
        raise click.ClickException(str(exc)) from None
    except KeyboardInterrupt:
        # As a stopped update: what was embedded is kept and consistent, so the run ends normally.
        progress.close()
        echo_line("deep lane stopped early; run the same command again to resume", err=True)
        return
    progress.close()
    echo_line(
        f"deep lane: {lane.embedded} chunks embedded in {lane.seconds:.1f} s, "
        f"{lane.done}/{lane.total} chunks have e5 vectors"
    )
