"""Claude Code PreToolUse / PostToolUse logic: pure functions from a hook payload to a hook answer.

What the protocol allows is documented in docs/claude-code-hooks.md. In short:

* PreToolUse on an ``Agent`` (formerly ``Task``) call: a subagent starts without the user's prompt or
  the context the prompt hook added, so we append note context to its ``prompt`` through
  ``updatedInput`` — the only channel that reaches the subagent with the task in hand. No
  ``permissionDecision`` is set: a note search must not approve tool calls.
* PreToolUse on ``WebSearch``: ``additionalContext`` for the calling agent, saying what the user's
  notes already hold on the query. The search itself is unchanged.
* PostToolUse on ``Bash`` and MCP tools: long output is replaced by a focused extract (error lines,
  the tail, and the segments closest to the call's intent, in order, elisions marked). Bash needs
  ``updatedToolOutput`` in Bash's own object shape (Claude Code >= 2.1.121; older builds ignore it and
  keep the full output); MCP tools use ``updatedMCPToolOutput``.

Nothing here does I/O: the caller (``noteseek.hooks``) reads stdin, supplies ``context`` and ``rank``,
prints the returned dict as JSON, and fails open. ``None`` always means "print nothing".
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ADDITIONAL_CONTEXT_LIMIT",
    "NOTE_MARKER",
    "POST_TOOL_MATCHER",
    "PRE_TOOL_MATCHER",
    "Extract",
    "ExtractOptions",
    "PreToolOptions",
    "focus_extract",
    "post_tool_hook",
    "pre_tool_hook",
]

ContextFn = Callable[[str, int], str]
RankFn = Callable[[str, list[str]], list[float]]

# The settings.json matchers the installer writes; kept here so the tools they select and the tools
# these functions handle cannot drift apart. "Task" is the subagent tool's name before v2.1.63.
PRE_TOOL_MATCHER = "Task|Agent|WebSearch"
POST_TOOL_MATCHER = "Bash|mcp__.*"
SUBAGENT_TOOLS = frozenset({"Agent", "Task"})
WEB_SEARCH_TOOL = "WebSearch"
# Our own MCP server already budgets its results; shrinking them again would only lose hits.
OWN_MCP_PREFIX = "mcp__noteseek__"
# Claude Code caps additionalContext at 10,000 characters; stay under it rather than be cut blindly.
ADDITIONAL_CONTEXT_LIMIT = 9_500
# Marks text we added, so a prompt that already carries our block is not given a second one.
NOTE_MARKER = "[noteseek]"

_SUBAGENT_PREAMBLE = (
    f"{NOTE_MARKER} The sections below were added to this task by noteseek, a local note search "
    "the user installed, because they match the task. Background only; they may be incomplete."
)
_SEARCH_PREAMBLE = (
    f"{NOTE_MARKER} Before this web search: the user's own notes have sections on this topic "
    "(found by noteseek, a local note search the user installed)."
)
# A line longer than this is cut for the extract (minified JS, base64): one such line would eat the
# whole budget and say nothing a person could use.
_MAX_LINE_CHARS = 400
_ERROR_LINE = re.compile(
    r"(?i)(?:error|exception)s?\b"  # also AssertionError, TypeError:
    r"|\b(?:fail(?:s|ed|ure|ures|ing)?|fatal|traceback|panic(?:ked)?|segmentation fault|denied)\b"
)
# Commands whose output the agent needs verbatim (file contents, diffs): an extract of those would
# mislead, because an edit built on an elided file cannot match.
_VERBATIM_COMMANDS = frozenset(
    {"cat", "head", "tail", "sed", "awk", "less", "more", "nl", "bat", "diff", "patch"}
    | {"jq", "yq", "xxd", "od", "hexdump", "base64", "strings"}
)
_VERBATIM_GIT = frozenset({"diff", "show", "log", "blame", "format-patch"})
_OPT_OUT = "NOTESEEK_RAW=1"
_DIGITS = re.compile(r"\d+")
_REPEATED = 3
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


@dataclass(frozen=True)
class PreToolOptions:
    """Budgets for the context a PreToolUse answer carries."""

    subagent_tokens: int = 500
    search_tokens: int = 300
    max_query_chars: int = 2_000


@dataclass(frozen=True)
class ExtractOptions:
    """When an output counts as long and how much of it an extract keeps."""

    min_chars: int = 6_000
    budget_chars: int = 3_000
    max_block_lines: int = 6
    # An extract that keeps most of the text saves little and still loses some; then do nothing.
    max_kept_ratio: float = 0.7


@dataclass(frozen=True)
class Extract:
    """A focused extract of a long text."""

    text: str
    kept_lines: int
    total_lines: int
    original_chars: int


def pre_tool_hook(
    payload: dict[str, Any],
    *,
    context: ContextFn,
    options: PreToolOptions = PreToolOptions(),
) -> dict[str, Any] | None:
    """The PreToolUse answer for a payload: note context for a subagent or a web search, or None."""
    if payload.get("hook_event_name", "PreToolUse") != "PreToolUse":
        return None
    tool = payload.get("tool_name")
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        return None
    if tool in SUBAGENT_TOOLS:
        return _subagent_answer(tool_input, context=context, options=options)
    if tool == WEB_SEARCH_TOOL:
        return _web_search_answer(tool_input, context=context, options=options)
    return None


def _subagent_answer(
    tool_input: dict[str, Any], *, context: ContextFn, options: PreToolOptions
) -> dict[str, Any] | None:
    prompt = tool_input.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip() or NOTE_MARKER in prompt:
        return None
    description = tool_input.get("description")
    query = f"{description}\n{prompt}" if isinstance(description, str) and description else prompt
    block = context(query[: options.max_query_chars], options.subagent_tokens).strip()
    if not block:
        return None
    # updatedInput replaces the whole input, so every other field is copied unchanged.
    updated = {**tool_input, "prompt": f"{prompt.rstrip()}\n\n{_SUBAGENT_PREAMBLE}\n\n{block}"}
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": updated}}


def _web_search_answer(
    tool_input: dict[str, Any], *, context: ContextFn, options: PreToolOptions
) -> dict[str, Any] | None:
    query = tool_input.get("query")
    if not isinstance(query, str) or not query.strip():
        return None
    block = context(query[: options.max_query_chars], options.search_tokens).strip()
    if not block:
        return None
    text = _cap_lines(f"{_SEARCH_PREAMBLE}\n\n{block}", ADDITIONAL_CONTEXT_LIMIT)
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": text}}


def post_tool_hook(
    payload: dict[str, Any],
    *,
    rank: RankFn,
    options: ExtractOptions = ExtractOptions(),
) -> dict[str, Any] | None:
    """The PostToolUse answer for a payload: a focused extract of long Bash/MCP output, or None."""
    if payload.get("hook_event_name", "PostToolUse") != "PostToolUse":
        return None
    tool = payload.get("tool_name")
    tool_input = payload.get("tool_input")
    response = payload.get("tool_response")
    if not isinstance(tool, str) or not isinstance(tool_input, dict):
        return None
    if tool == "Bash":
        bash = _bash_output(tool_input, response, rank=rank, options=options)
        if bash is None:
            return None
        return {"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": bash}}
    if tool.startswith("mcp__") and not tool.startswith(OWN_MCP_PREFIX):
        intent = _mcp_intent(tool, tool_input)
        mcp = _mcp_output(response, intent, rank=rank, options=options)
        if mcp is None:
            return None
        return {"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedMCPToolOutput": mcp}}
    return None


def _bash_output(
    tool_input: dict[str, Any], response: Any, *, rank: RankFn, options: ExtractOptions
) -> dict[str, Any] | None:
    command = tool_input.get("command")
    # Claude Code drops a replacement that is not Bash's own object shape, so anything else is left.
    if not isinstance(command, str) or not isinstance(response, dict):
        return None
    if _OPT_OUT in command or _reads_verbatim(command) or tool_input.get("run_in_background"):
        return None
    # Over ~30 KB Claude Code already stores the output in a file and shows a preview.
    if "persistedOutputPath" in response:
        return None
    description = tool_input.get("description")
    intent = (
        f"{description}\n{command}" if isinstance(description, str) and description else command
    )
    updated = dict(response)
    changed = False
    for key in ("stdout", "stderr"):
        value = response.get(key)
        if not isinstance(value, str):
            continue
        extract = focus_extract(value, intent, rank=rank, options=options)
        if extract is not None:
            updated[key] = extract.text
            changed = True
    return updated if changed else None


def _reads_verbatim(command: str) -> bool:
    """Whether any step of a shell command prints content the agent needs exactly."""
    for segment in re.split(r"\|\|?|&&|;|\n", command):
        words = [w for w in segment.split() if not _ASSIGNMENT.match(w)]
        if not words:
            continue
        name = words[0].rsplit("/", 1)[-1]
        if name in _VERBATIM_COMMANDS:
            return True
        if name == "git" and any(w in _VERBATIM_GIT for w in words[1:3]):
            return True
    return False


def _mcp_intent(tool: str, tool_input: dict[str, Any]) -> str:
    """The query an MCP call's output is ranked against: its tool name and its string arguments."""
    parts = [tool.rsplit("__", 1)[-1].replace("_", " ")]
    parts.extend(str(v) for v in tool_input.values() if isinstance(v, (str, int, float)))
    return "\n".join(parts)[:2_000]


