"""The vault walk (os.scandir, depth first) and the folder-pattern fast path: what is found, what is
pruned, what is named; and the update plan's path checks (secret names) that a no-op run skips."""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import noteseek
from noteseek import Allowlist, IndexOptions
from noteseek.core.vault_rules import FolderPatterns
from noteseek.engine import vault_walk
from noteseek.engine.vault_walk import walk_vault
from tests.conftest import FakeEmbedder, WriteNotes
from tests.test_secrets_in_db import NAME_SECRET

UTF8_FOLDER = "folder name is not valid UTF-8; rename it to index its notes"


def _tree(root: Path, outside: Path) -> None:
    files = [
        "a.md",
        "b/c.md",
        "b/drafts/hidden-by-name.md",  # "drafts" excluded at any depth
        "drafts/top.md",
        "b/Drafts/case.md",  # another name on a case-sensitive file system
        "archive/2020/old.md",  # "archive/20*" excluded
        "archive/keep.md",
        ".obsidian/workspace.md",  # dot folder
        "b/.x.md",  # hidden file
        "b/report.pdf",
        "b/image.png",
        "private/secret.md",  # ignore marker
        "private/deeper/also.md",
        "z/y/x/deep.md",
    ]
    for rel in files:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(f"# {rel}\n")
    (root / "private" / ".noteseekignore").write_text("")
    outside.mkdir()
    (outside / "o.md").write_text("# outside\n")
    (root / "linked-out").symlink_to(outside, target_is_directory=True)
    (root / "linked-in").symlink_to(root / "b", target_is_directory=True)
    (root / "b" / "alias.md").symlink_to("c.md")


