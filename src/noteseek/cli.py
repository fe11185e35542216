"""Command-line interface: parses arguments, calls the library, formats the answer. Nothing else."""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import click

from . import __version__
from .context import DEFAULT_CONTEXT_TOKENS
from .errors import IndexNotFoundError, NoteseekError
from .index import Index, IndexStatus
from .paths import ENV_DB, default_db_path, resolve_db
from .search import MODES, Hit

if TYPE_CHECKING:
    from .indexer import IndexStats

__all__ = ["main"]


def _resolve_db(db: str | None, vault: str | None) -> Path:
    """Which index file a read command means: --db, $NOTESEEK_DB, --vault, cwd, or the only one."""
    return resolve_db(db=db, vault=vault)


def _open_existing(db: Path) -> Index:
    if not db.exists():
        raise IndexNotFoundError(
            f"no index at {db}: run 'noteseek index PATH/TO/VAULT' (or pass --db) first"
        )
    return Index(db, create=False)


class _Progress:
    """A tqdm bar on a terminal, a plain line every few seconds otherwise."""

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

                self.bar = tqdm(total=total, unit="note", file=sys.stderr, leave=False)
            self.bar.update(1)
        elif time.monotonic() - self.last > 2.0 or done == total:
            self.last = time.monotonic()
            click.echo(f"indexed {done}/{total} notes", err=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _print_stats(stats: IndexStats, db: Path) -> None:
    verb = "stopped early (Ctrl-C)" if stats.interrupted else "done"
    click.echo(
        f"{verb} in {stats.seconds:.1f} s: {stats.files_seen} notes seen, {stats.added} added, "
        f"{stats.changed} changed, {stats.removed} removed, {stats.unchanged} unchanged, "
        f"{stats.skipped} skipped; {stats.chunks} chunks in {db}"
    )
    if stats.secrets_scrubbed:
        click.echo(
            f"scrubbed {stats.secrets_scrubbed} secret(s) before indexing (values never stored)"
        )
    if not stats.vectors:
        click.echo("warning: vectors unavailable, the index supports keyword search only", err=True)
    if stats.problems:
        click.echo(f"{len(stats.problems)} file(s) with problems:", err=True)
        for path, reason in stats.problems[:50]:
            click.echo(f"  {path}: {reason}", err=True)
        if len(stats.problems) > 50:
            click.echo("  … see 'noteseek status' for the full list", err=True)
    if stats.interrupted:
        click.echo("the index is consistent; run the same command again to finish", err=True)


def _snippet(text: str, width: int = 220) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1].rsplit(" ", 1)[0] + "…"


def _hit_json(hit: Hit) -> dict[str, Any]:
    data = asdict(hit)
    if hit.explanation is None:
        data.pop("explanation")
    return data


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


class _LazyGroup(click.Group):
    """A group whose adapter commands (MCP server, intake, hooks) are imported only when run, so
    `noteseek search` and the per-prompt hook do not pay for the MCP SDK or the intake code."""

    lazy: ClassVar[dict[str, str]] = {
        "mcp": "noteseek.mcp_server:mcp_cmd",
        "intake": "noteseek.intake.command:intake_cmd",
        "eval": "noteseek.eval_command:eval_cmd",
        "scan": "noteseek.scan_command:scan_cmd",
        "serve": "noteseek.daemon:serve_cmd",
        "install-hooks": "noteseek.hooks_install:install_cmd",
        "uninstall-hooks": "noteseek.hooks_install:uninstall_cmd",
    }

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted([*super().list_commands(ctx), *self.lazy])

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = self.lazy.get(cmd_name)
        if target is None:
            return super().get_command(ctx, cmd_name)
        import importlib

        module_name, attr = target.split(":")
        try:
            command = getattr(importlib.import_module(module_name), attr)
        except ImportError as exc:
            return _unavailable(cmd_name, exc)
        assert isinstance(command, click.Command)
        return command


def _unavailable(name: str, exc: ImportError) -> click.Command:
    """Stands in for a command whose optional dependency is missing, and says how to add it."""
    missing = exc.name or str(exc)

    def fail() -> None:
        raise click.ClickException(
            f"'noteseek {name}' needs {missing!r}, which is not installed: "
            f"pip install 'noteseek[{name}]'"
        )

    return click.Command(name, callback=fail, help=f"(unavailable: {missing} is not installed)")


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="noteseek")
@click.option("-v", "--verbose", is_flag=True, help="Log what happens (to stderr).")
def cli(verbose: bool) -> None:
    """Hybrid BM25 + vector search for Markdown note vaults, in one SQLite file."""
    logging.basicConfig(
        level=logging.INFO if verbose else logging.ERROR,
        format="%(levelname)s %(name)s: %(message)s",
    )


