"""The prompt hook end to end: real hook JSON in, protocol JSON out, silence on noise and errors."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from noteseek.core.context_block import CONTEXT_HEADING
from noteseek.hooks.command import main as hook_main

from .conftest import SAMPLE_VAULT, user_env


def payload(prompt: str, cwd: str = "/tmp") -> str:
    # The fields Claude Code sends with UserPromptSubmit.
    return json.dumps(
        {
            "session_id": "abc123",
            "transcript_path": "/tmp/transcript.jsonl",
            "cwd": cwd,
            "permission_mode": "default",
            "hook_event_name": "UserPromptSubmit",
            "prompt": prompt,
        }
    )


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    home = tmp_path_factory.mktemp("home")
    vault = tmp_path_factory.mktemp("vault") / "sample-vault"
    shutil.copytree(SAMPLE_VAULT, vault, symlinks=True)
    env = user_env()
    env.update(NOTESEEK_HOME=str(home), HF_HUB_OFFLINE="1", NOTESEEK_NO_DAEMON="1")
    db = home / "sample.db"
    subprocess.run(
        [sys.executable, "-m", "noteseek", "index", str(vault), "--db", str(db), "-q"],
        env=env,
        check=True,
        capture_output=True,
        timeout=300,
    )
    env["DB"] = str(db)
    return env


def hook(env: dict[str, str], stdin: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "noteseek", "hook", "prompt", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def log_lines(env: dict[str, str]) -> list[str]:
    path = Path(env["NOTESEEK_HOME"]) / "hook.log"
    return path.read_text().splitlines() if path.exists() else []


def test_relevant_prompt_gets_additional_context(env: dict[str, str]) -> None:
    result = hook(env, payload("how do we rotate the refresh tokens in the auth service?"), "--db", env["DB"])
    assert result.returncode == 0 and result.stderr == ""
    doc = json.loads(result.stdout)
    out = doc["hookSpecificOutput"]
    assert out["hookEventName"] == "UserPromptSubmit"
    text = out["additionalContext"]
    assert text.startswith(CONTEXT_HEADING + "\n")
    assert "(projects/auth-service-token-rotation; relevance 0." in text
    assert "noteseek" in text and "installed" in text  # says where it comes from
    assert len(text) <= 500 * 4


def test_same_prompt_same_bytes(env: dict[str, str]) -> None:
    prompt = payload("which docker compose settings did we use for postgres?")
    first = hook(env, prompt, "--db", env["DB"]).stdout
    second = hook(env, prompt, "--db", env["DB"]).stdout
    assert first and first == second


def test_budget_option_is_respected(env: dict[str, str]) -> None:
    result = hook(env, payload("how do we rotate the refresh tokens?"), "--db", env["DB"], "--max-tokens", "120")
    text = json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
    assert len(text) <= 120 * 4


@pytest.mark.parametrize(
    "prompt",
    [
        "hi",
        "thanks!",
        "ok",
        "continue",
        "fix the segfault in the kernel's ext4 inode allocator",
        "rename the variable in this React component and update its prop types",
    ],
)
def test_noise_prompts_are_silent(env: dict[str, str], prompt: str) -> None:
    result = hook(env, payload(prompt), "--db", env["DB"])
    assert result.returncode == 0
    assert result.stdout == ""


@pytest.mark.parametrize(
    ("stdin", "args"),
    [
        ("not json at all", ()),
        ("[1, 2, 3]", ()),
        (payload("rotate tokens"), ("--db", "/nonexistent/nowhere.db")),
        (payload("rotate tokens"), ("--bogus",)),
        ("", ()),
    ],
)
def test_failures_are_silent_exit_0_and_logged(
    env: dict[str, str], stdin: str, args: tuple[str, ...]
) -> None:
    before = len(log_lines(env))
    extra = () if args and args[0] == "--db" else ("--db", env["DB"])
    result = hook(env, stdin, *args, *extra) if args[:1] != ("--bogus",) else hook(env, stdin, *args)
    assert result.returncode == 0
    assert result.stdout == "" and result.stderr == ""
    lines = log_lines(env)
    assert len(lines) == before + 1
    assert "prompt" in lines[-1]


def test_errors_are_logged_and_prompt_text_never_is(env: dict[str, str]) -> None:
    secret_prompt = "my key is sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH please rotate"
    hook(env, payload(secret_prompt), "--db", "/nonexistent/x.db")
    hook(env, payload(secret_prompt), "--db", env["DB"])
    log = "\n".join(log_lines(env))
    assert "error IndexNotFoundError" in log
    assert "sk-proj-" not in log and "please rotate" not in log


def test_in_process_main_reports_a_bug_as_silence(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import noteseek.agents.prompt_context as agent_context

    def broken(*args: object, **kwargs: object) -> object:
        raise RuntimeError("boom")

    monkeypatch.setenv("NOTESEEK_HOME", env["NOTESEEK_HOME"])
    monkeypatch.setenv("NOTESEEK_NO_DAEMON", "1")
    monkeypatch.setattr(agent_context, "prompt_context", broken)
    out = io.StringIO()
    code = hook_main(["prompt", "--db", env["DB"]], stdin=io.StringIO(payload("rotate tokens now")), stdout=out)
    assert code == 0 and out.getvalue() == ""
    assert "RuntimeError: boom" in log_lines(env)[-1]


def test_context_command_matches_the_hook(env: dict[str, str]) -> None:
    prompt = "how do we rotate the refresh tokens in the auth service?"
    cli = subprocess.run(
        [sys.executable, "-m", "noteseek", "context", prompt, "--db", env["DB"]],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    ).stdout
    from_hook = json.loads(hook(env, payload(prompt), "--db", env["DB"]).stdout)
    assert cli == from_hook["hookSpecificOutput"]["additionalContext"]
    quiet = subprocess.run(
        [sys.executable, "-m", "noteseek", "context", "hello", "--db", env["DB"], "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )
    doc = json.loads(quiet.stdout)
    assert doc["text"] == "" and "content words" in doc["reason"]


def tool_hook(env: dict[str, str], event: str, body: dict[str, object]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "noteseek", "hook", event, "--db", env["DB"]],
        input=json.dumps(body),
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


BASE = {"session_id": "abc", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp", "permission_mode": "default"}


def test_pre_tool_appends_notes_to_a_subagent_task(env: dict[str, str]) -> None:
    task = "Find out how we rotate the refresh tokens in the auth service and write it down."
    body = {
        **BASE,
        "hook_event_name": "PreToolUse",
        "tool_name": "Agent",
        "tool_input": {"description": "Token rotation", "prompt": task, "subagent_type": "general-purpose"},
        "tool_use_id": "toolu_1",
    }
    result = tool_hook(env, "pre-tool", body)
    assert result.returncode == 0
    out = json.loads(result.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "PreToolUse"
    assert "permissionDecision" not in out  # a note search never approves tool calls
    prompt = out["updatedInput"]["prompt"]
    assert prompt.startswith(task) and "auth-service-token-rotation" in prompt
    assert out["updatedInput"]["subagent_type"] == "general-purpose"
    # A tool the hook does not handle gets no answer.
    other = {**body, "tool_name": "Read", "tool_input": {"file_path": "/etc/hosts"}}
    assert tool_hook(env, "pre-tool", other).stdout == ""


def test_post_tool_shortens_long_bash_output_and_leaves_short_output(env: dict[str, str]) -> None:
    lines = [f"tests/test_mod{i}.py::test_case_{i} PASSED" for i in range(400)]
    lines[200] = "tests/test_mod200.py::test_case_200 FAILED"
    lines += ["E   AssertionError: token expired", "===== 1 failed, 399 passed in 12.3s ====="]
    body = {
        **BASE,
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "pytest -q tests", "description": "Run the tests"},
        "tool_response": {"stdout": "\n".join(lines), "stderr": "", "interrupted": False, "isImage": False},
        "tool_use_id": "toolu_2",
    }
    result = tool_hook(env, "post-tool", body)
    out = json.loads(result.stdout)["hookSpecificOutput"]
    stdout = out["updatedToolOutput"]["stdout"]
    assert len(stdout) < len(body["tool_response"]["stdout"]) * 0.7  # type: ignore[index]
    assert "1 failed, 399 passed" in stdout and "AssertionError: token expired" in stdout
    assert "omitted" in stdout
    short = {**body, "tool_response": {"stdout": "ok", "stderr": "", "interrupted": False}}
    assert tool_hook(env, "post-tool", short).stdout == ""
