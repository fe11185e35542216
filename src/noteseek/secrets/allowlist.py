"""The scrubber's allow-list: known false positives that must stay in the text.

A candidate whose value fully matches one of the regexes, or whose SHA-256 starts with one of the
fingerprints (``noteseek scan`` prints them), is left in place. Pure: values in, values out.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field

from ..errors import NoteseekError

__all__ = ["MIN_FINGERPRINT_CHARS", "Allowlist", "AllowlistError", "secret_fingerprint"]

#: Shortest fingerprint prefix an allow-list accepts (48 bits: no accidental matches).
MIN_FINGERPRINT_CHARS = 12
_FINGERPRINT_RE = re.compile(r"[0-9a-f]{12,64}")


class AllowlistError(NoteseekError, ValueError):
    """An allow-list entry is not a valid regex or fingerprint."""


def secret_fingerprint(value: str) -> str:
    """SHA-256 hex digest of a would-be-redacted value: names it without revealing it."""
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class Allowlist:
    """Values the scrubber must keep: regexes (full match) or SHA-256 hex prefixes (>= 12 chars)."""

    regexes: tuple[str, ...] = ()
    fingerprints: tuple[str, ...] = ()
    _compiled: tuple[re.Pattern[str], ...] = field(
        default=(), init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        compiled: list[re.Pattern[str]] = []
        for regex in self.regexes:
            try:
                compiled.append(re.compile(regex))
            except re.error as exc:
                raise AllowlistError(
                    f"allow-list regex {regex!r} does not compile: {exc}"
                ) from None
        for prefix in self.fingerprints:
            if not _FINGERPRINT_RE.fullmatch(prefix):
                raise AllowlistError(
                    f"allow-list fingerprint {prefix!r} must be {MIN_FINGERPRINT_CHARS}-64 lowercase "
                    "hex characters (copy it from 'noteseek scan')"
                )
        object.__setattr__(self, "_compiled", tuple(compiled))

    @classmethod
    def parse(cls, text: str, *, source: str = "allow-list") -> Allowlist:
        """Read the allow-file format: ``regex:<pattern>`` or ``sha256:<prefix>`` per line, ``#`` comments."""
        regexes: list[str] = []
        fingerprints: list[str] = []
        for number, raw in enumerate(text.splitlines(), start=1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            kind, sep, value = line.partition(":")
            kind = kind.strip().lower()
            if sep and kind == "regex" and value:
                regexes.append(value)  # kept verbatim: leading spaces may be part of it
            elif sep and kind == "sha256" and value.strip():
                fingerprints.append(value.strip().lower())
            else:
                raise AllowlistError(
                    f"{source}, line {number}: expected 'regex:<pattern>' or 'sha256:<prefix>'"
                )
        try:
            return cls(tuple(regexes), tuple(fingerprints))
        except AllowlistError as exc:
            raise AllowlistError(f"{source}: {exc}") from None

    def __bool__(self) -> bool:
        return bool(self.regexes or self.fingerprints)

    def allows(self, value: str) -> bool:
        """True if ``value`` is a known false positive."""
        if any(regex.fullmatch(value) for regex in self._compiled):
            return True
        if self.fingerprints:
            digest = secret_fingerprint(value)
            return any(digest.startswith(prefix) for prefix in self.fingerprints)
        return False

    @property
    def fingerprint(self) -> str:
        """Short digest of the entries, for a pipeline fingerprint (changes re-process notes)."""
        payload = json.dumps([sorted(self.regexes), sorted(self.fingerprints)])
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]
