"""install-hooks / uninstall-hooks: merging into real-looking settings files without disturbing them."""

from __future__ import annotations

import copy
import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from noteseek.cli.hooks import install_cmd, uninstall_cmd
from noteseek.hooks import settings_json as hook_settings
from noteseek.hooks.install import (
    HookEntry,
    SettingsFileError,
    apply_change,
    hook_entries,
    merge_hooks,
    noteseek_executable,
    plan_install,
    plan_uninstall,
    project_settings_path,
    remove_hooks,
    user_settings_path,
)

EXE = ["/opt/noteseek/bin/noteseek"]
ENTRIES = hook_entries(executable=EXE)

GUARD = {"type": "command", "command": "~/.claude/hooks/block-rm.sh"}
FORMATTER = {"type": "command", "command": "npx prettier --write", "timeout": 30}
NOTIFY = {"type": "command", "command": "notify-send 'Claude is done'"}
DATE = {"type": "command", "command": "date '+Today is %A'"}
PROMPT_CHECK = {"type": "prompt", "prompt": "Is this request safe? $ARGUMENTS"}

# Shapes seen in real settings files: permissions and env next to hooks, several events, a
# matcher-less UserPromptSubmit group, non-command handlers, MCP matchers, a SessionStart source.
SHAPES: dict[str, dict[str, Any]] = {
    "no hooks yet": {
        "model": "sonnet",
        "permissions": {"allow": ["Bash(npm run lint)"], "deny": ["Read(./.env)"]},
        "env": {"BASH_DEFAULT_TIMEOUT_MS": "60000"},
    },
    "other tool hooks": {
        "permissions": {"allow": ["Bash(git status)"]},
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [GUARD]}],
            "PostToolUse": [{"matcher": "Edit|Write", "hooks": [FORMATTER]}],
            "Stop": [{"hooks": [NOTIFY]}],
        },
        "statusLine": {"type": "command", "command": "~/.claude/statusline.sh"},
    },
    "another prompt hook": {
        "hooks": {
            "UserPromptSubmit": [{"hooks": [DATE, PROMPT_CHECK]}],
            "SessionStart": [
                {"matcher": "startup", "hooks": [{"type": "command", "command": "git log -5"}]}
            ],
            "PreToolUse": [
                {
                    "matcher": "mcp__github__.*",
                    "hooks": [{"type": "http", "url": "http://localhost:8080/h"}],
                },
                {"matcher": "Write", "hooks": [GUARD, FORMATTER]},
            ],
        },
        "includeCoAuthoredBy": False,
    },
}


def ours(settings: dict[str, Any]) -> list[tuple[str, str]]:
    """(event, command) of every noteseek handler, in file order."""
    found = []
    for event, groups in settings.get("hooks", {}).items():
        for group in groups:
            for handler in group.get("hooks", []):
                if "noteseek" in str(handler.get("command", "")):
                    found.append((event, handler["command"]))
    return found


def foreign(settings: dict[str, Any]) -> dict[str, Any]:
    """`settings` with noteseek's handlers cut out by hand, keeping empty places visible."""
    result = copy.deepcopy(settings)
    for groups in result.get("hooks", {}).values():
        for group in groups:
            group["hooks"] = [h for h in group["hooks"] if "noteseek" not in str(h.get("command"))]
    return result


# ---------------------------------------------------------------- pure merge and removal


@pytest.mark.parametrize("name", SHAPES)
def test_merge_adds_ours_and_keeps_everything_else(name: str) -> None:
    original = SHAPES[name]
    merged = merge_hooks(original, ENTRIES)

    assert sorted(e for e, _ in ours(merged)) == ["PostToolUse", "PreToolUse", "UserPromptSubmit"]
    for key, value in original.items():
        if key != "hooks":
            assert merged[key] == value
    # Keys keep their order; other groups keep their place and content.
    assert list(merged)[: len(original)] == list(original)
    for event, groups in original.get("hooks", {}).items():
        assert merged["hooks"][event][: len(groups)] == groups
    assert original == SHAPES[name], "the input dict must not be modified"


