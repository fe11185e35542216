"""Hostile and broken files: each ends in a named outcome in a worker and never takes the caller down."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from noteseek.documents import ExtractionLimits, ExtractionPool, ExtractionResult, Outcome

from .documents_samples import sample, write_hostile

# What each generated file must end as, and a word its reason must contain.
EXPECTED = {
    "truncated.pdf": (Outcome.CORRUPT, "cannot be read as a PDF"),
    "html-named.pdf": (Outcome.CORRUPT, "looks like HTML"),
    "empty.pdf": (Outcome.CORRUPT, "empty"),
    "empty.xlsx": (Outcome.CORRUPT, "empty"),
    "zip-named.docx": (Outcome.CORRUPT, "Excel workbook"),
    "zip-bomb.xlsx": (Outcome.TOO_LARGE, "zip bomb"),
    "binary.csv": (Outcome.CORRUPT, "PNG image"),
    "bad.canvas": (Outcome.CORRUPT, "JSON Canvas"),
    "deep.html": (Outcome.TOO_LARGE, "levels deep"),
    "far-cell.ods": (Outcome.TOO_LARGE, "too many cells"),
}


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return write_hostile(tmp_path_factory.mktemp("hostile"))


@pytest.fixture(scope="module")
def results(hostile: dict[str, Path]) -> Iterator[dict[str, ExtractionResult]]:
    paths = [*hostile.values(), sample("crazyones.pdf"), sample("calamine-password.xlsx")]
    with ExtractionPool(workers=2) as pool:
        yield {Path(r.path).name: r for r in pool.extract_many(paths)}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_named_outcome_and_reason(results: dict[str, ExtractionResult], name: str) -> None:
    outcome, word = EXPECTED[name]
    result = results[name]
    assert result.outcome is outcome, result.reason
    assert word in result.reason and name in result.reason
    assert result.document is None


def test_good_files_in_the_same_batch_still_read(results: dict[str, ExtractionResult]) -> None:
    good = results["crazyones.pdf"]
    assert good.ok and good.document is not None and "crazy ones" in good.document.units[0].text
    assert results["calamine-password.xlsx"].outcome is Outcome.ENCRYPTED


def test_broken_xref_is_repaired_by_pdfium(results: dict[str, ExtractionResult]) -> None:
    result = results["broken-xref.pdf"]
    assert result.ok and result.document is not None
    assert "The round pegs" in result.document.units[0].text


def test_empty_text_file_is_ok_with_no_units(results: dict[str, ExtractionResult]) -> None:
    result = results["empty.txt"]
    assert result.ok and result.document is not None and result.document.units == ()


def test_declared_huge_dimension_is_not_trusted(results: dict[str, ExtractionResult]) -> None:
    result = results["huge-dimension.xlsx"]
    assert result.ok and result.document is not None
    assert result.document.units[0].location.rows == (2, 3)


def test_far_cell_crashes_calamine_only_in_the_worker_then_openpyxl_reads_it(
    results: dict[str, ExtractionResult],
) -> None:
    # calamine allocates the dense A1:XFD1048576 grid and aborts the process; the pool retries.
    result = results["far-cell.xlsx"]
    assert result.ok and result.document is not None, result.reason
    assert result.document.engine.startswith("openpyxl")
    far = [u for u in result.document.units if "farthest" in u.text]
    assert far and far[0].location.rows is not None and far[0].location.rows[1] == 1048576
    assert "alpha | 1" in result.document.units[0].text


def test_zip_bomb_caught_with_default_limits_before_any_library(hostile: dict[str, Path]) -> None:
    from noteseek.documents import extract_file

    result = extract_file(hostile["zip-bomb.xlsx"])  # in-process: the check runs before parsing
    assert result.outcome is Outcome.TOO_LARGE
    assert "64 MiB unpacked" in result.reason


def test_file_size_cap(tmp_path: Path) -> None:
    from noteseek.documents import extract_file

    path = tmp_path / "big.txt"
    path.write_bytes(b"word " * 50_000)
    result = extract_file(path, limits=ExtractionLimits(max_file_bytes=100_000))
    assert result.outcome is Outcome.TOO_LARGE and "limit" in result.reason


def test_page_and_character_caps() -> None:
    from noteseek.documents import extract_file

    pages = extract_file(sample("pdflatex-outline.pdf"), limits=ExtractionLimits(max_pages=3))
    assert pages.outcome is Outcome.TOO_LARGE and "4 pages" in pages.reason
    chars = extract_file(sample("mtcars.csv"), limits=ExtractionLimits(max_chars=500))
    assert chars.outcome is Outcome.TOO_LARGE and "characters" in chars.reason
