"""Safe note retrieval: path checks, index membership, sections, and scrubbing (fake embedder)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from noteseek import Index
from noteseek.engine.note_access import (
    NoteNotIndexedError,
    NoteUnreadableError,
    SectionNotFoundError,
    UnsafeNotePathError,
    check_note_path,
    extract_section,
    normalise_note_path,
    note_sections,
    read_indexed_note,
)

from .conftest import FakeEmbedder, WriteNotes

# A GitHub token shape the scrubber knows (the fake, rotated value from the sample vault).
TOKEN = "ghp_nSZwgNsFYrSj0Qf7Jn6elSZmGO0BOgztoKsm"

RECIPES = """---
title: Git recipes
tags: [git]
---

# Git recipes

Intro: the rebase situations I run into, with the commands I trust.

## Undo a rebase

Use the reflog and `git reset --hard ORIG_HEAD` to get the branch back.

### With the reflog

Find the entry before "rebase (start)".

## Fixup commits

```bash
## not a heading, this is code inside a fence
git commit --fixup HEAD~2
```

Then `git rebase -i --autosquash`.
"""

SECRETS = f"""# Deploy

## Env

GITHUB_TOKEN={TOKEN}

## Ok

Short.
"""


@pytest.fixture
def indexed(make_vault: WriteNotes, tmp_path: Path, fake_embedder: FakeEmbedder) -> Index:
    vault = make_vault(
        {
            "howto/git.md": RECIPES,
            "deploy.md": SECRETS,
            "other/git.md": "# Other git\n\nA second note named git, about git submodules.\n",
            ".obsidian/hidden.md": "# Hidden\n\nNever indexed: dot-folders are skipped.\n",
            "notes.rtf": "not Markdown, nor a document kind\n",
        }
    )
    outside = tmp_path / "outside.md"
    outside.write_text("# Outside\n\nA private note outside the vault, about the okapi.\n")
    (vault / "outlink.md").symlink_to(outside)
    (vault / "inlink.md").symlink_to(vault / "howto" / "git.md")
    (vault / "linkdir").symlink_to(vault / "howto", target_is_directory=True)
    idx = Index(tmp_path / "i.db", embedder=fake_embedder)
    idx.update(vault)
    return idx


# -- pure path checks ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad",
    [
        "../x.md",
        "howto/../../x.md",
        "howto/..",
        "..\\..\\etc\\passwd.md",
        "/etc/passwd",
        "\\\\server\\share\\x.md",
        "C:\\Users\\x.md",
        "c:x.md",
        "~/notes/x.md",
        "",
        "   ",
        "a\x00b.md",
    ],
)
def test_unsafe_paths_are_refused_before_touching_the_disk(bad: str) -> None:
    with pytest.raises(UnsafeNotePathError):
        normalise_note_path(bad)


@pytest.mark.parametrize(
    ("given", "expected"),
    [("./howto//git.md", "howto/git.md"), (" a/b.md ", "a/b.md"), ("a\\b.md", "a/b.md")],
)
def test_harmless_spellings_are_normalised(given: str, expected: str) -> None:
    assert normalise_note_path(given) == expected


def test_check_note_path_refuses_a_symlinked_file_and_a_symlinked_folder(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    (root / "real").mkdir(parents=True)
    (root / "real" / "n.md").write_text("# N\n")
    (root / "link.md").symlink_to(root / "real" / "n.md")
    (root / "linkdir").symlink_to(root / "real", target_is_directory=True)
    assert check_note_path(root, "real/n.md").st_size == 4
    with pytest.raises(UnsafeNotePathError, match=r"is a symlink.*'real/n\.md'"):
        check_note_path(root, "link.md")
    with pytest.raises(UnsafeNotePathError, match="symlinked folder"):
        check_note_path(root, "linkdir/n.md")


def test_check_note_path_refuses_missing_files_and_folders(tmp_path: Path) -> None:
    (tmp_path / "dir.md").mkdir()
    with pytest.raises(NoteUnreadableError, match="does not exist"):
        check_note_path(tmp_path, "nope.md")
    with pytest.raises(NoteUnreadableError, match="not a regular file"):
        check_note_path(tmp_path, "dir.md")


def test_a_symlink_out_of_the_vault_does_not_name_its_target(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    root.mkdir()
    (tmp_path / "private.md").write_text("x")
    (root / "out.md").symlink_to(tmp_path / "private.md")
    with pytest.raises(UnsafeNotePathError) as caught:
        check_note_path(root, "out.md")
    assert "private" not in str(caught.value)


# -- sections (pure) -------------------------------------------------------------------------------


def test_sections_are_named_as_search_names_them() -> None:
    assert note_sections(RECIPES) == (
        "Git recipes",
        "Undo a rebase",
        "Undo a rebase › With the reflog",
        "Fixup commits",
    )


def test_an_h2_section_includes_its_h3_and_stops_at_the_next_h2() -> None:
    text = extract_section(RECIPES, "undo  A REBASE")
    assert text.startswith("## Undo a rebase")
    assert "Find the entry" in text
    assert "Fixup" not in text


@pytest.mark.parametrize("name", ["Undo a rebase › With the reflog", "With the reflog"])
def test_an_h3_section_is_found_by_its_search_name_or_its_own(name: str) -> None:
    assert extract_section(RECIPES, name) == (
        '### With the reflog\n\nFind the entry before "rebase (start)".'
    )


def test_the_preamble_is_the_section_named_after_the_title() -> None:
    text = extract_section(RECIPES, "Git recipes")
    assert "Intro: the rebase situations" in text
    assert "## Undo" not in text


def test_a_heading_inside_fenced_code_is_not_a_section() -> None:
    with pytest.raises(SectionNotFoundError) as caught:
        extract_section(RECIPES, "not a heading, this is code inside a fence")
    assert caught.value.available == note_sections(RECIPES)
    assert "'Fixup commits'" in str(caught.value)
    assert "autosquash" in extract_section(RECIPES, "Fixup commits")


# -- reading from an index -------------------------------------------------------------------------


def test_reads_an_indexed_note_with_its_frontmatter_and_sections(indexed: Index) -> None:
    note = read_indexed_note(indexed._store, "howto/git.md")
    assert note.text.startswith("---\ntitle: Git recipes")
    assert note.title == "Git recipes"
    assert "Undo a rebase › With the reflog" in note.sections
    assert note.section is None
    assert not note.changed_since_indexed


def test_reads_one_section_under_its_canonical_name(indexed: Index) -> None:
    note = read_indexed_note(indexed._store, "howto/git", section="with the reflog")
    assert note.path == "howto/git.md"  # the missing extension is added
    assert note.section == "Undo a rebase › With the reflog"
    assert note.text.startswith("### With the reflog")


def test_section_not_found_lists_the_sections(indexed: Index) -> None:
    with pytest.raises(SectionNotFoundError, match="'Undo a rebase'"):
        read_indexed_note(indexed._store, "howto/git.md", section="Nope")


def test_secrets_are_scrubbed_in_the_whole_note_and_in_a_section(indexed: Index) -> None:
    note = read_indexed_note(indexed._store, "deploy.md")
    assert TOKEN not in note.text
    assert "GITHUB_TOKEN=[REDACTED:github-token]" in note.text
    assert note.redacted == 1
    section = read_indexed_note(indexed._store, "deploy.md", section="Env")
    assert TOKEN not in section.text
    assert "[REDACTED:github-token]" in section.text


@pytest.mark.parametrize(
    "path", [".obsidian/hidden.md", "notes.rtf", "never-existed.md", "outlink.md"]
)
def test_files_the_index_does_not_hold_are_refused(indexed: Index, path: str) -> None:
    with pytest.raises(NoteNotIndexedError, match="not an indexed note") as caught:
        read_indexed_note(indexed._store, path)
    # Whole sentences, with or without a suggestion: "... note. Use search", "...? Use search".
    assert re.search(r"[.?] Use search to find notes by content", str(caught.value))


def test_a_symlink_leading_out_of_the_vault_is_refused_and_its_target_not_read(
    indexed: Index,
) -> None:
    with pytest.raises(NoteNotIndexedError, match="skipped: symlink points outside") as caught:
        read_indexed_note(indexed._store, "outlink.md")
    assert "okapi" not in str(caught.value)


def test_an_indexed_symlinked_note_is_refused_with_its_real_path(indexed: Index) -> None:
    # The indexer reads a symlinked note whose target is inside the vault; get_note does not.
    with pytest.raises(UnsafeNotePathError, match=r"is a symlink.*'howto/git\.md'"):
        read_indexed_note(indexed._store, "inlink.md")


def test_a_path_through_a_symlinked_folder_is_refused(indexed: Index) -> None:
    with pytest.raises((UnsafeNotePathError, NoteNotIndexedError)):
        read_indexed_note(indexed._store, "linkdir/git.md")
    root = Path(indexed._store.get_meta("vault_root") or "")
    with pytest.raises(UnsafeNotePathError, match="symlinked folder"):
        check_note_path(root, "linkdir/git.md")


def test_a_note_not_found_suggests_notes_with_the_same_file_name(indexed: Index) -> None:
    with pytest.raises(NoteNotIndexedError) as caught:
        read_indexed_note(indexed._store, "git.md")
    assert "'howto/git.md'" in str(caught.value)
    assert "'other/git.md'" in str(caught.value)
    assert "noteseek index" in str(caught.value)


def test_a_new_file_is_not_indexed_until_the_next_run(indexed: Index) -> None:
    root = Path(indexed._store.get_meta("vault_root") or "")
    (root / "new.md").write_text("# New\n\nWritten after the last run.\n")
    with pytest.raises(NoteNotIndexedError, match="run 'noteseek index"):
        read_indexed_note(indexed._store, "new.md")


def test_a_changed_note_is_read_fresh_scrubbed_and_flagged(indexed: Index) -> None:
    root = Path(indexed._store.get_meta("vault_root") or "")
    path = root / "howto" / "git.md"
    path.write_text(RECIPES + f"\n## New\n\ntoken: {TOKEN}\n")
    os.utime(path, ns=(1, 1))
    note = read_indexed_note(indexed._store, "howto/git.md", section="New")
    assert note.changed_since_indexed
    assert TOKEN not in note.text and "[REDACTED:" in note.text


def test_a_deleted_note_says_to_update_the_index(indexed: Index) -> None:
    root = Path(indexed._store.get_meta("vault_root") or "")
    (root / "deploy.md").unlink()
    with pytest.raises(NoteUnreadableError, match="noteseek index"):
        read_indexed_note(indexed._store, "deploy.md")


def test_an_empty_index_says_to_index_first(tmp_path: Path, fake_embedder: FakeEmbedder) -> None:
    with Index(tmp_path / "empty.db", embedder=fake_embedder) as idx:
        with pytest.raises(NoteNotIndexedError, match="noteseek index"):
            read_indexed_note(idx._store, "a.md")


def test_a_section_search_shows_cut_reads_back(tmp_path: Path) -> None:
    """A heading longer than the index keeps (core/field_caps.py) is found by the name search
    shows for it, as well as by its full text."""
    from noteseek import Index
    from noteseek.core.field_caps import NAME_CHARS

    from .conftest import FakeEmbedder

    heading = " ".join(f"word{i}" for i in range(200))
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "n.md").write_text(f"# N\n\n## {heading}\n\nThe capybara section text here.\n")
    with Index(tmp_path / "i.db", embedder=FakeEmbedder()) as idx:
        idx.update(vault)
        shown = idx.search("capybara", mode="bm25")[0].section
        assert len(shown) <= NAME_CHARS < len(heading) and heading.startswith(shown)
        assert "capybara" in idx.read_note("n.md", section=shown).text
        assert "capybara" in idx.read_note("n.md", section=heading).text
