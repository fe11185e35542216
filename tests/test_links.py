"""Links: the parser and resolver (pure), and backlinks/outlinks through the index on both
backends, kept current by incremental updates (edits, deletions, renames, notes added later)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from noteseek import Index
from noteseek.core.links import file_key, link_key, parse_links, resolve_link
from noteseek.errors import NoteNotIndexedError

from .backends import Backend
from .conftest import FakeEmbedder, WriteNotes


def targets(text: str) -> list[tuple[str, str, str]]:
    return [(k.target, k.fragment, k.kind) for k in parse_links(text)]


def test_wiki_links_embeds_fragments_and_shown_text() -> None:
    text = (
        "See [[Alpha]] and [[beta|the Beta]], ![[Gamma#Part two]]\n"
        "| a | [[Delta\\|shown]] |\n"
        "block: [[Eps#^abc123]] and [[#Only here]]"
    )
    assert targets(text) == [
        ("Alpha", "", "wiki"),
        ("beta", "", "wiki"),
        ("Gamma", "#Part two", "embed"),
        ("Delta", "", "wiki"),
        ("Eps", "#^abc123", "wiki"),
    ]
    assert [k.line for k in parse_links(text)] == [1, 1, 1, 2, 3]
    assert (
        parse_links(text)[0].context == "See [[Alpha]] and [[beta|the Beta]], ![[Gamma#Part two]]"
    )


def test_markdown_links_to_vault_files_only() -> None:
    text = (
        "[one](notes/One.md) [web](https://example.org/x.md) [mail](mailto:a@b.c)\n"
        '[two](<My Two.md#Sec>) [three](My%20Three.md "title") ![img](pics/a.png) [here](#top)'
    )
    assert targets(text) == [
        ("notes/One.md", "", "markdown"),
        ("My Two.md", "#Sec", "markdown"),
        ("My Three.md", "", "markdown"),
        ("pics/a.png", "", "markdown"),
    ]


def test_code_and_comments_hold_no_links() -> None:
    text = (
        "```\n[[InFence]]\n```\n"
        "`[[InCode]]` real [[Real]]\n"
        "%% [[InComment]]\nstill comment [[Hidden]] %% after [[After]]\n"
        "~~~md\n[[Tilde]]\n~~~\n[[Last]]"
    )
    assert [t for t, _, _ in targets(text)] == ["Real", "After", "Last"]


def test_frontmatter_links_count() -> None:
    text = '---\nrelated: "[[Other Note]]"\n---\n# T\n'
    assert targets(text) == [("Other Note", "", "wiki")]


def test_long_line_context_keeps_the_link() -> None:
    line = "word " * 200 + "[[Target]]" + " tail" * 200
    (link,) = parse_links(line)
    assert "[[Target]]" in link.context
    assert len(link.context) <= 302


@given(st.text(max_size=300))
def test_parser_never_raises(text: str) -> None:
    for link in parse_links(text):
        assert link.target and link.key == link_key(link.target)


def test_keys_fold_case_and_md_suffix() -> None:
    assert file_key("A/My Note.md") == "my note" == link_key("sub/MY NOTE.md")
    assert file_key("docs/Scan.PDF") == "scan.pdf" == link_key("Scan.pdf")


def test_resolution_like_obsidian() -> None:
    paths = ["Note.md", "a/Note.md", "a/b/Note.md", "c/Note.md"]
    # A bare name: the file at the root (an exact path) first.
    assert resolve_link("note", "x/y.md", paths) == "Note.md"
    others = paths[1:]
    # Else the one in the source's folder, else the shortest path.
    assert resolve_link("Note", "c/src.md", others) == "c/Note.md"
    assert resolve_link("Note", "z/src.md", others) in ("a/Note.md", "c/Note.md")
    assert resolve_link("Note", "z/src.md", others) == "a/Note.md"  # then by path
    # Folders in the link narrow it down, case-insensitively.
    assert resolve_link("B/note", "z/src.md", others) == "a/b/Note.md"
    assert resolve_link("a/b/Note.md", "z/src.md", others) == "a/b/Note.md"
    # Relative to the source's folder.
    assert resolve_link("../Note", "a/b/src.md", others) == "a/Note.md"
    assert resolve_link("../../../Note", "a/src.md", others) is None
    # Unresolved, then by alias.
    assert resolve_link("Missing", "z.md", []) is None
    assert resolve_link("Missing", "z.md", [], aliased=["q/Has Alias.md"]) == "q/Has Alias.md"


# -- through the index, on both backends -----------------------------------------------------


def _vault(make_vault: WriteNotes) -> Path:
    return make_vault(
        {
            "Hub.md": "---\naliases: [The Hub]\n---\n# Hub\n\nThe centre of things.\n",
            "a/One.md": "# One\n\nLinks to [[Hub]] here.\n\nAnd [[Hub#Section|again]] there.\n",
            "a/Two.md": "# Two\n\n![[hub]] embedded, [[Missing note]] not.\n",
            "b/Three.md": "# Three\n\nBy alias: [[The Hub]]. Markdown: [x](../Hub.md)\n",
            "b/Four.md": "# Four\n\nNo links here, only `[[Hub]]` in code.\n",
        }
    )


def test_backlinks_and_outlinks(backend: Backend, make_vault: WriteNotes) -> None:
    vault = _vault(make_vault)
    with Index(backend.locator, embedder=FakeEmbedder()) as idx:
        idx.update(vault)
        links = idx.links("Hub.md")
        assert [(b.path, b.line) for b in links.backlinks] == [
            ("a/One.md", 3),
            ("a/One.md", 5),
            ("a/Two.md", 3),
            ("b/Three.md", 3),
        ]
        assert links.backlinks[0].text == "Links to [[Hub]] here."
        two = idx.links("a/Two.md")
        assert [(o.target, o.path) for o in two.outlinks] == [
            ("hub", "Hub.md"),
            ("Missing note", None),
        ]
        assert idx.links("Hub").note == "Hub.md"  # a note's name works too
        assert idx.links("Hub").to_json()["backlinks"][0] == {
            "path": "a/One.md",
            "line": 3,
            "text": "Links to [[Hub]] here.",
        }
        with pytest.raises(NoteNotIndexedError, match="not an indexed note"):
            idx.links("Nowhere.md")


def test_each_backlink_shows_its_line_whether_stored_or_found_in_the_chunks(
    backend: Backend, make_vault: WriteNotes
) -> None:
    long = "word " * 100 + "[[Hub]]" + " tail" * 100
    source = (
        '---\nup: "[[Hub]]"\n---\n# A\n\nBody line with [[Hub]] in it.\n\n'
        f"{long}\n\n## See also\n\n- [[Hub]] the hub\n"
    )
    vault = make_vault({"Hub.md": "# Hub\n\nThe centre.\n", "a.md": source})
    with Index(backend.locator, embedder=FakeEmbedder()) as idx:
        idx.update(vault)
        expected = [(k.line, k.context) for k in parse_links(source)]
        assert len(expected) == 4
        assert [(b.line, b.text) for b in idx.links("Hub.md").backlinks] == expected
        if backend.name == "sqlite":
            # The body's lines (the long one as the piece shown) are chunk text: kept as a place
            # in the chunks (schema m011); the frontmatter's and the skipped See also section's
            # are not, so they are stored as text.
            rows = idx._store.conn.db.execute(
                "SELECT line, context IS NULL, target IS NULL FROM links ORDER BY rowid"
            ).fetchall()
            assert rows == [(2, 0, 0), (6, 1, 1), (8, 1, 1), (12, 0, 0)]
        assert [(o.target, o.path) for o in idx.links("a.md").outlinks] == [("Hub", "Hub.md")]


def test_links_follow_edits_deletions_renames_and_new_notes(
    backend: Backend, make_vault: WriteNotes
) -> None:
    vault = _vault(make_vault)
    with Index(backend.locator, embedder=FakeEmbedder()) as idx:
        idx.update(vault)
        assert idx.links("a/Two.md").outlinks[1].path is None
        # A note that appears later resolves the link made before it.
        (vault / "Missing note.md").write_text("# Missing note\n\nNow here.\n", encoding="utf-8")
        (vault / "a" / "One.md").write_text("# One\n\nNo more links.\n", encoding="utf-8")
        (vault / "b" / "Three.md").unlink()
        idx.update(vault)
        assert idx.links("a/Two.md").outlinks[1].path == "Missing note.md"
        assert [b.path for b in idx.links("Missing note.md").backlinks] == ["a/Two.md"]
        assert [b.path for b in idx.links("Hub.md").backlinks] == ["a/Two.md"]
        # A rename: links to the old name no longer resolve; to the new one they do.
        (vault / "Hub.md").rename(vault / "c.md")
        (vault / "b" / "Four.md").write_text("# Four\n\nSee [[c]].\n", encoding="utf-8")
        idx.update(vault)
        assert idx.links("a/Two.md").outlinks[0].path is None
        assert [b.path for b in idx.links("c.md").backlinks] == ["b/Four.md"]


def test_related_notes_by_meaning_links_and_tags(backend: Backend, make_vault: WriteNotes) -> None:
    vault = make_vault(
        {
            "a.md": "---\ntags: [garden]\n---\n# Tomatoes\n\nTomatoes need sun, water and rich soil.\n",
            "b.md": "---\ntags: [garden]\n---\n# Peppers\n\nPeppers need sun, water and warm soil.\n",
            "c.md": "# Kernel\n\nThe scheduler assigns threads to cores by priority.\n",
            "d.md": "# Links only\n\nSee [[a]] for the details about soil.\n",
            "e.md": "# Unrelated\n\nInvoices are due at the end of the month.\n",
        }
    )
    with Index(backend.locator, embedder=FakeEmbedder()) as idx:
        idx.update(vault)
        hits = idx.related("a.md", limit=3)
        paths = [h.path for h in hits]
        assert "a.md" not in paths
        assert len(paths) == 3 and len(set(paths)) == 3
        assert paths[0] == "b.md"  # shares words and the tag
        assert "d.md" in paths  # links to it
        assert all(h.score >= (h.cosine or 0.0) for h in hits)
        assert [h.path for h in idx.related("a", limit=1)] == ["b.md"]  # by name too
        with pytest.raises(NoteNotIndexedError):
            idx.related("nowhere.md")
        with pytest.raises(ValueError):
            idx.related("a.md", limit=0)


def test_a_note_of_nothing_but_links_keeps_a_bounded_number() -> None:
    """Each link costs a row with its context: a note of 60,000 links on one line keeps at most
    MAX_LINKS_PER_NOTE of them, and a Markdown link inside a wiki link's span is still not one
    (checked by bisecting the line's wiki spans, not by scanning them per Markdown link)."""
    from noteseek.core.links import MAX_LINKS_PER_NOTE, parse_links

    line = " ".join(["[[a]]", "[x](b.md)"] * 30_000)
    links = parse_links(line)
    assert len(links) == MAX_LINKS_PER_NOTE
    assert {link.kind for link in links} == {"wiki", "markdown"}
    inside = parse_links("[[a]](b.md) and [c](d.md)")
    assert [(link.kind, link.target) for link in inside] == [("wiki", "a"), ("markdown", "d.md")]
