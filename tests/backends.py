"""Both storage backends behind one fixture: `backend` runs a test on SQLite and on PostgreSQL.

The PostgreSQL case asks for `pg_schema` only when it runs, so the SQLite case never needs a
server (and the PostgreSQL one skips locally, fails in CI, without one: postgres_fixtures.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from noteseek import DatabaseUrl
from noteseek.core.locator import with_collection
from noteseek.storage.open import open_storage
from noteseek.storage.protocol import Storage


@dataclass(frozen=True)
class Backend:
    """One backend of a test: its name and the locator of a fresh, empty index."""

    name: str  # "sqlite" | "postgres"
    locator: Path | DatabaseUrl

    def open(self, *, create: bool = True) -> Storage:
        """A new connection to the test's index."""
        return open_storage(self.locator, create=create)

    def password(self) -> str | None:
        """The locator's password (for checks that it is never shown), if it has one."""
        if not isinstance(self.locator, DatabaseUrl):
            return None
        userinfo = self.locator.url.split("://", 1)[1].split("/", 1)[0].rpartition("@")[0]
        return userinfo.partition(":")[2] or None

    def other(self, collection: str) -> Path | DatabaseUrl:
        """The locator of a second index beside it (another file, another collection)."""
        if isinstance(self.locator, DatabaseUrl):
            return self.locator.with_collection(collection)
        return self.locator.with_name(f"{collection}.db")


def pg_locator(schema_url: str, collection: str = "notes") -> DatabaseUrl:
    """A collection in a test's schema."""
    return DatabaseUrl(with_collection(schema_url, collection))


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    """An empty index on each backend in turn."""
    if request.param == "sqlite":
        return Backend("sqlite", tmp_path / "index.db")
    return Backend("postgres", pg_locator(request.getfixturevalue("pg_schema")))
