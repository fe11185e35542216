"""`python -m noteseek` runs the CLI."""

from .cli import main

main()
