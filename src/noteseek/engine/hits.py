"""What a search returns: one `Hit` per note or document, and why it ranks where it does."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from ..core.document_location import breadcrumb, location_label

__all__ = ["Explanation", "Hit"]


@dataclass(frozen=True)
class Explanation:
    """Why a hit ranks where it does (`search(..., explain=True)`)."""

    fusion: str
    bm25_term: float  # this list's contribution to the score
    vector_term: float
    bm25_normalised: float | None  # min-max normalised note score in the list (convex fusion)
    vector_normalised: float | None
    exact_name: bool


@dataclass(frozen=True)
class Hit:
    """One matching note or document, represented by its best section.

    Ranks are the note's 1-based rank in each list (None when absent); `bm25_score` and `cosine` are
    the best of its chunks. For a document, `page` (1-based, PDF; `page_label` is the PDF's own
    label of it, e.g. "xii"), `slide` (1-based), `sheet` (name) and `rows` ((first, last), 1-based
    spreadsheet or CSV rows) say where the section's text is; None where they do not apply.
    `kind` is the document's kind (`"image"`: text read by OCR), None for a note.
    """

    path: str
    section: str
    heading_context: str
    text: str
    score: float
    bm25_rank: int | None
    vec_rank: int | None
    bm25_score: float | None
    cosine: float | None
    chunk_id: int
    page: int | None = None
    page_label: str | None = None
    slide: int | None = None
    sheet: str | None = None
    rows: tuple[int, int] | None = None
    explanation: Explanation | None = None
    # A document's kind ("pdf", "image", "xlsx", ...); None for a Markdown note.
    kind: str | None = None

    @property
    def location(self) -> str:
        """Where in its document the text is (`p. 12`, `slide 3`, `sheet Data, rows 2–21`);
        '' for a note."""
        return location_label(
            page=self.page,
            page_label=self.page_label,
            slide=self.slide,
            sheet=self.sheet,
            rows=self.rows,
        )

    @property
    def heading(self) -> str:
        """`manual.pdf › p. 12 › Installing`, `howto/x.md › Section`: how a hit is named."""
        return breadcrumb(self.path, self.section, self.location, sheet=self.sheet)

    def to_json(self) -> dict[str, Any]:
        """Every field, as `noteseek search --json` and the daemon print it (no `explanation` key
        unless the search was explained; `rows` as [first, last])."""
        data = asdict(self)
        if self.explanation is None:
            data.pop("explanation")
        if self.kind is None:  # a note: the output notes have always had
            data.pop("kind")
        if self.rows is not None:
            data["rows"] = list(self.rows)
        return data
