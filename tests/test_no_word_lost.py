"""Issue 13: no word of a note is silently lost.  Every distinct word of a note's body, outside
skipped link sections, is found by BM25 through a real index; hostile shapes (tiny sections,
hundreds of headings, headings only, no final newline, headings inside lists and callouts, CRLF)
and hypothesis-built notes alike.  What is left out is reported by `status`.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import noteseek
from noteseek import chunk_note
from tests.conftest import FakeEmbedder

_WORDS = itertools.count()


def word() -> str:
    """A word no other note and no stemmer rule shares: 'zq' + letters (Porter leaves it whole)."""
    n = next(_WORDS)
    letters = ""
    while True:
        n, r = divmod(n, 26)
        letters += "bcdfghjklmnpqrstvwxz"[r % 20] + "aeiou"[r % 5]
        if n == 0:
            return "zq" + letters


def words_of(text: str) -> set[str]:
    return set(re.findall(r"zq[a-z]+", text))


def _index_and_check(tmp_path: Path, notes: dict[str, str], skipped: set[str]) -> noteseek.Index:
    vault = tmp_path / "vault"
    for name, text in notes.items():
        path = vault / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    # Filler notes keep every test word rare, as in a real vault (BM25 ignores ubiquitous terms).
    for i in range(4):
        (vault / f"filler-{i}.md").write_text(f"# Filler {i}\n\nPlain text about nothing much.\n")
    idx = noteseek.Index(tmp_path / "idx.db", embedder=FakeEmbedder())
    idx.update(str(vault))
    for name, text in notes.items():
        for w in sorted(words_of(text) - skipped):
            hits = idx.search(w, mode="bm25", limit=5)
            assert name in [h.path for h in hits], f"{w!r} of {name} is not found"
    return idx


def _hostile_notes() -> tuple[dict[str, str], set[str]]:
    w = word
    skipped = {w(), w()}
    notes = {
        "tiny-last.md": f"# Tiny {w()}\n\n## First\n\n{w()} is a longer paragraph with {w()} in it.\n\n## Last\n\n{w()}\n",
        "many-headings.md": "# Many\n\n" + "".join(f"## H {w()}\n\n{w()}\n\n" for _ in range(300)),
        "headings-only.md": "".join(f"## {w()}\n" for _ in range(5)),
        "no-final-newline.md": f"# Edge\n\nSome text {w()} here.\n\n## End\n\n{w()}",
        "lists-and-callouts.md": (
            f"# Lists\n\n- item {w()}\n  - ## {w()} heading in a list\n\n"
            f"> [!note] {w()}\n> ## {w()} inside a callout\n> {w()}\n\n"
            f"## See also\n\n- [[{sorted(skipped)[0]}]]\n- {sorted(skipped)[1]}\n\n## After\n\n{w()}\n"
        ),
        "crlf.md": f"# CRLF\r\n\r\n## A\r\n\r\n{w()}\r\n## B\r\n{w()}\r\n",
        "empty-sections.md": f"# Empty\n\n## {w()}\n\n## {w()}\n\n### {w()}\n\nbody {w()}\n",
        "frontmatter-title.md": f"---\ntitle: Other title\n---\n\n# {w()} heading\n\n{w()}\n",
        "h3-split.md": "# Long\n\n## Big\n\n"
        + "".join(f"### Sub {w()}\n\n{w()} " + "filler words " * 30 + "\n\n" for _ in range(12))
        + f"### Tail {w()}\n\n{w()}\n",
    }
    return notes, skipped


def test_hostile_notes_lose_no_word(tmp_path: Path) -> None:
    notes, skipped = _hostile_notes()
    with _index_and_check(tmp_path, notes, skipped) as idx:
        status = idx.status()
    # The one skipped link section is named by status, per file and in total.
    assert ("lists-and-callouts.md", 1, 0) in status.left_out
    assert status.skipped_sections == 1


def test_a_short_last_section_is_merged_with_its_heading() -> None:
    note = chunk_note(
        "# T\n\n## First\n\n" + "words " * 20 + "\n\n## Last\n\nuniqueword\n", file_stem="t"
    )
    assert len(note.chunks) == 1
    assert note.chunks[0].text.endswith("## Last\nuniqueword")
    assert note.chunks[0].section == "First"


def test_a_short_first_section_leads_into_the_next() -> None:
    note = chunk_note("## Intro\n\nhi\n\n## Body\n\n" + "text " * 20, file_stem="t")
    assert [c.section for c in note.chunks] == ["Body"]
    assert note.chunks[0].text.startswith("## Intro\nhi\n\n")


def test_many_tiny_sections_are_grouped_within_the_size_limit() -> None:
    text = "".join(f"## H{i}\n\nw{i}\n\n" for i in range(2000))
    note = chunk_note(text, file_stem="t")
    assert all(len(c.text) <= 2000 for c in note.chunks)
    joined = "\n".join(c.text for c in note.chunks)
    assert all(f"w{i}\n" in joined + "\n" for i in range(2000))


# ---------------------------------------------------------------------- hypothesis-built notes

_line = st.one_of(
    st.builds(lambda ws: " ".join(ws), st.lists(st.builds(word), min_size=1, max_size=6)),
    st.builds(lambda w: f"- {w}", st.builds(word)),
    st.builds(lambda w: f"> [!tip] {w}", st.builds(word)),
    st.builds(lambda w: f"> ## {w}", st.builds(word)),
    st.builds(lambda w: f"1. ## {w}", st.builds(word)),
    st.builds(lambda a, b: f"| {a} | {b} |", st.builds(word), st.builds(word)),
    st.builds(lambda w: f"```\n{w}\n```", st.builds(word)),
    st.just(""),
)
_section = st.tuples(
    st.sampled_from(["", "# ", "## ", "### ", "#### "]),
    st.builds(word),
    st.lists(_line, max_size=5),
)


@st.composite
def _notes(draw: st.DrawFn) -> str:
    parts = []
    for marker, heading, lines in draw(st.lists(_section, min_size=1, max_size=12)):
        if marker:
            parts.append(f"{marker}{heading}")
        parts.extend(lines)
    text = "\n".join(parts)
    if draw(st.booleans()):
        text += "\n"
    return text


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(_notes(), min_size=1, max_size=3))
def test_generated_notes_lose_no_word(
    tmp_path_factory: pytest.TempPathFactory, texts: list[str]
) -> None:
    tmp = tmp_path_factory.mktemp("gen")
    notes = {f"note-{i}.md": text for i, text in enumerate(texts)}
    with _index_and_check(tmp, notes, set()):
        pass
