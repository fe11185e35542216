"""Typed domain errors. The library raises these; only the CLI turns them into messages and exit codes."""

from __future__ import annotations

__all__ = [
    "CursorError",
    "DatabaseConnectionError",
    "IndexLockedError",
    "IndexNotFoundError",
    "IndexReadOnlyError",
    "InvalidDateError",
    "MissingExtraError",
    "ModelLoadError",
    "NoteAccessError",
    "NoteNotIndexedError",
    "NoteUnreadableError",
    "NoteseekError",
    "SchemaVersionError",
    "SearchRequestError",
    "SectionNotFoundError",
    "UnsafeNotePathError",
    "VaultGoneError",
    "VaultNotFoundError",
    "VectorSupportError",
    "WatchError",
]


class NoteseekError(Exception):
    """Base class of every error noteseek raises on purpose."""


class InvalidDateError(NoteseekError, ValueError):
    """A date option (`--since`, `--until`) is neither a date, a span nor a time phrase."""


class VaultNotFoundError(NoteseekError):
    """The vault folder does not exist or is not a directory."""


class VaultGoneError(VaultNotFoundError):
    """The watched vault folder was deleted, replaced or unmounted while it was being watched."""


class WatchError(NoteseekError):
    """The file watcher could not watch the vault (neither with OS events nor by polling)."""


class IndexNotFoundError(NoteseekError):
    """No index file exists where one was expected."""

    @classmethod
    def at(cls, path: object, *, vault: str | None = None) -> IndexNotFoundError:
        """The error for a missing index file, with the command that makes one (for `vault`,
        when the index looked for is that folder's)."""
        if vault is not None:
            # deferred: only to quote a vault path in this message
            import shlex

            # The command last and quoted for a shell: it is meant to be pasted as it is.
            return cls(
                f"{vault} is not indexed yet (no index at {path}); index it first: "
                f"noteseek index {shlex.quote(vault)}"
            )
        return cls(f"no index at {path}: run 'noteseek index PATH/TO/VAULT' (or pass --db) first")

    @classmethod
    def empty(cls, path: object) -> IndexNotFoundError:
        """The error for an index that exists but was never filled (no update ever ran)."""
        return cls(
            f"no index yet: nothing was ever indexed into {path}; "
            "run 'noteseek index PATH/TO/VAULT' (or pass --db) first"
        )


class NotAnIndexError(NoteseekError):
    """The file given as an index is not one: not an SQLite database, or another program's."""

    @classmethod
    def at(cls, path: object, why: str) -> NotAnIndexError:
        """The error for a file that is not an index, left as it was."""
        return cls(
            f"{path} is not a noteseek index ({why}); it was left as it was: pass --db with an "
            "index file, or a new file name for a new index"
        )


class SchemaVersionError(NoteseekError):
    """The index file was written by a newer noteseek than this one."""

    @classmethod
    def newer(
        cls, where: object, version: int, known: int, *, extra: str | None = None
    ) -> SchemaVersionError:
        """The error for an index at schema `version`, past the `known` latest: upgrade, with
        the backend's `extra` when it needs one."""
        package = "noteseek" if extra is None else f"'noteseek[{extra}]'"
        return cls(
            f"{where} has noteseek schema version {version}, this noteseek knows up to {known}: "
            f"upgrade noteseek (pip install -U {package})"
        )


class DatabaseConnectionError(NoteseekError):
    """A database server could not be reached, or refused the connection or the login.

    The message names host, port, user and database, says what to check, and never holds a
    password; `reason` is a short machine-readable category (`refused`, `login`, ...).
    """

    def __init__(self, message: str, *, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


class MissingExtraError(NoteseekError, ImportError):
    """A library of an optional extra is not installed; the message gives the `pip install` line.

    An ImportError too (`name` is the missing module), so code that falls back when an import
    fails keeps working; `extra` is the extra of pyproject.toml that installs it."""

    def __init__(self, message: str, *, extra: str, name: str) -> None:
        super().__init__(message)
        self.extra = extra
        self.name = name


class SearchRequestError(NoteseekError, ValueError):
    """A search's options are out of range (an unknown mode, too many filters, too long a query).

    Raised when the `SearchRequest` is made, before any index work; `option` names the
    offending option as the library spells it (`limit`, `folders`, `query`, ...). A ValueError
    too, as the request's checks always were.
    """

    def __init__(self, message: str, *, option: str) -> None:
        super().__init__(message)
        self.option = option


class ModelLoadError(NoteseekError):
    """The embedding model could not be loaded."""


class IndexLockedError(NoteseekError):
    """Another process is writing to the index right now."""


class IndexReadOnlyError(NoteseekError):
    """The index can be searched here but not written: a read replica (hot standby), a database
    role that may only read, or several collections at once. The message says where to write."""


class VectorSupportError(NoteseekError):
    """The index holds vectors but sqlite-vec cannot be loaded, so it must not be written."""


class CursorError(NoteseekError):
    """A cursor cannot continue: malformed, from a call with other arguments, or from before
    the index changed. The message says to repeat the call without it."""


class NoteAccessError(NoteseekError):
    """A note could not be handed out; the message says what to do instead."""


class UnsafeNotePathError(NoteAccessError):
    """The path is absolute, climbs out with `..`, or goes through a symlink."""


class NoteNotIndexedError(NoteAccessError):
    """The path is not a note the index holds (never indexed, skipped, or no such file)."""


class NoteUnreadableError(NoteAccessError):
    """The index lists the note but its file cannot be read now (gone, unreadable, not text)."""


class SectionNotFoundError(NoteAccessError):
    """The note has no section with that name; `available` lists the ones it has."""

    def __init__(self, message: str, available: tuple[str, ...]) -> None:
        super().__init__(message)
        self.available = available
