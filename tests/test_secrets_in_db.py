"""End to end: a vault full of FAKE secrets is indexed and none of them reaches the disk or the logs.

The secrets are the ones of ``tests/test_scrubber.py`` (one or more per rule, built at
runtime from split pieces and seeded random bodies), embedded in realistic notes:
inline, in code fences, in tables, in YAML frontmatter values (aliases and tags too),
in headings, and in a file name.  The raw bytes of the database and its WAL are
searched while the index is open (mid-run, from the progress callback, when the WAL
holds the latest writes) and again after close.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

import noteseek
from tests.conftest import SAMPLE_VAULT, FakeEmbedder
from tests.test_scrubber import CONTEXTUAL, PASSWORD, TOKENS, fake

# A secret for the file-name case: self-identifying, so the scrubber sees it in a path.
NAME_SECRET = (
    "gh" + "p_" + fake("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 36, 900)
)


@dataclass(frozen=True)
class SecretVault:
    """A vault on disk and every secret planted in its notes' text (not the file-name one)."""

    root: Path
    secrets: tuple[str, ...]


def _note_for_token(i: int, secret: str) -> tuple[str, str]:
    """Rotate a vendor token through the places a note can hold it."""
    where = i % 7
    if where == 0:
        return (
            "inline",
            f"# Service {i}\n\nThe integration uses {secret} since the last rotation.\n",
        )
    if where == 1:
        return "fence", (
            f"# Deploy {i}\n\n## Script\n\n```bash\nexport SERVICE_TOKEN={secret}\n./deploy.sh\n```\n"
        )
    if where == 2:
        return "table", (
            f"# Inventory {i}\n\n| service | credential | owner |\n|---|---|---|\n"
            f"| billing | {secret} | ops |\n| search | none | me |\n"
        )
    if where == 3:
        return "frontmatter", (
            f"---\ntitle: Vendor {i}\napi_key: {secret}\ntags: [ops]\n---\n\n# Vendor {i}\n\n"
            "Body text about the vendor account and its billing contact.\n"
        )
    if where == 4:
        return "aliases", (
            f"---\ntitle: Account {i}\naliases:\n  - {secret}\n  - account {i}\n---\n\n"
            "The alias above was pasted by mistake while renaming the note.\n"
        )
    if where == 5:
        return "tags", (
            f"---\ntags: [ops, {secret}]\n---\n\n# Tagged {i}\n\n"
            "A tag that is really a token, from a careless paste.\n"
        )
    return "heading", (
        f"# Notes {i}\n\n## Rotate {secret} before Friday\n\n"
        "Rotation steps follow the runbook; ask the on-call person first.\n"
    )


def build_secret_vault(root: Path) -> SecretVault:
    """Write the fake-secret vault under ``root`` and return it with its planted secrets."""
    files: dict[str, str] = {}
    secrets: list[str] = []
    for i, token in enumerate(TOKENS):
        kind, text = _note_for_token(i, token.secret)
        files[f"vendors/{kind}-{i:02d}.md"] = text
        secrets.append(token.secret)
    for i, (snippet, secret, _rule) in enumerate(CONTEXTUAL):
        files[f"snippets/snippet-{i:02d}.md"] = (
            f"# Snippet {i}\n\nFound this in an old terminal log:\n\n```\n{snippet}\n```\n\n"
            "## Context\n\nKept for reference while migrating the service.\n"
        )
        secrets.append(secret)
    files[f"inbox/token {NAME_SECRET}.md"] = "# Pasted\n\nA note whose *name* is a token.\n"
    files["clean/meeting.md"] = (
        "# Weekly sync\n\n## Decisions\n\nWe keep the BM25 weights and rotate the tokens monthly.\n"
    )
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return SecretVault(root, tuple(dict.fromkeys(secrets)))


def _needles(secret: str) -> list[bytes]:
    """The secret, and its long alphanumeric runs lowercased (as an FTS term would be stored)."""
    needles = [secret.encode("utf-8")]
    needles += [run.lower().encode() for run in re.findall(r"[A-Za-z0-9]{12,}", secret)]
    return needles


def _leaks(data: bytes, secrets: tuple[str, ...]) -> list[str]:
    """Secrets (shown by rule-free index only) whose bytes occur in ``data``."""
    lowered = data.lower()
    return [
        f"secret #{i}"
        for i, secret in enumerate(secrets)
        if any(needle in (data if n == 0 else lowered) for n, needle in enumerate(_needles(secret)))
    ]


