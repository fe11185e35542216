"""Rows to units for spreadsheets and CSV: the header and up to 20 rows per unit. Pure.

As in the source design a search for a column name lands in the right block, because every unit
repeats the header. A unit also closes early when it would pass the character budget, so a sheet of
long cells is not cut mid-row; one row longer than the budget is split alone and keeps its row number.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator, Sequence

from .errors import DocumentTooLargeError
from .model import Location, TextUnit
from .textsplit import split_text

__all__ = ["cell_text", "row_units"]

CELL_SEPARATOR = " | "
_HEADER_SCAN = 10


def cell_text(value: object) -> str:
    """One cell as text: numbers without a spurious `.0`, dates in ISO form, empty for None."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return repr(value)
    if isinstance(value, dt.datetime) and value.time() == dt.time(0):
        return value.date().isoformat()  # a date cell, as openpyxl returns it
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    return str(value).strip()


def _line(cells: Sequence[str]) -> str:
    """A row as one line; trailing empty cells dropped, a run of empty cells shown as one."""
    end = len(cells)
    while end and not cells[end - 1]:
        end -= 1
    out: list[str] = []
    for cell in cells[:end]:
        if cell or not out or out[-1]:
            out.append(cell.replace("\n", " "))
    return CELL_SEPARATOR.join(out)


def _with_header_first(
    rows: Iterable[tuple[int, Sequence[str]]],
) -> Iterator[tuple[int, str, bool]]:
    """Non-empty rows as lines, the header flagged and moved before the title rows above it.

    Real sheets often carry a title or notes above the table; the header is the first of the
    first ten non-empty rows with the most filled cells, and the rows above it stay as data.
    """
    head: list[tuple[int, str, int]] = []
    it = iter(rows)
    for number, cells in it:
        line = _line(cells)
        if line.strip(" |"):
            head.append((number, line, sum(1 for c in cells if c)))
            if len(head) == _HEADER_SCAN:
                break
    if not head:
        return
    widest = max(filled for _, _, filled in head)
    pick = next(i for i, (_, _, filled) in enumerate(head) if filled == widest)
    yield head[pick][0], head[pick][1], True
    for i, (number, line, _) in enumerate(head):
        if i != pick:
            yield number, line, False
    for number, cells in it:
        line = _line(cells)
        if line.strip(" |"):
            yield number, line, False


def row_units(
    rows: Iterable[tuple[int, Sequence[str]]],
    *,
    sheet: str | None,
    rows_per_unit: int = 20,
    max_chars: int = 1000,
    max_total_chars: int | None = None,
) -> list[TextUnit]:
    """Units from `(row number, cell texts)` pairs; the first non-empty row is the header.

    `max_total_chars` stops the rows as soon as the units pass it (`DocumentTooLargeError`), so
    rows read from a stream never pile up past the limit the whole document would fail on."""
    prefix = f"[Sheet: {sheet}]\n" if sheet is not None else ""
    section = (sheet,) if sheet is not None else ()
    header: str | None = None
    header_row = 0
    units: list[TextUnit] = []
    batch: list[tuple[int, str]] = []
    lines = _with_header_first(rows)
    total = 0

    def flush() -> None:
        nonlocal total
        if not batch:
            return
        total += len(prefix) + len(header or "") + sum(len(line) + 1 for _, line in batch)
        if max_total_chars is not None and total > max_total_chars:
            raise DocumentTooLargeError(
                f"has more than the {max_total_chars:,} characters of text the limit allows "
                f"(reading stopped at row {batch[-1][0]:,})"
            )
        head = prefix + (header + "\n" if header else "")
        text = head + "\n".join(line for _, line in batch)
        numbers = [n for n, _ in batch]
        loc = Location(sheet=sheet, rows=(min(numbers), max(numbers)))
        if len(text) > max_chars and len(batch) == 1:
            for part in split_text(batch[0][1], max_chars=max(max_chars - len(head), 200)):
                units.append(TextUnit(head + part, section, loc))
        else:
            units.append(TextUnit(text, section, loc))
        batch.clear()

    for number, line, is_header in lines:
        if is_header:
            header, header_row = line, number
            continue
        # Exactly the length `flush` would produce with this line added.
        size = len(prefix) + len(header or "") + 1 + sum(len(x) + 1 for _, x in batch) + len(line)
        if batch and (len(batch) >= rows_per_unit or size > max_chars):
            flush()
        batch.append((number, line))
    flush()
    if header is not None and not units:
        # A sheet that is only a header row still says something.
        units.append(
            TextUnit(prefix + header, section, Location(sheet=sheet, rows=(header_row, header_row)))
        )
    return units
