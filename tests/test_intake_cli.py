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
