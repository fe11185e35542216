"""`noteseek intake`: a thin adapter over `run_intake` and `undo_run`."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import click

from .. import IndexOptions, open_index
from ..core.locator import redact_url
from ..intake import Assessment, IntakeConfig, IntakeReport, load_config, run_intake, undo_run
from ..settings import DEFAULT_EXCLUDE, ENV_DB, ENV_WRITE_DB
from .options import collection_option, db_option
from .output import echo_line

__all__ = ["intake_cmd"]

_SYMBOL = {"route": "→", "review": "?", "set_aside": "×"}


def _weakest(a: Assessment) -> str:
    """The two lowest sub-scores with their explanations: what kept an item from being filed."""
    scored = sorted(
        (getattr(a.scores, name), name, getattr(a.explanations, name))
        for name in ("relevance", "actionability", "depth", "authority")
    )
    return "; ".join(f"{name} {value:.2f}: {why}" for value, name, why in scored[:2])


def _print_table(report: IntakeReport, *, undo_args: str) -> None:
    if report.index_built:
        echo_line("the vault had no index yet: built it first", err=True)
    if not report.items and not report.skipped:
        echo_line("the inbox holds no Markdown or text items")
    header = f"{'':1} {'total':>5} {'rel':>4} {'act':>4} {'dep':>4} {'aut':>4}  {'decision':<9} {'domain (runner-up)':<36} item"
    if report.items:
        echo_line(header)
    for result in report.items:
        a, s = result.assessment, result.assessment.scores
        where = f"{a.domain or '(vault root)'} ({a.runner_up or '-'})"
        echo_line(
            f"{_SYMBOL[a.decision]} {a.total:5.2f} {s.relevance:4.2f} {s.actionability:4.2f} "
            f"{s.depth:4.2f} {s.authority:4.2f}  {a.decision:<9} {where:<36} {a.path}"
        )
        echo_line(f"    why: {a.reason}")
        if a.decision != "route":
            echo_line(f"    weakest: {_weakest(a)}")
        if a.duplicate_of:
            echo_line(f"    near-duplicate of {a.duplicate_of}")
        if result.destination:
            echo_line(f"    moved to {result.destination}")
    for problem in report.skipped:
        echo_line(f"warning: {problem.rel}: {problem.reason}", err=True)
    counts = {d: sum(r.assessment.decision == d for r in report.items) for d in _SYMBOL}
    filed = counts["route"]
    verb = "would be" if report.dry_run else "was" if filed == 1 else "were"
    echo_line(
        f"{filed} {verb} filed, {counts['review']} queued for review, "
        f"{counts['set_aside']} set aside, {len(report.skipped)} left in the inbox"
        + (
            ""
            if report.dry_run
            else f" (run {report.run_id}; undo: noteseek intake --undo {report.run_id} {undo_args})"
        )
    )


@click.command("intake")
@click.argument("inbox", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--vault",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="The vault whose domain folders items are filed into.",
)
@db_option(f"${ENV_WRITE_DB}, else ${ENV_DB}, else the vault's")
@collection_option()
@click.option("--dry-run", is_flag=True, help="Score and print the table; move nothing.")
@click.option("--json", "as_json", is_flag=True, help="One JSON document with every item.")
@click.option(
    "--config",
    "config_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="TOML settings (default: VAULT/_intake/config.toml when present).",
)
@click.option(
    "--domain",
    "domains",
    multiple=True,
    help="A domain folder (repeatable; default: top-level folders).",
)
@click.option("--undo", "undo", metavar="RUN", help="Put back every file moved by run RUN.")
def intake_cmd(
    inbox: Path | None,
    vault: Path,
    db: str | None,
    collection: str | None,
    dry_run: bool,
    as_json: bool,
    config_file: Path | None,
    domains: tuple[str, ...],
    undo: str | None,
) -> None:
    """Score the items in INBOX and file, queue or set aside each one in VAULT."""
    config = load_config(config_file, vault=vault)
    if domains:
        config = IntakeConfig(
            **{**config.__dict__, "domains": tuple(d.strip("/") for d in domains)}
        )
    # Set-aside items and an inbox inside the vault are not part of what the vault is about.
    exclude = [config.set_aside_folder]
    if inbox is not None and inbox.resolve().is_relative_to(vault.resolve()):
        exclude.append(inbox.resolve().relative_to(vault.resolve()).as_posix())
    options = IndexOptions(exclude=DEFAULT_EXCLUDE + tuple(exclude))
    if undo:
        undone = undo_run(undo, vault=vault, config=config)
        with open_index(
            db, vault, create=True, options=options, collection=collection, write=True
        ) as idx:
            idx.update(vault)
        for _, back in undone.restored:
            echo_line(f"restored {back}")
        for path, why in undone.problems:
            echo_line(f"warning: {path}: {why}", err=True)
        echo_line(f"undid run {undo}: {len(undone.restored)} file(s) put back")
        return
    if inbox is None:
        raise click.UsageError("give the INBOX folder (or --undo RUN)")
    with open_index(
        db, vault, create=True, options=options, collection=collection, write=True
    ) as idx:
        report = run_intake(inbox, vault=vault, index=idx, config=config, dry_run=dry_run)
    if as_json:
        click.echo(json.dumps(report.to_json(), ensure_ascii=False, indent=2))
    else:
        # The undo line must work when pasted, from any folder: the real vault (and index),
        # absolute, quoted for a shell.
        undo_args = f"--vault {shlex.quote(str(vault.expanduser().absolute()))}"
        if db is not None:  # a URL's password is never printed (shown as ***)
            shown = db if "://" in db else str(Path(db).expanduser().absolute())
            undo_args += f" --db {shlex.quote(redact_url(shown))}"
        _print_table(report, undo_args=undo_args)
