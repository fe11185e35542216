"""Moving items: never overwrite, never lose a file, and undo every move exactly."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from noteseek.intake import moves
from noteseek.intake.moves import insert_block, move_file, remove_block, unique_name


def test_unique_name_never_reuses_an_existing_name(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("x")
    (tmp_path / "a (2).md").write_text("y")
    assert unique_name(tmp_path, "a.md") == tmp_path / "a (3).md"
    assert unique_name(tmp_path, "b.md") == tmp_path / "b.md"
    assert unique_name(tmp_path, "noext") == tmp_path / "noext"


def test_move_on_a_name_clash_keeps_both_notes(tmp_path: Path) -> None:
    src = tmp_path / "inbox" / "note.md"
    src.parent.mkdir()
    src.write_text("new note")
    folder = tmp_path / "vault" / "dom"
    folder.mkdir(parents=True)
    (folder / "note.md").write_text("old note")
    target = move_file(src, folder, "note.md")
    assert target == folder / "note (2).md"
    assert (folder / "note.md").read_text() == "old note"
    assert target.read_text() == "new note"
    assert not src.exists()


def test_move_with_new_bytes_writes_them_and_removes_the_source(tmp_path: Path) -> None:
    src = tmp_path / "a.md"
    src.write_bytes(b"old")
    target = move_file(src, tmp_path / "out", "a.md", data=b"new")
    assert target.read_bytes() == b"new" and not src.exists()
    assert not list((tmp_path / "out").glob(".intake-*"))  # no temp file left behind


def test_move_without_hard_links_copies_and_still_never_overwrites(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_links(a: object, b: object) -> None:
        raise OSError(errno.EXDEV, "cross-device link")

    monkeypatch.setattr(moves.os, "link", no_links)
    src = tmp_path / "a.md"
    src.write_text("mine")
    folder = tmp_path / "dom"
    folder.mkdir()
    (folder / "a.md").write_text("theirs")
    target = move_file(src, folder, "a.md")
    assert target == folder / "a (2).md" and target.read_text() == "mine"
    assert (folder / "a.md").read_text() == "theirs"
    assert not src.exists()


def test_a_failed_move_leaves_the_source_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(a: object, b: object) -> None:
        raise OSError(errno.EIO, "I/O error")

    monkeypatch.setattr(moves.os, "link", broken)
    src = tmp_path / "a.md"
    src.write_text("keep me")
    with pytest.raises(OSError):
        move_file(src, tmp_path / "dom", "a.md")
    assert src.read_text() == "keep me"


@pytest.mark.parametrize(
    "original",
    [
        b"# Title\n\nbody\n",
        b"---\ntitle: T\ntags: [a]\n---\n# Title\nbody\n",
        b"---\r\ntitle: T\r\n---\r\nbody\r\n",
        b"\xef\xbb\xbf---\ntitle: T\n---\nbody\n",
        b"",
    ],
)
def test_insert_block_round_trips_exactly(original: bytes) -> None:
    from noteseek.core.frontmatter import parse_frontmatter

    data, inserted, offset = insert_block(original, {"proposed_domain": "web/api", "total": 0.47})
    meta, _ = parse_frontmatter(data.decode("utf-8-sig").replace("\r\n", "\n"))
    assert meta.raw["intake"]["proposed_domain"] == "web/api"
    if original.lstrip(b"\xef\xbb\xbf").startswith(b"---"):
        assert meta.raw["title"] == "T"  # the existing frontmatter is kept
    assert remove_block(data, inserted, offset) == original


def test_remove_block_refuses_an_edited_block() -> None:
    data, inserted, offset = insert_block(b"body\n", {"total": 0.5})
    edited = data.replace(b"0.5", b"0.9")
    assert remove_block(edited, inserted, offset) is None


def test_interrupted_move_leaves_the_file_under_both_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = tmp_path / "a.md"
    src.write_text("x")

    def crash(path: Path) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(Path, "unlink", crash)
    with pytest.raises(KeyboardInterrupt):
        move_file(src, tmp_path / "dom", "a.md")
    monkeypatch.undo()
    assert src.read_text() == "x"
    assert (tmp_path / "dom" / "a.md").read_text() == "x"
    assert os.path.samefile(src, tmp_path / "dom" / "a.md")
