"""What is installed outside the package keeps working across its reorganisation: the console
script `noteseek.entry:main` and the `python -m noteseek hook …` commands install-hooks writes."""

from __future__ import annotations

import importlib.metadata
import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import noteseek
from noteseek.hooks.settings_json import hook_entries, noteseek_executable

from .conftest import REPO, WriteNotes, note, user_env

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - tomli is a dependency below 3.11
    import tomli as tomllib

BASH_OUTPUT = "\n".join(
    [f"test_{i} PASSED" for i in range(400)] + ["ERROR test_db - connection refused", "1 failed"]
)


def _env(tmp_path: Path) -> dict[str, str]:
    env = user_env()
    env.update(NOTESEEK_HOME=str(tmp_path / "home"), NOTESEEK_NO_DAEMON="1", HF_HUB_OFFLINE="1")
    return env


def test_the_console_script_is_entry_main() -> None:
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["project"]["scripts"]
    assert scripts == {"noteseek": "noteseek.entry:main"}
    installed = {e.name: e.value for e in importlib.metadata.entry_points(group="console_scripts")}
    assert installed.get("noteseek") == "noteseek.entry:main"
    from noteseek.entry import main

    assert callable(main)


def test_the_console_script_runs(tmp_path: Path) -> None:
    script = Path(sys.executable).parent / "noteseek"
    if not script.exists():
        pytest.skip("no console script next to this interpreter (not installed with pip)")
    out = subprocess.run(
        [str(script), "--version"], capture_output=True, text=True, env=_env(tmp_path), timeout=120
    )
    assert out.returncode == 0 and out.stdout.strip() == f"noteseek, version {noteseek.__version__}"
    hook = subprocess.run(
        [str(script), "hook", "prompt", "--db", str(tmp_path / "none.db")],
        input=json.dumps({"prompt": "anything at all", "cwd": str(tmp_path)}),
        capture_output=True,
        text=True,
        env=_env(tmp_path),
        timeout=120,
    )
    assert (hook.returncode, hook.stdout, hook.stderr) == (0, "", "")  # no index: silent


def test_the_settings_json_entries_install_hooks_writes_run(
    tmp_path: Path, make_vault: WriteNotes
) -> None:
    vault = make_vault(
        {
            "howto/rebase.md": note(
                "Undo a rebase",
                (
                    "Undo a rebase",
                    "After a bad git rebase, git reset --hard ORIG_HEAD puts it back.",
                ),
            ),
            "db/postgres.md": note("Postgres", ("Vacuum", "VACUUM FULL rewrites the whole table.")),
        }
    )
    db = tmp_path / "notes.db"
    with noteseek.Index(db) as idx:  # the bundled model: the hook processes open it themselves
        idx.update(vault)
    entries = {e.kind: e for e in hook_entries(executable=noteseek_executable(), db=db)}
    assert shlex.split(entries["prompt"].command)[:3] == [sys.executable, "-m", "noteseek"]
    payloads = {
        "prompt": {"hook_event_name": "UserPromptSubmit", "prompt": "how do I undo a git rebase?"},
        "pre-tool": {
            "hook_event_name": "PreToolUse",
            "tool_name": "WebSearch",
            "tool_input": {"query": "undo a git rebase"},
        },
        "post-tool": {
            "hook_event_name": "PostToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": "pytest", "description": "run the database tests"},
            "tool_response": {"stdout": BASH_OUTPUT, "stderr": ""},
        },
    }
    for kind, payload in payloads.items():
        result = subprocess.run(
            shlex.split(entries[kind].command),
            input=json.dumps({**payload, "cwd": str(vault)}),
            capture_output=True,
            text=True,
            env=_env(tmp_path),
            timeout=300,
        )
        assert result.returncode == 0 and result.stderr == "", (kind, result.stderr)
        if kind == "post-tool" or result.stdout:
            answer = json.loads(result.stdout)["hookSpecificOutput"]
            assert answer["hookEventName"] == payload["hook_event_name"], kind
    # A context hook may stay silent on a two-note vault (its score threshold), and then says
    # why in the log; nothing failed.
    log = tmp_path / "home" / "hook.log"
    lines = log.read_text().splitlines() if log.exists() else []
    assert all("silent: " in line for line in lines), lines
