"""Keep an index fresh: watch a vault and hand debounced batches of changed paths to a callback.

The watcher knows nothing of the index, the daemon or the MCP server: it applies the vault walk's
rules (`noteseek.vault_rules`) to file events and calls `on_batch(ChangeBatch)` in its own thread.
"""

from __future__ import annotations

from .changes import ChangeBatch, PathChange, classify, is_editor_temp
from .watcher import VaultWatcher

__all__ = ["ChangeBatch", "PathChange", "VaultWatcher", "classify", "is_editor_temp"]
