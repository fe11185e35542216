"""The `noteseek` console script. `noteseek hook ...` runs per prompt, so it skips the CLI framework
(click and every command module): it asks a running daemon through the import-light
`daemon.client.answer`, and only when none answers runs the hook itself; everything else is the
full CLI."""

from __future__ import annotations

import io  # loaded at start-up already: sys.stdin is one of its objects
import sys

# Deferred imports: each branch of `main` imports its own path only: the daemon client, then (no
# daemon answered) the hook; or click and the CLI.

__all__ = ["main"]


def main() -> None:
    """Dispatch: the hook fast path, or the click CLI."""
    argv = sys.argv[1:]
    if argv[:1] == ["hook"] and not {"-h", "--help"} & set(argv):
        from .daemon.client import answer

        raw = sys.stdin.buffer.read()
        out = answer(argv[1:], raw)  # the warm daemon, if one serves this index
        if out is not None:
            sys.stdout.buffer.write(out)
            sys.stdout.buffer.flush()
            sys.exit(0)
        from .hooks.command import main as hook_main

        sys.exit(hook_main(argv[1:], stdin=io.StringIO(raw.decode("utf-8", "replace"))))
    from .cli.main import main as cli_main

    cli_main()
