"""Issue 13, must hold: 0 planted secrets in the database, its WAL/SHM, logs, status, scan output
and any hit or context text; and an index built before this change is re-scrubbed and re-chunked
on the next run, reusing vectors where the text did not change.

The vault holds every planted format (tests/planted_secrets.py: vendor tokens, issue 13's bare
shapes, vendors without a rule of their own) in every context, plus near misses that must stay
searchable.  Fixed seeds whose 224 values each the detector catches: its entropy floors let about
1 random value in 120 through (docs/secrets.md), so a test over fresh values would be flaky;
bench/secrets_compare.py and tests/test_bare_secrets.py measure recall on fresh values.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest

import noteseek
import noteseek.core.chunker
import noteseek.engine.update.options
import noteseek.secrets.matching
import noteseek.secrets.scrubber
from tests.conftest import FakeEmbedder
from tests.planted_secrets import Planted, near_misses, planted
from tests.test_secrets_in_db import _leaks

from .conftest import user_env

SEEDS = (11, 34)
# Near misses whose kept value is one search term (a base64 blob is kept too, but it is not a word).
SEARCHABLE = {
    "git-sha",
    "git-sha-table",
    "uuid",
    "sha256-named",
    "checksum",
    "sha256sum",
    "identifier",
}


def _write(vault: Path, notes: list[Planted]) -> None:
    for i, p in enumerate(notes):
        path = vault / (p.path if p.context == "file-name" else f"{p.format}/{p.context}-{i}.md")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(p.text, encoding="utf-8")


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, tuple[str, ...], list[Planted]]:
    root = tmp_path_factory.mktemp("bare") / "vault"
    secrets = [p for seed in SEEDS for p in planted(seed)]
    keep = [p for seed in SEEDS for p in near_misses(seed)]
    _write(root, secrets)
    _write(root / "clean", keep)
    return root, tuple(dict.fromkeys(p.value for p in secrets)), keep


def _files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file()]


def test_no_planted_secret_reaches_db_wal_shm_logs_hits_or_context(
    vault: tuple[Path, tuple[str, ...], list[Planted]],
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    root, secrets, keep = vault
    caplog.set_level(logging.DEBUG, logger="noteseek")
    db = tmp_path / "idx.db"
    snapshots: list[bytes] = []

    def snapshot(*_args: object) -> None:
        for suffix in ("", "-wal", "-shm"):
            path = Path(f"{db}{suffix}")
            if path.exists():
                snapshots.append(path.read_bytes())

    texts: list[str] = []
    with noteseek.Index(db, embedder=FakeEmbedder()) as idx:
        stats = idx.update(str(root), progress=snapshot)
        snapshot()
        assert Path(f"{db}-shm").exists()  # WAL and SHM were read while the index was open
        for query in ("pasted value terminal", "service billing ops", "steps dashboard", "script"):
            for hit in idx.search(query, limit=50):
                texts += [hit.path, hit.section, hit.heading_context, hit.text]
        from noteseek import prompt_context

        block = prompt_context(idx, "I pasted the value into the terminal", gated=False)
        texts.append(block.text)
        status = idx.status()
        texts.append(repr(status))
        # The near misses stay searchable: git SHAs, UUIDs, named hashes, certificates.
        for p in keep:
            if p.format in SEARCHABLE:
                hits = idx.search(p.value, mode="bm25", limit=5)
                assert any(h.path.startswith("clean/") for h in hits), p.format
    snapshot()
    in_text = [p for seed in SEEDS for p in planted(seed) if p.context != "file-name"]
    assert stats.secrets_scrubbed >= len(in_text)  # notes whose file name holds one are skipped
    assert len([r for r in stats.problems if "file name contains a secret" in r[1]]) == len(
        secrets
    ) - len(in_text)
    assert status.secrets_scrubbed == stats.secrets_scrubbed
    for data in snapshots:
        assert _leaks(data, secrets) == []
    assert _leaks("\n".join(texts).encode(), secrets) == []
    assert _leaks("\n".join(r.getMessage() for r in caplog.records).encode(), secrets) == []


def _cli(*args: str, env: dict[str, str]) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "noteseek", "-v", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout + result.stderr


def test_cli_status_scan_search_and_logs_show_no_planted_secret(
    vault: tuple[Path, tuple[str, ...], list[Planted]], tmp_path: Path
) -> None:
    root, secrets, _keep = vault
    home = tmp_path / "home"
    env = user_env()
    env.update(NOTESEEK_HOME=str(home), HF_HUB_OFFLINE="1")
    out = [_cli("index", str(root), env=env)]
    out.append(_cli("status", "--vault", str(root), env=env))
    status = _cli("status", "--json", "--vault", str(root), env=env)
    out.append(status)
    out.append(_cli("scan", str(root), env=env))
    scan = _cli("scan", "--json", str(root), env=env)
    out.append(scan)
    for query in ("pasted value terminal", "billing ops", "script run check"):
        out.append(_cli("search", query, "--vault", str(root), "--json", env=env))
        out.append(_cli("context", query, "--vault", str(root), "--no-gate", env=env))
    assert _leaks("\n".join(out).encode(), secrets) == []
    for path in _files(home):  # the index, its WAL/SHM if any, hook and daemon logs
        assert _leaks(path.read_bytes(), secrets) == [], path.name
    # scan names the detector that fired (never the value); status counts what was left out
    detectors = json.loads(scan[: scan.rindex("}") + 1])["totals"]
    assert {"high-entropy-base64", "high-entropy-hex", "discord-bot-token"} <= set(detectors)
    assert json.loads(status[: status.rindex("}") + 1])["secrets_scrubbed"] > 0
    assert "scrubbed secret(s)" in out[1]


def _dropping_short_sections(
    pieces: list[noteseek.core.chunker._Piece], *, min_chars: int, max_chars: int
) -> list[tuple[str, str]]:
    """The chunker before issue 13: sections shorter than `min_chars` were dropped."""
    return [(p.section, p.text.strip("\n")) for p in pieces if len(p.text.strip()) >= min_chars]


def test_an_index_from_before_is_rescrubbed_rechunked_and_keeps_its_vectors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "vault"
    notes = [p for p in planted(5) if p.format in ("base64-64", "hex-64") and p.context == "prose"]
    _write(root, notes)
    (root / "plain.md").write_text(
        "# Plain\n\n## Body\n\nA note without secrets whose chunk text does not change.\n"
    )
    (root / "short.md").write_text(
        "# Short\n\n## Body\n\n"
        + "Enough words to be a section of its own. " * 3
        + "\n\n## Tail\n\nzqtailword\n"
    )
    db = tmp_path / "old.db"
    # The pipeline as it was: no keyword-free detection, the old version and rules fingerprint.
    with monkeypatch.context() as old:
        old.setattr(noteseek.secrets.matching, "find_bare_secrets", lambda text: [])
        old.setattr(noteseek.core.chunker, "_merge_short", _dropping_short_sections)
        old.setattr(noteseek.engine.update.options, "PIPELINE_VERSION", "5")
        old.setattr(noteseek.engine.update.options, "RULES_FINGERPRINT", "0" * 16)
        with noteseek.Index(db, embedder=FakeEmbedder()) as idx:
            idx.update(str(root))
    assert _leaks(db.read_bytes(), tuple(p.value for p in notes)) != []  # the old index leaked
    with noteseek.Index(db, embedder=FakeEmbedder()) as idx:
        assert idx.search("zqtailword", mode="bm25") == []  # and lost the short section
    embedder = FakeEmbedder()
    with noteseek.Index(db, embedder=embedder) as idx:
        stats = idx.update(str(root))
        assert stats.changed == len(notes) + 2  # every note re-processed, although none changed
        assert stats.vectors_reused >= 1  # plain.md's chunk text is the same: its vector is kept
        assert stats.chunks_embedded == stats.chunks_written - stats.vectors_reused
        assert [h.path for h in idx.search("zqtailword", mode="bm25")] == ["short.md"]
        assert idx.status().secrets_scrubbed == len(notes)
    assert _leaks(db.read_bytes(), tuple(p.value for p in notes)) == []
