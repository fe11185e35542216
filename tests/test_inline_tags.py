"""Inline #tags: what Obsidian counts as a tag, and that the tag filters find notes by them."""

from __future__ import annotations

from pathlib import Path

from noteseek import Index
from noteseek.core.inline_tags import inline_tags
from tests.conftest import FakeEmbedder, WriteNotes


def test_what_counts_as_an_inline_tag() -> None:
    text = (
        "---\ntags: [front]\ncolor: '#fff'\n---\n"
        "# A heading, not a tag\n"
        "Aphids on the roses #garden #pests, again #Garden.\n"
        "See https://example.org/page#anchor and [the part](#part); issue #2024 is a number,\n"
        "#2024-review is a tag, so is #project/alpha/ and #café.\n"
        "`#in-code` is code.\n"
        "```\n#fenced\n```\n"
        "~~~~\n#also-fenced\n~~~\n#still-fenced\n~~~~\n"
        "#after"
    )
    assert inline_tags(text) == [
        "garden", "pests", "Garden", "2024-review", "project/alpha", "café", "after",
    ]
    assert inline_tags("no tags here") == []
    assert inline_tags("---\nunclosed frontmatter #x\n") == ["x"]


def test_the_tag_filter_finds_notes_by_their_inline_tags(
    make_vault: WriteNotes, tmp_path: Path
) -> None:
    vault = make_vault(
        {
            "garden/aphids.md": "# Aphids\n\nGreen insects on the roses in June.\n\n#garden #pests\n",
            "garden/roses.md": "---\ntags: [garden]\n---\n# Roses\n\nPrune the roses in March.\n",
            "bike/tubeless.md": "# Tubeless\n\nSealant every few months. #bike\n\n```\n#pests\n```\n",
        }
    )
    with Index(tmp_path / "i.db", embedder=FakeEmbedder()) as idx:
        idx.update(vault)
        pests = {h.path for h in idx.search("insects roses sealant", tags=["pests"], min_answer=0)}
        assert pests == {"garden/aphids.md"}
        garden = {h.path for h in idx.search("roses", tags=["garden"], min_answer=0)}
        assert garden == {"garden/aphids.md", "garden/roses.md"}
        assert idx.unknown_filters(tags=["bike"]) == ()
