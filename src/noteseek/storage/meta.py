"""The keys of the index's `meta` table: one name for each, for every backend.

Values are text (JSON where noted). The names are stored in index files, so they never change;
`COMMON_TERMS` keeps its first name ("ubiquitous_terms") so older files are read as they are.
"""

from __future__ import annotations

__all__ = [
    "COMMON_TERMS",
    "COMMON_TERMS_STALE",
    "DEEP_RATE",
    "FOLDER_LISTINGS",
    "GENERATION",
    "GERMAN_NOTES",
    "LAST_RUN",
    "MODEL_FINGERPRINT",
    "MODEL_SOURCE",
    "MULTILINGUAL_BUILT",
    "MULTILINGUAL_MODEL",
    "OCR_PROGRESS",
    "PIPELINE",
    "SCOPE",
    "UPDATE_INCOMPLETE",
    "VAULT_ROOT",
    "VECTOR_DIM",
]

# Written by the engine.
MODEL_SOURCE = "model_source"  # "bundled", a model folder or a hub id: what embeds the queries
VAULT_ROOT = "vault_root"  # the vault folder the last update indexed
PIPELINE = "pipeline"  # IndexOptions.fingerprint() of the last finished run
SCOPE = "scope"  # the folders of the last finished run (JSON: include, exclude)
LAST_RUN = "last_run"  # what the last update did (JSON: IndexStats without the problem list)
# The folder listings of the last whole pass that saw a change (engine/folder_listings.py: zlib
# and base64 of a tab-separated text), so that the next one stats unchanged folders instead.
FOLDER_LISTINGS = "folder_listings"
# A random token, new whenever an update added, changed or removed a file: a reply cursor from
# before it no longer continues (core/pages.py).
GENERATION = "generation"
# "1" from the start of an update run, "0" once one finishes uninterrupted: a run that was cut short
# (or killed) may have left changed notes unread, so the next targeted run does a whole pass; so
# does one on an index whose last run predates this key.
UPDATE_INCOMPLETE = "update_incomplete"
# JSON {"total", "done", "running"}: the files an update reads by OCR (last in a run), so that
# `status` shows how far a long OCR pass is while it runs.
OCR_PROGRESS = "ocr_progress"
# JSON {"seconds_per_chunk", "at"}: how long the last deep-lane batches took per chunk (wall, at
# the builder's priority), for `status`'s estimate of the time left.
DEEP_RATE = "deep_rate"
# Written by the storage backend.
MODEL_FINGERPRINT = "model_fingerprint"  # the model the stored vectors came from
VECTOR_DIM = "vector_dim"  # their dimension
COMMON_TERMS = "ubiquitous_terms"  # JSON: chunk count and document count of frequent stems
COMMON_TERMS_STALE = "ubiquitous_terms_stale"  # the same, while chunks changed since it was made
GERMAN_NOTES = "german_notes"  # "1" when some chunk is German (queries add German stems)
MULTILINGUAL_MODEL = "multilingual_model"  # the model the deep lane's vectors came from
MULTILINGUAL_BUILT = "multilingual_built"  # "1" once a deep-lane build finished