@cli.command("index")
@click.argument("vault", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--db",
    type=click.Path(dir_okay=False),
    help="Index file (default: per vault, in the data dir).",
)
@click.option(
    "--full", is_flag=True, help="Re-read and re-embed every note instead of only changes."
)
@click.option(
    "--model", help="Model2Vec model: a local folder or a hub id (default: bundled potion-base-8M)."
)
@click.option("--include", multiple=True, help="Only index these folders (repeatable).")
@click.option(
    "--exclude",
    multiple=True,
    help="Also skip these folders (repeatable); dot-folders are always skipped.",
)
@click.option(
    "--allow-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Known false positives the scrubber keeps (regex:… or sha256:… lines, as for scan).",
)
@click.option("-q", "--quiet", is_flag=True, help="No progress output.")
def index_cmd(
    vault: Path,
    db: str | None,
    full: bool,
    model: str | None,
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    allow_file: Path | None,
    quiet: bool,
) -> None:
    """Index VAULT: new and changed notes only, unless --full."""
    db_path = (
        Path(db).expanduser() if db else Path(os.environ.get(ENV_DB) or default_db_path(vault))
    )
    # Imported here, not at the top: `noteseek search` should not pay for the indexing code.
    from .indexer import IndexOptions
    from .scan import load_allowlist
    from .vault import DEFAULT_EXCLUDE

    allow = load_allowlist(allow_file) if allow_file is not None else None
    options = IndexOptions(include=include, exclude=DEFAULT_EXCLUDE + exclude, allow=allow)
    progress = _Progress(quiet)
    with Index(db_path, model=model, options=options) as idx:
        try:
            stats = idx.update(vault, full=full, progress=progress)
        finally:
            progress.close()
    _print_stats(stats, db_path)


@cli.command("search")
@click.argument("query")
@click.option("--db", type=click.Path(dir_okay=False), help="Index file.")
@click.option("--vault", type=click.Path(file_okay=False), help="Search the index of this vault.")
@click.option("-n", "--limit", default=10, show_default=True, type=click.IntRange(1, 1000))
@click.option("--mode", type=click.Choice(MODES), default="hybrid", show_default=True)
@click.option("--max-tokens", type=click.IntRange(1, None), help="Token budget for all hit texts.")
@click.option("--json", "as_json", is_flag=True, help="One JSON document with every hit field.")
@click.option("--explain", is_flag=True, help="Show each hit's ranks, scores and fusion terms.")
@click.option(
    "--folder", "folders", multiple=True, help="Only notes under this vault folder (repeatable)."
)
@click.option("--tag", "tags", multiple=True, help="Only notes with this tag (repeatable: all).")
def search_cmd(
    query: str,
    db: str | None,
    vault: str | None,
    limit: int,
    mode: str,
    max_tokens: int | None,
    as_json: bool,
    explain: bool,
    folders: tuple[str, ...],
    tags: tuple[str, ...],
) -> None:
    """Search the index for QUERY (put a query that starts with '-' after '--')."""
    with _open_existing(_resolve_db(db, vault)) as idx:
        hits = idx.search(
            query,
            limit=limit,
            mode=mode,  # type: ignore[arg-type]
            max_tokens=max_tokens,
            explain=explain,
            folders=folders or None,
            tags=tags or None,
        )
        degraded = idx.searcher.vector_problem if mode != "bm25" else None
    if as_json:
        doc = {
            "query": query,
            "mode": mode,
            "degraded": degraded,
            "hits": [_hit_json(h) for h in hits],
        }
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
            click.style(f"{rank:>2}. {hit.path} › {hit.section}", bold=True) + f"  ({ranks})"
        )
        if hit.explanation is not None:
            click.echo(f"    {_explain(hit)}")
        click.echo(f"    {_snippet(hit.text)}")


