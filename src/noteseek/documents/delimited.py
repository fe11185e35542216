"""CSV and TSV with the standard `csv` module: encoding detected, dialect sniffed, 20 rows per unit.

`csv.Sniffer` guesses the delimiter and quoting from the first 64 KB; when it cannot decide, a .tsv
is tab-separated and a .csv comma-separated. Rows are numbered by record (the header is row 1), as a
spreadsheet program shows the file.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator, Sequence
from pathlib import Path

from .encoding import decode_text
from .errors import CorruptDocumentError
from .model import ExtractedDocument, ExtractionLimits
from .tabular import row_units

__all__ = ["extract_delimited"]

_SNIFF_CHARS = 64 * 1024


def _dialect(sample: str, kind: str) -> type[csv.Dialect] | csv.Dialect:
    try:
        return csv.Sniffer().sniff(sample, delimiters=",;\t|")
    except csv.Error:
        return csv.excel_tab if kind == "tsv" else csv.excel


def extract_delimited(path: Path, limits: ExtractionLimits, *, kind: str) -> ExtractedDocument:
    """Header + row batches located by their 1-based record numbers."""
    text, encoding = decode_text(path.read_bytes())
    # A quoted field may hold a whole document; the character cap bounds it, not csv's 128 KB.
    csv.field_size_limit(max(limits.max_chars, 131072))
    dialect = _dialect(text[:_SNIFF_CHARS], kind)
    reader = csv.reader(io.StringIO(text, newline=""), dialect)

    def rows() -> Iterator[tuple[int, Sequence[str]]]:
        try:
            for number, row in enumerate(reader, start=1):
                yield number, [cell.strip() for cell in row]
        except csv.Error as exc:
            raise CorruptDocumentError(
                f"is not valid {kind.upper()} (line {reader.line_num}: {exc})"
            ) from exc

    units = row_units(
        rows(), sheet=None, rows_per_unit=limits.rows_per_unit, max_chars=limits.max_rows_unit_chars
    )
    return ExtractedDocument(kind=kind, engine=f"csv ({encoding})", units=tuple(units))
