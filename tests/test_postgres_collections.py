"""Collections: each vault a collection of one database; search one, several or all of them.

Searching several collections is searching one index made of all their notes: the BM25
statistics (N, average length, document frequencies) are summed over them, so the scores equal
those of a single collection holding both vaults side by side (checked here bit for bit). Paths
are then shown as `collection/path`, and note access and folder filters take them that way.

Needs a PostgreSQL server (tests/postgres_fixtures.py): skips locally without one, fails in CI.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from noteseek import Index, IndexReadOnlyError, open_index
from noteseek.core.locator import with_collection
from noteseek.storage.postgres.collections import CollectionNameError

from .conftest import FakeEmbedder, note

WORK = {
    "howto/rebase.md": note("Undo a rebase", ("Reflog", "git reflog finds the commit; reset.")),
    "howto/tokens.md": note("Token rotation", ("Steps", "Rotate the access token every 90 days.")),
    "about.md": note("Work vault", ("About", "Work notes about git and tokens."), tags="work"),
}
HOME = {
    "kitchen/bread.md": note("Banana bread", ("Recipe", "Mash ripe bananas, bake an hour.")),
    "about.md": note("Home vault", ("About", "Home notes: bread, garden, a token of thanks.")),
    "howto/garden.md": note("Garden", ("Tomatoes", "Tomatoes need sun and a little git.")),
}


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def indexed(pg_schema: str, tmp_path: Path) -> str:
    """Collections `work` and `home` (named after their vault folders) in a fresh schema."""
    for name, files in (("work", WORK), ("home", HOME)):
        vault = write(tmp_path / name, files)
        with open_index(pg_schema, vault, create=True, embedder=FakeEmbedder(), write=True) as idx:
            idx.update(vault)
    return pg_schema


def hits(url: str, query: str, **options: object) -> list[tuple[str, float | None]]:
    """(path, raw BM25 score of the note's best chunk) of each hit."""
    with Index(url, embedder=FakeEmbedder(), create=False) as idx:
        found = idx.search(query, **options)  # type: ignore[arg-type]
        return [(h.path, h.bm25_score) for h in found]


def test_one_collection_shows_vault_paths(indexed: str) -> None:
    found = hits(with_collection(indexed, "work"), "rebase token", mode="bm25")
    assert {p for p, _ in found} == {"howto/rebase.md", "howto/tokens.md", "about.md"}


@pytest.mark.parametrize("selection", ["work,home", "*", None])
def test_several_collections_show_collection_paths(indexed: str, selection: str | None) -> None:
    url = with_collection(indexed, selection)  # None: not named, and there are two: all
    found = dict(hits(url, "token git", mode="bm25", limit=20))
    assert {"work/howto/tokens.md", "home/about.md", "home/howto/garden.md"} <= set(found)
    with Index(url, embedder=FakeEmbedder(), create=False) as idx:
        assert sorted(idx.note_paths()) == sorted(
            [f"work/{p}" for p in WORK] + [f"home/{p}" for p in HOME]
        )
        note_text = idx.read_note("home/kitchen/bread.md", section="Recipe")
        assert note_text.path == "home/kitchen/bread.md" and "bananas" in note_text.text
        only = [h.path for h in idx.search("token git", folders=["home/howto"], mode="bm25")]
        assert only == ["home/howto/garden.md"]
        whole = {h.path for h in idx.search("token git", folders=["work"], mode="bm25")}
        assert whole and all(p.startswith("work/") for p in whole)
        picked = [h.path for h in idx.search("token", files=["home/about.md"], mode="bm25")]
        assert picked == ["home/about.md"]  # files by their paths as shown
        assert idx.search("token", files=["about.md"], mode="bm25") == []  # names no collection
        assert idx.tags() == {"work": 1}
        assert idx.folders()["home"] == 3 and idx.folders()["work/howto"] == 2
        status = idx.status()
        assert status.files == 6 and status.chunks == idx.status().chunks


def test_several_collections_score_as_one_index_of_both_vaults(
    indexed: str, tmp_path: Path
) -> None:
    both = tmp_path / "both"
    shutil.copytree(tmp_path / "work", both / "work")
    shutil.copytree(tmp_path / "home", both / "home")
    # (No README.md/index.md in these vaults: those take their folder's name as a title, which
    # differs once the vault sits one folder deeper.)
    with open_index(indexed, both, create=True, embedder=FakeEmbedder(), write=True) as idx:
        idx.update(both)
    for query in ("token git", "bread garden", "rotate the access token"):
        together = hits(with_collection(indexed, "work,home"), query, mode="bm25", limit=20)
        single = hits(with_collection(indexed, "both"), query, mode="bm25", limit=20)
        assert sorted(together) == sorted(single), query  # same paths, bit-identical scores


def test_writes_go_to_one_collection_named_on_purpose(indexed: str, tmp_path: Path) -> None:
    for selection in ("work,home", "*", None):
        with Index(with_collection(indexed, selection), embedder=FakeEmbedder()) as idx:
            with pytest.raises(IndexReadOnlyError, match="--collection NAME"):
                idx.update(tmp_path / "work")
    with pytest.raises(CollectionNameError, match="letters, digits"):
        Index(with_collection(indexed, "no spaces please"), embedder=FakeEmbedder())


def test_collections_with_different_models_search_by_keywords_together(
    indexed: str, tmp_path: Path
) -> None:
    other = write(
        tmp_path / "other",
        {"a.md": note("Other", ("Text", "Access tokens are kept elsewhere in this vault."))},
    )
    embedder = FakeEmbedder(dim=32, version="v2")
    with open_index(indexed, other, create=True, embedder=embedder, write=True) as idx:
        idx.update(other)
    with Index(with_collection(indexed, "work,other"), embedder=FakeEmbedder()) as idx:
        result = idx.run_search(__import__("noteseek").SearchRequest("tokens"))
        assert result.degraded is not None and "different models" in result.degraded
        assert {h.path for h in result.hits} >= {"other/a.md", "work/howto/tokens.md"}


def test_update_locks_of_different_collections_do_not_wait(indexed: str) -> None:
    from noteseek.storage.open import open_storage

    from .backends import pg_locator

    work = open_storage(pg_locator(indexed, "work"), create=False)
    home = open_storage(pg_locator(indexed, "home"), create=False)
    try:
        with work.update_lock(wait=0, holder="a"), home.update_lock(wait=0, holder="b"):
            pass
    finally:
        work.close()
        home.close()
