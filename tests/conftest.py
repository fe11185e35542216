"""Shared fixtures: a fake embedder for fast unit tests and small vaults in temporary folders."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from noteseek.core.query import query_terms

REPO = Path(__file__).resolve().parent.parent
SAMPLE_VAULT = REPO / "examples" / "sample-vault"
SHARED = REPO.parent / "shared"


class FakeEmbedder:
    """Deterministic bag-of-words hashing embedder: texts sharing words get similar vectors."""

    def __init__(self, dim: int = 64, version: str = "v1") -> None:
        self._dim = dim
        self._version = version
        self.calls = 0
        self.texts_embedded = 0

    @property
    def name(self) -> str:
        return "fake"

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def fingerprint(self) -> str:
        return f"fake:{self._dim}:{self._version}"

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.calls += 1
        self.texts_embedded += len(texts)
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for term in query_terms(text):
                digest = hashlib.blake2b(term.encode(), digest_size=8).digest()
                out[row, digest[0] % self._dim] += 1.0 if digest[1] % 2 else -1.0
            if not out[row].any():
                out[row, 0] = 1.0
        out /= np.linalg.norm(out, axis=1, keepdims=True)
        return out


# Also for servers a module-scoped fixture starts before any test's own environment is set.
os.environ["NOTESEEK_MIN_SCORE"] = "0"
os.environ["NOTESEEK_MIN_ANSWER"] = "0"
# Watchers begin no deep lane unasked: a background e5 build would change the fusion of tiny test
# vaults under tests about something else. tests/test_deep_lane_watch.py tests the default.
os.environ["NOTESEEK_DEEP_AUTO"] = "0"


def user_env(strip: tuple[str, ...] = ("NOTESEEK_",)) -> dict[str, str]:
    """The environment of a user who set no noteseek variable (those starting with `strip` left
    out), for a test's own processes; a watcher there begins no deep lane unasked (above)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(strip)}
    env["NOTESEEK_DEEP_AUTO"] = "0"
    return env


@pytest.fixture(autouse=True)
def _show_every_hit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Searches show every hit unless a test asks for the threshold: the fake embedder's vectors
    and tiny vaults say nothing about relevance, and most tests are about something else (filters,
    updates, adapters). tests/test_relevance.py tests the default threshold with the real model."""
    monkeypatch.setenv("NOTESEEK_MIN_SCORE", "0")
    monkeypatch.setenv("NOTESEEK_MIN_ANSWER", "0")


@pytest.fixture
def fake_embedder() -> FakeEmbedder:
    return FakeEmbedder()


WriteNotes = Callable[[dict[str, str | bytes]], Path]


@pytest.fixture
def make_vault(tmp_path: Path) -> WriteNotes:
    """Write {relative path: text or bytes} into a vault folder and return the folder."""
    root = tmp_path / "vault"
    root.mkdir(exist_ok=True)

    def write(files: dict[str, str | bytes]) -> Path:
        for rel, content in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content, encoding="utf-8")
        return root

    return write


def note(title: str, *sections: tuple[str, str], tags: str = "", fm: str = "") -> str:
    """A small Markdown note with optional frontmatter and H2 sections."""
    head = ""
    if tags or fm:
        head = "---\n" + (f"tags: [{tags}]\n" if tags else "") + fm + "---\n"
    body = "\n\n".join(f"## {h}\n\n{t}" for h, t in sections)
    return f"{head}# {title}\n\nIntro paragraph about {title.lower()} for context.\n\n{body}\n"


# PostgreSQL server fixtures (skip locally without a server, fail in CI): tests/postgres_fixtures.py
from .backends import backend  # noqa: E402  # SQLite and PostgreSQL in turn: tests/backends.py
from .postgres_fixtures import (  # noqa: E402
    _pg_servers,
    pg_data_dir,
    pg_module_schema,
    pg_schema,
    pg_standby_url,
    pg_target,
    pg_url,
)

__all__ = ["_pg_servers", "backend", "pg_data_dir", "pg_module_schema", "pg_schema", "pg_standby_url", "pg_target", "pg_url"]