@pytest.fixture
def secret_vault(tmp_path: Path) -> SecretVault:
    return build_secret_vault(tmp_path / "vault")


def _index_and_snapshot(
    vault: SecretVault, db: Path, embedder: object | None
) -> tuple[list[bytes], noteseek.IndexStats]:
    """Index the vault; return raw DB + WAL bytes taken mid-run, after the run and after close."""
    snapshots: list[bytes] = []

    def snapshot(*_args: object) -> None:
        for path in (db, db.with_name(db.name + "-wal")):
            if path.exists():
                snapshots.append(path.read_bytes())

    kwargs = {} if embedder is None else {"embedder": embedder}
    with noteseek.Index(db, **kwargs) as idx:  # type: ignore[arg-type]
        stats = idx.update(str(vault.root), progress=snapshot)
        snapshot()
        assert idx.search("rotation", limit=5)  # the index works, it is not just empty
    snapshot()
    return snapshots, stats


def test_no_secret_reaches_the_database_or_wal(
    secret_vault: SecretVault, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="noteseek")
    snapshots, stats = _index_and_snapshot(secret_vault, tmp_path / "idx.db", FakeEmbedder())
    assert stats.secrets_scrubbed >= len(secret_vault.secrets)
    assert len(snapshots) > 2 * stats.added  # the WAL existed mid-run, beside the main file
    for data in snapshots:
        assert _leaks(data, secret_vault.secrets) == []
    for record in caplog.records:
        assert _leaks(record.getMessage().encode(), secret_vault.secrets) == []


def test_no_secret_reaches_the_database_with_the_real_model(
    secret_vault: SecretVault, tmp_path: Path
) -> None:
    snapshots, _stats = _index_and_snapshot(secret_vault, tmp_path / "real.db", None)
    for data in snapshots:
        assert _leaks(data, secret_vault.secrets) == []


def test_secret_in_a_file_name_does_not_reach_the_database(
    secret_vault: SecretVault, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="noteseek")
    snapshots, _stats = _index_and_snapshot(secret_vault, tmp_path / "name.db", FakeEmbedder())
    assert all(_leaks(data, (NAME_SECRET,)) == [] for data in snapshots)
    assert all(_leaks(r.getMessage().encode(), (NAME_SECRET,)) == [] for r in caplog.records)


def test_a_note_whose_file_name_holds_a_secret_is_named_not_indexed(
    secret_vault: SecretVault, tmp_path: Path
) -> None:
    # A path is the note's identity in the index and in results, so it cannot be scrubbed like
    # text: such a note is left out and named (with the secret scrubbed) in the run's problems.
    with noteseek.Index(tmp_path / "fields.db", embedder=FakeEmbedder()) as idx:
        stats = idx.update(str(secret_vault.root))
        named = [(p, r) for p, r in stats.problems if "file name contains a secret" in r]
        assert len(named) == 1
        assert NAME_SECRET not in named[0][0] and "[REDACTED:" in named[0][0]
        hits = idx.search("pasted name token", limit=50, mode="bm25")
        assert not [h for h in hits if h.path.startswith("inbox/")]


def test_detection_rate_on_the_corpus(secret_vault: SecretVault) -> None:
    # Every planted secret, in its note, is gone after scrubbing the note's text.
    missed = []
    for path in sorted(secret_vault.root.rglob("*.md")):
        text = noteseek.scrub(path.read_text(encoding="utf-8")).text
        missed += [s for s in secret_vault.secrets if s in path.read_text() and s in text]
    assert missed == []


def test_false_positive_rate_on_the_sample_vault() -> None:
    # Clean prose: every sample note but the one written to hold fake credentials.
    notes = [
        p
        for p in sorted(SAMPLE_VAULT.rglob("*.md"))
        if ".trash" not in p.parts and ".obsidian" not in p.parts
    ]
    clean = [p for p in notes if p.name != "deploy-credentials.md"]
    flagged = [p.name for p in clean if noteseek.scrub(p.read_text(encoding="utf-8")).counts]
    assert len(clean) >= 40
    assert flagged == []


def test_passwords_are_counted_once_per_place(secret_vault: SecretVault) -> None:
    # The shared fake password sits in many snippets; it must be gone from each.
    for path in sorted((secret_vault.root / "snippets").glob("*.md")):
        assert PASSWORD not in noteseek.scrub(path.read_text(encoding="utf-8")).text
