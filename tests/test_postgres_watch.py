"""`noteseek watch VAULT --db postgresql://…`: the watcher keeps a collection fresh, and another
update run of the same collection (the session advisory lock of update_lock.py) makes it wait,
with the holder named, until the lock is released.

Needs a PostgreSQL server (tests/postgres_fixtures.py): skips locally without one, fails in CI.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from noteseek import Index
from noteseek.core.locator import with_collection

from .test_watch_cli import body, found, watching


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """Five notes, as test_watch_cli's vault."""
    root = tmp_path / "vault"
    (root / "notes").mkdir(parents=True)
    for i in range(5):
        (root / "notes" / f"n{i}.md").write_text(body(f"zqstart{i}", f"Note {i}"))
    return root


def test_watch_keeps_a_collection_fresh_and_waits_for_another_run(
    vault: Path, tmp_path: Path, pg_schema: str
) -> None:
    url = with_collection(pg_schema, "vault")
    with watching(vault, url, tmp_path) as watch:  # type: ignore[arg-type]
        assert found(url, "zqstart3") == ["notes/n3.md"]  # type: ignore[arg-type]
        (vault / "notes" / "fresh.md").write_text(body("zqfresh"))
        watch.wait_for_run(0, "1 added")
        assert found(url, "zqfresh") == ["notes/fresh.md"]  # type: ignore[arg-type]
        holder = Index(url, create=False)
        lock = holder._store.update_lock(wait=0, holder="a test holding the lock")  # type: ignore[attr-defined]
        lock.__enter__()
        try:
            (vault / "notes" / "late.md").write_text(body("zqlate"))
            watch.wait_for("is being updated by a test holding the lock")
            assert found(url, "zqlate") == []  # type: ignore[arg-type]
        finally:
            lock.__exit__(None, None, None)
            holder.close()
        watch.wait_for_run(1, "1 added")
        assert found(url, "zqlate") == ["notes/late.md"]  # type: ignore[arg-type]
        assert watch.stop() == 0
    secret = pg_schema.split("://", 1)[1].split("@", 1)[0].split(":", 1)[1]
    assert secret not in watch.text()  # the URL is shown without its password
    with Index(url, create=False) as idx:
        assert idx.check() == []
