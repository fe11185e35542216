"""The example login units in examples/autostart/ parse and run `noteseek watch VAULT`."""

from __future__ import annotations

import configparser
import os
import plistlib
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

AUTOSTART = REPO / "examples" / "autostart"
UNIT = AUTOSTART / "noteseek-watch.service"
PLIST = AUTOSTART / "com.noteseek.watch.plist"


def _unit() -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # systemd keys are case-sensitive
    parser.read_string(UNIT.read_text(encoding="utf-8"))
    return parser


def test_systemd_unit_runs_noteseek_watch() -> None:
    unit = _unit()
    argv = shlex.split(unit["Service"]["ExecStart"])
    assert Path(argv[0]).name == "noteseek"
    assert argv[1:] == ["watch", "%h/notes"]
    assert unit["Service"]["Restart"] == "on-failure"  # exit 1 (vault gone) is retried
    assert unit["Install"]["WantedBy"] == "default.target"


def test_systemd_analyze_accepts_the_unit(tmp_path: Path) -> None:
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed (apt-get install systemd)")
    # verify also checks that the command exists: point it at this environment's noteseek.
    noteseek = Path(sys.executable).with_name("noteseek")
    if not noteseek.exists():
        pytest.skip(f"no noteseek script beside {sys.executable}")
    text = UNIT.read_text(encoding="utf-8").replace("%h/.local/bin/noteseek", str(noteseek))
    unit = tmp_path / "noteseek-watch.service"
    unit.write_text(text, encoding="utf-8")
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime)}
    done = subprocess.run(
        ["systemd-analyze", "verify", "--user", str(unit)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    # A bad value is only a warning (exit 0), so the unit must not be named in the output at all.
    complaints = [line for line in done.stderr.splitlines() if "noteseek-watch" in line]
    assert done.returncode == 0 and not complaints, done.stderr


def test_launchd_plist_runs_noteseek_watch() -> None:
    with PLIST.open("rb") as f:
        plist = plistlib.load(f)
    assert plist["Label"] == "com.noteseek.watch"
    program, *args = plist["ProgramArguments"]
    assert Path(program).is_absolute() and Path(program).name == "noteseek"
    assert args == ["watch", "/Users/me/notes"]
    assert plist["RunAtLoad"] is True
    assert plist["KeepAlive"] == {"SuccessfulExit": False}  # restarted after exit 1 only
    assert plist["StandardErrorPath"].startswith("/")  # launchd does not expand ~


def test_both_units_give_arguments_the_watch_command_accepts() -> None:
    from noteseek.cli.watch import watch_cmd

    with PLIST.open("rb") as f:
        plist_args = plistlib.load(f)["ProgramArguments"][1:]
    unit_args = shlex.split(_unit()["Service"]["ExecStart"])[1:]
    for args in (plist_args, unit_args):
        assert args[0] == "watch"
        context = watch_cmd.make_context("watch", list(args[1:]))  # click parses, nothing runs
        assert str(context.params["vault"]) == args[1]
    # The units stop it with SIGTERM and restart it after exit 1 only: what the command does
    # (tests/test_watch_cli.py: SIGTERM -> 0 after the current file, vault gone -> 1).
    assert "SIGTERM" in (watch_cmd.help or "") and "Exits 1" in (watch_cmd.help or "")
