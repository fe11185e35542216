"""The command line: every click command, one module per command group."""
