"""Older index files are migrated in place; newer ones are refused untouched."""

from __future__ import annotations

import hashlib
import random
import subprocess
import sys
import time
from pathlib import Path

import apsw
import pytest
import sqlite_vec

import noteseek.storage.sqlite.connection as store_module
from noteseek import Index, SchemaVersionError
from noteseek.core.chunker import chunk_note, content_hash, embedding_text
from noteseek.core.language import note_language
from noteseek.core.links import parse_links
from noteseek.embedding.quantize import quantize
from noteseek.engine.update.options import IndexOptions
from noteseek.storage.sqlite.schema import MIGRATIONS, SCHEMA_VERSION
from noteseek.storage.sqlite.store import SqliteStore as Store
from noteseek.storage.tokenizer import StemOptions
from noteseek.storage.tokenizer import register as register_tokenizer

from .conftest import REPO, FakeEmbedder, WriteNotes, note
from .test_crash import write_vault
from .test_stemming import GERMAN_NOTE

NOTES = {
    "security/oauth.md": note(
        "OAuth Token Rotation",
        ("Rotation", "Rotate access tokens when the API answers 401 and retry once."),
        ("Storage", "Keep the refresh token in the system keychain, never in a dotfile."),
        fm="aliases: [Token Renewal]\n",
        tags="security",
    ),
    "db/postgres.md": note(
        "Postgres Vacuum",
        ("Autovacuum", "Autovacuum reclaims dead tuples; tune scale factor for big tables."),
        ("VACUUM FULL", "VACUUM FULL rewrites the table and takes an exclusive lock."),
    ),
    "cooking/bread.md": note(
        "Sourdough",
        ("Starter", "Feed the starter twice a day with equal weights of flour and water."),
    ),
}


def build_v1(db: Path, vault: Path) -> int:
    """A schema-1 index of `vault` with rows as noteseek 0.1 (schema 1) wrote them; chunk count."""
    conn = apsw.Connection(str(db))
    conn.enable_load_extension(True)
    conn.load_extension(sqlite_vec.loadable_path())
    conn.execute("PRAGMA journal_mode=WAL")
    embedder = FakeEmbedder()
    with conn:
        MIGRATIONS[0](conn)
        conn.execute("PRAGMA user_version=1")
        conn.execute(
            "CREATE VIRTUAL TABLE chunks_vec USING vec0(embedding int8[64] distance_metric=cosine)"
        )
        meta = {
            "pipeline": "0123456789abcdef",  # schema 1's pipeline fingerprint (version "1")
            "vault_root": str(vault),
            "model_fingerprint": embedder.fingerprint,
            "vector_dim": "64",
            "model_source": embedder.name,
        }
        conn.executemany("INSERT INTO meta(key, value) VALUES (?, ?)", list(meta.items()))
        total = 0
        for path in sorted(vault.rglob("*.md")):
            rel = path.relative_to(vault).as_posix()
            stat = path.stat()
            parsed = chunk_note(path.read_text(encoding="utf-8"), file_stem=path.stem)
            conn.execute(
                "INSERT INTO files(path, mtime_ns, size, content_hash, title, status, "
                "chunk_count, indexed_at) VALUES (?, ?, ?, 'v1-hash', ?, 'ok', ?, 0)",
                (rel, stat.st_mtime_ns, stat.st_size, parsed.title, len(parsed.chunks)),
            )
            file_id = conn.last_insert_rowid()
            texts = [embedding_text(parsed.title, c.section, c.text) for c in parsed.chunks]
            vectors = quantize(embedder.embed(texts))
            for chunk, text, vector in zip(parsed.chunks, texts, vectors):
                conn.execute(
                    "INSERT INTO chunks(file_id, seq, section, chunk_text, heading_context, "
                    "mtime_ns, content_hash, embedded_at) VALUES (?, ?, ?, ?, ?, ?, ?, 1)",
                    (
                        file_id,
                        chunk.seq,
                        chunk.section,
                        chunk.text,
                        chunk.heading_context,
                        stat.st_mtime_ns,
                        content_hash(text),
                    ),
                )
                conn.execute(
                    "INSERT INTO chunks_vec(rowid, embedding) VALUES (?, vec_int8(?))",
                    (conn.last_insert_rowid(), vector.tobytes()),
                )
                total += 1
    conn.close()
    return total


