"""One intake run: score every inbox item, move it, log it, index what was filed; and undo."""

from __future__ import annotations

import hashlib
import secrets
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..engine.index import Index
from ..engine.update.options import IndexStats
from ..engine.vault_walk import IGNORE_MARKER
from ..secrets.scrubber import scrub
from .assess import Assessment, assess_item
from .config import IntakeConfig
from .domains import VaultModel
from .errors import InboxNotFoundError, IntakeError
from .items import InboxItem, ItemProblem, list_inbox, read_item
from .log import DecisionLog
from .moves import insert_block, move_file, unique_name

__all__ = ["IntakeReport", "ItemResult", "default_domains", "run_intake"]


@dataclass(frozen=True)
class ItemResult:
    """One item's assessment and, unless a dry run, where it now is (relative to the vault)."""

    assessment: Assessment
    destination: str | None


@dataclass(frozen=True)
class IntakeReport:
    """What one `run_intake` call decided and did."""

    run_id: str
    dry_run: bool
    items: tuple[ItemResult, ...]
    skipped: tuple[ItemProblem, ...]
    domains: tuple[str, ...]
    index_built: bool
    indexed: IndexStats | None
    log_path: str | None

    def to_json(self) -> dict[str, Any]:
        """The `--json` document: `items`, plus run, skipped and domains."""
        items = []
        for result in self.items:
            a = result.assessment
            items.append(
                {
                    "path": a.path,
                    "total": round(a.total, 4),
                    "scores": {k: round(v, 4) for k, v in asdict(a.scores).items()},
                    "decision": a.decision,
                    "domain": a.domain,
                    "runner_up": a.runner_up,
                    "margin": round(a.margin, 4),
                    "reason": a.reason,
                    "explanations": asdict(a.explanations),
                    "duplicate_of": a.duplicate_of,
                    "destination": result.destination,
                }
            )
        return {
            "run": self.run_id,
            "dry_run": self.dry_run,
            "items": items,
            "skipped": [{"path": p.rel, "reason": p.reason} for p in self.skipped],
            "domains": list(self.domains),
        }


def _relative(path: Path, root: Path) -> str | None:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return None


def default_domains(vault: Path, *, skip: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The vault's top-level folders, minus dot- and underscore-folders and `skip`."""
    names = []
    for entry in sorted(vault.iterdir()):
        if entry.is_dir() and not entry.name.startswith((".", "_")) and entry.name not in skip:
            names.append(entry.name)
    return tuple(names)


def new_run_id() -> str:
    """A sortable, unique run id: UTC time plus 4 random hex digits."""
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-" + secrets.token_hex(2)


def _target(a: Assessment, config: IntakeConfig) -> str:
    if a.decision == "route":
        return a.domain or ""
    return config.review_folder if a.decision == "review" else config.set_aside_folder


def _file_name(item: InboxItem) -> str:
    name = item.path.name
    # A .txt item becomes a note: the index reads .md files only.
    return name[:-4] + ".md" if name.lower().endswith(".txt") else name


def _review_fields(a: Assessment, run_id: str) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "run": run_id,
        "proposed_domain": a.domain,
        "runner_up": a.runner_up,
        "margin": round(a.margin, 3),
        "total": round(a.total, 3),
        **{k: round(v, 3) for k, v in asdict(a.scores).items()},
        "reason": a.reason,
    }
    if a.duplicate_of:
        fields["duplicate_of"] = a.duplicate_of
    return fields


