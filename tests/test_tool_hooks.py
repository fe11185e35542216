"""PreToolUse / PostToolUse answers for real-shaped Claude Code payloads (field names from the hooks docs)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from noteseek.agents.tool_hooks import (
    ADDITIONAL_CONTEXT_LIMIT,
    NOTE_MARKER,
    ExtractOptions,
    PreToolOptions,
    focus_extract,
    post_tool_hook,
    pre_tool_hook,
)

BLOCK = (
    "## Relevant Memory Context\n\n### Token rotation (security/oauth)\n"
    "Rotate tokens on a 401 response; keep the refresh token in the keychain."
)
BASE = {
    "session_id": "abc123",
    "transcript_path": "/home/me/.claude/projects/app/00893aaf.jsonl",
    "cwd": "/home/me/app",
    "permission_mode": "default",
}


class Recorder:
    """A `context` callable that returns a fixed block and remembers what it was asked."""

    def __init__(self, block: str = BLOCK) -> None:
        self.block = block
        self.calls: list[tuple[str, int]] = []

    def __call__(self, query: str, max_tokens: int) -> str:
        self.calls.append((query, max_tokens))
        return self.block


def overlap_rank(query: str, segments: list[str]) -> list[float]:
    """Word overlap with the query: a stand-in for embedding cosine."""
    words = set(re.findall(r"\w+", query.lower()))
    return [float(len(words & set(re.findall(r"\w+", s.lower())))) for s in segments]


def pre(tool: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    return {
        **BASE,
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": "toolu_01ABC",
    }


def post(tool: str, tool_input: dict[str, Any], response: Any) -> dict[str, Any]:
    return {
        **BASE,
        "hook_event_name": "PostToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_response": response,
        "tool_use_id": "toolu_01ABC",
        "duration_ms": 5400,
    }


AGENT_INPUT = {
    "description": "Fix OAuth refresh",
    "prompt": "Find why the OAuth token refresh fails after a 401 in src/auth and propose a fix.",
    "subagent_type": "general-purpose",
    "model": "sonnet",
}


# ---------------------------------------------------------------- PreToolUse


@pytest.mark.parametrize("tool", ["Agent", "Task"])
def test_a_subagent_gets_note_context_appended_to_its_prompt(tool: str) -> None:
    context = Recorder()
    answer = pre_tool_hook(pre(tool, AGENT_INPUT), context=context)

    assert answer is not None
    out = answer["hookSpecificOutput"]
    assert out["hookEventName"] == "PreToolUse"
    assert "permissionDecision" not in out, "a note search must not approve tool calls"
    updated = out["updatedInput"]
    # updatedInput replaces the whole input: every other field is carried over unchanged.
    assert {k: v for k, v in updated.items() if k != "prompt"} == {
        k: v for k, v in AGENT_INPUT.items() if k != "prompt"
    }
    assert updated["prompt"].startswith(AGENT_INPUT["prompt"])
    assert updated["prompt"].endswith(BLOCK)
    assert NOTE_MARKER in updated["prompt"]
    [(query, tokens)] = context.calls
    assert "Fix OAuth refresh" in query and "401" in query and tokens == 500


def test_a_subagent_prompt_is_not_given_the_block_twice() -> None:
    context = Recorder()
    first = pre_tool_hook(pre("Agent", AGENT_INPUT), context=context)
    assert first is not None
    again = pre("Agent", first["hookSpecificOutput"]["updatedInput"])
    assert pre_tool_hook(again, context=context) is None
    assert len(context.calls) == 1


def test_nothing_relevant_means_no_answer() -> None:
    assert pre_tool_hook(pre("Agent", AGENT_INPUT), context=Recorder("  \n")) is None
    assert (
        pre_tool_hook(pre("WebSearch", {"query": "rust lifetimes"}), context=Recorder("")) is None
    )


def test_a_long_task_prompt_is_cut_for_the_query() -> None:
    context = Recorder()
    long_input = {**AGENT_INPUT, "prompt": "word " * 5_000}
    pre_tool_hook(
        pre("Agent", long_input), context=context, options=PreToolOptions(max_query_chars=300)
    )
    assert len(context.calls[0][0]) == 300


def test_a_web_search_gets_additional_context_and_is_not_changed() -> None:
    context = Recorder()
    answer = pre_tool_hook(
        pre(
            "WebSearch",
            {"query": "oauth refresh token rotation", "allowed_domains": ["rfc-editor.org"]},
        ),
        context=context,
    )
    assert answer is not None
    out = answer["hookSpecificOutput"]
    assert (
        set(out) == {"hookEventName", "additionalContext"} and out["hookEventName"] == "PreToolUse"
    )
    text = answer["hookSpecificOutput"]["additionalContext"]
    assert text.startswith(NOTE_MARKER) and text.endswith(BLOCK)
    assert context.calls == [("oauth refresh token rotation", 300)]


def test_additional_context_stays_under_claude_codes_cap() -> None:
    huge = "\n".join(f"line {i} " + "x" * 80 for i in range(400))
    answer = pre_tool_hook(pre("WebSearch", {"query": "q"}), context=Recorder(huge))
    assert answer is not None
    text = answer["hookSpecificOutput"]["additionalContext"]
    assert len(text) <= ADDITIONAL_CONTEXT_LIMIT and text.endswith("x")


@pytest.mark.parametrize(
    "payload",
    [
        pre("Bash", {"command": "npm test", "description": "Run tests"}),
        pre("Read", {"file_path": "/home/me/app/src/auth.ts"}),
        pre("WebFetch", {"url": "https://example.com", "prompt": "Extract the API endpoints"}),
        pre("Agent", {"description": "x", "prompt": ""}),
        pre("Agent", "not a dict"),  # type: ignore[arg-type]
        {**pre("Agent", AGENT_INPUT), "hook_event_name": "PostToolUse"},
    ],
)
def test_other_calls_are_left_alone(payload: dict[str, Any]) -> None:
    context = Recorder()
    assert pre_tool_hook(payload, context=context) is None
    assert context.calls == []


# ---------------------------------------------------------------- PostToolUse: Bash


def pytest_log(failed: bool = True) -> str:
    lines = [
        "============================= test session starts ==============================",
        "platform linux -- Python 3.12.3, pytest-8.3.2",
        "collected 320 items",
        "",
    ]
    for module in range(40):
        for case in range(8):
            status = "FAILED" if failed and (module, case) == (12, 4) else "PASSED"
            lines.append(
                f"tests/test_module_{module:02d}.py::test_case_{case} {status} [ {module}%]"
            )
    lines += [
        "",
        "=================================== FAILURES ===================================",
        "______________________________ test_case_4 _______________________________",
        "    def test_case_4():",
        ">       assert parse_token('x') == 2",
        "E       AssertionError: assert 1 == 2",
        "",
        "tests/test_module_12.py:33: AssertionError",
        "=========================== short test summary info ============================",
        "FAILED tests/test_module_12.py::test_case_4 - AssertionError: assert 1 == 2",
        "========================= 1 failed, 319 passed in 3.21s =========================",
    ]
    return "\n".join(lines) + "\n"


BASH_INPUT = {"command": "python -m pytest -v", "description": "Run the test suite"}


def test_long_bash_output_becomes_a_focused_extract_in_bashs_own_shape() -> None:
    log = pytest_log()
    response = {"stdout": log, "stderr": "", "interrupted": False, "isImage": False}
    answer = post_tool_hook(post("Bash", BASH_INPUT, response), rank=overlap_rank)

    assert answer is not None
    out = answer["hookSpecificOutput"]
    assert out["hookEventName"] == "PostToolUse" and set(out) == {
        "hookEventName",
        "updatedToolOutput",
    }
    updated = out["updatedToolOutput"]
    # Claude Code drops a replacement that is not Bash's object shape.
    assert {k: v for k, v in updated.items() if k != "stdout"} == {
        k: v for k, v in response.items() if k != "stdout"
    }
    stdout = updated["stdout"]
    assert len(stdout) < 0.7 * len(log)
    for must in [
        "E       AssertionError: assert 1 == 2",
        "tests/test_module_12.py::test_case_4 FAILED [ 12%]",
        "1 failed, 319 passed in 3.21s",
        "test session starts",
    ]:
        assert must in stdout
    assert re.search(r"\[… \d+ lines omitted …\]", stdout)
    kept = [line for line in stdout.splitlines()[1:] if not line.startswith("[… ")]
    original = log.splitlines()
    positions = [original.index(line) for line in kept if line]
    assert positions == sorted(positions), "kept lines stay in their original order"


def test_the_extract_prefers_segments_close_to_the_intent() -> None:
    filler = [f"step {i}: copying asset bundle chunk {i} to dist" for i in range(300)]
    filler[150:153] = ["", "migration warning: column users.token_hash is deprecated", ""]
    text = "\n".join(filler)
    extract = focus_extract(
        text,
        "check the users token_hash migration",
        rank=overlap_rank,
        options=ExtractOptions(min_chars=1_000, budget_chars=600),
    )
    assert extract is not None
    assert "column users.token_hash is deprecated" in extract.text
    assert "chunk 80 to dist" not in extract.text
    assert extract.total_lines == 300 and extract.original_chars == len(text)


@pytest.mark.parametrize(
    ("tool_input", "response"),
    [
        (BASH_INPUT, {"stdout": "3 passed in 0.1s\n", "stderr": "", "interrupted": False}),  # short
        ({"command": "cat src/auth/token.ts"}, None),
        ({"command": "cd src && sed -n '1,400p' auth.ts"}, None),
        ({"command": "git diff HEAD~3"}, None),
        ({"command": "git --no-pager log -p -5"}, None),
        ({"command": "FORCE_COLOR=0 /usr/bin/head -500 build.log"}, None),
        ({"command": "NOTESEEK_RAW=1 python -m pytest -v"}, None),
        ({"command": "npm run dev", "run_in_background": True}, None),
        (BASH_INPUT, {"stdout": pytest_log(), "stderr": "", "persistedOutputPath": "/tmp/o.txt"}),
        (
            {"command": "gh api repos/o/r/issues"},
            {"stdout": "[" + ", ".join(['{"id": 1}'] * 2000) + "]"},
        ),
        (BASH_INPUT, "a plain string is not Bash's shape"),
    ],
)
def test_bash_output_left_alone(tool_input: dict[str, Any], response: Any) -> None:
    if response is None:
        response = {"stdout": pytest_log(), "stderr": "", "interrupted": False}
    calls: list[str] = []

    def rank(query: str, segments: list[str]) -> list[float]:
        calls.append(query)
        return overlap_rank(query, segments)

    assert post_tool_hook(post("Bash", tool_input, response), rank=rank) is None
    assert calls == []


def test_errors_and_the_end_come_before_relevant_filler_when_the_budget_is_tight() -> None:
    # One line in three is close to the intent: enough to fill the budget on its own.
    lines = [
        f"token refresh retry scheduled for tenant {chr(97 + i % 26)}{chr(97 + i // 26 % 26)}"
        if i % 3 == 0
        else f"copy chunk {i}"
        for i in range(300)
    ]
    for n, at in enumerate((31, 91, 151, 211, 271)):
        lines[at] = f"fatal: could not lock ref refs/heads/topic-{n} (another git process?)"
    lines.append("done in 12.3s")
    extract = focus_extract(
        "\n".join(lines),
        "token refresh retry scheduled store",
        rank=overlap_rank,
        options=ExtractOptions(min_chars=1_000, budget_chars=400, max_block_lines=1),
    )
    assert extract is not None
    assert extract.text.count("fatal: could not lock ref") == 5
    assert extract.text.endswith("done in 12.3s")
    assert extract.kept_lines < 12


def test_repeated_lines_are_never_filler() -> None:
    # Every PASSED line shares words with the intent, but they differ only in numbers.
    cases = (f"run tests case {i} PASSED" if i % 3 == 0 else f"case {i} PASSED" for i in range(400))
    log = "\n".join([*cases, "done: 400 passed"])
    extract = focus_extract(
        log,
        "run tests",
        rank=overlap_rank,
        options=ExtractOptions(min_chars=1_000, max_block_lines=1),
    )
    assert extract is not None
    assert extract.kept_lines == 2, "only the first and the last line"
    assert extract.text.endswith("done: 400 passed")


def test_a_long_stderr_is_extracted_too() -> None:
    response = {"stdout": "", "stderr": pytest_log(), "interrupted": False, "isImage": False}
    answer = post_tool_hook(post("Bash", BASH_INPUT, response), rank=overlap_rank)
    assert answer is not None
    updated = answer["hookSpecificOutput"]["updatedToolOutput"]
    assert updated["stdout"] == "" and updated["stderr"].startswith(NOTE_MARKER)


# ---------------------------------------------------------------- PostToolUse: MCP and others


MCP_INPUT = {"query": "token rotation incidents", "limit": 200}


def test_mcp_text_output_is_replaced_through_updated_mcp_tool_output() -> None:
    log = pytest_log()
    answer = post_tool_hook(post("mcp__sentry__search_events", MCP_INPUT, log), rank=overlap_rank)
    assert answer is not None
    out = answer["hookSpecificOutput"]
    assert set(out) == {"hookEventName", "updatedMCPToolOutput"}
    assert out["updatedMCPToolOutput"].startswith(NOTE_MARKER)


def test_mcp_content_blocks_keep_their_shape() -> None:
    image = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
    short = {"type": "text", "text": "page 1 of 9"}
    blocks = [short, {"type": "text", "text": pytest_log()}, image]
    answer = post_tool_hook(post("mcp__github__list_runs", MCP_INPUT, blocks), rank=overlap_rank)
    assert answer is not None
    replaced = answer["hookSpecificOutput"]["updatedMCPToolOutput"]
    assert replaced[0] == short and replaced[2] == image
    assert replaced[1]["type"] == "text" and replaced[1]["text"].startswith(NOTE_MARKER)

    wrapped = post_tool_hook(
        post("mcp__github__list_runs", MCP_INPUT, {"content": blocks, "isError": False}),
        rank=overlap_rank,
    )
    assert wrapped is not None
    inner = wrapped["hookSpecificOutput"]["updatedMCPToolOutput"]
    assert inner["isError"] is False and inner["content"][1] == replaced[1]


@pytest.mark.parametrize(
    "payload",
    [
        post("mcp__noteseek__search", MCP_INPUT, pytest_log()),  # our own server budgets itself
        post("mcp__github__list_runs", MCP_INPUT, [{"type": "text", "text": "short"}]),
        post("mcp__github__list_runs", MCP_INPUT, 42),
        post(
            "Read",
            {"file_path": "/home/me/app/big.log"},
            {"type": "text", "file": {"content": pytest_log()}},
        ),
        post("Grep", {"pattern": "PASSED", "output_mode": "content"}, {"content": pytest_log()}),
        post(
            "WebFetch",
            {"url": "https://example.com", "prompt": "summarise"},
            {"result": pytest_log()},
        ),
        {**post("Bash", BASH_INPUT, {"stdout": pytest_log()}), "hook_event_name": "PreToolUse"},
    ],
)
def test_other_outputs_are_left_alone(payload: dict[str, Any]) -> None:
    assert post_tool_hook(payload, rank=overlap_rank) is None


def test_a_rank_that_miscounts_is_an_error() -> None:
    with pytest.raises(ValueError, match="scores for"):
        focus_extract(pytest_log(), "q", rank=lambda q, s: [1.0])


# ---------------------------------------------------------------- the extract itself


def test_the_extract_is_deterministic_and_cuts_overlong_lines() -> None:
    text = "\n".join(["x" * 5_000, *[f"line {i}" for i in range(800)], "error: final"])
    first = focus_extract(text, "final", rank=overlap_rank)
    assert first is not None and first == focus_extract(text, "final", rank=overlap_rank)
    assert "… [+4600 chars]" in first.text
    assert first.text.endswith("error: final")


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.just(""),
            st.sampled_from(["error: boom", "all good", "FAILED x"]),
            st.text(alphabet="abc xyz0123", min_size=1, max_size=60),
        ),
        min_size=1,
        max_size=400,
    )
)
def test_kept_and_omitted_lines_account_for_every_line(lines: list[str]) -> None:
    text = "\n".join(lines)
    extract = focus_extract(
        text,
        "abc error",
        rank=overlap_rank,
        options=ExtractOptions(min_chars=0, budget_chars=800, max_kept_ratio=float("inf")),
    )
    if not text.strip() or text.strip().startswith(("{", "[")):
        assert extract is None
        return
    assert extract is not None
    body = extract.text.splitlines()[1:]
    omitted = sum(
        int(m.group(1))
        for line in body
        if (m := re.fullmatch(r"\[… (\d+) lines? omitted …\]", line))
    )
    kept = [line for line in body if not re.fullmatch(r"\[… \d+ lines? omitted …\]", line)]
    original = text.splitlines()
    assert sum(1 for line in kept if line.strip()) + omitted == sum(
        1 for line in original if line.strip()
    )
    # Kept lines are a subsequence of the original.
    it = iter(original)
    assert all(any(line == o for o in it) for line in kept)