def test_walk_finds_notes_and_documents_in_order_and_prunes_folders(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    root.mkdir()
    _tree(root, tmp_path / "outside")

    notes, passed_over = walk_vault(root, exclude=(".obsidian", "drafts", "archive/20*"))

    assert [n.rel_path for n in notes] == [
        "a.md",
        "archive/keep.md",
        "b/Drafts/case.md",
        "b/alias.md",
        "b/c.md",
        "b/image.png",  # an image is a document (read by OCR)
        "b/report.pdf",
        "z/y/x/deep.md",
    ]
    assert [n.kind for n in notes] == ["note"] * 5 + ["image", "pdf", "note"]
    # Symlinked folders are not followed (not even into the vault) and are not problems; a
    # hidden note is left out but named, so the run says why it is missing.
    assert passed_over == [
        ("b/.x.md", "hidden file (its name starts with '.'): not indexed; rename it to index it")
    ]
    for n in notes:
        assert isinstance(n.abs_path, Path)
        assert n.abs_path == root / n.rel_path
        assert n.size == os.stat(n.abs_path).st_size  # a link inside: its target
        assert n.mtime_ns == os.stat(n.abs_path).st_mtime_ns
    # Documents off: only the notes.
    only_notes, _ = walk_vault(root, exclude=(".obsidian", "drafts"), documents=False)
    assert {"b/report.pdf", "b/image.png"}.isdisjoint(n.rel_path for n in only_notes)
    # Include: notes directly in included folders (and below them), the same pruning.
    included, _ = walk_vault(root, include=("b",), exclude=("drafts",))
    assert [n.rel_path for n in included] == [
        "b/Drafts/case.md",
        "b/alias.md",
        "b/c.md",
        "b/image.png",
        "b/report.pdf",
    ]


def test_a_folder_whose_name_is_not_utf8_is_named_and_left_out(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    root.mkdir()
    (root / "ok.md").write_text("# ok\n")
    try:
        bad = root / os.fsdecode(b"caf\xe9")
        bad.mkdir()
    except (OSError, UnicodeError):
        pytest.skip("this file system refuses names that are not UTF-8")
    (bad / "inside.md").write_text("# inside\n")
    (bad / "sub").mkdir()
    (bad / "sub" / "deeper.md").write_text("# deeper\n")
    ignored = root / "ignored" / os.fsdecode(b"x\xff")
    ignored.mkdir(parents=True)
    (root / "ignored" / ".noteseekignore").write_text("")

    notes, passed_over = walk_vault(root)

    assert [n.rel_path for n in notes] == ["ok.md"]
    # Named once, for the folder (nothing below it is listed); a folder inside an ignored one
    # is not named at all.
    assert passed_over == [("caf\\xe9", UTF8_FOLDER)]


def test_a_folder_that_cannot_be_listed_is_named_and_the_rest_is_walked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Root reads every folder whatever its mode, so the refusal is simulated.
    root = tmp_path / "vault"
    for rel in ("a.md", "locked/l.md", "open/o.md"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("# x\n")
    real_scandir = os.scandir
    refused: set[str] = {str(root.resolve() / "locked")}

    def scandir(path: str) -> object:
        if str(path) in refused:
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(vault_walk.os, "scandir", scandir)
    notes, passed_over = walk_vault(root)
    assert [n.rel_path for n in notes] == ["a.md", "open/o.md"]
    assert passed_over == [("locked", "cannot read folder: Permission denied")]

    refused.add(str(root.resolve()))
    notes, passed_over = walk_vault(root)
    assert notes == []
    assert passed_over == [(".", "cannot read folder: Permission denied")]


# A small alphabet, so that patterns and folder names often meet.
_PART = st.text(alphabet="abAB.*?[]", min_size=1, max_size=4)
_PATTERN = st.lists(_PART, min_size=1, max_size=2).map("/".join)
_FOLDER = st.lists(st.text(alphabet="abAB.", min_size=1, max_size=3), min_size=1, max_size=4)


def _reference(patterns: list[str], rel_dir: str) -> bool:
    """The rule for a folder none of whose parents matched, spelled out: the path matches a
    pattern, or (for a pattern without '/') its last component does."""
    last = rel_dir.rsplit("/", 1)[-1]
    for raw in patterns:
        pattern = raw.strip("/")
        if pattern and (
            fnmatch.fnmatch(rel_dir, pattern)
            or ("/" not in pattern and fnmatch.fnmatch(last, pattern))
        ):
            return True
    return False


@settings(max_examples=400, deadline=None)
@given(patterns=st.lists(_PATTERN, max_size=4), folder=_FOLDER)
def test_the_fast_folder_test_agrees_with_the_full_one_where_the_walk_uses_it(
    patterns: list[str], folder: list[str]
) -> None:
    compiled = FolderPatterns(patterns)
    parents = ["/".join(folder[:i]) for i in range(1, len(folder))]
    # The walk asks with parents_checked only once no parent matched (it prunes those).
    if any(compiled.match(p) for p in parents):
        return
    rel_dir = "/".join(folder)
    fast = compiled.match(rel_dir, parents_checked=True)
    assert fast == compiled.match(rel_dir) == _reference(patterns, rel_dir)


def test_plain_folder_names_match_exactly_at_any_depth() -> None:
    patterns = FolderPatterns(["drafts", ".git", "archive/2020"])
    assert patterns.match("drafts", parents_checked=True)
    assert patterns.match("a/b/drafts", parents_checked=True)
    assert patterns.match("a/.git", parents_checked=True)
    assert patterns.match("archive/2020", parents_checked=True)
    assert not patterns.match("a/drafts2", parents_checked=True)
    assert not patterns.match("a/archive/2020", parents_checked=True)  # a path from the root
    if os.path.normcase("A") != "a":
        assert not patterns.match("a/Drafts", parents_checked=True)
    assert not FolderPatterns([]).match("drafts", parents_checked=True)


# ---------------------------------------------------------------------------------------------
# The plan's path checks.


def _paths(idx: noteseek.Index) -> set[str]:
    return {r[0] for r in idx._store.conn.db.execute("SELECT path FROM files")}


def test_a_passed_over_entry_whose_name_holds_a_secret_is_named_scrubbed_and_not_stored(
    tmp_path: Path, make_vault: WriteNotes
) -> None:
    vault = make_vault({"a.md": "# A\n\nplain note text"})
    (tmp_path / "elsewhere.md").write_text("# out\n")
    # A symlink out of the vault is passed over and stored as skipped, by its path.
    (vault / f"link {NAME_SECRET}.md").symlink_to(tmp_path / "elsewhere.md")
    (vault / "plain-link.md").symlink_to(tmp_path / "elsewhere.md")
    with noteseek.Index(tmp_path / "i.db", embedder=FakeEmbedder()) as idx:
        stats = idx.update(vault)
        problems = dict(stats.problems)
        named = [p for p, r in problems.items() if "file name contains a secret" in r]
        assert len(named) == 1 and NAME_SECRET not in named[0] and "[REDACTED:" in named[0]
        assert problems["plain-link.md"] == "symlink points outside the vault"
        assert _paths(idx) == {"a.md", "plain-link.md"}
        idx._store.conn.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert NAME_SECRET.encode() not in (tmp_path / "i.db").read_bytes()


def test_a_no_op_run_checks_only_new_paths_and_another_allow_list_checks_every_path(
    tmp_path: Path, make_vault: WriteNotes, monkeypatch: pytest.MonkeyPatch
) -> None:
    allowed = f"kept {NAME_SECRET}.md"
    vault = make_vault({"a.md": "# A\n\nplain note", "b/c.md": "# C\n\nmore", allowed: "# K\n\nk"})
    db = tmp_path / "i.db"
    allow = IndexOptions(allow=Allowlist(regexes=(NAME_SECRET,)))
    checked: list[str] = []
    # The plan imports `scrub` when it has paths to check; the preparing stage binds its own at
    # import, so it is imported first and keeps the real one (only path checks are counted).
    import noteseek.engine.update.document_chunks
    import noteseek.engine.update.documents
    import noteseek.engine.update.prepare
    import noteseek.secrets.scrubber as scrubber_module

    real_scrub = scrubber_module.scrub

    def counting_scrub(text: str, **kwargs: object) -> object:
        checked.append(text)
        return real_scrub(text, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(scrubber_module, "scrub", counting_scrub)
    with noteseek.Index(db, embedder=FakeEmbedder(), options=allow) as idx:
        idx.update(vault)
        assert _paths(idx) == {"a.md", "b/c.md", allowed}  # the allow-list keeps the name
        assert sorted(checked) == sorted(_paths(idx))
        checked.clear()
        (vault / "new.md").write_text("# New\n\nnew note")
        idx.update(vault)
        assert checked == ["new.md"]  # the stored paths passed under these same rules
        checked.clear()
    # Without the allow-list the fingerprint differs: every path is checked again, and the one
    # that holds a secret is named and removed.
    with noteseek.Index(db, embedder=FakeEmbedder(), options=IndexOptions()) as idx:
        stats = idx.update(vault)
        assert len(checked) >= 4
        assert _paths(idx) == {"a.md", "b/c.md", "new.md"}
        assert stats.removed == 1
        assert any("file name contains a secret" in r for _, r in stats.problems)
