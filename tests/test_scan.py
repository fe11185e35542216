"""`noteseek scan`: a dry run that reports counts and fingerprints, never a secret or a prefix of one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from noteseek.cli.main import cli
from noteseek.engine.secret_scan import PATH_LINE, scan_secrets
from noteseek.errors import NoteseekError, VaultNotFoundError
from noteseek.secrets.scrubber import Allowlist, AllowlistError, secret_fingerprint
from tests.conftest import SAMPLE_VAULT
from tests.test_scrubber import PASSWORD, TOKENS
from tests.test_secrets_in_db import NAME_SECRET, SecretVault, build_secret_vault


@pytest.fixture
def vault(tmp_path: Path) -> SecretVault:
    return build_secret_vault(tmp_path / "vault")


def _files(root: Path) -> dict[str, float]:
    return {str(p): p.stat().st_mtime for p in root.rglob("*")}


def _assert_no_values(output: str, vault: SecretVault) -> None:
    for secret in (*vault.secrets, NAME_SECRET):
        # Neither the value nor its first 8 characters (a prefix) may be printed;
        # short passwords are checked whole.
        assert secret not in output
        if len(secret) >= 16:
            assert secret[:8] not in output


def test_scan_counts_per_file_and_pattern(vault: SecretVault) -> None:
    before = _files(vault.root)
    report = scan_secrets(vault.root)
    assert _files(vault.root) == before  # a dry run: nothing written into the vault
    assert report.files_scanned == len(list(vault.root.rglob("*.md")))
    paths = {f.path for f in report.files}
    assert "clean/meeting.md" not in paths
    assert len(report.files) == report.files_scanned - 1
    assert (
        report.findings
        == sum(report.totals.values())
        == sum(sum(f.counts.values()) for f in report.files)
    )
    assert report.totals["github-token"] >= 5
    for file in report.files:
        assert sum(file.counts.values()) == len(file.findings)


def test_scan_agrees_with_the_indexer_count(vault: SecretVault, tmp_path: Path) -> None:
    import noteseek
    from tests.conftest import FakeEmbedder

    report = scan_secrets(vault.root)
    with noteseek.Index(tmp_path / "x.db", embedder=FakeEmbedder()) as idx:
        stats = idx.update(str(vault.root))
    # The indexer counts body-text redactions; scan also reports path and frontmatter finds.
    in_text = sum(1 for f in report.files for x in f.findings if x.line > 1)
    assert in_text <= stats.secrets_scrubbed <= report.findings


def test_secret_in_a_file_name_is_reported_and_the_path_shown_scrubbed(
    vault: SecretVault,
) -> None:
    report = scan_secrets(vault.root)
    (named,) = [f for f in report.files if f.path_has_secret]
    assert named.path == "inbox/token [REDACTED:github-token].md"
    assert named.findings[0].line == PATH_LINE
    assert named.findings[0].fingerprint == secret_fingerprint(NAME_SECRET)


def test_frontmatter_alias_and_tag_secrets_are_found(vault: SecretVault) -> None:
    report = scan_secrets(vault.root)
    for kind in ("aliases", "tags", "frontmatter", "heading", "table", "fence", "inline"):
        assert any(f.path.startswith(f"vendors/{kind}-") for f in report.files), kind


def test_allowlist_by_fingerprint_removes_exactly_that_value(vault: SecretVault) -> None:
    full = scan_secrets(vault.root)
    target = TOKENS[0].secret
    allow = Allowlist(fingerprints=(secret_fingerprint(target)[:12],))
    report = scan_secrets(vault.root, allow=allow)
    assert report.findings < full.findings
    assert all(
        x.fingerprint != secret_fingerprint(target) for f in report.files for x in f.findings
    )


def test_scan_of_a_missing_vault_is_a_domain_error(tmp_path: Path) -> None:
    with pytest.raises(VaultNotFoundError, match="does not exist"):
        scan_secrets(tmp_path / "nope")


def test_sample_vault_flags_only_the_credentials_note() -> None:
    report = scan_secrets(SAMPLE_VAULT)
    assert [f.path for f in report.files] == ["howto/deploy-credentials.md"]
    # 42 notes and the diagram image, which is named as not scanned (scan runs no OCR).
    assert report.files_scanned == 43
    assert [p for p, _ in report.skipped] == ["attachments/rrf-diagram.png"]


# ------------------------------------------------------------------------------- CLI


def test_cli_human_output_has_counts_and_fingerprints_only(vault: SecretVault) -> None:
    result = CliRunner().invoke(cli, ["scan", str(vault.root)])
    assert result.exit_code == 0, result.output
    out = result.output
    _assert_no_values(out, vault)
    assert "inbox/token [REDACTED:github-token].md" in out
    assert "file name" in out and "sha256:" in out
    assert f"of {len(list(vault.root.rglob('*.md')))} files would be scrubbed" in out


def test_cli_json_document(vault: SecretVault) -> None:
    result = CliRunner().invoke(cli, ["scan", str(vault.root), "--json"])
    assert result.exit_code == 0, result.output
    _assert_no_values(result.output, vault)
    doc = json.loads(result.output)
    assert set(doc) >= {"files", "totals", "fingerprints", "findings", "files_scanned"}
    assert doc["findings"] == sum(doc["totals"].values()) == len(doc["fingerprints"])
    assert all(len(f["sha256"]) == 16 for f in doc["fingerprints"])
    assert doc["files"]["vendors/inline-00.md"] == {TOKENS[0].rule: 1}


def test_cli_allow_file(vault: SecretVault, tmp_path: Path) -> None:
    allow = tmp_path / "allow.txt"
    allow.write_text(
        "# known false positives\n"
        f"sha256:{secret_fingerprint(PASSWORD)[:12]}\n"
        "regex:gh[pousr]_[A-Za-z0-9]{36}\n",
        encoding="utf-8",
    )
    before = json.loads(CliRunner().invoke(cli, ["scan", str(vault.root), "--json"]).output)
    result = CliRunner().invoke(
        cli, ["scan", str(vault.root), "--json", "--allow-file", str(allow)]
    )
    assert result.exit_code == 0, result.output
    after = json.loads(result.output)
    assert "github-token" in before["totals"] and "github-token" not in after["totals"]
    assert after["findings"] < before["findings"]
    # The file-name token is allowed too, so that note has nothing left to report.
    assert not [path for path in after["files"] if path.startswith("inbox/")]


def test_cli_bad_allow_file_names_the_line(tmp_path: Path, vault: SecretVault) -> None:
    allow = tmp_path / "allow.txt"
    allow.write_text("sha256:abc\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["scan", str(vault.root), "--allow-file", str(allow)])
    assert result.exit_code != 0
    assert isinstance(result.exception, AllowlistError)
    assert isinstance(result.exception, NoteseekError)
    assert "allow.txt" in str(result.exception) and "12-64" in str(result.exception)


def test_scan_reads_documents_as_the_indexer_does(tmp_path: Path) -> None:
    """A CSV's password column and a token in an HTML page are found by the dry run, as many as
    an index run scrubs; the values never appear in its report."""
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "ops.md").write_text("# Ops\n\napi_key = sk_live_51HfakeFAKEfake1234567890abcdef\n")
    (vault / "creds.csv").write_text("service,password\nbilling,hunter2hunter2\n")
    (vault / "page.html").write_text(
        "<html><head><title>x</title></head><body><p>token "
        "ghp_abcdefghijklmnopqrstuvwxyz0123456789</p></body></html>"
    )
    report = scan_secrets(vault)
    assert {f.path for f in report.files} == {"ops.md", "creds.csv", "page.html"}
    assert all(f.line < 0 for f in report.files[0].findings if report.files[0].path != "ops.md")
    notes_only = scan_secrets(vault, documents=False)
    assert {f.path for f in notes_only.files} == {"ops.md"}
    text = json.dumps(report.to_json())
    for value in ("hunter2hunter2", "ghp_abcdefghijklmnopqrstuvwxyz0123456789", "sk_live_51Hfake"):
        assert value not in text
    from noteseek import Index
    from tests.conftest import FakeEmbedder

    with Index(tmp_path / "i.db", embedder=FakeEmbedder()) as idx:
        stats = idx.update(vault)
    assert stats.secrets_scrubbed == report.findings == 3
    result = CliRunner().invoke(cli, ["scan", str(vault)])
    assert result.exit_code == 0 and "3 secret(s) in 3 of 3 files" in result.output
    assert "hunter2hunter2" not in result.output