def paths(idx: Index, query: str, mode: str) -> list[str]:
    return [h.path for h in idx.search(query, mode=mode)]  # type: ignore[arg-type]


def test_v1_index_is_migrated_searchable_and_reprocessed(
    tmp_path: Path, make_vault: WriteNotes
) -> None:
    vault = make_vault(dict(NOTES))
    db = tmp_path / "v1.db"
    chunks = build_v1(db, vault)
    with Index(db, embedder=FakeEmbedder()) as idx:
        assert idx._store.conn.scalar("PRAGMA user_version") == SCHEMA_VERSION
        assert idx.check() == []
        # Searchable straight away, before any update (title/tags fields are empty until then).
        assert paths(idx, "autovacuum dead tuples", "bm25")[0] == "db/postgres.md"
        assert paths(idx, "rotating tokens", "bm25")[0] == "security/oauth.md"  # porter stemming
        assert paths(idx, "refresh token keychain", "vector")[0] == "security/oauth.md"
        stats = idx.update(vault)
        # The pipeline version changed with the schema: every note is processed again, and the
        # unchanged chunk texts keep their vectors.
        assert stats.changed == len(NOTES) and stats.unchanged == 0
        assert stats.vectors_reused == chunks and stats.chunks_embedded == 0
        assert idx.check() == []
        counts = idx._store.counts()
        assert counts["chunks"] == counts["fts"] == counts["vectors"] == counts["embedded"]
        # Fields only the new schema has: aliases in the title field, tags, exact names.
        assert paths(idx, "Token Renewal", "hybrid")[0] == "security/oauth.md"
        assert paths(idx, "security", "bm25") == ["security/oauth.md"]
        migrated = {q: paths(idx, q, m) for q in ("vacuum", "starter flour") for m in ("bm25",)}
    with Index(tmp_path / "clean.db", embedder=FakeEmbedder()) as idx:
        idx.update(vault)
        assert migrated == {q: paths(idx, q, "bm25") for q in ("vacuum", "starter flour")}


def test_a_failed_migration_leaves_the_old_version_and_is_retried(
    tmp_path: Path, make_vault: WriteNotes, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = make_vault(dict(NOTES))
    db = tmp_path / "v1.db"
    build_v1(db, vault)

    def half_done(conn: apsw.Connection) -> None:
        conn.execute("ALTER TABLE chunks ADD COLUMN title TEXT NOT NULL DEFAULT ''")
        raise KeyboardInterrupt  # killed in the middle of the migration

    monkeypatch.setattr(store_module, "MIGRATIONS", (MIGRATIONS[0], half_done))
    with pytest.raises(KeyboardInterrupt):
        Store(db)
    monkeypatch.undo()
    raw = apsw.Connection(str(db))
    assert raw.execute("PRAGMA user_version").fetchone()[0] == 1
    assert "title" not in {r[1] for r in raw.execute("PRAGMA table_info(chunks)")}
    raw.close()
    with Index(db, embedder=FakeEmbedder()) as idx:
        assert idx._store.conn.scalar("PRAGMA user_version") == SCHEMA_VERSION
        assert idx.check() == []
        idx.update(vault)
        assert idx.check() == []


OPENER = """
import sys, time
from pathlib import Path
sys.path.insert(0, {repo!r})
from noteseek.storage.sqlite.store import SqliteStore as Store
from noteseek.storage.tokenizer import StemOptions
from noteseek.storage.tokenizer import register as register_tokenizer
go = Path({go!r})
while not go.exists():
    time.sleep(0.001)
Store({db!r}).close()
"""


@pytest.mark.slow
def test_processes_opening_an_old_file_at_once_migrate_it_once(tmp_path: Path) -> None:
    """Every Store migrates, so searchers and indexers started together race to do it.

    A few hundred notes make the migration (an FTS rebuild) slow enough for the race to happen:
    re-reading the version only outside the write lock failed 4 trials in 5 here.
    """
    vault = tmp_path / "vault"
    write_vault(vault, random.Random(1), 300)
    for trial in range(3):
        db, go = tmp_path / f"v1-{trial}.db", tmp_path / f"go-{trial}"
        build_v1(db, vault)
        code = OPENER.format(repo=str(REPO), go=str(go), db=str(db))
        procs = [
            subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE, text=True)
            for _ in range(4)
        ]
        time.sleep(1.0)  # let every child import and wait at the start line
        go.touch()
        errors = [p.communicate(timeout=60)[1] for p in procs]
        assert [p.returncode for p in procs] == [0] * 4, errors
        with Index(db, embedder=FakeEmbedder()) as idx:
            assert idx._store.conn.scalar("PRAGMA user_version") == SCHEMA_VERSION
            assert idx.check() == []


