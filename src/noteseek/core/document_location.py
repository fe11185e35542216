"""How a place in a document is named for people and agents: `p. 12`, `slide 3`, `sheet Data,
rows 2–21`. Pure: values in, text out; every adapter names locations through these functions.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["OUTCOME_LABELS", "breadcrumb", "location_label", "outcome_summary"]

_SEPARATOR = " › "
# How status and the run summary name each extraction outcome (`documents.Outcome` values);
# "unread": the indexer could not open the file (permissions, vanished).
OUTCOME_LABELS = {
    "ok": "ok",
    "encrypted": "encrypted",
    "no_text": "no text layer",
    "no_text_found": "no text found",
    "corrupt": "corrupt",
    "timed_out": "timed out",
    "too_large": "too large",
    "unsupported": "unsupported",
    "unread": "not read",
}


def outcome_summary(documents: Sequence[tuple[str, str, int]]) -> str:
    """`41: 25 ok, 5 encrypted, 1 no text layer (pdf 14, csv 3)` from (kind, outcome, files)."""
    by_outcome: dict[str, int] = {}
    by_kind: dict[str, int] = {}
    for kind, outcome, files in documents:
        by_outcome[outcome] = by_outcome.get(outcome, 0) + files
        by_kind[kind] = by_kind.get(kind, 0) + files
    order = list(OUTCOME_LABELS)
    outcomes = ", ".join(
        f"{n} {OUTCOME_LABELS.get(o, o)}"
        for o, n in sorted(
            by_outcome.items(), key=lambda item: order.index(item[0]) if item[0] in order else 99
        )
    )
    kinds = ", ".join(
        f"{k} {n}" for k, n in sorted(by_kind.items(), key=lambda item: (-item[1], item[0]))
    )
    return f"{sum(by_kind.values())}: {outcomes} ({kinds})"


def location_label(
    *,
    page: int | None = None,
    page_label: str | None = None,
    slide: int | None = None,
    sheet: str | None = None,
    rows: Sequence[int] | None = None,
    numbered: bool = False,
) -> str:
    """`p. 12` (the PDF's own page label when it has one: `p. xii`), `slide 3`, `sheet Data,
    rows 2–21`, `rows 2–21` (CSV); '' when nothing applies (a note). `numbered` adds the page's
    number after a label that differs from it (`p. xii (12)`), for a reader that asks for the
    page by number (MCP `get_note`)."""
    parts: list[str] = []
    if page is not None:
        shown = page_label or str(page)
        extra = f" ({page})" if numbered and shown != str(page) else ""
        parts.append(f"p. {shown}{extra}")
    if slide is not None:
        parts.append(f"slide {slide}")
    if sheet is not None:
        parts.append(f"sheet {sheet}")
    if rows:
        first, last = rows[0], rows[-1]
        parts.append(f"rows {first}–{last}" if last != first else f"row {first}")
    return ", ".join(parts)


def breadcrumb(path: str, section: str, location: str, *, sheet: str | None = None) -> str:
    """`manual.pdf › p. 12 › Installing`: the file, where in it, and the section; the section is
    left out where it only repeats the location (a sheet's name, an untitled slide's number)."""
    if not location:
        return f"{path}{_SEPARATOR}{section}"
    shown = section.strip()
    repeats = (
        not shown
        or (sheet is not None and shown == sheet)
        or shown.casefold() == location.casefold()
    )
    return f"{path}{_SEPARATOR}{location}" + ("" if repeats else f"{_SEPARATOR}{shown}")
