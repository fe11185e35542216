"""The options every command that opens an index shares: `--db`, `--collection`, `--write-db`.

`vault_rule_options` are the rules of what an update reads (`--include`, `--exclude`,
`--allow-file`, `--no-documents`, `--no-ocr`), shared by `index` and `watch` so both say the same;
`ocr_wanted` folds `--no-ocr` and $NOTESEEK_OCR into one flag.

`--db` is an index file or a database URL (`postgresql://user@host:port/db?sslmode=…`); a URL's
password is better kept in ~/.pgpass ($PGPASSFILE) or $PGPASSWORD than on a command line, which
`ps` shows. `--collection` picks the database's collections (vaults): repeat it or give `a,b` for
several, `*` for all (docs/scale.md). `--write-db` is where a command that also writes (a
refresh) writes, when `--db` is a read replica.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from ..settings import ENV_COLLECTION, ENV_DB, ENV_OCR, ENV_WRITE_DB, FALSE_VALUES

__all__ = [
    "collection_option",
    "db_option",
    "joined",
    "ocr_wanted",
    "vault_rule_options",
    "write_db_option",
]

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


def db_option(
    default: str = f"${ENV_DB}, else the index of --vault or of the current folder",
) -> Decorator:
    """`--db`: an index file or a postgresql:// URL; `default` says what is used without it."""
    return click.option(
        "--db",
        type=click.Path(dir_okay=False),
        metavar="FILE|URL",
        help=f"Index file or postgresql:// URL (default: {default}).",
    )


def joined(_ctx: click.Context, _param: click.Parameter, value: tuple[str, ...]) -> str | None:
    """Repeated `--collection` values as one selection (`a,b`), or None."""
    return ",".join(value) or None


def collection_option() -> Decorator:
    """`--collection`: which collection(s) of a database index."""
    return click.option(
        "--collection",
        multiple=True,
        metavar="NAME",
        callback=joined,
        help="With a postgresql:// --db: the collection (vault) to use; repeat for several, "
        f"'*' for all (default: ${ENV_COLLECTION}, else the vault folder's name, else all).",
    )


def write_db_option() -> Decorator:
    """`--write-db`: where writes go when --db is a read replica."""
    return click.option(
        "--write-db",
        type=click.Path(dir_okay=False),
        metavar="FILE|URL",
        help=f"Where updates are written when --db is a read replica (default: ${ENV_WRITE_DB}, "
        "else --db).",
    )


def ocr_wanted(no_ocr: bool) -> bool:
    """OCR is on unless `--no-ocr` or $NOTESEEK_OCR says off."""
    return not no_ocr and os.environ.get(ENV_OCR, "").strip().lower() not in FALSE_VALUES


def vault_rule_options() -> Decorator:
    """`--include`, `--exclude`, `--allow-file`, `--no-documents`, `--no-ocr`: what an update
    reads."""
    rules = (
        click.option("--include", multiple=True, help="Only index these folders (repeatable)."),
        click.option(
            "--exclude",
            multiple=True,
            help="Also skip these folders (repeatable); dot-folders are always skipped.",
        ),
        click.option(
            "--allow-file",
            type=click.Path(exists=True, dir_okay=False, path_type=Path),
            help="Known false positives the scrubber keeps (regex:… or sha256:… lines, as for scan).",
        ),
        click.option(
            "--no-documents",
            is_flag=True,
            help="Markdown notes only: leave PDF, Office, CSV, HTML, canvas, drawing and image "
            "files out.",
        ),
        click.option(
            "--no-ocr",
            is_flag=True,
            help=f"Do not read images or scanned PDF pages by OCR (also ${ENV_OCR}=0); images "
            "are listed as not read.",
        ),
    )

    def apply(command: Callable[..., Any]) -> Callable[..., Any]:
        for option in reversed(rules):
            command = option(command)
        return command

    return apply
