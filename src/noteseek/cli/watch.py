"""`noteseek watch VAULT`: catch up, then index every change as it is saved, until a signal.

Everything it says goes to stderr (stdout stays empty), one line per update run, and never a
note's text: runs are summed up in counts, and problem paths are those `noteseek index` prints
(a path that holds a secret is shown scrubbed).
"""

from __future__ import annotations

import signal
import time
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

import click

from .. import IndexOptions, load_allowlist, open_index
from ..settings import DEFAULT_EXCLUDE
from ..watch.refresh import IndexRefresher, RefreshRun
from .main import exit_now
from .options import collection_option, db_option, ocr_wanted, vault_rule_options
from .output import echo_line

if TYPE_CHECKING:
    from .. import Index, Locator

__all__ = ["watch_cmd"]

_PROGRESS_EVERY_S = 5.0
_SHOWN_PROBLEMS = 10


def _say(message: str) -> None:
    echo_line(f"{time.strftime('%H:%M:%S')} {message}", err=True)


class _Progress:
    """A line every few seconds while a long run (the first build, a big checkout) goes on."""

    def __init__(self) -> None:
        self.last = time.monotonic()

    def __call__(self, done: int, total: int, path: str) -> None:
        if total >= 100 and time.monotonic() - self.last > _PROGRESS_EVERY_S:
            self.last = time.monotonic()
            _say(f"indexed {done}/{total} notes")


@click.command("watch")
@click.argument("vault", type=click.Path(file_okay=False, path_type=Path))
@db_option("$NOTESEEK_WRITE_DB, else $NOTESEEK_DB, else per vault, as for index")
@collection_option()
@vault_rule_options()
@click.option(
    "--polling", is_flag=True, help="Poll instead of using OS file events (network drives)."
)
@click.option(
    "--poll-interval",
    type=click.FloatRange(0.2, None),
    default=5.0,
    show_default=True,
    help="Seconds between polls (with --polling, or when the OS watch limit forces polling).",
)
@click.option(
    "--deep/--no-deep",
    default=None,
    help="Fill the deep lane at idle priority while watching (needs noteseek[multilingual]); "
    "default: when the index has one (begun by 'noteseek index --deep') or holds at most "
    "$NOTESEEK_DEEP_AUTO (5,000) distinct chunks, unless $NOTESEEK_DEEP=0.",
)
@click.option("-q", "--quiet", is_flag=True, help="Notices and errors only, no line per update.")
def watch_cmd(
    vault: Path,
    db: str | None,
    collection: str | None,
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    allow_file: Path | None,
    no_documents: bool,
    no_ocr: bool,
    polling: bool,
    poll_interval: float,
    deep: bool | None,
    quiet: bool,
) -> None:
    """Keep VAULT's index up to date: catch up, then index each change as it is saved.

    Runs in the foreground until Ctrl-C or SIGTERM, which finish the current file and exit 0.
    Exits 1 when the vault folder is deleted or unmounted (the index is left as it was). Another
    process updating the same index makes it wait and index the changes afterwards.
    """
    allow = load_allowlist(allow_file) if allow_file is not None else None
    options = IndexOptions(
        include=include,
        exclude=DEFAULT_EXCLUDE + exclude,
        allow=allow,
        documents=not no_documents,
        ocr=ocr_wanted(no_ocr),
    )
    db_path: list[Locator] = []

    def open_writer() -> Index:
        index = open_index(
            db, vault, create=True, options=options, collection=collection, write=True
        )
        db_path.append(index.db_path)
        return index

    first = [True]

    def on_run(run: RefreshRun) -> None:
        if first[0]:
            first[0] = False
            _say(f"caught up: {run.summary()}; watching for changes (Ctrl-C to stop)")
        elif not quiet:
            _say(f"updated: {run.summary()}")
        if not quiet or run.stats.problems:
            for path, reason in run.stats.problems[:_SHOWN_PROBLEMS]:
                echo_line(f"  {path}: {reason}", err=True)

    refresher = IndexRefresher(
        open_writer,
        vault=vault,
        include=options.include,
        exclude=options.exclude,
        force_polling=polling,
        poll_interval=poll_interval,
        on_notice=lambda message: _say(f"notice: {message}"),
        on_run=on_run,
        progress=_Progress(),
        deep=deep,
    )
    stopping = [False]

    def on_signal(signum: int, frame: FrameType | None) -> None:
        if stopping[0]:
            raise KeyboardInterrupt  # a second signal: abort now (the open transaction rolls back)
        stopping[0] = True
        _say("stopping after the current file")
        refresher.stop()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        refresher.start()
        how = "polling" if refresher.state().polling else "file events"
        _say(f"watching {refresher.vault} ({how}) for {db_path[0]}; catching up first")
        # join() with a timeout: the signal handlers run in this thread between the waits.
        while not refresher.join(0.5):
            pass
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    _say("stopped; the index is consistent")
    exit_now(0)
