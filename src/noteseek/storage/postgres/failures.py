"""What a failed statement means to the user: the translations of a PostgreSQL index's failures.

- the server went away (restart, network) → DatabaseConnectionError, as for a failed connect
  (errors.py: host, port, user, what to check, never a password);
- a write on a hot standby (SQLSTATE 25006) → IndexReadOnlyError naming the primary as the place
  to index;
- a write by a role without write privileges (42501) → IndexReadOnlyError: that role searches.

`check_writable` refuses before anything is written where the outcome is known (several
collections, a standby, a reader role), so an update fails on its first statement with the
message rather than halfway. The checks are asked once per connection.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol

import psycopg
from psycopg import errors as pg_errors

from ...core.locator import connect_url
from ...errors import IndexReadOnlyError
from ...settings import ENV_COLLECTION, ENV_WRITE_DB
from .errors import connection_error, parse_target

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ...core.locator import DatabaseUrl
    from .collections import Selection


class Connection(Protocol):
    """What the translations read of the connection they serve (`connection.PostgresConnection`,
    which makes its `Failures` and so is not imported here)."""

    url: DatabaseUrl
    selection: Selection
    db: psycopg.Connection[Any]

    @property
    def location(self) -> str: ...

    def scalar(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Any: ...


__all__ = ["Connection", "Failures"]


class Failures:
    """Failure translation and the writability checks of one connection."""

    def __init__(self, owner: Connection) -> None:
        self._owner = owner
        self._standby: bool | None = None
        self._may_write: bool | None = None

    # -- messages ---------------------------------------------------------------------------

    def _where(self) -> str:
        return str(self._owner.url.with_collection(None))

    def standby(self) -> IndexReadOnlyError:
        """The error for a write on a read replica."""
        return IndexReadOnlyError(
            f"{self._where()} is a read-only standby (a hot-standby replica): searches work "
            "there, but indexing must go to the primary: give the primary's URL to 'noteseek "
            f"index --db' (or set ${ENV_WRITE_DB} for every command that writes)"
        )

    def reader(self) -> IndexReadOnlyError:
        """The error for a write by a role that may only read."""
        try:
            user = parse_target(connect_url(self._owner.url.url), env=os.environ).user
        except ValueError:
            user = "?"
        return IndexReadOnlyError(
            f"role {user!r} may only read {self._where()} (no INSERT on noteseek's tables): "
            "searches work with it, but indexing needs the role that owns the noteseek schema "
            "(docs/scale.md, 'Roles')"
        )

    # -- checks -----------------------------------------------------------------------------

    def check_writable(self) -> None:
        """Raise IndexReadOnlyError when this storage may not write (see the module docstring)."""
        owner = self._owner
        collections = getattr(owner, "collections", None)
        if collections is not None and owner.selection.explicit_one is None:
            what = (
                f"names several collections ({collections.label()})"
                if collections.multi
                else "names no collection"
            )
            raise IndexReadOnlyError(
                f"{owner.location} {what}: collections can be searched together, but a write "
                "goes to one, named on purpose: --collection NAME (or ?collection=NAME in the "
                "URL, or $" + ENV_COLLECTION + ")"
            )
        if self._standby is None:
            self._standby = bool(owner.scalar("SELECT pg_is_in_recovery()"))
        if self._standby:
            raise self.standby()
        if self._may_write is None:
            self._may_write = bool(
                owner.scalar(
                    "SELECT coalesce(bool_and(has_table_privilege(to_regclass(t), 'INSERT')), "
                    "false) FROM unnest(ARRAY['collections', 'files', 'chunks', 'postings']) t"
                )
            )
        if not self._may_write:
            raise self.reader()

    # -- translation ------------------------------------------------------------------------

    @contextmanager
    def translated(self) -> Iterator[None]:
        """Turn the failures above into noteseek's errors; anything else passes unchanged."""
        try:
            yield
        except pg_errors.ReadOnlySqlTransaction:
            raise self.standby() from None
        except pg_errors.InsufficientPrivilege:
            raise self.reader() from None
        except pg_errors.LockNotAvailable:
            raise  # the writer lock: connection.py says who holds it
        except psycopg.OperationalError as exc:
            conn = self._owner.db
            state = str(getattr(exc, "sqlstate", None) or "")
            if conn.closed or conn.broken or state.startswith(("08", "57P")):
                raise connection_error(
                    exc, connect_url(self._owner.url.url), env=os.environ
                ) from None
            raise
