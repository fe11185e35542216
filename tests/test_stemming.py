"""German notes get German stems; English vaults keep exactly the Porter tokens they had."""

from __future__ import annotations

from pathlib import Path

import apsw
import pytest

from noteseek import Index
from noteseek.core.language import GERMAN, note_language
from noteseek.storage.tokenizer import StemOptions, register

from .conftest import FakeEmbedder, WriteNotes, note

GERMAN_NOTE = note(
    "Dateien",
    (
        "Formate",
        "Die unterstützten Dateiformate sind Markdown und PDF. Wenn eine Datei nicht geöffnet "
        "wird, ist das Format nicht unterstützt, und die Datei bleibt im Ordner.",
    ),
)
ENGLISH_NOTE = note(
    "Files",
    ("Formats", "The supported file formats are Markdown and PDF; running the importer is easy."),
)


def test_the_language_vote() -> None:
    assert note_language(GERMAN_NOTE) == GERMAN
    assert note_language(ENGLISH_NOTE) is None
    assert note_language("def main():\n    return 0\n") is None
    assert note_language("Die Datei") is None  # too few votes to say
    mixed = "The rotation of the token is done with the CLI. Die Datei ist neu."
    assert note_language(mixed) is None


def _tokens(options: StemOptions, text: str, *, flags: int, locale: str | None = None) -> list:
    db = apsw.Connection(":memory:")
    register(db, options)
    tokenizer = db.fts5_tokenizer("noteseek", [])
    return [t[2:] for t in tokenizer(text.encode(), flags, locale)]


def test_english_tokens_are_the_porter_ones() -> None:
    db = apsw.Connection(":memory:")
    porter = db.fts5_tokenizer("porter", ["unicode61", "remove_diacritics", "2"])
    text = "Running the Häuser importers: naïve café 42"
    for flags in (apsw.FTS5_TOKENIZE_DOCUMENT, apsw.FTS5_TOKENIZE_QUERY):
        expected = [t[2:] for t in porter(text.encode(), flags, None)]
        assert _tokens(StemOptions(), text, flags=flags) == expected


def test_german_documents_get_german_stems_and_queries_both() -> None:
    doc = _tokens(
        StemOptions(),
        "Dateiformate Dateiformaten",
        flags=apsw.FTS5_TOKENIZE_DOCUMENT,
        locale=GERMAN,
    )
    assert doc == [("dateiformat",), ("dateiformat",)]
    # Porter alone cannot match these two forms: the reason for German stems
    assert _tokens(StemOptions(), "Dateiformaten", flags=apsw.FTS5_TOKENIZE_QUERY) != [
        ("dateiformat",)
    ]
    query = _tokens(
        StemOptions(german_queries=True), "Dateiformaten running", flags=apsw.FTS5_TOKENIZE_QUERY
    )
    # the Porter stem first, the German one colocated (one term for FTS5), only where they differ
    assert query == [("dateiformaten", "dateiformat"), ("run", "running")]


def test_a_german_inflection_finds_the_german_note(
    tmp_path: Path, make_vault: WriteNotes, fake_embedder: FakeEmbedder
) -> None:
    vault = make_vault({"de/dateien.md": GERMAN_NOTE, "en/files.md": ENGLISH_NOTE})
    with Index(tmp_path / "i.db", embedder=fake_embedder) as idx:
        assert not idx._store.conn.stem_options.german_queries
        idx.update(vault)
        assert idx._store.conn.stem_options.german_queries
        hits = idx.search("Dateiformaten unterstützte", mode="bm25")
        assert hits and hits[0].path == "de/dateien.md"
        # English stemming is untouched by the German note next to it
        assert idx.search("running importers", mode="bm25")[0].path == "en/files.md"
        assert idx.check() == []  # FTS5 integrity-check re-tokenizes with each chunk's language
        (vault / "de" / "dateien.md").write_text(GERMAN_NOTE + "\nNoch ein Absatz über Ordner.\n")
        idx.update(vault)
        assert idx.check() == []
        (vault / "de" / "dateien.md").unlink()
        idx.update(vault)
        assert idx.check() == []
        assert not idx._store.conn.stem_options.german_queries
        assert idx.search("Dateiformaten", mode="bm25") == []
    # a new connection reads the flag back
    with Index(tmp_path / "i.db", embedder=fake_embedder, create=False) as idx:
        assert not idx._store.conn.stem_options.german_queries


@pytest.mark.parametrize("lang", [None, GERMAN])
def test_the_fts_table_can_be_rebuilt_from_its_content(
    tmp_path: Path, make_vault: WriteNotes, fake_embedder: FakeEmbedder, lang: str | None
) -> None:
    """`rebuild` re-reads the chunks through the content view, each with its language."""
    text = GERMAN_NOTE if lang else ENGLISH_NOTE
    with Index(tmp_path / "i.db", embedder=fake_embedder) as idx:
        idx.update(make_vault({"n.md": text}))
        query = "Dateiformaten" if lang else "running"
        before = [h.path for h in idx.search(query, mode="bm25")]
        with idx._store.write():
            idx._store.conn.db.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('rebuild')")
        assert [h.path for h in idx.search(query, mode="bm25")] == before == ["n.md"]
        assert idx.check() == []
