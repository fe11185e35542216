"""Phase 5 of an update: the run's statistics, text-index upkeep, and what the index remembers."""

from __future__ import annotations

import json
import secrets
import time
from collections import Counter
from typing import TYPE_CHECKING

from ...storage import meta
from .options import IndexStats
from .plan import UpdatePlan

if TYPE_CHECKING:
    from ...storage.protocol import Storage

__all__ = ["finish_update"]


def finish_update(
    store: Storage,
    plan: UpdatePlan,
    counter: Counter[str],
    *,
    started: float,
    deleted_before: int,
    interrupted: bool,
    missing_libraries: tuple[str, ...] = (),
) -> IndexStats:
    """The statistics of the run; merge the text index after many writes or deletes, recount
    common terms after any change, and store the pipeline, scope and last run (one transaction)."""
    stats = IndexStats(
        files_seen=len(plan.notes),
        added=counter["added"],
        changed=counter["changed"],
        unchanged=counter["unchanged"],
        removed=counter["removed"],
        skipped=counter["skipped"],
        chunks=store.chunk_count(),
        chunks_written=counter["chunks_written"],
        chunks_embedded=counter["chunks_embedded"],
        vectors_reused=counter["reused"],
        secrets_scrubbed=counter["secrets"],
        seconds=time.perf_counter() - started,
        interrupted=interrupted,
        vectors=plan.use_vectors,
        problems=tuple(plan.problems),
        targeted=plan.targeted,
        documents=sum(1 for n in plan.notes if n.is_document),
        documents_extracted=counter["documents_extracted"],
        ocr_files=counter["ocr_files"],
        ocr_pages=counter["ocr_pages"],
        ocr_reused=counter["ocr_reused"],
        missing_libraries=missing_libraries,
    )
    with store.write():
        deleted = store.chunks_deleted - deleted_before
        if _rewrote_a_large_share(stats.chunks_written, deleted, stats.chunks):
            store.optimize_text_index()
        if stats.added or stats.changed or stats.removed:
            store.set_meta(meta.GENERATION, secrets.token_hex(8))
        if stats.added or stats.changed or stats.removed or store.common_terms_outdated():
            store.refresh_common_terms()
            store.refresh_languages()
        if not stats.interrupted:
            # Only a finished run proves every note went through this pipeline; an interrupted
            # one leaves the old fingerprint so the next run re-processes the rest.
            store.set_meta(meta.PIPELINE, plan.pipeline)
            store.set_meta(meta.SCOPE, plan.options.scope())
            store.set_meta(meta.UPDATE_INCOMPLETE, "0")
        if plan.listings is not None:
            store.set_meta(meta.FOLDER_LISTINGS, plan.listings)
        store.set_meta(meta.LAST_RUN, json.dumps({**_public(stats), "finished_at": time.time()}))
    store.checkpoint()
    return stats


# A run that wrote or deleted at least this share of the chunks merges the text index after.
OPTIMIZE_SHARE = 0.1


def _rewrote_a_large_share(written: int, deleted: int, chunks: int) -> bool:
    # FTS5 removes a deleted row's terms only when it merges segments, and merges only a few at a
    # time. Re-processing every note (a pipeline change, --full) left MDN's text index at 4x its
    # size and BM25 at twice the time of a fresh build (9.4 vs 6.0 ms p50); one full merge, 0.7 s
    # there, brings both back. A first build leaves the segments of its batches (the writer
    # inserts a batch's terms at its commit): merging them, 0.2 CPU-s on MDN, made the text
    # index 16.1 -> 15.8 MB, and the pages it frees go back at the checkpoint. Small runs leave
    # it to FTS5's automerge.
    touched = written + deleted
    return touched > 0 and touched >= OPTIMIZE_SHARE * max(chunks, 1)


def _public(stats: IndexStats) -> dict[str, object]:
    data = {k: v for k, v in stats.__dict__.items() if k not in ("problems", "targeted")}
    data["problems"] = len(stats.problems)
    if stats.targeted:
        # Only then: `status --json` prints this record, and a whole pass keeps its old fields.
        data["targeted"] = True
    return data
