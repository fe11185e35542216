"""`noteseek search` (ranked notes) and `noteseek context` (the block the prompt hook injects)."""

from __future__ import annotations

import json

import click

from .. import (
    MODES,
    SEARCH_LIMITS,
    SORTS,
    Hit,
    InvalidDateError,
    SearchRequest,
    SearchRequestError,
    SearchResult,
    open_index,
)
from ..core.markup import readable
from ..settings import DEFAULT_CONTEXT_TOKENS
from .options import collection_option, db_option
from .output import echo_block, echo_line

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
    flat = " ".join(readable(text).split())
    return flat if len(flat) <= width else flat[: width - 1].rsplit(" ", 1)[0] + "…"


def _explain(hit: Hit) -> list[str]:
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
        order += f" · rerank {e.rerank:+.3f}" + ("" if e.reranked else " (scored, not reordered)")
    p = e.probability if e.probability is not None else hit.score
    capped = " (capped at the hit above)" if hit.score < p - 5e-4 else ""
    return [order, f"calibrated: P(relevant) {p:.3f} → score {hit.score:.3f}{capped}"]


def _hidden_line(hidden: int) -> str:
    noun = "match" if hidden == 1 else "matches"
    return f"{hidden} weaker {noun} hidden (use --all)"


def _time_line(result: SearchResult) -> str | None:
    """`dates 2026-11-23 … 2026-11-29 (from "last week"; searched: "boiler")`, or None."""
    window = result.time_range
    if window is None:
        return None
    since = window.since.isoformat() if window.since else "…"
    until = window.until.isoformat() if window.until else "…"
    notes = [f'from "{window.phrase}"'] if window.phrase else []
    if result.searched is not None:
        notes.append(f'searched: "{result.searched}"')
    return f"dates {since} … {until}" + (f" ({'; '.join(notes)})" if notes else "")


def _words(_ctx: click.Context, _param: click.Parameter, value: tuple[str, ...]) -> str:
    """QUERY given as several words (`noteseek search undo a rebase`) is one query."""
    return " ".join(value)


# Several words need no quotes: `noteseek search how do I undo a rebase` is what people type.
_QUERY = click.argument("query", nargs=-1, required=True, callback=_words)


@click.command("search")
@_QUERY
@db_option()
@collection_option()
@click.option("--vault", type=click.Path(file_okay=False), help="Search the index of this vault.")
@click.option("-n", "--limit", default=10, show_default=True, type=click.IntRange(1, SEARCH_LIMITS.limit))
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
@click.option(
    "--since",
    metavar="WHEN",
    help="Only notes dated on or after WHEN: 2026-11-30, 2026-11, 7d, 2w, 3m, 1y, yesterday, "
    "'last week', gestern.",
)
@click.option("--until", metavar="WHEN", help="Only notes dated on or before WHEN (as --since).")
@click.option(
    "--sort",
    type=click.Choice(SORTS),
    default="relevance",
    show_default=True,
    help="date: the hits newest first.",
)
@click.option(
    "--no-time-parse",
    is_flag=True,
    help="Search a time phrase in QUERY ('last week', 'gestern') as words, not as a date filter.",
)
@click.option(
    "--no-deep",
    is_flag=True,
    help="Leave a built deep lane out of this search (also $NOTESEEK_DEEP=0 for every search).",
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
    since: str | None,
    until: str | None,
    sort: str,
    no_time_parse: bool,
    no_deep: bool,
) -> None:
    """Search the index for QUERY: one or more words, quoted or not (put a query that starts
    with '-' after '--').

    A time phrase in QUERY ("in the last 7 days", "last week", "gestern", "from March 2026")
    becomes a date filter and is not searched; --no-time-parse turns that off.

    A list is shown only when the notes likely answer QUERY (the calibrated relevance model), and
    a list held back is counted; --all shows it."""
    if not query.strip():
        raise click.UsageError("the query is empty: give the words to search for")
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
            since=since,
            until=until,
            sort=sort,  # type: ignore[arg-type]  # click.Choice(SORTS) checked it
            time_parse=not no_time_parse,
            multilingual=not no_deep,
            min_score=0.0 if show_all else None,
            min_answer=0.0 if show_all else None,
        )
    except InvalidDateError as exc:
        raise click.UsageError(str(exc)) from None
    except SearchRequestError as exc:
        raise click.BadParameter(str(exc), param_hint=_OPTIONS.get(exc.option)) from None
    with open_index(db, vault, collection=collection) as idx:
        result = idx.run_search(request)
        # A filter that matches no note explains an empty answer: say so (still exit 0).
        unknown = idx.unknown_filters(folders=folders, tags=tags) if not result.hits else ()
    hits, degraded = result.hits, result.degraded
    if as_json:
        window = result.time_range
        doc: dict[str, object] = {
            "query": query,
            "mode": mode,
            "degraded": degraded,
            "time_range": window.to_json() if window is not None else None,
            "searched": result.searched,
            "hits": result.hits_json(),
            "hidden": result.hidden,
            "answered": round(result.answered, 4),
        }
        if unknown:
            doc["unknown_filters"] = list(unknown)
        click.echo(json.dumps(doc, ensure_ascii=False, indent=2))
        return
    if degraded:
        echo_line(f"warning: keyword search only ({degraded})", err=True)
    time_line = _time_line(result)
    if time_line is not None:
        # On stdout with --explain (part of the trace), else on stderr: a script's stdout keeps
        # its shape, and a person still sees why hits are missing.
        echo_line(time_line, err=not explain)
    if explain:
        echo_line(
            f"calibration: P(the notes answer this) {result.answered:.3f} (a list is shown from "
            f"{request.min_answer or 0.0:.2f}; each hit's score is its P(relevant))"
        )
    if not hits:
        if result.hidden:
            echo_line("no confident match")
            echo_line(_hidden_line(result.hidden))
        else:
            suffix = f": no indexed note has the {' or the '.join(unknown)}" if unknown else ""
            echo_line(f"no matches{suffix}")
        return
    for rank, hit in enumerate(hits, start=1):
        ranks = ", ".join(
            f"{name} #{value}"
            for name, value in (("bm25", hit.bm25_rank), ("vec", hit.vec_rank))
            if value
        )
        dated = f"  {hit.date[:10]}" if hit.date else ""
        scored = f"  (score {hit.score:.2f}" + (f" · {ranks})" if ranks else ")")
        echo_line(dated + scored, bold=f"{rank:>2}. {hit.heading}")
        if hit.explanation is not None:
            for line in _explain(hit):
                echo_line(f"    {line}")
            if hit.date:
                echo_line(f"    date {hit.date} ({hit.date_source})")
        echo_line(f"    {_snippet(hit.text)}")
    if result.hidden:
        echo_line(_hidden_line(result.hidden))


@click.command("context")
@_QUERY
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
    from .. import prompt_context  # deferred: the context code (~5 ms) for 'context', not 'search'

    with open_index(db, vault, collection=collection) as idx:
        result = prompt_context(idx, query, max_tokens=max_tokens, gated=not no_gate)
    if as_json:
        click.echo(json.dumps(result.to_json(), ensure_ascii=False, indent=2))
        return
    if not result.text:
        echo_line(f"no context: {result.reason}", err=True)
        return
    echo_block(result.text, nl=False)
