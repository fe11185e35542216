from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from noteseek.core.chunker import (
    ChunkOptions,
    chunk_note,
    embedding_text,
    prose_text,
    scan_headings,
)


def sections(text: str, **kw: object) -> list[tuple[str, str]]:
    return [(c.section, c.text) for c in chunk_note(text, file_stem="file-name", **kw).chunks]  # type: ignore[arg-type]


def test_splits_at_h2_and_keeps_markdown() -> None:
    text = (
        "# My Title\n\nThe introduction paragraph is long enough.\n\n"
        "## First\n\nBody of the first section, with `code` and **bold**.\n\n"
        "## Second\n\n- a list item that is long enough\n- another one\n"
    )
    assert sections(text) == [
        ("My Title", "The introduction paragraph is long enough."),
        ("First", "Body of the first section, with `code` and **bold**."),
        ("Second", "- a list item that is long enough\n- another one"),
    ]


def test_title_precedence_frontmatter_then_h1_then_file_name() -> None:
    body = "Enough body text to make a real chunk here."
    assert (
        chunk_note(f"---\ntitle: From YAML\n---\n# From H1\n{body}", file_stem="f").title
        == "From YAML"
    )
    assert chunk_note(f"# From H1\n{body}", file_stem="f").title == "From H1"
    assert chunk_note(body, file_stem="f").title == "f"


def test_heading_context_has_title_type_tags_and_aliases() -> None:
    text = (
        "---\ntitle: OAuth Token Rotation\ntype: note\ntags: [security, authentication]\n"
        "aliases: [token refresh]\n---\nRotate tokens on a 401 response, keep refresh tokens safe.\n"
    )
    chunk = chunk_note(text, file_stem="x").chunks[0]
    assert chunk.heading_context == (
        "OAuth Token Rotation | note | security, authentication | token refresh"
    )


def test_tags_as_string_with_hashes_and_missing_type() -> None:
    text = "---\ntags: '#k8s #ops, debugging'\n---\n# Pods\nWhen a pod is stuck, look at the events first.\n"
    note = chunk_note(text, file_stem="x")
    assert note.meta.tags == ("k8s", "ops", "debugging")
    assert note.chunks[0].heading_context == "Pods |  | k8s, ops, debugging"


def test_headings_inside_code_fences_are_not_headings() -> None:
    text = (
        "## Setup\n\n```bash\n# install the thing\n## not a section either\nmake install\n```\n\n"
        "~~~~python\n# comment\n~~~\n## still code (short fence does not close)\n~~~~\n"
        "Text after the fences is long enough to keep.\n"
    )
    result = sections(text)
    assert [name for name, _ in result] == ["Setup"]
    assert "## not a section either" in result[0][1]


def test_link_sections_are_skipped_and_configurable() -> None:
    text = (
        "## Body\n\nThe real content of this note is here.\n\n"
        "## Related\n\n- [[Another note]]\n- [[Yet another note]]\n\n"
        "## See Also:\n\n- [[Third note in the list]]\n- [[Fourth]]\n"
    )
    assert [s for s, _ in sections(text)] == ["Body"]
    kept = sections(text, options=ChunkOptions(skip_sections=()))
    assert [s for s, _ in kept] == ["Body", "Related", "See Also:"]


def test_short_sections_are_dropped_but_a_short_note_survives() -> None:
    text = "## Long enough\n\nThis section has more than thirty characters.\n\n## Tiny\n\nok\n"
    assert [s for s, _ in sections(text)] == ["Long enough"]
    only_short = chunk_note("# Stub\n\nTODO\n", file_stem="stub")
    assert [(c.section, c.text) for c in only_short.chunks] == [("Stub", "TODO")]
    assert chunk_note("", file_stem="empty").chunks == ()


def test_long_sections_split_at_h3_then_paragraphs() -> None:
    sentence = "Sentence number {n} talks about vacuum and indexes in some depth."
    body = "\n\n".join(" ".join([sentence.format(n=i)] * 6) for i in range(8))
    text = f"## Tuning\n\nIntro to tuning the database server.\n\n### Autovacuum\n\n{body}\n\n### Indexes\n\nShort H3 text about indexes here, fine.\n"
    result = sections(text)
    names = [name for name, _ in result]
    assert names[0] == "Tuning"
    assert "Tuning › Autovacuum" in names and names[-1] == "Tuning › Indexes"
    assert names.count("Tuning › Autovacuum") >= 2
    assert all(len(t) <= 2000 for _, t in result)
    # Paragraph packing keeps whole paragraphs.
    for name, chunk_text in result:
        if name == "Tuning › Autovacuum":
            assert chunk_text.startswith("Sentence number")
            assert chunk_text.endswith("depth.")


def test_oversized_single_line_is_hard_split_at_spaces() -> None:
    text = "## Huge\n\n" + ("word " * 1000).strip() + "\n"
    result = sections(text)
    assert len(result) >= 3
    assert all(len(t) <= 2000 for _, t in result)
    assert all(not t.startswith(" ") and "wor d" not in t for _, t in result)


def test_bad_frontmatter_keeps_the_note_and_reports_it() -> None:
    broken = "---\ntitle: [unclosed\n---\n# Real Title\nThe body text is still searchable here.\n"
    note = chunk_note(broken, file_stem="x")
    assert note.warning and "not valid YAML" in note.warning
    assert any("still searchable" in c.text for c in note.chunks)
    never_closed = chunk_note("---\ntitle: x\nThe body without a closing fence.\n", file_stem="x")
    assert never_closed.warning and "never closed" in never_closed.warning
    not_a_mapping = chunk_note(
        "---\n- a\n- b\n---\nBody text that is long enough.\n", file_stem="x"
    )
    assert not_a_mapping.warning and "not a mapping" in not_a_mapping.warning