@pytest.mark.parametrize("name", SHAPES)
def test_uninstall_after_install_gives_back_the_original(name: str) -> None:
    assert remove_hooks(merge_hooks(SHAPES[name], ENTRIES)) == SHAPES[name]


@pytest.mark.parametrize("name", SHAPES)
def test_install_twice_is_install_once(name: str) -> None:
    once = merge_hooks(SHAPES[name], ENTRIES)
    assert merge_hooks(once, ENTRIES) == once


def test_groups_and_handlers_have_the_documented_shape() -> None:
    merged = merge_hooks({}, ENTRIES)
    assert merged["hooks"]["UserPromptSubmit"] == [
        {"hooks": [{"type": "command", "command": f"{EXE[0]} hook prompt", "timeout": 10}]}
    ]
    assert merged["hooks"]["PreToolUse"][0]["matcher"] == "Task|Agent|WebSearch"
    assert merged["hooks"]["PostToolUse"][0]["matcher"] == "Bash|mcp__.*"
    assert merged["hooks"]["PostToolUse"][0]["hooks"][0]["command"] == f"{EXE[0]} hook post-tool"


def test_upgrade_replaces_ours_in_place_and_nothing_else() -> None:
    installed = merge_hooks(SHAPES["other tool hooks"], ENTRIES)
    # The user adds a hook after ours; an upgrade must not move ours behind it.
    installed["hooks"]["PreToolUse"].append({"matcher": "Read", "hooks": [GUARD]})
    upgraded = merge_hooks(installed, hook_entries(executable=EXE, db=Path("/data/v.db")))

    assert foreign(upgraded) == foreign(installed)
    assert [c for _, c in ours(upgraded)] == [
        f"{EXE[0]} hook pre-tool --db /data/v.db",
        f"{EXE[0]} hook post-tool --db /data/v.db",
        f"{EXE[0]} hook prompt --db /data/v.db",
    ]
    assert upgraded["hooks"]["PreToolUse"][1]["matcher"] == "Task|Agent|WebSearch"
    assert upgraded["hooks"]["PreToolUse"][2]["matcher"] == "Read"


def test_prompt_only_install_removes_our_tool_hooks() -> None:
    full = merge_hooks(SHAPES["other tool hooks"], ENTRIES)
    prompt_only = merge_hooks(full, hook_entries(executable=EXE, tools=False))
    assert [e for e, _ in ours(prompt_only)] == ["UserPromptSubmit"]
    assert prompt_only["hooks"]["PreToolUse"] == SHAPES["other tool hooks"]["hooks"]["PreToolUse"]


def test_our_handler_inside_someone_elses_group_is_swapped_in_place() -> None:
    shared = {
        "hooks": {
            "UserPromptSubmit": [
                {
                    "matcher": "",
                    "hooks": [DATE, {"type": "command", "command": "noteseek hook prompt"}, NOTIFY],
                }
            ]
        }
    }
    merged = merge_hooks(shared, ENTRIES[:1])
    group = merged["hooks"]["UserPromptSubmit"]
    assert len(group) == 1 and group[0]["matcher"] == ""
    assert group[0]["hooks"] == [DATE, ENTRIES[0].handler(), NOTIFY]

    removed = remove_hooks(merged)
    assert removed["hooks"]["UserPromptSubmit"] == [{"matcher": "", "hooks": [DATE, NOTIFY]}]


def test_duplicates_of_ours_collapse_to_one() -> None:
    handler = {"type": "command", "command": "/old/noteseek hook prompt"}
    doubled = {
        "hooks": {
            "UserPromptSubmit": [
                {"hooks": [handler]},
                {"hooks": [DATE]},
                {"hooks": [handler, NOTIFY]},
            ]
        }
    }
    merged = merge_hooks(doubled, ENTRIES[:1])
    assert merged["hooks"]["UserPromptSubmit"] == [
        ENTRIES[0].group(),
        {"hooks": [DATE]},
        {"hooks": [NOTIFY]},
    ]


