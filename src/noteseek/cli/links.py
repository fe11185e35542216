"""`noteseek links` (a note's backlinks and outlinks) and `noteseek related` (notes like it)."""

from __future__ import annotations

import json

import click

from .. import open_index
from .options import collection_option, db_option

__all__ = ["links_cmd", "related_cmd"]


def _flat(text: str, width: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1].rsplit(" ", 1)[0] + "…"


@click.command("links")
@click.argument("note")
@db_option()
@collection_option()
@click.option("--vault", type=click.Path(file_okay=False), help="Use the index of this vault.")
@click.option(
    "--json", "as_json", is_flag=True, help="One JSON document: note, backlinks, outlinks."
)
def links_cmd(
    note: str, db: str | None, collection: str | None, vault: str | None, as_json: bool
) -> None:
    """NOTE's backlinks (with the linking line) and outlinks, resolved as Obsidian resolves them.

    NOTE is a vault-relative path as search shows it, or a note's name as a [[link]] writes it.
    """
    with open_index(db, vault, collection=collection) as idx:
        links = idx.links(note)
    if as_json:
        click.echo(json.dumps(links.to_json(), ensure_ascii=False, indent=2))
        return
    click.echo(click.style(links.note, bold=True))
    click.echo(f"\nbacklinks ({len(links.backlinks)}):")
    for b in links.backlinks:
        click.echo(f"  {b.path}:{b.line}  {_flat(b.text)}")
    unresolved = sum(1 for o in links.outlinks if o.path is None)
    click.echo(f"\noutlinks ({len(links.outlinks)}, {unresolved} unresolved):")
    for o in links.outlinks:
        click.echo(f"  {o.target}  →  {o.path if o.path else '(unresolved)'}")


@click.command("related")
@click.argument("note")
@db_option()
@collection_option()
@click.option("--vault", type=click.Path(file_okay=False), help="Use the index of this vault.")
@click.option("-n", "--limit", default=10, show_default=True, type=click.IntRange(1, 200))
@click.option("--json", "as_json", is_flag=True, help="One JSON document with every hit field.")
def related_cmd(
    note: str,
    db: str | None,
    collection: str | None,
    vault: str | None,
    limit: int,
    as_json: bool,
) -> None:
    """The notes most like NOTE (meaning, links and tags), never NOTE itself."""
    with open_index(db, vault, collection=collection) as idx:
        hits = idx.related(note, limit=limit)
    if as_json:
        doc = {"note": note, "hits": [hit.to_json() for hit in hits]}
        click.echo(json.dumps(doc, ensure_ascii=False, indent=2))
        return
    if not hits:
        click.echo("no related notes")
        return
    for rank, hit in enumerate(hits, start=1):
        click.echo(click.style(f"{rank:>2}. {hit.heading}", bold=True) + f"  ({hit.score:.3f})")
        click.echo(f"    {_flat(hit.text, 220)}")