def run_intake(
    inbox: str | Path,
    *,
    vault: str | Path,
    index: Index,
    config: IntakeConfig | None = None,
    dry_run: bool = False,
    refresh: bool = True,
    targeted: bool = False,
    model: VaultModel | None = None,
) -> IntakeReport:
    """Score the inbox's items and route, queue or set aside each one (nothing moves if `dry_run`).

    The index is brought up to date first (built if empty; `refresh=False`: only then), and
    again after the moves so filed notes are searchable at once (`targeted`: an update of the
    moved files alone, for a caller that keeps the rest current, such as `save_note`). `model`:
    a `VaultModel` the caller built before (its domains and ignores), instead of a new one.
    """
    config = config or IntakeConfig()
    inbox_path, vault_path = Path(inbox).expanduser(), Path(vault).expanduser()
    if not inbox_path.is_dir():
        raise InboxNotFoundError(f"inbox folder {str(inbox_path)!r} does not exist")
    if not vault_path.is_dir():
        raise IntakeError(f"vault folder {str(vault_path)!r} does not exist")
    if inbox_path.resolve() == vault_path.resolve():
        raise IntakeError("the inbox must be a folder of its own, not the vault itself")
    inbox_rel = _relative(inbox_path, vault_path)
    managed = (config.review_folder, config.set_aside_folder, "_intake")
    ignore = (*managed, *((inbox_rel,) if inbox_rel else ()))
    built = index.status().files == 0
    if built or refresh:
        index.update(vault_path)
    domains = config.domains or default_domains(vault_path, skip=(inbox_rel or "",))
    if model is None:
        model = VaultModel.from_index(
            index, domains=domains, ignore=ignore, neighbours=config.neighbours
        )
    results: list[Assessment] = []
    skipped: list[ItemProblem] = []
    items: list[InboxItem] = []
    managed_abs = tuple(vault_path / m for m in managed)
    for path in list_inbox(inbox_path, include_txt=config.include_txt, skip=managed_abs):
        got = read_item(path, inbox_path)
        if isinstance(got, ItemProblem):
            skipped.append(got)
            continue
        if scrub(got.rel).text != got.rel:
            skipped.append(ItemProblem(scrub(got.rel).text, "file name holds a secret; rename it"))
            continue
        items.append(got)
        results.append(assess_item(got, model=model, embedder=index, config=config))
    run_id = new_run_id()
    if dry_run:
        return IntakeReport(
            run_id,
            True,
            tuple(ItemResult(a, None) for a in results),
            tuple(skipped),
            tuple(model.domains),
            built,
            None,
            None,
        )
    log = DecisionLog(vault_path / config.log_file)
    log.append(
        {
            "event": "run",
            "run": run_id,
            "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "inbox": str(inbox_path.resolve()),
            "vault": str(vault_path.resolve()),
            "weights": asdict(config.weights),
            "thresholds": {"route": config.route_threshold, "review": config.review_threshold},
            "domains": list(model.domains),
        }
    )
    for problem in skipped:
        log.append({"event": "skip", "run": run_id, "path": problem.rel, "reason": problem.reason})
    done: list[ItemResult] = []
    for item, a in zip(items, results):
        done.append(ItemResult(a, _file_item(item, a, run_id, vault_path, config, log)))
    moved = [r.destination for r in done if r.destination]
    if not done:
        indexed = None
    elif targeted:
        indexed = index.update(vault_path, paths=moved)
    else:
        indexed = index.update(vault_path)
    return IntakeReport(
        run_id,
        False,
        tuple(done),
        tuple(skipped),
        tuple(model.domains),
        built,
        indexed,
        str(log.path),
    )


def _file_item(
    item: InboxItem,
    a: Assessment,
    run_id: str,
    vault: Path,
    config: IntakeConfig,
    log: DecisionLog,
) -> str:
    """Log the decision, move the item (logging before and after) and return its new place."""
    decision = {
        "event": "decision",
        "run": run_id,
        "path": a.path,
        "total": round(a.total, 4),
        "scores": {k: round(v, 4) for k, v in asdict(a.scores).items()},
        "explanations": asdict(a.explanations),
        "decision": a.decision,
        "domain": a.domain,
        "runner_up": a.runner_up,
        "margin": round(a.margin, 4),
        "reason": a.reason,
        "duplicate_of": a.duplicate_of,
    }
    log.append(decision)
    folder = vault / _target(a, config)
    if a.decision == "set_aside":
        # Kept, never deleted, but out of search: the marker keeps every later `noteseek index`
        # (with any options) away from it, not only intake's own updates.
        folder.mkdir(parents=True, exist_ok=True)
        (folder / IGNORE_MARKER).touch(exist_ok=True)
    name = _file_name(item)
    data, inserted, offset = None, "", 0
    if a.decision == "review":
        data, inserted, offset = insert_block(item.data, _review_fields(a, run_id))
    planned = unique_name(folder, name)
    src = item.path.resolve()
    log.append(
        {
            "event": "move",
            "phase": "start",
            "run": run_id,
            "path": a.path,
            "src": str(src),
            "dst": str(planned.resolve()),
            "inserted": inserted,
            "offset": offset,
            "sha256": hashlib.sha256(item.data).hexdigest(),
        }
    )
    target = move_file(src, folder, name, data=data)
    log.append(
        {
            "event": "move",
            "phase": "done",
            "run": run_id,
            "path": a.path,
            "src": str(src),
            "dst": str(target.resolve()),
            "inserted": inserted,
            "offset": offset,
            "sha256": hashlib.sha256(item.data).hexdigest(),
        }
    )
    return target.resolve().relative_to(vault.resolve()).as_posix()
