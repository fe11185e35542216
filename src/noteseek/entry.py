"""The `noteseek` console script. `noteseek hook ...` runs per prompt, so it skips the CLI framework
(click and every command module) and goes straight to the hook; everything else is the full CLI."""

from __future__ import annotations

import sys

__all__ = ["main"]


def main() -> None:
    """Dispatch: the hook fast path, or the click CLI."""
    argv = sys.argv[1:]
    if argv[:1] == ["hook"] and not {"-h", "--help"} & set(argv):
        from .hooks import main as hook_main

        sys.exit(hook_main(argv[1:]))
    from .cli import main as cli_main

    cli_main()