def test_crlf_bom_and_nul_are_normalised() -> None:
    text = "\ufeff# Title\r\n\r\n## Section\r\nBody text\x00 that is long enough.\rSecond line.\r\n"
    result = sections(text)
    assert result == [("Section", "Body text that is long enough.\nSecond line.")]


def test_empty_and_closing_hash_headings() -> None:
    heads = scan_headings(
        ["## Title ##", "### ###", "#no", "####### seven", "   ## indented", "    ## code"]
    )
    assert [(h.level, h.text, h.line) for h in heads] == [
        (2, "Title", 0),
        (3, "", 1),
        (2, "indented", 4),
    ]


# -- properties -------------------------------------------------------------------------------

LINES = st.sampled_from(
    [
        "# Title",
        "## Section",
        "### Sub",
        "#### Deep",
        "## Closing ##",
        "#nospace",
        "   ## three spaces",
        "    ## four spaces",
        "```",
        "```python",
        "````",
        "~~~",
        "~~~~",
        "``` has ` backtick",
        "plain text line",
        "# comment-like text",
        "",
        "",
        "    indented code",
        "***",
    ]
)

_md = MarkdownIt("commonmark")


@settings(max_examples=300, deadline=None)
@given(st.lists(LINES, max_size=40))
def test_headings_match_a_commonmark_parser(lines: list[str]) -> None:
    """Top-level ATX headings found by our line scanner equal markdown-it's."""
    text = "\n".join(lines)
    ours = [(h.line, h.level) for h in scan_headings(text.split("\n"))]
    theirs = [
        (tok.map[0], int(tok.tag[1]))
        for tok in _md.parse(text)
        if tok.type == "heading_open" and tok.level == 0 and tok.markup.startswith("#") and tok.map
    ]
    # Our scanner does not track list or block-quote containers (a heading indented under a list
    # item belongs to the item in CommonMark, to the note for us), so the generator has none.
    assert ours == theirs


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=3000), st.integers(100, 3000), st.integers(0, 60))
def test_chunker_is_total_deterministic_and_bounded(
    text: str, max_chars: int, min_chars: int
) -> None:
    opts = ChunkOptions(max_chars=max_chars, min_chars=min_chars)
    first = chunk_note(text, file_stem="f", options=opts)
    second = chunk_note(text, file_stem="f", options=opts)
    assert first == second
    for i, chunk in enumerate(first.chunks):
        assert chunk.seq == i
        assert len(chunk.text) <= max_chars
        assert chunk.text.strip()


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(alphabet="abc xyz\n", min_size=1, max_size=400), min_size=1, max_size=12))
def test_no_text_is_lost_when_packing(paragraphs: list[str]) -> None:
    """Every word of a long section ends up in some chunk (nothing silently dropped)."""
    body = "\n\n".join(p.strip() or "x" for p in paragraphs)
    text = "## S\n\n" + body
    chunks = chunk_note(
        text, file_stem="f", options=ChunkOptions(max_chars=150, min_chars=0)
    ).chunks
    joined = " ".join(c.text for c in chunks).split()
    assert joined == body.split()


def test_prose_text_leaves_out_code_blocks_and_code_lines() -> None:
    text = (
        "Disk usage of a folder:\n"
        "\n"
        "`du -sh {{path/to/folder}}`\n"
        "\n"
        "```bash\n"
        "du -a | sort -n\n"
        "```\n"
        "\n"
        "Use `du -h` for sizes people can read.\n"
        "~~~\n"
        "no closing fence: the rest is code\n"
    )
    assert prose_text(text) == (
        "Disk usage of a folder:\n\n\n\nUse `du -h` for sizes people can read."
    )


def test_embedding_text_keeps_code_only_when_there_is_nothing_else() -> None:
    assert embedding_text("du", "du", "- Sizes:\n\n`du -sh .`") == "du\n\n- Sizes:"
    only_code = "```\nls -la\n```"
    assert embedding_text("ls", "Example", only_code) == f"ls › Example\n\n{only_code}"


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab `~\n#-")), max_size=200))
def test_prose_text_only_removes_lines(text: str) -> None:
    kept = prose_text(text).split("\n")
    lines = text.split("\n")
    # every kept line is an original line, in the original order
    it = iter(lines)
    assert all(any(line == other for other in it) for line in kept if line)


def test_a_parse_handed_on_is_used_only_for_the_very_text_it_was_parsed_from() -> None:
    from noteseek.core.frontmatter import NoteMeta, ParsedNote, parse_frontmatter

    text = "---\ntitle: From YAML\n---\n# Heading\n\nBody about the quokka.\n"
    meta, body = parse_frontmatter(text)
    assert chunk_note(text, file_stem="n", parsed=ParsedNote(text, meta, body)) == chunk_note(
        text, file_stem="n"
    )
    # A parse of the same text is taken as it is (this is what saves the second YAML parse) ...
    other = ParsedNote(text, NoteMeta(title="Handed on"), body)
    assert chunk_note(text, file_stem="n", parsed=other).title == "Handed on"
    # ... and one of any other text is not: a note with Windows line ends reads as the chunker
    # normalises it.
    windows = text.replace("\n", "\r\n")
    stale = ParsedNote(windows, NoteMeta(title="Stale"), body)
    assert chunk_note(windows, file_stem="n", parsed=stale).title == "From YAML"
