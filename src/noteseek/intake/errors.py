"""Typed errors of the intake layer; the CLI turns them into one-line messages."""

from __future__ import annotations

from ..errors import NoteseekError

__all__ = ["InboxNotFoundError", "IntakeConfigError", "IntakeError", "IntakeLogError"]


class IntakeError(NoteseekError):
    """Base class of every intake error."""


class IntakeConfigError(IntakeError):
    """The intake configuration (file or options) is invalid."""


class InboxNotFoundError(IntakeError):
    """The inbox folder does not exist or is not a folder."""


class IntakeLogError(IntakeError):
    """The decision log cannot be read or names no such run."""
