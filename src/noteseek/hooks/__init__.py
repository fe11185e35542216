"""Claude Code hooks: the hook command (one-shot path) and the settings.json entries."""
