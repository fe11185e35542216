"""The known-words gate: a query nothing knows gets no hits; a query with one known word is
answered as before (issue 16)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import noteseek
from noteseek import SearchSettings
from noteseek.engine.search.known_words import content_words, nothing_known
from tests.conftest import WriteNotes, note

NONSENSE = ("boudax", "givbortgen grouxblound", "the zupreflax of quimbrot")


def _vault(make_vault: WriteNotes) -> Path:
    return make_vault(
        {
            "tags.md": note("Tags and links", ("Differences", "A tag labels a note; a link connects two.")),
            "pasta.md": note("Cooking", ("Pasta", "Boil pasta in salted water.")),
        }
    )


def test_nonsense_gets_no_hits_in_every_mode(make_vault: WriteNotes, tmp_path: Path) -> None:
    vault = _vault(make_vault)
    with noteseek.Index(tmp_path / "i.db") as idx:  # the bundled model: its vocabulary counts
        idx.update(vault)
        for query in NONSENSE:
            for mode in ("hybrid", "vector", "bm25"):
                assert idx.search(query, mode=mode) == [], (query, mode)
        # One word the vault knows is enough, and so is one the model knows whole ("ocean" is in
        # neither note, but in bert-base-uncased's vocabulary): the vector list answers.
        assert idx.search("boudax pasta")[0].path == "pasta.md"
        assert idx.search("ocean", mode="vector")


def test_the_gate_can_be_turned_off(make_vault: WriteNotes, tmp_path: Path) -> None:
    vault = _vault(make_vault)
    with noteseek.Index(tmp_path / "i.db", settings=SearchSettings(known_words=False)) as idx:
        idx.update(vault)
        assert idx.search("boudax", mode="vector")  # the vector list's guesses, as before


def test_nothing_known_asks_the_counts_only_for_content_words(make_vault: WriteNotes, tmp_path: Path, fake_embedder) -> None:  # type: ignore[no-untyped-def]
    vault = _vault(make_vault)
    with noteseek.Index(tmp_path / "i.db", embedder=fake_embedder) as idx:
        idx.update(vault)
        store = idx._store
        assert content_words("the the") == ["the"]  # stopwords only: they are the words
        assert content_words("the boudax") == ["boudax"]
        assert nothing_known("boudax", store, lambda w: False)
        assert not nothing_known("boudax", store, lambda w: w == "boudax")
        assert not nothing_known("links", store, lambda w: False)  # the stem 'link' is indexed
        assert not nothing_known("", store, lambda w: False)
        counts = store.query_term_counts(["links", "boudax", "pasta"])
        assert [forms for forms, _ in counts] == [("link",), ("boudax",), ("pasta",)]
        assert counts[0][1] >= 1 and counts[1][1] == 0 and counts[2][1] >= 1


def test_cli_says_no_matches_and_context_stays_silent(make_vault: WriteNotes, tmp_path: Path) -> None:
    vault = _vault(make_vault)
    db = tmp_path / "i.db"
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "noteseek", *args, "--db", str(db)],
            capture_output=True, text=True, timeout=120, check=True,
        )

    subprocess.run(
        [sys.executable, "-m", "noteseek", "index", str(vault), "--db", str(db), "-q"],
        capture_output=True, text=True, timeout=120, check=True,
    )
    assert run("search", "givbortgen grouxblound").stdout.strip() == "no matches"
    assert json.loads(run("search", "givbortgen grouxblound", "--json").stdout)["hits"] == []
    assert run("search", "pasta").stdout.strip() != "no matches"
    with noteseek.Index(db, create=False) as idx:
        from noteseek.agents.prompt_context import prompt_context

        ctx = prompt_context(idx, "givbortgen grouxblound zupreflax", gated=False)
        assert ctx.text == "" and ctx.considered == 0
