"""Folder, tag and file filters: a filtered search returns only matching notes, and all of them;
the folder and tag lists a page offers count what each filter keeps."""

from __future__ import annotations

from pathlib import Path

import pytest

from noteseek import Index
from noteseek.core.query import file_keys, folder_key, folder_keys, tag_key
from tests.conftest import FakeEmbedder, WriteNotes, note


@pytest.fixture
def vault(make_vault: WriteNotes) -> Path:
    body = ("Deploy", "Rotate the deploy token and restart the deploy worker.")
    files: dict[str, str | bytes] = {}
    # Twenty notes outside the folder and without the tag, all matching the query well, so an
    # unfiltered top list is full of them and a post-filter of the top rows would find nothing.
    for i in range(20):
        files[f"ops/deploy {i}.md"] = note(f"Deploy runbook {i}", body, tags="ops")
    files["work/project/alpha.md"] = note(
        "Alpha", ("Deploy", "The deploy token of alpha is rotated by hand by a worker after the weekly review."), tags="project/alpha, Work"
    )
    files["work/beta.md"] = note("Beta", ("Deploy", "Beta deploy token changes on Fridays; a worker checks it after the review."), tags="work")
    files["workshop/gamma.md"] = note("Gamma", ("Deploy", "Workshop deploy token notes."), tags="\"#Work\"")
    return make_vault(files)


@pytest.fixture
def idx(tmp_path: Path, vault: Path, fake_embedder: FakeEmbedder) -> Index:
    index = Index(tmp_path / "i.db", embedder=fake_embedder)
    index.update(vault)
    return index


def paths(hits: list) -> set[str]:  # type: ignore[type-arg]
    return {h.path for h in hits}


@pytest.mark.parametrize("mode", ["hybrid", "bm25", "vector"])
def test_folder_filter_keeps_only_notes_under_the_folder(idx: Index, mode: str) -> None:
    hits = idx.search("deploy token", mode=mode, folders=["work"], limit=10)  # type: ignore[arg-type]
    # 'workshop/' shares the prefix string but is another folder.
    assert paths(hits) == {"work/project/alpha.md", "work/beta.md"}


def test_several_folders_are_alternatives_and_root_means_everything(idx: Index) -> None:
    hits = idx.search("deploy", folders=["work/project", "./workshop/"], limit=30)
    assert paths(hits) == {"work/project/alpha.md", "workshop/gamma.md"}
    assert len(idx.search("deploy", folders=["."], limit=30)) == 23


def test_tag_filter_matches_case_hash_and_nested_tags(idx: Index) -> None:
    assert paths(idx.search("deploy", tags=["#WORK"], limit=30)) == {
        "work/project/alpha.md",
        "work/beta.md",
        "workshop/gamma.md",
    }
    assert paths(idx.search("deploy", tags=["project"], limit=30)) == {"work/project/alpha.md"}
    # 'proj' is not a parent tag of 'project/alpha'.
    assert idx.search("deploy", tags=["proj"], limit=30) == []


def test_tags_combine_with_and_and_with_folders(idx: Index) -> None:
    assert paths(idx.search("deploy", tags=["work", "project/alpha"], limit=30)) == {
        "work/project/alpha.md"
    }
    assert paths(idx.search("deploy", tags=["work"], folders=["workshop"], limit=30)) == {
        "workshop/gamma.md"
    }


def test_filter_matching_nothing_returns_no_hits(idx: Index) -> None:
    assert idx.search("deploy", folders=["nowhere"]) == []
    assert idx.search("deploy", tags=["missing"]) == []


def test_exact_name_match_respects_the_filter(idx: Index) -> None:
    assert paths(idx.search("Deploy runbook 3", folders=["work"], limit=30)) <= {
        "work/project/alpha.md",
        "work/beta.md",
    }
    assert idx.search("Deploy runbook 3", limit=1)[0].path == "ops/deploy 3.md"


def test_tags_are_updated_when_a_note_changes(idx: Index, vault: Path) -> None:
    (vault / "work/beta.md").write_text(note("Beta", ("Deploy", "Deploy text."), tags="other"))
    idx.update(vault)
    assert "work/beta.md" not in paths(idx.search("deploy", tags=["work"], limit=30))
    assert paths(idx.search("deploy", tags=["other"], limit=30)) == {"work/beta.md"}
    (vault / "work/beta.md").unlink()
    idx.update(vault)
    assert idx.search("deploy", tags=["other"], limit=30) == []
    count = idx._store.conn.scalar("SELECT count(*) FROM note_tags WHERE tag = 'other'")
    assert count == 0


def test_vec0_fallback_path_filters_too(idx: Index) -> None:
    idx._searcher.vectors.uses_matrix = False
    hits = idx.search("deploy", mode="vector", folders=["work"], limit=10)
    assert paths(hits) == {"work/project/alpha.md", "work/beta.md"}


