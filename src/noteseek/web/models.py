"""The schema of the API's replies, derived from the library's frozen results, for OpenAPI.

Replies are the library's own JSON (`Hit.to_json`, `IndexStatus.to_json`, `PromptContext.to_json`,
`NoteText.to_json`: what `noteseek search/status/context --json` print), sent without
re-validation. The pydantic models below only document them in the schema served at
`/openapi.json`, which the fuzz run (bench/web_fuzz.py) checks every reply against. They are built
from the dataclasses' own fields, so a field added to `Hit` or `IndexStatus` shows up here without
a second list of names; only where `to_json` changes a field's shape (status problems become
objects, tuples become lists) does a model say so.
"""

from __future__ import annotations

import dataclasses
from typing import Any, get_type_hints

from pydantic import BaseModel, Field, create_model

from noteseek import Hit, IndexStatus, NoteText, PromptContext

__all__ = [
    "ContextReply",
    "ErrorReply",
    "FoldersReply",
    "HitModel",
    "NoteReply",
    "SearchReply",
    "StatusReply",
    "TagsReply",
    "model_of",
]


def model_of(
    cls: type, *, shapes: dict[str, Any] | None = None, drop: tuple[str, ...] = ()
) -> type[BaseModel]:
    """A pydantic model with the fields of dataclass `cls` (its docstring describes it);
    `shapes` gives the type of a field whose JSON form differs from the attribute's, `drop` the
    fields its JSON form leaves out."""
    # PromptContext imports Hit for type checkers only, so its annotation needs the name here.
    hints = get_type_hints(cls, localns={"Hit": Hit})
    fields: dict[str, Any] = {}
    for field in dataclasses.fields(cls):
        if field.name in drop:
            continue
        default = ... if field.default is dataclasses.MISSING else field.default
        fields[field.name] = ((shapes or {}).get(field.name, hints[field.name]), default)
    model: type[BaseModel] = create_model(cls.__name__, __doc__=cls.__doc__, **fields)
    return model


class ProblemModel(BaseModel):
    """A file that was skipped or indexed with a warning."""

    path: str
    status: str
    problem: str


class LeftOutModel(BaseModel):
    """A file that left text out of search on purpose."""

    path: str
    skipped_sections: int = Field(description="Link-list sections (Related, See also, ...) skipped.")
    secrets_scrubbed: int = Field(description="Values the scrubber replaced.")


# `explanation` keeps its default (None): `Hit.to_json` leaves the key out unless explained.
_HitFields = model_of(Hit, shapes={"rows": list[int] | None}, drop=("heading_context",))


class HitModel(_HitFields):  # type: ignore[valid-type,misc]
    """One hit; `score` is the calibrated probability that it is relevant, never rising down a
    list; the note's title, aliases and tags are their own fields."""

    title: str
    aliases: list[str]
    tags: list[str]


_StatusFields = model_of(
    IndexStatus,
    shapes={
        "problems": list[ProblemModel],
        "left_out": list[LeftOutModel],
        # {kind: {outcome: files}}: {"pdf": {"ok": 3, "encrypted": 1}}
        "documents": dict[str, dict[str, int]],
        "missing_libraries": list[str],
    },
)


class StatusReply(_StatusFields):  # type: ignore[valid-type,misc]
    """The document `noteseek status --json` prints (with the left-out totals)."""

    skipped_sections: int
    secrets_scrubbed: int


ContextReply = model_of(PromptContext, shapes={"hits": list[HitModel]})
_NoteFields = model_of(NoteText, shapes={"sections": list[str], "locations": list[str]})


class NoteReply(_NoteFields):  # type: ignore[valid-type,misc]
    """One note or section; with `html=true`, also its text rendered (web/preview.py)."""

    html: str | None = Field(
        default=None, description="The text as sanitised HTML (html=true), wiki-links as #note=PATH."
    )


class TimeRangeModel(BaseModel):
    """Inclusive days (null: open on that side) and the phrase they were read from ('' when
    they came from since/until alone)."""

    since: str | None
    until: str | None
    phrase: str


class SearchReply(BaseModel):
    """The document `noteseek search --json` prints."""

    query: str
    mode: str
    degraded: str | None = Field(description="Why vectors were not used, or null.")
    time_range: TimeRangeModel | None = Field(
        description="The days kept (since/until and a time phrase of the query), or null."
    )
    searched: str | None = Field(
        description="The text searched once a time phrase was taken out of the query, or null."
    )
    hits: list[HitModel]
    hidden: int = Field(
        description="Hits within the limit left out for scoring below the relevance threshold "
        "(0 with all=true)."
    )
    answered: float = Field(
        description="P(the first ten notes hold a relevant one): below the threshold, no hit is "
        "shown unless all=true."
    )


class FolderModel(BaseModel):
    path: str
    notes: int = Field(description="Notes below it: what a folder filter on it keeps.")


class FoldersReply(BaseModel):
    vault_name: str | None = Field(description="The vault folder's name (Obsidian's vault name).")
    folders: list[FolderModel]


class TagModel(BaseModel):
    tag: str
    notes: int = Field(description="Notes carrying it or a nested tag: what a tag filter keeps.")


class TagsReply(BaseModel):
    tags: list[TagModel]


class ErrorReply(BaseModel):
    error: str = Field(description="What went wrong and what to do next.")
    detail: list[dict[str, Any]] | None = None
    sections: list[str] | None = None
