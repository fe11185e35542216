"""The Model Context Protocol server: a thin adapter over the library."""
