"""`noteseek eval`: score an index against judged queries. A thin adapter over `noteseek.evaluation`."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import click

from .. import MODES, open_index
from ..evaluation import evaluate, load_qrels, load_queries, render_table, write_report
from .options import collection_option, db_option
from .output import echo_block, echo_line

__all__ = ["eval_cmd"]


def _judged_file(
    flag: str, dest: str, help: str
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """A required option naming an existing file of the judged set."""
    return click.option(
        flag, dest, required=True, type=click.Path(exists=True, dir_okay=False), help=help
    )


@click.command("eval")
@_judged_file(
    "--queries", "queries_file", "BEIR queries.jsonl (_id, text, optional metadata.category)."
)
@_judged_file("--qrels", "qrels_file", "TSV: query-id, corpus-id, score (header line).")
@db_option()
@collection_option()
@click.option("--vault", type=click.Path(file_okay=False), help="Evaluate the index of this vault.")
@click.option(
    "--mode", "modes", multiple=True, type=click.Choice(MODES), help="Modes to run (default: all)."
)
@click.option(
    "--depth",
    default=100,
    show_default=True,
    type=click.IntRange(10, 1000),
    help="Chunks retrieved per query.",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON document.")
@click.option(
    "--report",
    "report_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write report.md and a plot here.",
)
def eval_cmd(
    queries_file: str,
    qrels_file: str,
    db: str | None,
    collection: str | None,
    vault: str | None,
    modes: tuple[str, ...],
    depth: int,
    as_json: bool,
    report_dir: Path | None,
) -> None:
    """Score the index against judged queries: nDCG@10, R@10, R@100, MRR@10, Hit@1 per mode."""
    queries = load_queries(queries_file)
    qrels = load_qrels(qrels_file)
    with open_index(db, vault, collection=collection) as idx:
        report = evaluate(idx, queries, qrels, modes=modes or MODES, depth=depth)
    if report_dir is not None:
        details = f"Queries: `{queries_file}`; judgments: `{qrels_file}`; {depth} chunks per query."
        path = write_report(report, report_dir, title="noteseek evaluation", details=details)
        echo_line(f"report written to {path}", err=True)
    if as_json:
        click.echo(json.dumps(report.to_json(), indent=2))
    else:
        echo_block(render_table(report))
