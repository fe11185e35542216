"""`noteseek search` (ranked notes) and `noteseek context` (the block the prompt hook injects)."""

from __future__ import annotations

import json
from dataclasses import replace

import click

from .. import MODES, Hit, SearchRequest, open_index
from ..core.markup import readable
from ..settings import DEFAULT_CONTEXT_TOKENS
from .options import collection_option, db_option

__all__ = ["context_cmd", "search_cmd"]


def _snippet(text: str, width: int = 220) -> str:
    flat = " ".join(readable(text).split())
    return flat if len(flat) <= width else flat[: width - 1].rsplit(" ", 1)[0] + "…"


def _explain(hit: Hit) -> str:
    """Two lines: each list's rank, raw and normalised score and fusion term, the fused score and
    the rerank's output (the order before calibration); then the calibrated probability and the
    score shown (the probability capped at the hit above, so the list is in score order)."""
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
    order = f"{e.fusion}: " + " · ".join(parts) + f" = {e.fused:.4f}"
    if e.rerank is not None:
        order += f" · rerank {e.rerank:+.3f}"
    p = e.probability if e.probability is not None else hit.score
    capped = " (capped at the hit above)" if hit.score < p - 5e-4 else ""
    return order + f"\n    calibrated: P(relevant) {p:.3f} → score {hit.score:.3f}{capped}"


def _hidden_line(hidden: int) -> str:
    noun = "match" if hidden == 1 else "matches"
    return f"{hidden} weaker {noun} hidden (use --all)"


@click.command("search")
@click.argument("query")
@db_option()
@collection_option()
@click.option("--vault", type=click.Path(file_okay=False), help="Search the index of this vault.")
@click.option("-n", "--limit", default=10, show_default=True, type=click.IntRange(1, 1000))
@click.option("--mode", type=click.Choice(MODES), default="hybrid", show_default=True)
@click.option("--max-tokens", type=click.IntRange(1, None), help="Token budget for all hit texts.")
@click.option("--json", "as_json", is_flag=True, help="One JSON document with every hit field.")
@click.option(
    "--explain",
    is_flag=True,
    help="Show why each hit ranks where it does: fusion, rerank and calibration.",
)
@click.option(
    "--all",
    "show_all",
    is_flag=True,
    help="Also show weaker matches (hits scored below the relevance threshold).",
)
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
    show_all: bool,
    folders: tuple[str, ...],
    tags: tuple[str, ...],
    files: tuple[str, ...],
) -> None:
    """Search the index for QUERY (put a query that starts with '-' after '--').

    Only hits the calibrated relevance score trusts are shown; --all shows the weaker ones too.
    """
    request = SearchRequest(
        query,
        limit=limit,
        mode=mode,  # type: ignore[arg-type]  # click.Choice(MODES) checked it
        max_tokens=max_tokens,
        explain=explain,
        folders=folders or None,
        tags=tags or None,
        files=files or None,
    )
    if show_all:
        request = replace(request, min_score=0.0)
    with open_index(db, vault, collection=collection) as idx:
        result = idx.run_search(request)
    hits, degraded = result.hits, result.degraded
    if as_json:
        doc = {
            "query": query,
            "mode": mode,
            "degraded": degraded,
            "hits": result.hits_json(),
            "hidden": result.hidden,
        }
        click.echo(json.dumps(doc, ensure_ascii=False, indent=2))
        return
    if degraded:
        click.echo(f"warning: keyword search only ({degraded})", err=True)
    if not hits:
        click.echo("no confident match" if result.hidden else "no matches")
        if result.hidden:
            click.echo(_hidden_line(result.hidden))
        return
    for rank, hit in enumerate(hits, start=1):
        ranks = ", ".join(
            f"{name} #{value}"
            for name, value in (("bm25", hit.bm25_rank), ("vec", hit.vec_rank))
            if value
        )
        click.echo(
            click.style(f"{rank:>2}. {hit.heading}", bold=True)
            + f"  (score {hit.score:.2f}" + (f" · {ranks})" if ranks else ")")
        )
        if hit.explanation is not None:
            click.echo(f"    {_explain(hit)}")
        click.echo(f"    {_snippet(hit.text)}")
    if result.hidden:
        click.echo(_hidden_line(result.hidden))


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