def test_newer_rollback_journal_file_is_refused_byte_identical(tmp_path: Path) -> None:
    """Refused before anything is changed, not even the journal mode (it lives in the header)."""
    db = tmp_path / "future.db"
    raw = apsw.Connection(str(db))
    raw.execute("CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT); PRAGMA user_version=99")
    raw.close()
    before = db.read_bytes()
    with pytest.raises(SchemaVersionError, match=r"schema version 99.*upgrade noteseek"):
        Index(db, embedder=FakeEmbedder())
    assert db.read_bytes() == before
    assert not Path(f"{db}-wal").exists()


def test_an_interrupted_first_run_after_migration_still_reprocesses_every_note(
    tmp_path: Path, make_vault: WriteNotes
) -> None:
    vault = make_vault(dict(NOTES))
    db = tmp_path / "v1.db"
    build_v1(db, vault)

    def crash(done: int, total: int, path: str) -> None:
        if done == 1:
            raise KeyboardInterrupt  # killed after the first note

    with Index(db, embedder=FakeEmbedder()) as idx, pytest.raises(KeyboardInterrupt):
        idx.update(vault, progress=crash)
    with Index(db, embedder=FakeEmbedder()) as idx:
        idx.update(vault)
        untitled = idx._store.conn.scalar(
            "SELECT count(*) FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.title_field = ''"
        )
        assert untitled == 0