def _mcp_output(response: Any, intent: str, *, rank: RankFn, options: ExtractOptions) -> Any | None:
    """The response with its long text parts extracted, in the shape it came in; None if unchanged."""
    if isinstance(response, str):
        extract = focus_extract(response, intent, rank=rank, options=options)
        return None if extract is None else extract.text
    if isinstance(response, list):
        blocks: list[Any] = []
        changed = False
        for block in response:
            text = block.get("text") if isinstance(block, dict) else None
            if isinstance(block, dict) and block.get("type") == "text" and isinstance(text, str):
                extract = focus_extract(text, intent, rank=rank, options=options)
                if extract is not None:
                    block = {**block, "text": extract.text}
                    changed = True
            blocks.append(block)
        return blocks if changed else None
    if isinstance(response, dict) and isinstance(response.get("content"), list):
        content = _mcp_output(response["content"], intent, rank=rank, options=options)
        return None if content is None else {**response, "content": content}
    return None


def focus_extract(
    text: str, intent: str, *, rank: RankFn, options: ExtractOptions = ExtractOptions()
) -> Extract | None:
    """A shorter text keeping error lines, the end and the blocks closest to `intent`; None if short.

    The text is cut into blocks (runs of non-blank lines, at most `max_block_lines` each). Kept
    first: the last block (a summary such as "3 failed, 97 passed" usually ends an output), the
    first error block, the first block, the other error blocks, then (within half the budget) blocks
    that `rank(intent, blocks)` puts in the top quarter, best first, each while the budget allows. Kept blocks stay in their original order; each run of omitted lines becomes one marker.
    JSON is left alone: an extract of it would not parse.
    """
    stripped = text.strip()
    if not stripped or len(text) < options.min_chars or stripped.startswith(("{", "[")):
        return None
    lines = [_cut_line(line) for line in text.splitlines()]
    blocks = _blocks(lines, options.max_block_lines)
    texts = ["\n".join(lines[a:b]) for a, b in blocks]
    scores = rank(intent, texts)
    if len(scores) != len(texts):
        raise ValueError(f"rank returned {len(scores)} scores for {len(texts)} segments")
    keep = _choose(blocks, texts, scores, lines, options.budget_chars)
    body = _render(lines, blocks, keep)
    kept_lines = sum(b - a for i, (a, b) in enumerate(blocks) if i in keep)
    header = (
        f"{NOTE_MARKER} Focused extract of a long output: {kept_lines} of {len(lines)} lines kept "
        "(error lines, the end, and the parts closest to the command's purpose). Omitted parts "
        "are marked; re-run the command narrowed (grep, tail) to see them."
    )
    result = f"{header}\n{body}"
    if len(result) > options.max_kept_ratio * len(text):
        return None
    return Extract(result, kept_lines, len(lines), len(text))


