"""Claude Code hook commands: `noteseek hook prompt | pre-tool | post-tool`.

A hook reads the event's JSON on stdin and may print the protocol's JSON on stdout. These run as a
fresh process on every prompt, so this module imports nothing heavy at the top, asks a running
`noteseek serve` daemon first (warm path) and only opens the index itself when none answers.

Fail-open and silent: whatever goes wrong (no index, a broken payload, a bug) the hook exits 0 and
prints nothing, so the user's prompt goes through untouched; the reason goes to a log file
(`hook.log` in noteseek's data folder). The log never holds prompt text, only what happened.

On the per-prompt path each call imports only what it needs (the daemon client first, the
index and the scrubber only when the call has to use them).
"""

from __future__ import annotations

import json
import os
import sys
import time

from ..agents.hook_protocol import EVENTS, cosine_rank, render, run_hook
from ..daemon import client as daemon_client
from ..settings import DEFAULT_CONTEXT_TOKENS, ENV_HOOK_LOG, ENV_NO_DAEMON, TRUE_VALUES

# No typing or collections.abc at run time: every millisecond of import is paid on every prompt.
# Type checkers treat a constant named TYPE_CHECKING as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, TextIO

    from .. import Index, LazyIndex, Locator

# Deferred imports: a call imports what its event needs, when it needs it: the index's code for a
# call that searches (a pre-tool call often does not), the context code for a prompt the daemon
# did not answer, the hook log for a line to write.

__all__ = ["main"]

def _log(line: str, *, untrusted: bool = False) -> None:
    from ..agents.hook_log import append

    append(line, untrusted=untrusted)


class _Options:
    def __init__(self, event: str, db: str | None, max_tokens: int) -> None:
        self.event, self.db, self.max_tokens = event, db, max_tokens


def _parse(argv: Sequence[str]) -> _Options:
    """`EVENT [--db PATH] [--max-tokens N]`; hand-parsed to keep argparse and click out of the hook."""
    args = list(argv)
    if not args or args[0] not in EVENTS:
        raise ValueError(f"usage: noteseek hook {{{'|'.join(EVENTS)}}} [--db PATH] [--max-tokens N]")
    event, rest = args[0], args[1:]
    db: str | None = None
    max_tokens = DEFAULT_CONTEXT_TOKENS
    while rest:
        flag = rest.pop(0)
        if flag == "--db" and rest:
            db = rest.pop(0)
        elif flag == "--max-tokens" and rest:
            max_tokens = max(1, int(rest.pop(0)))
        else:
            raise ValueError(f"unknown hook option {flag!r}")
    return _Options(event, db, max_tokens)


class _Backend:
    """Answers context requests: the warm daemon when one runs, otherwise the index itself."""

    def __init__(self, db: str | None, cwd: str | None) -> None:
        self._db_option, self._cwd = db, cwd
        self._db: Locator | None = None
        self.path = "-"
        self._index: LazyIndex | None = None
        self.reason = ""  # why the last context request gave no block (for the log)
        self._use_daemon = os.environ.get(ENV_NO_DAEMON, "") not in TRUE_VALUES

    @property
    def db(self) -> Locator:
        # Resolved on first use: a post-tool call on short output needs no index at all. An
        # explicit path (what install-hooks --db writes) skips the data-folder lookup entirely.
        if self._db is None:
            from .. import locate_index

            self._db = locate_index(db=self._db_option, cwd=self._cwd)
        return self._db

    def _daemon(self, payload: dict[str, Any]) -> dict[str, Any] | None:
        self.path = "cold"
        if not self._use_daemon:
            return None
        answer = daemon_client.request(self.db, payload, timeout=2.0)
        if not isinstance(answer, dict) or not answer.get("ok"):
            return None
        self.path = "warm"
        return answer

    def index(self) -> Index:
        if self._index is None:
            from .. import LazyIndex

            self._index = LazyIndex(db=self.db)
        return self._index.get()

    def context(self, prompt: str, max_tokens: int) -> str:
        answer = self._daemon({"op": "context", "prompt": prompt, "max_tokens": max_tokens})
        if answer is not None and isinstance(answer.get("text"), str):
            self.reason = str(answer.get("reason", ""))
            return str(answer["text"])
        from ..agents.prompt_context import prompt_context

        result = prompt_context(self.index(), prompt, max_tokens=max_tokens)
        self.reason = result.reason
        return result.text

    def rank(self, query: str, segments: list[str]) -> list[float]:
        self.path = "cold"
        return cosine_rank(self.index(), query, segments)

    def close(self) -> None:
        if self._index is not None:
            self._index.close()
        if self.path == "cold" and self._use_daemon and self._db is not None:
            # Start the warm path for the next prompt; never wait for it.
            try:
                daemon_client.ensure_started(self.db)
            except Exception as exc:
                _log(f"daemon not started: {type(exc).__name__}: {exc}", untrusted=True)


def main(argv: Sequence[str], *, stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    """Run one hook; always returns 0 (fail-open)."""
    started = time.perf_counter()
    event = argv[0] if argv else "?"
    backend: _Backend | None = None
    outcome = "silent"
    failed = False
    try:
        options = _parse(argv)
        raw = (stdin or sys.stdin).read()
        payload = json.loads(raw) if raw.strip() else {}
        if not isinstance(payload, dict):
            raise ValueError("hook input is not a JSON object")
        cwd = payload.get("cwd")
        backend = _Backend(options.db, cwd if isinstance(cwd, str) and cwd else None)
        result = run_hook(
            options.event,
            payload,
            context=backend.context,
            rank=backend.rank,
            max_tokens=options.max_tokens,
        )
        text = render(result)
        if text:
            out = stdout or sys.stdout
            out.write(text)
            out.flush()
            outcome = f"context {len(text)} chars"
        elif backend.reason:
            # The gate's reason is built from our own words and scores, never the prompt's text.
            outcome = f"silent: {backend.reason}"
    except Exception as exc:
        outcome, failed = f"error {type(exc).__name__}: {exc}", True
    finally:
        try:
            if backend is not None:
                backend.close()
        except Exception as exc:
            outcome += f"; close failed: {type(exc).__name__}"
        quiet = outcome.startswith("silent: ")
        if failed or quiet or os.environ.get(ENV_HOOK_LOG) == "all":
            path = backend.path if backend is not None else "-"
            elapsed = (time.perf_counter() - started) * 1000
            _log(f"{event[:20]!r} {path} {elapsed:.0f}ms {outcome}", untrusted=failed)
    return 0
