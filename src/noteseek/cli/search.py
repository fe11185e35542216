"""`noteseek search` (ranked notes) and `noteseek context` (the block the prompt hook injects)."""

from __future__ import annotations

import json

import click

from .. import MODES, SEARCH_LIMITS, Hit, SearchRequest, SearchRequestError, open_index
from ..settings import DEFAULT_CONTEXT_TOKENS
from .options import collection_option, db_option

__all__ = ["context_cmd", "search_cmd"]


# SearchRequest's option -> how this command spells it, for a refused request's message.
_OPTIONS = {
    "query": "QUERY",
    "limit": "'-n' / '--limit'",
    "max_tokens": "'--max-tokens'",
    "folders": "'--folder'",
    "tags": "'--tag'",
    "files": "'--file'",
}


def _snippet(text: str, width: int = 220) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1].rsplit(" ", 1)[0] + "…"


def _explain(hit: Hit) -> str:
    """One line: each list's rank, raw and normalised score, its fusion term, and the total."""
    e = hit.explanation
    assert e is not None
    parts = []
    if hit.bm25_rank is not None:
        norm = f", normalised {e.bm25_normalised:.3f}" if e.bm25_normalised is not None else ""
        parts.append(f"bm25 #{hit.bm25_rank} score {hit.bm25_score:.3f}{norm} → {e.bm25_term:.4f}")
    else:
        parts.append("bm25 —")
    if hit.vec_rank is not None:
        norm = f", normalised {e.vector_normalised:.3f}" if e.vector_normalised is not None else ""
        parts.append(f"vector #{hit.vec_rank} cosine {hit.cosine:.3f}{norm} → {e.vector_term:.4f}")
    else:
        parts.append("vector —")
    if e.exact_name:
        parts.append("exact name match (ranked first)")
    return f"{e.fusion}: " + " · ".join(parts) + f" = {hit.score:.4f}"


@click.command("search")
@click.argument("query")
@db_option()
@collection_option()
@click.option("--vault", type=click.Path(file_okay=False), help="Search the index of this vault.")
@click.option("-n", "--limit", default=10, show_default=True, type=click.IntRange(1, SEARCH_LIMITS.limit))
@click.option("--mode", type=click.Choice(MODES), default="hybrid", show_default=True)
@click.option("--max-tokens", type=click.IntRange(1, None), help="Token budget for all hit texts.")
@click.option("--json", "as_json", is_flag=True, help="One JSON document with every hit field.")
@click.option("--explain", is_flag=True, help="Show each hit's ranks, scores and fusion terms.")
@click.option(
    "--folder", "folders", multiple=True, help="Only notes under this vault folder (repeatable)."
)
@click.option("--tag", "tags", multiple=True, help="Only notes with this tag (repeatable: all).")
@click.option(
    "--file",
    "files",
    multiple=True,
    metavar="PATH",
    help="Only this vault-relative file, '.md' optional (repeatable: any of them).",
)
def search_cmd(
    query: str,
    db: str | None,
    collection: str | None,
    vault: str | None,
    limit: int,
    mode: str,
    max_tokens: int | None,
    as_json: bool,
    explain: bool,
    folders: tuple[str, ...],
    tags: tuple[str, ...],
    files: tuple[str, ...],
) -> None:
    """Search the index for QUERY (put a query that starts with '-' after '--')."""
    try:
        request = SearchRequest(
            query,
            limit=limit,
            mode=mode,  # type: ignore[arg-type]  # click.Choice(MODES) checked it
            max_tokens=max_tokens,
            explain=explain,
            folders=folders,
            tags=tags,
            files=files,
        )
    except SearchRequestError as exc:
        raise click.BadParameter(str(exc), param_hint=_OPTIONS.get(exc.option)) from None
    with open_index(db, vault, collection=collection) as idx:
        result = idx.run_search(request)
    hits, degraded = result.hits, result.degraded
    if as_json:
        doc = {"query": query, "mode": mode, "degraded": degraded, "hits": result.hits_json()}
        click.echo(json.dumps(doc, ensure_ascii=False, indent=2))
        return
    if degraded:
        click.echo(f"warning: keyword search only ({degraded})", err=True)
    if not hits:
        click.echo("no matches")
        return
    for rank, hit in enumerate(hits, start=1):
        ranks = ", ".join(
            f"{name} #{value}"
            for name, value in (("bm25", hit.bm25_rank), ("vec", hit.vec_rank))
            if value
        )
        click.echo(
            click.style(f"{rank:>2}. {hit.heading}", bold=True) + f"  ({ranks})"
        )
        if hit.explanation is not None:
            click.echo(f"    {_explain(hit)}")
        click.echo(f"    {_snippet(hit.text)}")


@click.command("context")
@click.argument("query")
@db_option()
@collection_option()
@click.option("--vault", type=click.Path(file_okay=False), help="Use the index of this vault.")
@click.option(
    "--max-tokens",
    default=DEFAULT_CONTEXT_TOKENS,
    show_default=True,
    type=click.IntRange(1, None),
    help="Token budget for the whole block (≈ 4 characters per token).",
)
@click.option("--no-gate", is_flag=True, help="Show the best sections even if none seems relevant.")
@click.option("--json", "as_json", is_flag=True, help="The block plus the gate's decision as JSON.")
def context_cmd(
    query: str,
    db: str | None,
    collection: str | None,
    vault: str | None,
    max_tokens: int,
    no_gate: bool,
    as_json: bool,
) -> None:
    """The agent context block for QUERY: what the prompt hook would inject."""
    from .. import prompt_context

    with open_index(db, vault, collection=collection) as idx:
        result = prompt_context(idx, query, max_tokens=max_tokens, gated=not no_gate)
    if as_json:
        click.echo(json.dumps(result.to_json(), ensure_ascii=False, indent=2))
        return
    if not result.text:
        click.echo(f"no context: {result.reason}", err=True)
        return
    click.echo(result.text, nl=False)
