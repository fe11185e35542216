"""The Claude Code hook protocol: one event's JSON in, the JSON to print out (or nothing).

Shared by the one-shot hook command (`noteseek.hooks.command`) and the warm daemon, so both paths
print the same bytes. `run_hook` does no I/O of its own: the caller supplies `context` (the
prompt-context block for a text) and `rank` (cosines of text segments to a query).

Imported on every hook call, so nothing heavy at the top (no typing, no tool-hook code until a
tool event needs it).
"""

from __future__ import annotations

import json

from ..settings import DEFAULT_CONTEXT_TOKENS

# Type checkers treat a constant named TYPE_CHECKING as true; at run time typing is never imported.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ..engine.index import Index

    HookResult = dict[str, Any] | None

__all__ = ["EVENTS", "cosine_rank", "render", "run_hook"]

EVENTS = ("prompt", "pre-tool", "post-tool")


def _prompt_output(text: str) -> HookResult:
    if not text:
        return None
    return {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": text}}


def cosine_rank(index: Index, query: str, segments: list[str]) -> list[float]:
    """Cosine of each segment to the query, with the index's own embedding model."""
    vectors = index.embed([query, *segments])
    return [float(v @ vectors[0]) for v in vectors[1:]]


def render(result: HookResult) -> str:
    """What the hook prints for a result: one JSON line, or nothing."""
    return "" if result is None else json.dumps(result, ensure_ascii=False) + "\n"


def run_hook(
    event: str,
    payload: dict[str, Any],
    *,
    context: Callable[[str, int], str],
    rank: Callable[[str, list[str]], list[float]],
    max_tokens: int = DEFAULT_CONTEXT_TOKENS,
) -> HookResult:
    """The protocol JSON for one event (None: print nothing). No I/O of its own."""
    if event == "prompt":
        prompt = payload.get("prompt")
        if not isinstance(prompt, str):
            raise ValueError("UserPromptSubmit input has no 'prompt' string")
        if not prompt.strip():
            return None
        return _prompt_output(context(prompt, max_tokens))
    # deferred: the tool hooks' code (~10 ms to import) for a tool event only, never a prompt
    from . import tool_hooks

    if event == "pre-tool":
        result: HookResult = tool_hooks.pre_tool_hook(payload, context=context)
        return result
    if event == "post-tool":
        result = tool_hooks.post_tool_hook(payload, rank=rank)
        return result
    raise ValueError(f"unknown hook event {event!r}")
