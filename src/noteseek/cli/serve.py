"""`noteseek serve`: run, ask about or stop the warm daemon of an index (`noteseek.daemon`)."""

from __future__ import annotations

import logging
import signal
import sys
import time
from typing import TYPE_CHECKING

import click

from .. import IndexNotFoundError, locate_index
from ..daemon.client import daemon_paths, lock_held, request, supported
from ..settings import DEFAULT_IDLE_MINUTES
from .main import exit_now
from .options import collection_option, db_option
from .output import echo_line

if TYPE_CHECKING:
    from .. import Locator

__all__ = ["serve_cmd"]

# How long `serve --stop` waits for the daemon's process to end (an update in progress stops
# after its current file).
_STOP_SECONDS = 30.0


@click.command("serve")
@db_option()
@collection_option()
@click.option(
    "--vault",
    type=click.Path(exists=True, file_okay=False),
    help="Serve the index of this vault.",
)
@click.option(
    "--idle-minutes",
    type=click.FloatRange(0, None),
    default=DEFAULT_IDLE_MINUTES,
    show_default=True,
    help="Exit after this long without requests (0: never).",
)
@click.option(
    "--watch/--no-watch",
    default=True,
    show_default=True,
    help="Keep the index fresh: index each change of the vault (when the index knows it).",
)
@click.option("--status", is_flag=True, help="Say whether a daemon serves this index, and exit.")
@click.option("--stop", is_flag=True, help="Stop the daemon serving this index, and exit.")
def serve_cmd(
    db: str | None,
    collection: str | None,
    vault: str | None,
    idle_minutes: float,
    watch: bool,
    status: bool,
    stop: bool,
) -> None:
    """Keep an index warm for the per-prompt hook: a local daemon on a Unix socket.

    The hook starts it on demand and uses it when it runs; you never need to start it yourself.
    Runs in the foreground until idle for --idle-minutes. It also watches the index's vault and
    indexes each change (answers never wait for that), unless --no-watch.
    """
    if not supported():
        raise click.ClickException("'noteseek serve' needs Unix domain sockets (not on Windows)")
    db_path = locate_index(db=db, vault=vault, collection=collection)
    if status or stop:
        answer = request(db_path, {"op": "shutdown" if stop else "ping"}, timeout=5.0)
        if answer is None:
            echo_line(f"no daemon serves {db_path}")
            if status:
                sys.exit(1)
            return
        if stop and not wait_stopped(db_path, timeout=_STOP_SECONDS):
            raise click.ClickException(
                f"the daemon for {db_path} was asked to stop and still runs after "
                f"{_STOP_SECONDS:.0f} s (it finishes the file it is indexing first); "
                "'noteseek serve --status' tells when it is gone"
            )
        echo_line(
            f"stopped the daemon for {db_path}"
            if stop
            else f"daemon pid {answer.get('pid')} serves {db_path}: up "
            f"{answer.get('uptime', 0):.0f} s, {answer.get('served')} requests"
        )
        if status:
            echo_line(_watch_line(answer.get("watch")))
        return
    if not db_path.exists():
        # The vault's own index: the message names the command that builds it.
        raise IndexNotFoundError.at(db_path, vault=vault if db is None else None)
    # deferred: the server code (~13 ms) for a process that serves; --status and --stop only ask
    from ..daemon.server import Daemon, trim_log

    daemon = Daemon(db_path, idle_minutes=idle_minutes, watch=watch, vault=vault)
    trim_log(daemon.paths)
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, lambda *_: daemon.stop())
    logging.getLogger("noteseek").setLevel(logging.INFO)  # to the log file the client opened
    echo_line(f"noteseek serve: {daemon.paths.db} on {daemon.paths.socket}", err=True)
    code = daemon.serve()
    if code:
        echo_line(f"another daemon already serves {daemon.paths.db}", err=True)
    exit_now(code)


def wait_stopped(db_path: Locator, *, timeout: float) -> bool:
    """Wait until no daemon holds the database's lock (its process has ended, or is ending);
    False if one still does after `timeout` seconds."""
    paths = daemon_paths(db_path, create=True)
    deadline = time.monotonic() + timeout
    while lock_held(paths):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def _watch_line(watch: object) -> str:
    """`serve --status`'s line about keeping the index fresh."""
    if not isinstance(watch, dict):
        return "watch: unknown (a daemon of another noteseek version)"
    if watch.get("state") == "off":
        return f"watch: off ({watch.get('reason') or 'not asked to'})"
    how = "polling" if watch.get("polling") else "file events"
    line = f"watch: {watch.get('state')} {watch.get('vault')} ({how}), {watch.get('runs')} updates"
    if watch.get("last_summary"):
        line += f"; last: {watch.get('last_summary')}"
    if watch.get("error"):
        line += f"; ended: {watch.get('error')}"
    return line
