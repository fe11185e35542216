"""Remembered folder listings (engine/folder_listings.py): a whole pass that takes unchanged
folders from memory finds exactly what a walk that lists every folder finds, after every kind of
edit; a folder changed too recently is never remembered; no name the index refuses is stored."""

from __future__ import annotations

import os
import random
import time
from pathlib import Path

import pytest

import noteseek
from noteseek.engine import folder_listings, vault_walk
from noteseek.engine.folder_listings import FolderListings
from noteseek.engine.vault_walk import walk_vault
from noteseek.settings import DEFAULT_EXCLUDE
from noteseek.storage import meta
from tests.conftest import FakeEmbedder
from tests.test_secrets_in_db import NAME_SECRET
from tests.test_targeted_update import Edits, make_vault

RULES = {"exclude": (".obsidian",)}


@pytest.fixture
def settled_now(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every folder counts as settled: the tests edit right after a walk, where the real margin
    (2 s) would keep each folder out of memory and leave nothing to test."""
    monkeypatch.setattr(folder_listings, "SETTLED_NS", -10_000_000_000)


def _remembered_walk(
    root: Path, old: dict[str, folder_listings.Listing]
) -> tuple[list[vault_walk.NoteFile], list[tuple[str, str]], FolderListings]:
    memory = FolderListings(old=old, started_ns=time.time_ns())
    notes, passed_over = walk_vault(root, remembered=memory, **RULES)  # type: ignore[arg-type]
    return notes, passed_over, memory


@pytest.mark.parametrize("seed", range(8))
def test_a_remembered_walk_finds_what_listing_every_folder_finds(
    tmp_path: Path, seed: int, settled_now: None
) -> None:
    root = tmp_path / "vault"
    rng = random.Random(seed)
    make_vault(root, rng)
    old: dict[str, folder_listings.Listing] = {}
    hits = 0
    for round_ in range(6):
        notes, passed_over, memory = _remembered_walk(root, old)
        assert (notes, passed_over) == walk_vault(root, **RULES), round_  # type: ignore[arg-type]
        hits += memory.hits
        old = folder_listings.indexed_only(memory.found, (n.rel_path for n in notes))
        # Through the stored form, as the index keeps it.
        context = folder_listings.context_of(str(root.resolve()), (), RULES["exclude"], True)
        assert folder_listings.decode(folder_listings.encode(old, context), context) == old
        time.sleep(0.02)  # a later change gets later stamps on any clock
        Edits(root, rng).apply(rng.randint(1, 8))
    assert hits > 0  # memory was used, not only filled

    # Unchanged: every remembered folder is taken from memory, and the result is still the same.
    notes, _, memory = _remembered_walk(root, old)  # takes in the last round's edits
    old = folder_listings.indexed_only(memory.found, (n.rel_path for n in notes))
    notes, passed_over, memory = _remembered_walk(root, old)
    assert (notes, passed_over) == walk_vault(root, **RULES)  # type: ignore[arg-type]
    assert memory.hits == len(old) > 0


def test_each_kind_of_change_to_a_remembered_folder_is_seen(
    tmp_path: Path, settled_now: None
) -> None:
    root = tmp_path / "vault"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "one.md").write_text("# one\n")
    (root / "a" / "b" / "two.md").write_text("# two\n")
    notes, _, memory = _remembered_walk(root, {})
    old = folder_listings.indexed_only(memory.found, (n.rel_path for n in notes))
    assert set(old) == {"", "a", "a/b"}

    def walked() -> list[str]:
        time.sleep(0.02)
        found, passed_over, _ = _remembered_walk(root, old)
        assert (found, passed_over) == walk_vault(root)
        return [n.rel_path for n in found]

    (root / "a" / "one.md").write_text(
        "# one, longer now\n"
    )  # in place: the folder keeps its stamps
    assert walked() == ["a/b/two.md", "a/one.md"]
    (root / "a" / "new.md").write_text("# new\n")
    assert walked() == ["a/b/two.md", "a/new.md", "a/one.md"]
    (root / "a" / "b" / "two.md").rename(root / "a" / "b" / "deux.md")
    assert "a/b/deux.md" in walked()
    (root / "a" / "b" / ".noteseekignore").write_text("")
    assert walked() == ["a/new.md", "a/one.md"]
    (root / "a" / "one.md").unlink()
    (root / "a" / "one.md").symlink_to(root / "a" / "new.md")  # a link to a note in the vault
    assert walked() == ["a/new.md", "a/one.md"]


def test_a_folder_changed_within_the_margin_is_not_remembered(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    (root / "a").mkdir(parents=True)
    (root / "a" / "one.md").write_text("# one\n")
    _, _, memory = _remembered_walk(root, {})
    assert memory.found == {}  # created just now: a change in the same tick could go unseen
    st = os.stat(root / "a")
    assert not folder_listings.settled(st, time.time_ns())
    assert folder_listings.settled(st, time.time_ns() + folder_listings.SETTLED_NS + 10**9)


def test_a_record_that_cannot_be_read_or_is_of_another_vault_is_ignored() -> None:
    listing = ("1:2:3:4", ("b",), ("x.md",))
    context = folder_listings.context_of("/v", (), (".obsidian",), True)
    text = folder_listings.encode({"": listing}, context)
    assert folder_listings.decode(text, context) == {"": listing}
    other = folder_listings.context_of("/v", (), (".obsidian", "drafts"), True)
    assert folder_listings.decode(text, other) == {}
    for garbled in ("", "not base64!", "AAAA", text[:-8] + "AAAAAAAA"):
        assert folder_listings.decode(garbled, context) == {}


def test_names_with_a_tab_or_line_break_are_never_recorded(
    tmp_path: Path, settled_now: None
) -> None:
    root = tmp_path / "vault"
    (root / "odd\tname").mkdir(parents=True)
    (root / "odd\tname" / "n.md").write_text("# n\n")
    (root / "plain").mkdir()
    (root / "plain" / "line\nbreak.md").write_text("# n\n")
    (root / "plain" / "ok.md").write_text("# ok\n")
    notes, _, memory = _remembered_walk(root, {})
    assert len(notes) == 3
    assert set(memory.found) == set()  # the vault (a tab in a subfolder), plain (a line break)


def _scandirs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    real = os.scandir

    def counting(path: str) -> object:
        calls.append(path)
        return real(path)

    monkeypatch.setattr(vault_walk.os, "scandir", counting)  # os itself: any caller counts
    return calls


def test_an_update_after_a_whole_pass_lists_no_unchanged_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settled_now: None
) -> None:
    vault = tmp_path / "vault"
    make_vault(vault, random.Random(3))
    with noteseek.Index(tmp_path / "i.db", embedder=FakeEmbedder()) as idx:
        idx.update(vault)
        assert idx._store.get_meta(meta.FOLDER_LISTINGS)
        calls = _scandirs(monkeypatch)
        stats = idx.update(vault)
        assert (stats.added, stats.changed, stats.removed) == (0, 0, 0)
        assert calls == []  # every folder from memory
        time.sleep(0.02)
        (vault / "f0" / "n0.md").write_text("# edited in place\n\nNew words here.\n")
        (vault / "f2" / "added.md").write_text("# added\n")
        stats = idx.update(vault)
        assert (stats.added, stats.changed, stats.removed) == (1, 1, 0)
        assert [Path(c).name for c in calls] == ["f2"]  # only the folder that changed
        assert idx.search("added", mode="bm25")
        # --full lists every folder again, whatever memory says.
        calls.clear()
        idx.update(vault, full=True)
        walked = [p for p in vault.rglob("*") if p.is_dir() and ".obsidian" not in p.parts]
        assert {Path(c) for c in calls} >= {vault, *walked}


def test_no_name_the_index_refuses_is_remembered(tmp_path: Path, settled_now: None) -> None:
    vault = tmp_path / "vault"
    (vault / NAME_SECRET).mkdir(parents=True)
    (vault / NAME_SECRET / "inside.md").write_text("# inside a folder named by a secret\n")
    (vault / "notes").mkdir()
    (vault / "notes" / f"{NAME_SECRET}.md").write_text("# a note named by a secret\n")
    (vault / "notes" / "plain.md").write_text("# plain\n")
    (vault / "empty" / NAME_SECRET).mkdir(parents=True)  # no note below: its name is nowhere
    (vault / "clean").mkdir()
    (vault / "clean" / "kept.md").write_text("# kept\n")
    with noteseek.Index(tmp_path / "s.db", embedder=FakeEmbedder()) as idx:
        idx.update(vault)
        idx.update(vault)
        text = idx._store.get_meta(meta.FOLDER_LISTINGS)
    context = folder_listings.context_of(str(vault.resolve()), (), DEFAULT_EXCLUDE, True)
    listings = folder_listings.decode(text, context)
    assert "clean" in listings  # something is remembered, so the test can fail
    everything = repr(listings)
    assert NAME_SECRET not in everything
    assert NAME_SECRET[4:20] not in everything


def test_where_folder_stamps_cannot_be_trusted_every_folder_is_listed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settled_now: None
) -> None:
    vault = tmp_path / "vault"
    make_vault(vault, random.Random(4))
    monkeypatch.setattr(folder_listings, "TRUSTED", False)  # as on Windows
    with noteseek.Index(tmp_path / "w.db", embedder=FakeEmbedder()) as idx:
        idx.update(vault)
        idx.update(vault)
        assert idx._store.get_meta(meta.FOLDER_LISTINGS) is None
        calls = _scandirs(monkeypatch)
        idx.update(vault)
        assert Path(calls[0]) == vault.resolve() and len(calls) > 1


def test_a_folder_holding_a_symlink_is_listed_every_time(tmp_path: Path, settled_now: None) -> None:
    # What a link is taken as follows its target, which changes without the link's folder: a
    # link named like a note to a folder (skipped) whose target becomes a note (indexed), a link
    # to a note whose target becomes a link to a folder outside the vault.
    root = tmp_path / "vault"
    (root / "notes").mkdir(parents=True)
    (root / "target").mkdir()
    (root / "target" / "inner.md").write_text("# inner\n")
    (root / "notes" / "n.md").write_text("# n\n")
    (root / "t.md").write_text("# t\n")
    (root / "notes" / "to-folder.md").symlink_to("../target")
    (root / "notes" / "to-note.md").symlink_to("../t.md")
    outside = tmp_path / "outside"
    outside.mkdir()
    notes, _, memory = _remembered_walk(root, {})
    old = folder_listings.indexed_only(memory.found, (n.rel_path for n in notes))
    assert "notes" not in old and "target" in old
    time.sleep(0.02)
    (root / "target" / "inner.md").unlink()
    (root / "target").rmdir()
    (root / "target").write_text("# a note now\n")
    (root / "t.md").unlink()
    (root / "t.md").symlink_to(outside)
    found, passed_over, _ = _remembered_walk(root, old)
    assert (found, passed_over) == walk_vault(root)
    assert "notes/to-folder.md" in [n.rel_path for n in found]


def test_the_record_is_for_one_vault_rules_and_user(monkeypatch: pytest.MonkeyPatch) -> None:
    context = folder_listings.context_of("/v", (), (".obsidian",), True)
    assert folder_listings.context_of("/v", (), (".obsidian",), False) != context
    assert folder_listings.context_of("/w", (), (".obsidian",), True) != context
    assert folder_listings.context_of("/v", ("a",), (".obsidian",), True) != context
    monkeypatch.setattr(folder_listings, "NOTE_SUFFIXES", (".md", ".markdown"))
    assert folder_listings.context_of("/v", (), (".obsidian",), True) != context  # a new kind
    monkeypatch.undo()
    monkeypatch.setattr(folder_listings.os, "getuid", lambda: 4242)
    assert folder_listings.context_of("/v", (), (".obsidian",), True) != context


@pytest.mark.parametrize(
    "listing",
    [
        ("1:2:3:4", ("..",), ()),
        ("1:2:3:4", (".",), ()),
        ("1:2:3:4", (), ("..", "x.md")),
        ("1:2:3:4", ("a", ""), ()),
        ("1:2:3:4", (), ("bad\x00.md",)),
    ],
)
def test_a_record_with_a_name_that_leads_out_of_its_folder_is_not_used(
    listing: folder_listings.Listing,
) -> None:
    context = folder_listings.context_of("/v", (), (), True)
    good = ("1:2:3:4", ("a",), ("x.md",))
    assert folder_listings.decode(folder_listings.encode({"": good}, context), context)
    forged = folder_listings.encode({"": good, "a": listing}, context)
    assert folder_listings.decode(forged, context) == {}
