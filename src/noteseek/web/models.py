"""The JSON the API returns: built from the library's frozen results, described for OpenAPI.

Replies are built as plain dicts from the library's dataclasses (the same `asdict` the CLI's
`--json` uses, so the fields are the same by construction and tests/test_web_api.py compares them)
and sent without re-validation: the pydantic models below only document the schema served at
`/openapi.json`, which the fuzz run (bench/web_fuzz.py) checks every reply against.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from pydantic import BaseModel, Field

from noteseek import Hit, IndexStatus, PromptContext

from .library import NoteText

__all__ = [
    "ContextReply",
    "ErrorReply",
    "FoldersReply",
    "HitModel",
    "NoteReply",
    "SearchReply",
    "StatusReply",
    "context_json",
    "hit_json",
    "note_json",
    "status_json",
]


def hit_json(hit: Hit) -> dict[str, Any]:
    """A hit as `noteseek search --json` prints it (no `explanation` key unless explained)."""
    data = asdict(hit)
    if hit.explanation is None:
        data.pop("explanation")
    return data


def status_json(status: IndexStatus) -> dict[str, Any]:
    """The index status as `noteseek status --json` prints it."""
    data = asdict(status)
    data["problems"] = [{"path": p, "status": s, "problem": r} for p, s, r in status.problems]
    return data


def context_json(result: PromptContext) -> dict[str, Any]:
    """The context block and the gate's decision, as `noteseek context --json` prints them."""
    return {
        "text": result.text,
        "reason": result.reason,
        "considered": result.considered,
        "hits": [hit_json(h) for h in result.hits],
    }


def note_json(note: NoteText) -> dict[str, Any]:
    """One note or section, scrubbed."""
    data = asdict(note)
    data["sections"] = list(note.sections)
    return data


class ExplanationModel(BaseModel):
    fusion: str
    bm25_term: float
    vector_term: float
    bm25_normalised: float | None
    vector_normalised: float | None
    exact_name: bool


class HitModel(BaseModel):
    """One note, represented by its best section (the fields of `noteseek search --json`)."""

    path: str = Field(description="Vault-relative path of the note.")
    section: str = Field(
        description="The best section's heading ('H2 › H3'; the title for the top)."
    )
    heading_context: str = Field(description="'Title | type | tags | aliases' of the note.")
    text: str = Field(description="The section's text (scrubbed).")
    score: float
    bm25_rank: int | None
    vec_rank: int | None
    bm25_score: float | None
    cosine: float | None
    chunk_id: int
    explanation: ExplanationModel | None = Field(None, description="Only with explain=true.")


class SearchReply(BaseModel):
    query: str
    mode: str
    degraded: str | None = Field(description="Why vectors were not used, or null.")
    hits: list[HitModel]


class ContextReply(BaseModel):
    text: str = Field(description="The agent context block; empty when the gate found nothing.")
    reason: str = Field(description="Why hits were kept, or why the block is empty.")
    considered: int
    hits: list[HitModel]


class NoteReply(BaseModel):
    path: str
    title: str | None
    text: str
    section: str | None
    sections: list[str]
    redacted: int
    changed_since_indexed: bool


class ProblemModel(BaseModel):
    path: str
    status: str
    problem: str


class StatusReply(BaseModel):
    db_path: str
    db_bytes: int
    schema_version: int
    vault_root: str | None
    files: int
    chunks: int
    vectors: int
    model: str | None
    model_fingerprint: str | None
    vector_support: bool
    vector_problem: str | None
    last_run: dict[str, Any] | None
    problems: list[ProblemModel]


class FolderModel(BaseModel):
    path: str
    notes: int


class FoldersReply(BaseModel):
    vault_name: str | None = Field(description="The vault folder's name (Obsidian's vault name).")
    folders: list[FolderModel]


class ErrorReply(BaseModel):
    error: str = Field(description="What went wrong and what to do next.")
    detail: list[dict[str, Any]] | None = None
    sections: list[str] | None = None
