"""The pure pieces: splitting long text and batching rows keep every word and every location."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from noteseek.documents import Location, TextUnit, split_text, split_unit
from noteseek.documents.tabular import cell_text, row_units

_WORDS = re.compile(r"\S+")

words = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=0, max_size=3000
)
prose = st.lists(
    st.one_of(
        st.text(alphabet="abcdefghij ", min_size=1, max_size=40),
        st.sampled_from(["\n", "\n\n", ". ", "! ", "\t"]),
        st.text(alphabet="x", min_size=500, max_size=2500),  # one word longer than a chunk
    ),
    max_size=200,
).map("".join)


@settings(max_examples=200, deadline=None)
@given(prose)
def test_no_word_is_lost_and_chunks_stay_bounded(text: str) -> None:
    chunks = split_text(text, max_chars=1000, overlap=100, min_chars=100)
    out_words = {w for c in chunks for w in c.split()}
    # A word that fits the budget (900) is never cut; a longer one is cut into pieces, none lost.
    assert {w for w in text.split() if len(w) <= 900} <= out_words
    out_chars = "".join("".join(c.split()) for c in chunks)
    assert len(out_chars) >= len("".join(text.split()))
    for chunk in chunks:
        # Budget 900 + the overlap prefix + a merged short tail (< 100).
        assert len(chunk) <= 1000 + 100 + 1, len(chunk)
        assert chunk.strip() == chunk and chunk


@settings(max_examples=200, deadline=None)
@given(words)
def test_any_text_round_trips_its_non_space_characters(text: str) -> None:
    chunks = split_text(text, max_chars=300, overlap=30, min_chars=30)
    original = "".join(text.split())
    covered = "".join("".join(c.split()) for c in chunks)
    assert set(original) <= set(covered)
    assert len(covered) >= len(original)


def test_short_text_is_one_chunk_and_empty_is_none() -> None:
    assert split_text("  hello world  ") == ["hello world"]
    assert split_text(" \n ") == []


def test_paragraphs_are_packed_and_overlap_only_inside_a_paragraph() -> None:
    paragraphs = [f"Paragraph {i} " + "word " * 60 for i in range(10)]
    chunks = split_text("\n\n".join(paragraphs), max_chars=1000, overlap=100)
    # 314 characters each with its break: two fit the 900-character budget, a third does not.
    assert len(chunks) == 5
    assert chunks[1].startswith("Paragraph 2")  # a clean paragraph cut carries no overlap
    long = " ".join(f"w{i}" for i in range(600))
    parts = split_text(long, max_chars=1000, overlap=100)
    # Cut inside a paragraph: the next part starts with the last words of the one before.
    assert parts[1].split()[0] in parts[0].split()[-20:]
    assert parts[0].split()[-1] in parts[1].split()[:20]


def test_short_tail_joins_the_previous_chunk() -> None:
    text = "b " * 355 + "\n\nend."  # 716 characters: over max_chars, so it is split at 700
    chunks = split_text(text, max_chars=712, overlap=12, min_chars=100)
    assert len(chunks) == 1  # the 16-character tail joined the chunk before it
    assert chunks[0].endswith("\n\nend.") and chunks[0].count("b") == 355


def test_split_unit_keeps_section_and_location() -> None:
    unit = TextUnit("x " * 2000, ("Part I", "Setup"), Location(page=12, page_label="xii"))
    parts = split_unit(unit, max_chars=1000, overlap=100)
    assert len(parts) > 1
    assert {(p.section, p.location) for p in parts} == {(unit.section, unit.location)}
    assert parts[0].breadcrumb == "Part I › Setup"


def test_cell_text_formats() -> None:
    import datetime as dt

    assert [cell_text(v) for v in (None, 1.0, 2.5, True, " x ", 10**20 * 1.0)] == [
        "",
        "1",
        "2.5",
        "TRUE",
        "x",
        "1e+20",
    ]
    assert cell_text(dt.datetime(2020, 1, 2)) == "2020-01-02"
    assert cell_text(dt.datetime(2020, 1, 2, 3, 4)) == "2020-01-02T03:04:00"


def test_row_units_header_batches_and_row_numbers() -> None:
    rows = [(1, ["id", "name"])] + [(n, [str(n), f"item {n}"]) for n in range(2, 47)]
    units = row_units(rows, sheet="Parts", rows_per_unit=20, max_chars=2000)
    assert [u.location.rows for u in units] == [(2, 21), (22, 41), (42, 46)]
    assert all(u.text.startswith("[Sheet: Parts]\nid | name\n") for u in units)
    assert all(u.location.sheet == "Parts" and u.section == ("Parts",) for u in units)


def test_row_units_title_rows_above_the_header_are_kept() -> None:
    rows = [
        (1, ["Quarterly report", "", ""]),
        (3, ["region", "q1", "q2"]),
        (4, ["north", "1", "2"]),
    ]
    (unit,) = row_units(rows, sheet=None)
    assert unit.text == "region | q1 | q2\nQuarterly report\nnorth | 1 | 2"
    assert unit.location.rows == (1, 4) and unit.location.sheet is None


def test_row_units_close_early_on_long_rows_and_split_one_huge_row() -> None:
    rows = [(1, ["h"])] + [(n, ["y" * 300]) for n in range(2, 10)]
    units = row_units(rows, sheet=None, rows_per_unit=20, max_chars=1000)
    assert all(len(u.text) <= 1000 for u in units)
    assert sum(u.text.count("y" * 300) for u in units) == 8
    huge = row_units([(1, ["h"]), (2, [("word " * 1000).strip()])], sheet=None, max_chars=1000)
    assert len(huge) > 1 and {u.location.rows for u in huge} == {(2, 2)}
    assert all(u.text.startswith("h\n") for u in huge)


def test_header_only_sheet_is_one_unit() -> None:
    (unit,) = row_units([(5, ["a", "b"])], sheet="S")
    assert unit.text == "[Sheet: S]\na | b" and unit.location.rows == (5, 5)


@settings(max_examples=200, deadline=None)
@given(prose)
def test_joining_the_parts_gives_back_the_text_without_the_overlaps(text: str) -> None:
    # Read access (a document's page for an agent) joins a unit's parts back: nothing lost,
    # nothing repeated, whatever the text.
    from noteseek.documents import join_parts

    parts = split_unit(TextUnit(text, ("S",), Location(page=3)), max_chars=1000, overlap=100)
    assert all(p.location == Location(page=3) and p.section == ("S",) for p in parts)
    joined = join_parts([(p.text, p.overlap) for p in parts])
    assert "".join(joined.split()) == "".join(text.split())


def test_spaces_between_two_long_words_make_no_empty_chunk() -> None:
    """Found by the property above: a lone space between pieces too long to share a chunk."""
    text = "aa" + "x" * 894 + "aaaa aaaa" + "x" * 896  # gave chunks of 900, 0 and 900 characters
    chunks = split_text(text, max_chars=1000, overlap=100, min_chars=100)
    assert all(c.strip() == c and c for c in chunks)
    assert "".join("".join(c.split()) for c in chunks).count("a") >= text.count("a")