@cli.command("context")
@click.argument("query")
@click.option("--db", type=click.Path(dir_okay=False), help="Index file.")
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
    query: str, db: str | None, vault: str | None, max_tokens: int, no_gate: bool, as_json: bool
) -> None:
    """The agent context block for QUERY: what the prompt hook would inject."""
    from .agent_context import prompt_context

    with _open_existing(_resolve_db(db, vault)) as idx:
        result = prompt_context(idx, query, max_tokens=max_tokens, gated=not no_gate)
    if as_json:
        doc = {
            "text": result.text,
            "reason": result.reason,
            "considered": result.considered,
            "hits": [_hit_json(h) for h in result.hits],
        }
        click.echo(json.dumps(doc, ensure_ascii=False, indent=2))
        return
    if not result.text:
        click.echo(f"no context: {result.reason}", err=True)
        return
    click.echo(result.text, nl=False)


@cli.command(
    "hook",
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
    add_help_option=True,
)
@click.argument("event", type=click.Choice(["prompt", "pre-tool", "post-tool"]))
@click.pass_context
def hook_cmd(ctx: click.Context, event: str) -> None:
    """Claude Code hook: reads the event JSON on stdin, prints the protocol JSON.

    EVENT is prompt (UserPromptSubmit), pre-tool (PreToolUse) or post-tool (PostToolUse).
    Options: --db PATH, --max-tokens N. Always exits 0; problems go to hook.log in the data
    folder. Installed by 'noteseek install-hooks'.
    """
    from .hooks import main as hook_main

    sys.exit(hook_main([event, *ctx.args]))


def _status_json(status: IndexStatus) -> dict[str, Any]:
    data = asdict(status)
    data["problems"] = [{"path": p, "status": s, "problem": r} for p, s, r in status.problems]
    data["left_out"] = [
        {"path": p, "skipped_sections": n, "secrets_scrubbed": k} for p, n, k in status.left_out
    ]
    data["skipped_sections"] = status.skipped_sections
    data["secrets_scrubbed"] = status.secrets_scrubbed
    return data


@cli.command("status")
@click.option("--db", type=click.Path(dir_okay=False), help="Index file.")
@click.option("--vault", type=click.Path(file_okay=False), help="Status of this vault's index.")
@click.option("--json", "as_json", is_flag=True, help="One JSON document.")
def status_cmd(db: str | None, vault: str | None, as_json: bool) -> None:
    """Files, chunks, model, vector support, size and last run of an index."""
    with _open_existing(_resolve_db(db, vault)) as idx:
        status = idx.status()
    if as_json:
        click.echo(json.dumps(_status_json(status), ensure_ascii=False, indent=2))
        return
    last = status.last_run or {}
    rows = [
        (
            "index",
            f"{status.db_path} ({status.db_bytes / 1_048_576:.1f} MB, schema {status.schema_version})",
        ),
        ("vault", status.vault_root or "-"),
        ("files", f"{status.files} ({len(status.problems)} with problems)"),
        ("chunks", f"{status.chunks} ({status.vectors} with vectors)"),
        ("model", f"{status.model} [{status.model_fingerprint or 'not yet used'}]"),
        (
            "vectors",
            "sqlite-vec loaded"
            if status.vector_support and not status.vector_problem
            else f"unavailable, keyword search only: {status.vector_problem}",
        ),
    ]
    if status.left_out:
        files_with = sum(1 for _, n, _ in status.left_out if n)
        secret_files = sum(1 for _, _, k in status.left_out if k)
        rows.append(
            (
                "left out",
                f"{status.skipped_sections} link section(s) in {files_with} notes (skip list), "
                f"{status.secrets_scrubbed} scrubbed secret(s) in {secret_files} notes"
                + (" ('noteseek scan VAULT' lists them)" if secret_files else ""),
            )
        )
    if last:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(float(last.get("finished_at", 0))))
        rows.append(
            (
                "last run",
                f"{when}: {last.get('files_seen')} notes, {last.get('seconds', 0):.1f} s"
                + (", interrupted" if last.get("interrupted") else ""),
            )
        )
    for key, value in rows:
        click.echo(f"{key:<9} {value}")
    if status.problems:
        click.echo("problems:")
        for path, state, problem in status.problems:
            click.echo(f"  [{state}] {path}: {problem}")


def main() -> None:
    """Console entry point: domain errors become one line and exit code 1."""
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except NoteseekError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    except KeyboardInterrupt:
        click.echo("interrupted; the index is consistent", err=True)
        sys.exit(130)
