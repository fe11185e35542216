"""`noteseek serve`, the warm per-index daemon, and its one client (used by the hook fast path)."""