def test_schema_7_chunk_fields_move_to_the_file_row_with_the_fts_index_intact(
    tmp_path: Path, make_vault: WriteNotes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """m008: title and tags fields and the heading context leave the chunks for the file row;
    FTS5 keeps answering from them before any update, and stays exact through one."""
    vault = make_vault(dict(NOTES))
    db = tmp_path / "v1.db"
    build_v1(db, vault)
    monkeypatch.setattr(store_module, "MIGRATIONS", MIGRATIONS[:7])
    monkeypatch.setattr(store_module, "SCHEMA_VERSION", 7)
    store = Store(db)
    with store.write():
        # Every chunk of a file carries the same fields, as schema 7's indexer wrote them.
        store.conn.db.execute(
            "UPDATE chunks SET title = 'zebracorn ' || (SELECT path FROM files WHERE id = file_id), "
            "tags = 'quokkatag', heading_context = 'Context of ' || file_id"
        )
    store.close()
    monkeypatch.undo()
    with Index(db, embedder=FakeEmbedder()) as idx:
        assert idx._store.conn.scalar("PRAGMA user_version") == SCHEMA_VERSION
        assert idx.check() == []
        columns = {r[1] for r in idx._store.conn.db.execute("PRAGMA table_info(chunks)")}
        assert not {"title", "tags", "heading_context"} & columns
        hits = idx.search("zebracorn", mode="bm25", limit=10)
        assert len(hits) == 3 and len(idx.search("quokkatag", mode="bm25", limit=10)) == 3
        assert {h.heading_context.split()[0] for h in hits} == {"Context"}
        idx.update(vault)  # every chunk is deleted with the fields it was indexed with
        assert idx.check() == []
        assert idx.search("zebracorn", mode="bm25") == []
        assert paths(idx, "Token Renewal", "bm25")[0] == "security/oauth.md"


LINKED = {
    "hub.md": note("Hub", ("Centre", "Everything points here.")),
    "a.md": '---\nup: "[[hub]]"\n---\n# Alpha\n\nAlpha links to [[hub]] in its body.\n\n'
    "## See also\n\n- [[hub]] again\n",
    "de/notiz.md": GERMAN_NOTE.replace("bleibt im Ordner.", "bleibt im Ordner. Siehe [[hub]]."),
}


def build_v10(db: Path, vault: Path) -> None:
    """A schema-10 index of `vault` with rows as schema 10 wrote them: each chunk with its file's
    mtime and language and a time for its vector (NULL for the last chunk: not embedded), each
    link with its line; the current pipeline, so an update finds nothing to do."""
    conn = apsw.Connection(str(db))
    conn.enable_load_extension(True)
    conn.load_extension(sqlite_vec.loadable_path())
    register_tokenizer(conn, StemOptions())
    conn.execute("PRAGMA journal_mode=WAL")
    embedder = FakeEmbedder()
    with conn:
        for migration in MIGRATIONS[:10]:
            migration(conn)
        conn.execute("PRAGMA user_version=10")
        conn.execute(
            "CREATE VIRTUAL TABLE chunks_vec USING vec0(embedding int8[64] distance_metric=cosine)"
        )
        meta = {
            "pipeline": IndexOptions().fingerprint(),
            "vault_root": str(vault),
            "model_fingerprint": embedder.fingerprint,
            "vector_dim": "64",
            "model_source": embedder.name,
            "german_notes": "1",  # as schema 10's end of a run found it
        }
        conn.executemany("INSERT INTO meta(key, value) VALUES (?, ?)", list(meta.items()))
        files = sorted(vault.rglob("*.md"))
        for path in files:
            rel = path.relative_to(vault).as_posix()
            stat, data = path.stat(), path.read_bytes()
            text = data.decode("utf-8")
            parsed = chunk_note(text, file_stem=path.stem)
            conn.execute(
                "INSERT INTO files(path, mtime_ns, size, content_hash, title, status, chunk_count, "
                "indexed_at, title_field, heading_context) VALUES (?, ?, ?, ?, ?, 'ok', ?, 0, ?, ?)",
                (
                    rel,
                    stat.st_mtime_ns,
                    stat.st_size,
                    hashlib.sha256(data).hexdigest(),
                    parsed.title,
                    len(parsed.chunks),
                    parsed.title,
                    parsed.chunks[0].heading_context,
                ),
            )
            file_id = conn.last_insert_rowid()
            conn.executemany(
                "INSERT INTO links(file_id, line, target, target_key, fragment, kind, context) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (file_id, k.line, k.target, k.key, k.fragment, k.kind, k.context)
                    for k in parse_links(text)
                ],
            )
            texts = [embedding_text(parsed.title, c.section, c.text) for c in parsed.chunks]
            vectors = quantize(embedder.embed(texts))
            for i, (chunk, embedded, vector) in enumerate(zip(parsed.chunks, texts, vectors)):
                last = path == files[-1] and i == len(parsed.chunks) - 1
                conn.execute(
                    "INSERT INTO chunks(file_id, seq, section, chunk_text, mtime_ns, content_hash, "
                    "embedded_at, lang) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        file_id,
                        chunk.seq,
                        chunk.section,
                        chunk.text,
                        stat.st_mtime_ns,
                        content_hash(embedded),
                        None if last else 1234.5,
                        note_language(text),
                    ),
                )
                if not last:
                    conn.execute(
                        "INSERT INTO chunks_vec(rowid, embedding) VALUES (?, vec_int8(?))",
                        (conn.last_insert_rowid(), vector.tobytes()),
                    )
    conn.close()