def test_keys() -> None:
    assert tag_key(" #Projekt/Äpfel ") == "projekt/äpfel"
    assert folder_key("./a\\b//c/") == "a/b/c"
    assert folder_key("/") == ""
    assert file_keys("./a\\b//c.md/") == ("a\\b/c.md", "a/b/c.md")  # the backslash as written, then as '/'
    assert folder_keys(" a\\b/") == (" a\\b", " a/b")  # spaces are part of a name
    assert folder_keys("x/y") == ("x/y",)
    assert file_keys("howto/rebase") == ("howto/rebase", "howto/rebase.md")
    assert file_keys("report.pdf") == ("report.pdf", "report.pdf.md")
    assert file_keys("./") == file_keys("") == ()


def test_filter_applies_before_the_candidate_depth(
    tmp_path: Path, vault: Path, fake_embedder: FakeEmbedder
) -> None:
    from noteseek import SearchSettings

    # With 3 chunks per list, the unfiltered top rows are all 'ops/' notes (they have both
    # words, in a short section); a filter applied after the depth cut would return nothing.
    shallow = SearchSettings(candidates=1, chunk_depth=3)
    with Index(tmp_path / "s.db", embedder=fake_embedder, settings=shallow) as index:
        index.update(vault)
        top = index.search("restart worker", mode="bm25", limit=1)
        assert top[0].path.startswith("ops/")
        for mode in ("bm25", "vector", "hybrid"):
            hits = index.search("restart worker", mode=mode, folders=["work"], limit=2)  # type: ignore[arg-type]
            assert paths(hits) == {"work/project/alpha.md", "work/beta.md"}, mode


@pytest.mark.parametrize("mode", ["hybrid", "bm25", "vector"])
def test_file_filter_keeps_only_the_files(idx: Index, mode: str) -> None:
    files = ["work/beta.md", "./ops//deploy 3", "work\\project\\alpha.md"]
    hits = idx.search("deploy token", mode=mode, files=files, limit=10)  # type: ignore[arg-type]
    assert paths(hits) == {"work/beta.md", "ops/deploy 3.md", "work/project/alpha.md"}
    # The exact-name shortcut obeys the filter too.
    assert paths(idx.search("Deploy runbook 3", files=["work/beta.md"], limit=5)) == {
        "work/beta.md"
    }


def test_file_filter_combines_with_folders_and_tags(idx: Index) -> None:
    files = ["work/beta.md", "work/project/alpha.md", "ops/deploy 1.md"]
    assert paths(idx.search("deploy", files=files, folders=["work/project"], limit=30)) == {
        "work/project/alpha.md"
    }
    assert paths(idx.search("deploy", files=files, tags=["ops"], limit=30)) == {"ops/deploy 1.md"}
    assert idx.search("deploy", files=["work/beta.md"], folders=["ops"]) == []
    assert idx.search("deploy", files=["no/such.md"]) == []
    assert idx.search("deploy", files=["/", "."]) == []  # no file named at all: nothing


def test_empty_filters_are_no_filters(idx: Index) -> None:
    everything = [h.path for h in idx.search("deploy", limit=30)]
    assert len(everything) == 23
    for empty in ({"folders": []}, {"tags": []}, {"files": []}):
        assert [h.path for h in idx.search("deploy", limit=30, **empty)] == everything, empty


def test_file_filter_applies_before_the_candidate_depth(
    tmp_path: Path, vault: Path, fake_embedder: FakeEmbedder
) -> None:
    from noteseek import SearchSettings

    # As for folders: the unfiltered head of both lists is all 'ops/'; the file still comes back.
    shallow = SearchSettings(candidates=1, chunk_depth=3)
    with Index(tmp_path / "s.db", embedder=fake_embedder, settings=shallow) as index:
        index.update(vault)
        assert index.search("restart worker", mode="bm25", limit=1)[0].path.startswith("ops/")
        for mode in ("bm25", "vector", "hybrid"):
            hits = index.search("restart worker", mode=mode, files=["work/beta"], limit=1)  # type: ignore[arg-type]
            assert paths(hits) == {"work/beta.md"}, mode


def test_many_files_in_one_filter(idx: Index) -> None:
    files = [f"ops/deploy {i}.md" for i in range(20)] + [f"missing/{i}.md" for i in range(5000)]
    assert len(idx.search("deploy", files=files, limit=30)) == 20


def test_folder_and_tag_lists_count_what_each_filter_keeps(idx: Index) -> None:
    folders, tags = idx.folders(), idx.tags()
    assert folders == {"ops": 20, "work": 2, "work/project": 1, "workshop": 1}
    assert tags == {"ops": 20, "project": 1, "project/alpha": 1, "work": 3}
    for folder, count in folders.items():
        assert len(idx.search("deploy", folders=[folder], limit=50)) == count, folder
    for tag, count in tags.items():
        assert len(idx.search("deploy", tags=[tag], limit=50)) == count, tag


def test_skipped_files_are_not_listed(idx: Index, vault: Path) -> None:
    (vault / "attic").mkdir()
    (vault / "attic" / "broken.md").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 16)
    idx.update(vault)
    assert ("attic/broken.md", "skipped") in {(p, s) for p, s, _ in idx.status().problems}
    assert "attic" not in idx.folders()
