"""What a search returns: one `Hit` per note or document, and why it ranks where it does."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from ...core.document_location import breadcrumb, location_label

if TYPE_CHECKING:
    from ...storage.rows import ChunkRow

__all__ = ["Explanation", "Hit", "hit_from_row"]


@dataclass(frozen=True)
class Explanation:
    """Why a hit ranks where it does (`search(..., explain=True)`)."""

    fusion: str
    bm25_term: float  # this list's contribution to the score
    vector_term: float
    bm25_normalised: float | None  # min-max normalised note score in the list (convex fusion)
    vector_normalised: float | None
    exact_name: bool
    # The list's order comes from here: the fused score, the rerank's raw output (None when the
    # note was not in the reranked head), the calibrated model's probability, and the score shown
    # (that probability capped at the hit above it, so the order shown and the scores agree).
    fused: float = 0.0
    rerank: float | None = None
    probability: float | None = None
    # Whether the rerank's output set the order: it is scored for the calibration also where it
    # does not reorder (rerank turned off, or a complete deep lane, whose order the fusion keeps).
    reranked: bool = False


@dataclass(frozen=True)
class Hit:
    """One matching note or document, represented by its best section.

    Ranks are the note's 1-based rank in each list (None when absent); `bm25_score` and `cosine` are
    the best of its chunks. For a document, `page` (1-based, PDF; `page_label` is the PDF's own
    label of it, e.g. "xii"), `slide` (1-based), `sheet` (name) and `rows` ((first, last), 1-based
    spreadsheet or CSV rows) say where the section's text is; None where they do not apply.
    `date` is the note's date (an ISO day, or a local date-time where the source gives the time)
    and `date_source` where it came from: frontmatter, filename, document or mtime
    (docs/time.md); None for a row written before dates were stored.
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
    date: str | None = None
    date_source: str | None = None
    explanation: Explanation | None = None
    # A document's kind ("pdf", "image", "xlsx", ...); None for a Markdown note.
    kind: str | None = None

    @property
    def title(self) -> str:
        """The note's title (frontmatter `title`, first H1 or file name; a document's title)."""
        return _note_fields(self.heading_context)[0]

    @property
    def aliases(self) -> tuple[str, ...]:
        """The note's frontmatter aliases."""
        return _note_fields(self.heading_context)[3]

    @property
    def tags(self) -> tuple[str, ...]:
        """The note's tags (frontmatter and inline)."""
        return _note_fields(self.heading_context)[2]

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
        unless the search was explained; `rows` as [first, last]); the note's `title`, `aliases`
        and `tags` in place of `heading_context`, the text they are stored as for BM25."""
        data = asdict(self)
        heading_context = data.pop("heading_context")
        title, _, tags, aliases = _note_fields(heading_context)
        data["title"], data["aliases"], data["tags"] = title, list(aliases), list(tags)
        if self.explanation is None:
            data.pop("explanation")
        if self.kind is None:  # a note: the output notes have always had
            data.pop("kind")
        if self.rows is not None:
            data["rows"] = list(self.rows)
        return data


def _rows(first: int | None, last: int | None) -> tuple[int, int] | None:
    return None if first is None else (first, last if last is not None else first)


def hit_from_row(
    row: ChunkRow,
    score: float,
    *,
    bm25_rank: int | None = None,
    vec_rank: int | None = None,
    bm25_score: float | None = None,
    cosine: float | None = None,
    explanation: Explanation | None = None,
    kind: str | None = None,
) -> Hit:
    """The hit a stored chunk shows as, with its note's list ranks and scores."""
    return Hit(
        path=row.path,
        section=row.section,
        heading_context=row.heading_context,
        text=row.text,
        score=score,
        bm25_rank=bm25_rank,
        vec_rank=vec_rank,
        bm25_score=bm25_score,
        cosine=cosine,
        chunk_id=row.id,
        page=row.page,
        page_label=row.page_label,
        slide=row.slide,
        sheet=row.sheet,
        rows=_rows(row.row_first, row.row_last),
        date=row.date,
        date_source=row.date_source,
        explanation=explanation,
        kind=kind,
    )


def _note_fields(heading_context: str) -> tuple[str, str, tuple[str, ...], tuple[str, ...]]:
    """(title, type, tags, aliases) of a stored heading context.

    The chunker stores them as one BM25 field, `title | type | tags | aliases` (tags and aliases
    comma-joined, empty trailing parts dropped: core/chunker.py); a title that itself holds ` | `
    keeps it, since the last three parts are fixed.
    """
    parts = heading_context.split(" | ")
    if len(parts) > 4:
        parts = [" | ".join(parts[:-3]), *parts[-3:]]
    parts += [""] * (4 - len(parts))
    title, kind, tags, aliases = parts

    def items(text: str) -> tuple[str, ...]:
        return tuple(x for x in (p.strip() for p in text.split(", ")) if x)

    return title.strip(), kind.strip(), items(tags), items(aliases)
