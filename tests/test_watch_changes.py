"""The pure side of the watcher: the vault walk's rules one path at a time, and event classification."""

from __future__ import annotations

from pathlib import Path

import pytest

from noteseek.core.vault_rules import VaultRules
from noteseek.engine.vault_walk import walk_vault
from noteseek.watch.changes import ChangeBatch, PathChange, classify, is_editor_temp

FILES = [
    "a.md",
    "UPPER.MD",
    ".hidden.md",
    "readme.txt",
    "notes/n.md",
    "notes/deep/d.md",
    "notes/.hidden/h.md",
    ".obsidian/o.md",
    ".trash/t.md",
    "drafts/x.md",
    "notes/drafts/y.md",
    "archive/2020/old.md",
    "archive/2021/kept.md",
    "private/p.md",
    "private/sub/q.md",
    "projects/alpha/a.md",
    "projects/beta/b.md",
    "notes/manual.PDF",
    "projects/alpha/deck.pptx",
    "drafts/sheet.xlsx",
    "notes/.hidden.pdf",
    "notes/drawing.excalidraw.md",
    "notes/image.png",
]


@pytest.mark.parametrize(
    ("include", "exclude"),
    [
        ((), (".obsidian", ".trash", ".git")),
        ((), ("drafts", "archive/2020")),
        (("notes", "projects/al*"), ("deep",)),
        (("archive",), ()),
    ],
)
def test_rules_agree_with_the_vault_walk(
    tmp_path: Path, include: tuple[str, ...], exclude: tuple[str, ...]
) -> None:
    for rel in FILES:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("# note\n")
    (tmp_path / "private" / ".noteseekignore").write_text("")
    notes, _ = walk_vault(tmp_path, include=include, exclude=exclude)
    walked = {n.rel_path for n in notes}
    rules = VaultRules(include=include, exclude=exclude)
    # The marker is the one rule that needs the disk; the watcher checks it separately.
    by_rules = {p for p in FILES if rules.is_note_path(p) and not p.startswith("private/")}
    assert by_rules == walked


@pytest.mark.parametrize(
    "name",
    ["a.md~", ".a.md.swp", ".a.md.swx", "a.md.tmp", "4913", "5036", "#a.md#", ".#a.md", "~$a.docx"],
)
def test_editor_temp_names(name: str) -> None:
    assert is_editor_temp(name)


@pytest.mark.parametrize("name", ["a.md", "2024", "4914", "notes", "v1.2"])
def test_not_editor_temp_names(name: str) -> None:
    assert not is_editor_temp(name)


def _classify(*changes: PathChange, marked: frozenset[str] = frozenset()) -> ChangeBatch:
    return classify(
        changes, VaultRules(exclude=(".obsidian", "drafts")), marked=marked.__contains__
    )


def test_notes_are_named_whatever_the_event() -> None:
    batch = _classify(
        PathChange("n/a.md", gone=False, modified=True),
        PathChange("n/b.md", gone=True),
        PathChange("c.MD", gone=False),
    )
    assert batch.notes == {"n/a.md", "n/b.md", "c.MD"}
    assert batch.folders == frozenset()
    assert batch.events == 3


def test_ignored_paths() -> None:
    batch = _classify(
        PathChange(".obsidian/workspace.json", gone=False),
        PathChange(".obsidian/plugins", gone=False, is_dir=True),
        PathChange("drafts/x.md", gone=False),
        PathChange("n/.hidden", gone=False, is_dir=True),
        PathChange("n/4913", gone=True),
        PathChange("n/a.md~", gone=True),
        PathChange("n/sound.mp3", gone=False),
        PathChange("n", gone=False, is_dir=True, modified=True),
        PathChange("secret/s.md", gone=False),
        PathChange("", gone=False, is_dir=True),
        marked=frozenset({"secret"}),
    )
    assert not batch
    assert batch.events == 10


def test_folders_that_came_or_went_are_rechecked_whole() -> None:
    batch = _classify(
        PathChange("moved-in", gone=False, is_dir=True),
        PathChange("moved-in/x.md", gone=False),
        PathChange("moved-in/sub", gone=False, is_dir=True),
        PathChange("2024", gone=True),  # gone: a folder moved out, or a file; the index knows
        PathChange("n/.noteseekignore", gone=False),
        PathChange("n/a.md", gone=False),
        PathChange("other.md", gone=False),
    )
    assert batch.folders == {"moved-in", "2024", "n"}
    assert batch.notes == {"other.md"}


def test_whole_vault_batches_absorb_everything() -> None:
    full = ChangeBatch.whole_vault("switched to polling")
    merged = full.merged(ChangeBatch(notes=frozenset({"a.md"}), events=1))
    assert merged.full and merged.notes == frozenset() and merged.reason == "switched to polling"
    plain = ChangeBatch(folders=frozenset({"a"}), events=1).merged(
        ChangeBatch(notes=frozenset({"a/x.md", "b.md"}), folders=frozenset({"a/b"}), events=2)
    )
    assert (plain.notes, plain.folders, plain.events) == ({"b.md"}, {"a"}, 3)
    assert not plain.full


def test_documents_are_indexed_paths_unless_documents_are_off() -> None:
    on, off = VaultRules(), VaultRules(documents=False)
    assert on.file_kind("Manual.PDF") == "pdf" and on.file_kind("x.excalidraw.md") == "excalidraw"
    assert on.file_kind("x.md") == "note" and off.file_kind("x.md") == "note"
    assert off.file_kind("Manual.pdf") is None and off.file_kind("x.excalidraw.md") is None
    assert on.file_kind("image.png") == "image" and off.file_kind("image.png") is None
    assert on.file_kind("sound.mp3") is None and on.file_kind(".x.pdf") is None
    assert on.is_note_path("notes/deck.pptx") and not off.is_note_path("notes/deck.pptx")
    assert not on.is_note_path(".obsidian/plugins/readme.txt")