def _cut_line(line: str) -> str:
    if len(line) <= _MAX_LINE_CHARS:
        return line
    return f"{line[:_MAX_LINE_CHARS]}… [+{len(line) - _MAX_LINE_CHARS} chars]"


def _blocks(lines: list[str], max_lines: int) -> list[tuple[int, int]]:
    """Half-open line ranges covering every line; a blank line closes a block and stays in it."""
    blocks: list[tuple[int, int]] = []
    start = 0
    for i, line in enumerate(lines):
        if not line.strip() or i + 1 - start >= max_lines:
            blocks.append((start, i + 1))
            start = i + 1
    if start < len(lines):
        blocks.append((start, len(lines)))
    return blocks


def _choose(
    blocks: list[tuple[int, int]],
    texts: list[str],
    scores: list[float],
    lines: list[str],
    budget: int,
) -> set[int]:
    """Indexes of the blocks to keep, by priority, within `budget` characters."""
    content = [i for i, t in enumerate(texts) if t.strip()]
    if not content:
        return set()
    errors = [i for i in content if any(_ERROR_LINE.search(ln) for ln in lines[slice(*blocks[i])])]
    error_set = set(errors)
    by_score = sorted(content, key=lambda i: (-scores[i], i))
    # Filler must stand out: top quarter and above the median, so a uniform log (every line "PASSED")
    # gives none, and it gets at most half the budget. A block only as close to the intent as a
    # typical one says nothing the omission marker does not, and fewer lines read faster.
    ranked = sorted(scores[i] for i in content)
    middle, upper = ranked[len(ranked) // 2], ranked[(3 * len(ranked)) // 4]
    # Lines repeated with only numbers changed (test PASSED lines, progress, "copied chunk 12") are
    # never filler however well they rank: the omission marker says as much.
    shapes = Counter(_shape(line) for line in lines if line.strip())
    filler = {
        i
        for i in by_score
        if scores[i] > middle
        and scores[i] >= upper
        and any(shapes[_shape(ln)] < _REPEATED for ln in lines[slice(*blocks[i])] if ln.strip())
    }
    # The end (a summary line), the first error (often the cause), the start (what ran), the other
    # errors by rank, then filler by rank.
    ordered = [
        content[-1],
        *errors[:1],
        content[0],
        *[i for i in by_score if i in error_set],
        *[i for i in by_score if i in filler],
    ]
    keep: set[int] = set()
    used = filler_used = 0
    for i in ordered:
        if i in keep:
            continue
        cost = len(texts[i]) + 1
        is_filler = i in filler and i not in error_set and i not in (content[0], content[-1])
        if used + cost > budget or (is_filler and filler_used + cost > budget // 2):
            continue
        keep.add(i)
        used += cost
        filler_used += cost if is_filler else 0
    return keep


def _shape(line: str) -> str:
    return _DIGITS.sub("0", line.strip())


def _render(lines: list[str], blocks: list[tuple[int, int]], keep: set[int]) -> str:
    out: list[str] = []
    omitted = 0  # non-blank lines only: a dropped blank line is not worth a marker

    def mark() -> None:
        if omitted:
            out.append(f"[… {omitted} line{'s' if omitted > 1 else ''} omitted …]")

    for i, (a, b) in enumerate(blocks):
        if i in keep:
            mark()
            omitted = 0
            out.extend(lines[a:b])
        else:
            omitted += sum(1 for line in lines[a:b] if line.strip())
    mark()
    return "\n".join(out).strip("\n")


def _cap_lines(text: str, limit: int) -> str:
    """`text` cut at the last line break that fits `limit` characters."""
    if len(text) <= limit:
        return text
    cut = text.rfind("\n", 0, limit)
    return text[: cut if cut > 0 else limit].rstrip()