def test_uninstall_drops_only_the_containers_it_emptied() -> None:
    settings = {
        "hooks": {
            "Stop": [{"hooks": []}],  # empty before we came: not ours to tidy
            "UserPromptSubmit": [
                {"hooks": [{"type": "command", "command": "noteseek hook prompt"}]}
            ],
        },
        "env": {},
    }
    assert remove_hooks(settings) == {"hooks": {"Stop": [{"hooks": []}]}, "env": {}}
    assert (
        remove_hooks({"hooks": {"UserPromptSubmit": settings["hooks"]["UserPromptSubmit"]}}) == {}
    )
    assert remove_hooks({"hooks": {}, "env": {}}) == {"hooks": {}, "env": {}}


@pytest.mark.parametrize(
    ("command", "kind"),
    [
        ("/home/me/.local/bin/noteseek hook prompt", "prompt"),
        ("'/Users/me/My Tools/noteseek' hook pre-tool --db /x.db", "pre-tool"),
        ("/usr/bin/python3 -m noteseek hook post-tool", "post-tool"),
        ("C:/Tools/noteseek.exe hook prompt", "prompt"),
        ("echo noteseek hook is great", None),
        ("grep 'noteseek hook' ~/.claude/hook.log", None),
        ("noteseek search hook prompt", None),
        ("my-noteseek-hook prompt", None),
    ],
)
def test_which_handlers_are_ours(command: str, kind: str | None) -> None:
    assert hook_settings._kind({"type": "command", "command": command}) == kind


def test_a_quoted_executable_path_is_still_recognised_as_ours() -> None:
    entries = hook_entries(executable=["/Users/me/My Tools/noteseek"], db=Path("/tmp/my index.db"))
    assert entries[0].command == "'/Users/me/My Tools/noteseek' hook prompt --db '/tmp/my index.db'"
    assert remove_hooks(merge_hooks({}, entries)) == {}


def test_hooks_that_are_not_an_object_are_refused() -> None:
    with pytest.raises(SettingsFileError, match='"hooks" is not a JSON object'):
        merge_hooks({"hooks": []}, ENTRIES)
    with pytest.raises(SettingsFileError, match=r"hooks\.PreToolUse"):
        merge_hooks({"hooks": {"PreToolUse": {"matcher": "Bash"}}}, ENTRIES)


# ---------------------------------------------------------------- files


def write_json(path: Path, data: Any, indent: int | str = 2) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=indent) + "\n", encoding="utf-8")
    return path.read_bytes()


def test_install_writes_a_new_file_then_uninstall_removes_our_part(tmp_path: Path) -> None:
    path = tmp_path / ".claude" / "settings.local.json"
    change = plan_install(path, ENTRIES)
    assert change.before is None and change.changed
    assert apply_change(change) is None  # nothing to back up
    assert [e for e, _ in ours(json.loads(path.read_text()))] == [
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
    ]

    apply_change(plan_uninstall(path))
    assert json.loads(path.read_text()) == {}


