"""The web server follows its index file: a file replaced under it (a rebuilt index moved into
place) is reopened by every worker, a removed one is a 503 naming the command, and edits by an
update show without a reopen."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the web tests need the web extra: pip install -e '.[web]'")

from fastapi.testclient import TestClient

from noteseek import Index
from noteseek.web.app import create_app
from noteseek.web.pool import IndexPool

from .conftest import note
from .web_support import LOOPBACK_HOSTS, build_index, make_pool

WORKERS = 2


def vault_with(root: Path, notes: dict[str, str]) -> Path:
    for rel, text in notes.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[TestClient, IndexPool, Path]]:
    old = vault_with(
        tmp_path / "old", {"old/lantern.md": note("Old lantern", ("Lamp", "the old lantern"))}
    )
    db = build_index(old, tmp_path / "index.db")
    pool = make_pool(db, workers=WORKERS)
    yield TestClient(create_app(pool, hosts=LOOPBACK_HOSTS)), pool, db
    pool.close()


def paths(client: TestClient, query: str = "lantern") -> list[set[str]]:
    """The hit paths of one search per worker and more (each worker thread answers some)."""
    replies = [client.get("/api/search", params={"q": query}) for _ in range(WORKERS * 4)]
    assert all(r.status_code == 200 for r in replies), [r.text for r in replies]
    return [{h["path"] for h in r.json()["hits"]} for r in replies]


def test_a_replaced_index_file_is_reopened_by_every_worker(
    served: tuple[TestClient, IndexPool, Path], tmp_path: Path
) -> None:
    client, pool, db = served
    assert all(found == {"old/lantern.md"} for found in paths(client))
    new = vault_with(
        tmp_path / "new", {"new/lantern.md": note("New lantern", ("Lamp", "a new lantern"))}
    )
    rebuilt = build_index(new, tmp_path / "rebuilt.db")  # closed: its log is checkpointed
    os.replace(rebuilt, db)
    assert all(found == {"new/lantern.md"} for found in paths(client))
    assert pool.reopened == 1 and pool.opened == WORKERS
    assert client.get("/api/status").json()["vault_root"] == str(new)
    assert client.get("/api/folders").json()["folders"] == [{"path": "new", "notes": 1}]
    with Index(db, create=False) as check:
        assert check.check() == []


def test_a_removed_index_is_503_until_it_is_back(
    served: tuple[TestClient, IndexPool, Path], tmp_path: Path
) -> None:
    client, pool, db = served
    paths(client)
    kept = tmp_path / "kept.db"
    os.replace(db, kept)
    reply = client.get("/api/search", params={"q": "lantern"})
    assert reply.status_code == 503 and "noteseek index" in reply.json()["error"]
    assert pool.opened == 0
    os.replace(kept, db)
    assert all(found == {"old/lantern.md"} for found in paths(client))


def test_an_update_shows_without_a_reopen(
    served: tuple[TestClient, IndexPool, Path], tmp_path: Path
) -> None:
    client, pool, db = served
    paths(client)
    vault = tmp_path / "old"
    vault_with(vault, {"old/candle.md": note("Candle", ("Light", "a candle beside the lantern"))})
    with Index(db) as writer:
        writer.update(vault)
    assert all(found == {"old/lantern.md", "old/candle.md"} for found in paths(client))
    assert pool.reopened == 0
