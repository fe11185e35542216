"""`python -m noteseek` runs the CLI (with the same hook fast path as the console script)."""

from .entry import main

main()