def test_schema_10_chunks_move_per_file_facts_and_links_keep_every_line(
    tmp_path: Path, make_vault: WriteNotes
) -> None:
    """m011: chunks lose mtime, language and embedding time (the language moves to the file row,
    the time becomes a flag), links may keep a place in the chunks instead of the line. Nothing
    is lost: the same chunk ids, texts, vectors and FTS5 entries, the same backlink lines, and
    German stems still; an edit then stores the body's line as a place, shown the same."""
    vault = make_vault(dict(LINKED))
    db = tmp_path / "v10.db"
    build_v10(db, vault)
    chunk_sql = (
        "SELECT id, file_id, seq, section, chunk_text, content_hash, {} FROM chunks ORDER BY id"
    )
    link_sql = "SELECT {}, line, target, target_key, fragment, kind, context FROM links"
    raw = apsw.Connection(str(db))
    chunks_before = raw.execute(chunk_sql.format("embedded_at IS NOT NULL")).fetchall()
    links_before = raw.execute(link_sql.format("file_id") + " ORDER BY rowid").fetchall()
    raw.close()
    with Index(db, embedder=FakeEmbedder()) as idx:
        conn = idx._store.conn.db
        assert idx._store.conn.scalar("PRAGMA user_version") == SCHEMA_VERSION
        assert idx.check() == []
        assert conn.execute(chunk_sql.format("embedded")).fetchall() == chunks_before
        assert sum(e for *_, e in chunks_before) == len(chunks_before) - 1
        columns = {r[1] for r in conn.execute("PRAGMA table_info(chunks)")}
        assert not {"mtime_ns", "lang", "embedded_at"} & columns
        langs = dict(conn.execute("SELECT path, lang FROM files").fetchall())
        assert langs == {"hub.md": None, "a.md": None, "de/notiz.md": "de"}
        kinds = "CASE kind WHEN 0 THEN 'wiki' WHEN 1 THEN 'embed' ELSE 'markdown' END"
        migrated = conn.execute(
            link_sql.format("id / 16384").replace("kind", kinds, 1) + " ORDER BY id"
        )
        assert migrated.fetchall() == sorted(links_before, key=lambda r: r[0])
        backlinks = [(b.path, b.line, b.text) for b in idx.links("hub.md").backlinks]
        paths_by_id = idx._store.file_paths()
        assert backlinks == sorted((paths_by_id[f], line, ctx) for f, line, *_, ctx in links_before)
        assert paths(idx, "Dateiformaten", "bm25") == ["de/notiz.md"]  # German stems, as before
        stats = idx.update(vault)
        assert (stats.changed, stats.chunks_embedded) == (0, 1)  # only the missing vector
        assert idx.check() == []
        with (vault / "a.md").open("a", encoding="utf-8") as fh:
            fh.write("\nOne more line.\n")
        with (vault / "de" / "notiz.md").open("a", encoding="utf-8") as fh:
            fh.write("\nNoch eine Zeile.\n")
        assert idx.update(vault).changed == 2
        assert idx.check() == []  # each old chunk left FTS5 with the language it came with
        assert [(b.path, b.line, b.text) for b in idx.links("hub.md").backlinks] == backlinks
        derived = conn.execute(
            "SELECT count(*) FROM links WHERE context IS NULL AND target IS NULL"
        ).fetchone()[0]
        assert derived == 2  # the two body lines; frontmatter and See also keep their text
        outlinks = [(o.target, o.path) for o in idx.links("a.md").outlinks]
        assert outlinks == [("hub", "hub.md")]
        assert paths(idx, "Dateiformaten", "bm25") == ["de/notiz.md"]