def test_an_existing_file_keeps_its_content_indentation_and_a_backup(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    original = write_json(path, SHAPES["other tool hooks"], indent=4)

    backup = apply_change(plan_install(path, ENTRIES))
    assert backup == tmp_path / "settings.json.bak" and backup.read_bytes() == original
    text = path.read_text()
    assert '\n    "permissions"' in text, "four-space indentation kept"
    assert remove_hooks(json.loads(text)) == SHAPES["other tool hooks"]

    # The backup is the original, once: a later change does not replace it.
    assert apply_change(plan_install(path, hook_entries(executable=EXE, db=Path("/x.db")))) is None
    assert backup.read_bytes() == original


def test_installing_again_does_not_touch_the_file(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    apply_change(plan_install(path, ENTRIES))
    before = path.read_bytes()
    change = plan_install(path, ENTRIES)
    assert not change.changed and change.diff() == ""
    assert apply_change(change) is None
    assert path.read_bytes() == before


def test_a_hand_formatted_file_is_not_reformatted_when_nothing_changes(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"model": "opus",   "env": {"A": "1"}}')
    assert not plan_uninstall(path).changed
    assert not plan_install(path, []).changed


def test_dry_run_diff_names_the_change_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    original = write_json(path, SHAPES["another prompt hook"])
    diff = plan_install(path, ENTRIES).diff()
    assert diff.startswith(f"--- {path}\n+++ {path}\n")
    assert f'+            "command": "{EXE[0]} hook prompt",' in diff
    assert not any(line.startswith("-") and "date" in line for line in diff.splitlines())
    assert path.read_bytes() == original
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.json"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"hooks": {"Stop": []},}', "not valid JSON \\(line 1"),
        ('{\n  // my hooks\n  "hooks": {}\n}', "contains comments"),
        ('{"a": 1 /* note */}', "contains comments"),
        ("[1, 2]", "does not hold a JSON object"),
    ],
)
def test_a_malformed_file_is_left_untouched(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "settings.json"
    path.write_text(text)
    for plan in (lambda: plan_install(path, ENTRIES), lambda: plan_uninstall(path)):
        with pytest.raises(SettingsFileError, match=message):
            plan()
    assert path.read_text() == text
    assert [p.name for p in tmp_path.iterdir()] == ["settings.json"]


def test_an_empty_file_counts_as_empty_settings(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text("\n")
    apply_change(plan_install(path, ENTRIES))
    assert len(ours(json.loads(path.read_text()))) == 3


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX file modes and symlinks")
def test_write_is_atomic_keeps_the_mode_and_a_dotfiles_symlink(tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "claude-settings.json"
    write_json(real, {"model": "opus"})
    real.chmod(0o600)
    link = tmp_path / ".claude" / "settings.json"
    link.parent.mkdir()
    link.symlink_to(real)

    apply_change(plan_install(link, ENTRIES))
    assert link.is_symlink() and link.resolve() == real.resolve()
    assert stat.S_IMODE(real.stat().st_mode) == 0o600
    assert len(ours(json.loads(real.read_text()))) == 3
    assert sorted(p.name for p in real.parent.iterdir()) == [
        "claude-settings.json",
        "claude-settings.json.bak",
    ]


def test_a_file_changed_after_planning_is_not_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    write_json(path, {"model": "opus"})
    change = plan_install(path, ENTRIES)
    edited = write_json(path, {"model": "opus", "permissions": {"allow": ["Bash(ls)"]}})
    with pytest.raises(SettingsFileError, match="changed while it was being edited"):
        apply_change(change)
    assert path.read_bytes() == edited


def test_settings_locations(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    assert user_settings_path() == Path.home() / ".claude" / "settings.json"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))
    assert user_settings_path() == tmp_path / "cfg" / "settings.json"
    assert project_settings_path(tmp_path) == tmp_path / ".claude" / "settings.local.json"


def test_the_executable_is_this_interpreter_with_python_m() -> None:
    exe = noteseek_executable()
    assert exe[1:] == ["-m", "noteseek"] and Path(exe[0]).is_absolute()
    assert Path(exe[0]).samefile(sys.executable)


def test_entry_without_matcher_has_no_matcher_key() -> None:
    assert HookEntry("UserPromptSubmit", "prompt", "noteseek hook prompt").group() == {
        "hooks": [{"type": "command", "command": "noteseek hook prompt", "timeout": 10}]
    }


# ---------------------------------------------------------------- CLI


def test_cli_install_and_uninstall_in_a_project(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.local.json"
    write_json(settings, SHAPES["other tool hooks"])
    shared = write_json(tmp_path / ".claude" / "settings.json", {"permissions": {"allow": []}})
    runner = CliRunner()

    result = runner.invoke(
        install_cmd, ["--project", str(tmp_path), "--db", str(tmp_path / "v.db")]
    )
    assert result.exit_code == 0, result.output
    assert f"installed noteseek hooks in {settings}" in result.output
    installed = json.loads(settings.read_text())
    commands = [c for _, c in ours(installed)]
    assert len(commands) == 3 and all(c.endswith(f"--db {tmp_path / 'v.db'}") for c in commands)
    assert (tmp_path / ".claude" / "settings.json").read_bytes() == shared, (
        "shared settings untouched"
    )

    again = runner.invoke(install_cmd, ["--project", str(tmp_path), "--db", str(tmp_path / "v.db")])
    assert again.exit_code == 0 and "no change" in again.output

    removed = runner.invoke(uninstall_cmd, ["--project", str(tmp_path)])
    assert removed.exit_code == 0, removed.output
    assert json.loads(settings.read_text()) == SHAPES["other tool hooks"]


def test_cli_dry_run_prints_a_diff_and_writes_nothing(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        install_cmd, ["--project", str(tmp_path), "--dry-run", "--no-tool-hooks"]
    )
    assert result.exit_code == 0, result.output
    assert (
        "+++ " in result.output
        and "hook prompt" in result.output
        and "hook pre-tool" not in result.output
    )
    assert "dry run" in result.output
    assert list(tmp_path.iterdir()) == []


def test_cli_user_scope_honours_claude_config_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    result = CliRunner().invoke(install_cmd, [])
    assert result.exit_code == 0, result.output
    assert len(ours(json.loads((tmp_path / "claude" / "settings.json").read_text()))) == 3
    assert CliRunner().invoke(uninstall_cmd, ["--user"]).exit_code == 0
    assert json.loads((tmp_path / "claude" / "settings.json").read_text()) == {}


def test_cli_errors(tmp_path: Path) -> None:
    runner = CliRunner()
    both = runner.invoke(install_cmd, ["--user", "--project", str(tmp_path)])
    assert both.exit_code == 2 and "one of --user and --project" in both.output

    settings = tmp_path / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    settings.write_text('{"hooks": {} // mine\n}')
    broken = runner.invoke(install_cmd, ["--project", str(tmp_path)])
    assert broken.exit_code == 1 and "contains comments" in broken.output
    assert settings.read_text() == '{"hooks": {} // mine\n}'

    missing = runner.invoke(uninstall_cmd, ["--project", str(tmp_path / "nope")])
    assert missing.exit_code == 2

    refused = runner.invoke(uninstall_cmd, ["--project", str(tmp_path), "--dry-run"])
    assert refused.exit_code == 1  # the malformed file again: refused, not guessed at
    os.remove(settings)
    gone = runner.invoke(uninstall_cmd, ["--project", str(tmp_path)])
    assert gone.exit_code == 0 and "does not exist" in gone.output


def test_install_pins_the_only_index_and_leaves_it_open_when_unclear(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from noteseek.engine.locations import default_db_path

    home = tmp_path / "home"
    monkeypatch.setenv("NOTESEEK_HOME", str(home))
    monkeypatch.delenv("NOTESEEK_DB", raising=False)
    monkeypatch.chdir(tmp_path)
    project = tmp_path / "proj"
    project.mkdir()
    settings = project / ".claude" / "settings.local.json"
    runner = CliRunner()
    # No index yet: nothing to pin, each hook finds the index when it runs.
    assert runner.invoke(install_cmd, ["--project", str(project)]).exit_code == 0
    assert all("--db" not in c for _, c in ours(json.loads(settings.read_text())))
    # Exactly one index: pinned, so the hook can ask the warm daemon without looking it up.
    only = default_db_path(tmp_path / "vault")
    only.parent.mkdir(parents=True, exist_ok=True)
    only.write_bytes(b"")
    result = runner.invoke(install_cmd, ["--project", str(project)])
    assert result.exit_code == 0 and str(only) in result.output
    assert all(c.endswith(f"--db {only}") for _, c in ours(json.loads(settings.read_text())))
