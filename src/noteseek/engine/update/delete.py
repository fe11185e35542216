"""Phase 2 of an update: drop the notes gone from the vault, record the entries the walk passed over."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from ...storage.records import FileRecord, FileWrite
from .plan import UpdatePlan, check_vault

if TYPE_CHECKING:
    from ...storage.protocol import Storage

__all__ = ["delete_gone"]


def delete_gone(store: Storage, plan: UpdatePlan, counter: Counter[str]) -> None:
    """One transaction: delete every known file no longer in the vault, and store each passed-over
    entry (a symlink out of the vault, a loop, an unreadable folder) as skipped, with its reason."""
    if plan.gone:
        check_vault(plan)  # the walk just ended; a vault unmounted since would empty the index
    with store.write():
        for path in plan.gone:
            store.delete_file(path)
            counter["removed"] += 1
        for path, reason in plan.passed_over:
            store.replace_file(FileWrite(FileRecord(path, 0, 0, None, None, "skipped", reason)))
            plan.problems.append((path, reason))
            counter["skipped"] += 1
