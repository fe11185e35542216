"""Store consistency and incremental indexing, with the fast fake embedder."""

from __future__ import annotations

import os
from pathlib import Path

import apsw
import pytest

from noteseek import Index, IndexOptions, SchemaVersionError
from noteseek.storage.sqlite.store import SqliteStore as Store

from .conftest import FakeEmbedder, WriteNotes, note

NOTES = {
    "security/oauth.md": note(
        "OAuth Token Rotation",
        ("Rotation", "Rotate access tokens when the API answers 401 and retry once."),
        ("Storage", "Keep the refresh token in the system keychain, never in a dotfile."),
        tags="security, authentication",
    ),
    "db/postgres.md": note(
        "Postgres Vacuum",
        ("Autovacuum", "Autovacuum reclaims dead tuples; tune scale factor for big tables."),
        ("VACUUM FULL", "VACUUM FULL rewrites the table and takes an exclusive lock."),
    ),
    "de/miete.md": note(
        "Mietvertrag Kündigung",
        ("Frist", "Die Kündigungsfrist steht in §3 Absatz 2 des Mietvertrags: drei Monate."),
    ),
}


def assert_consistent(idx: Index) -> None:
    assert idx.check() == []
    counts = idx._store.counts()
    assert counts["chunks"] == counts["fts"] == counts["vectors"] == counts["embedded"]


@pytest.fixture
def vault(make_vault: WriteNotes) -> Path:
    return make_vault(dict(NOTES))


def test_full_index_then_noop(tmp_path: Path, vault: Path, fake_embedder: FakeEmbedder) -> None:
    with Index(tmp_path / "i.db", embedder=fake_embedder) as idx:
        stats = idx.update(vault)
        assert (stats.added, stats.changed, stats.removed, stats.skipped) == (3, 0, 0, 0)
        assert stats.chunks == idx._store.counts()["chunks"] > 3
        assert_consistent(idx)
        embedded = fake_embedder.texts_embedded
        again = idx.update(vault)
        assert (again.added, again.changed, again.unchanged) == (0, 0, 3)
        assert fake_embedder.texts_embedded == embedded  # nothing re-embedded
        assert_consistent(idx)


def test_change_add_delete_keep_all_tables_in_step(
    tmp_path: Path, vault: Path, fake_embedder: FakeEmbedder
) -> None:
    with Index(tmp_path / "i.db", embedder=fake_embedder) as idx:
        idx.update(vault)
        (vault / "db/postgres.md").write_text(
            note(
                "Postgres Vacuum",
                ("Autovacuum", "Autovacuum reclaims dead tuples; tune it."),
                ("Bloat", "Table bloat shows up as pg_stat_user_tables n_dead_tup growth."),
            ),
            encoding="utf-8",
        )
        os.remove(vault / "de/miete.md")
        (vault / "new.md").write_text("# New\n\nA brand new note about kubernetes rollouts.\n")
        stats = idx.update(vault)
        assert (stats.added, stats.changed, stats.removed) == (1, 1, 1)
        assert_consistent(idx)
        paths = {h.path for h in idx.search("kündigungsfrist mietvertrag", mode="bm25")}
        assert "de/miete.md" not in paths
        assert idx.search("bloat n_dead_tup", mode="bm25")[0].path == "db/postgres.md"
        assert idx.search("exclusive lock rewrites", mode="bm25") == []  # old text is gone
        assert idx.search("kubernetes rollouts", mode="bm25")[0].path == "new.md"


def test_touched_but_unchanged_file_is_not_reembedded(
    tmp_path: Path, vault: Path, fake_embedder: FakeEmbedder
) -> None:
    with Index(tmp_path / "i.db", embedder=fake_embedder) as idx:
        idx.update(vault)
        before = fake_embedder.texts_embedded
        target = vault / "security/oauth.md"
        os.utime(target, ns=(target.stat().st_atime_ns, target.stat().st_mtime_ns + 10**9))
        stats = idx.update(vault)
        assert stats.changed == 0 and stats.unchanged == 3
        assert fake_embedder.texts_embedded == before
        # And the new mtime is remembered, so the next run does not even read the file.
        assert idx._store.file_states()["security/oauth.md"].mtime_ns == target.stat().st_mtime_ns


def test_editing_one_section_reuses_the_other_vectors(
    tmp_path: Path, vault: Path, fake_embedder: FakeEmbedder
) -> None:
    with Index(tmp_path / "i.db", embedder=fake_embedder) as idx:
        idx.update(vault)
        text = (vault / "security/oauth.md").read_text()
        (vault / "security/oauth.md").write_text(text.replace("never in a dotfile", "or a vault"))
        before = fake_embedder.texts_embedded
        stats = idx.update(vault)
        assert stats.changed == 1
        assert fake_embedder.texts_embedded - before == 1  # only the edited section
        assert stats.vectors_reused >= 2
        assert_consistent(idx)


def test_model_change_reembeds_everything(tmp_path: Path, vault: Path) -> None:
    db = tmp_path / "i.db"
    with Index(db, embedder=FakeEmbedder(dim=64)) as idx:
        idx.update(vault)
        chunks = idx._store.counts()["chunks"]
    new_model = FakeEmbedder(dim=32, version="v2")
    with Index(db, embedder=new_model) as idx:
        stats = idx.update(vault)
        assert stats.unchanged == 3
        assert new_model.texts_embedded == chunks == stats.chunks_embedded
        assert idx._store.get_meta("model_fingerprint") == "fake:32:v2"
        assert_consistent(idx)
        assert idx.search("refresh token keychain", mode="vector")[0].path == "security/oauth.md"


def test_full_rebuild_reembeds(tmp_path: Path, vault: Path, fake_embedder: FakeEmbedder) -> None:
    with Index(tmp_path / "i.db", embedder=fake_embedder) as idx:
        idx.update(vault)
        before = fake_embedder.texts_embedded
        stats = idx.update(vault, full=True)
        assert stats.changed == 3
        assert fake_embedder.texts_embedded - before == stats.chunks
        assert_consistent(idx)


def test_bad_files_are_skipped_named_and_the_rest_indexed(
    tmp_path: Path, make_vault: WriteNotes, fake_embedder: FakeEmbedder
) -> None:
    vault = make_vault(
        {
            "good.md": note("Good", ("Body", "A perfectly fine note about sqlite wal mode.")),
            "binary.md": b"\x89PNG\r\n\x1a\n" + b"\x00" * 200,
            "latin1.md": "# Caf\xe9\n\nNotes about the caf\xe9 on the corner, long enough.".encode(
                "latin-1"
            ),
            "badyaml.md": "---\ntitle: [oops\n---\n# Broken YAML\n\nThe body survives broken YAML.\n",
            "empty.md": "",
            "utf16.md": "# Wide\n\nA note saved as UTF-16 by an old editor.".encode("utf-16"),
            ".hidden/secret.md": "# Hidden\n\nThis lives in a dot-folder and is not indexed.\n",
            ".obsidian/workspace.md": "# Workspace\n\nObsidian config folder content here.\n",
            "notes.rtf": "not markdown, nor a document kind noteseek reads",
        }
    )
    with Index(tmp_path / "i.db", embedder=fake_embedder) as idx:
        stats = idx.update(vault)
        problems = dict(stats.problems)
        assert "binary" in problems["binary.md"]
        assert "read as Windows-1252" in problems["latin1.md"]
        assert "not valid YAML" in problems["badyaml.md"]
        assert stats.skipped == 1
        assert stats.files_seen == 6
        assert idx.search("café corner", mode="bm25")[0].path == "latin1.md"
        assert idx.search("survives broken yaml", mode="bm25")[0].path == "badyaml.md"
        assert idx.search("old editor utf", mode="bm25")[0].path == "utf16.md"
        assert idx.search("dot-folder obsidian config", mode="bm25") == []
        status_problems = {p for p, _, _ in idx.status().problems}
        assert {"binary.md", "latin1.md", "badyaml.md"} <= status_problems
        assert_consistent(idx)


def test_include_and_exclude_folders(
    tmp_path: Path, vault: Path, fake_embedder: FakeEmbedder
) -> None:
    with Index(
        tmp_path / "a.db", embedder=fake_embedder, options=IndexOptions(include=("db",))
    ) as idx:
        idx.update(vault)
        assert set(idx._store.file_states()) == {"db/postgres.md"}
    options = IndexOptions(exclude=(".obsidian", "de"))
    with Index(tmp_path / "b.db", embedder=fake_embedder, options=options) as idx:
        idx.update(vault)
        assert set(idx._store.file_states()) == {"db/postgres.md", "security/oauth.md"}


def test_symlink_outside_the_vault_is_not_followed(
    tmp_path: Path, vault: Path, fake_embedder: FakeEmbedder
) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("# Outside\n\nPrivate text outside the vault must not be indexed.\n")
    (vault / "link.md").symlink_to(outside)
    (vault / "loop").symlink_to(vault, target_is_directory=True)
    with Index(tmp_path / "i.db", embedder=fake_embedder) as idx:
        stats = idx.update(vault)
        assert dict(stats.problems)["link.md"] == "symlink points outside the vault"
        assert idx.search("private text outside", mode="bm25") == []
        assert stats.files_seen == 3


def test_interrupt_stops_after_current_file_with_consistent_index(
    tmp_path: Path, make_vault: WriteNotes, fake_embedder: FakeEmbedder
) -> None:
    import signal

    vault = make_vault(
        {f"n{i:03}.md": note(f"Note {i}", ("Body", f"Unique word w{i} here.")) for i in range(60)}
    )
    seen = []

    def progress(done: int, total: int, path: str) -> None:
        seen.append(path)
        if done == 10:
            os.kill(os.getpid(), signal.SIGINT)  # what Ctrl-C does

    with Index(tmp_path / "i.db", embedder=fake_embedder) as idx:
        stats = idx.update(vault, progress=progress)
        assert stats.interrupted
        assert 10 <= stats.added < 60
        assert_consistent(idx)
        resumed = idx.update(vault)
        assert not resumed.interrupted
        assert resumed.added == 60 - stats.added
        # A first build resumes where it stopped: what it wrote is not processed again.
        assert resumed.changed == 0 and resumed.unchanged == stats.added
        assert_consistent(idx)


def test_newer_schema_is_refused_not_damaged(tmp_path: Path) -> None:
    db = tmp_path / "i.db"
    Store(db).close()
    raw = apsw.Connection(str(db))
    raw.execute("PRAGMA user_version=999")
    raw.close()
    before = db.read_bytes()
    with pytest.raises(SchemaVersionError, match="upgrade noteseek"):
        Store(db)
    assert db.read_bytes() == before


def test_vectors_unavailable_degrades_to_bm25(
    tmp_path: Path, vault: Path, fake_embedder: FakeEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    import noteseek.storage.sqlite.connection as store_module

    monkeypatch.setattr(store_module, "_load_sqlite_vec", lambda db: "OSError: simulated")
    with Index(tmp_path / "i.db", embedder=fake_embedder) as idx:
        stats = idx.update(vault)
        assert not stats.vectors
        hits = idx.search("refresh token keychain", mode="hybrid")
        assert hits and hits[0].path == "security/oauth.md" and hits[0].vec_rank is None
        assert idx.search("refresh token keychain", mode="vector")[0].path == "security/oauth.md"
        status = idx.status()
        assert not status.vector_support and "simulated" in (status.vector_problem or "")
        assert idx.check() == []
    monkeypatch.undo()
    # Once sqlite-vec is back, the next run embeds what is missing.
    with Index(tmp_path / "i.db", embedder=fake_embedder) as idx:
        stats = idx.update(vault)
        assert stats.chunks_embedded == stats.chunks
        assert_consistent(idx)


def test_one_hit_per_note_with_its_best_section_and_explanations(
    tmp_path: Path, vault: Path, fake_embedder: FakeEmbedder
) -> None:
    with Index(tmp_path / "i.db", embedder=fake_embedder) as idx:
        idx.update(vault)
        hits = idx.search("VACUUM FULL exclusive lock rewrites", limit=10, explain=True)
        paths = [h.path for h in hits]
        assert len(paths) == len(set(paths))  # one hit per note
        assert hits[0].path == "db/postgres.md" and hits[0].section == "VACUUM FULL"
        e = hits[0].explanation
        assert e is not None and e.fusion == "convex"
        assert e.fused == pytest.approx(e.bm25_term + e.vector_term)
        assert e.probability is not None and hits[0].score == pytest.approx(e.probability)
        assert idx.search("postgres", explain=False)[0].explanation is None


def test_exact_title_alias_or_file_name_ranks_first(
    tmp_path: Path, make_vault: WriteNotes, fake_embedder: FakeEmbedder
) -> None:
    vault = make_vault(
        {
            "pkvs.md": "---\naliases: [Persistent Key-Value Store]\n---\n# PKVS\n\nA plugin note.\n",
            "other.md": note(
                "Storage overview",
                (
                    "Stores",
                    "A persistent key value store keeps a value per key; persistent "
                    "store, key value, value store, store store store.",
                ),
            ),
            "notes/Daily Log.md": "Some daily notes about nothing in particular here.",
        }
    )
    with Index(tmp_path / "i.db", embedder=fake_embedder) as idx:
        idx.update(vault)
        top = idx.search("Persistent key-value store", explain=True)[0]
        assert top.path == "pkvs.md" and top.explanation and top.explanation.exact_name
        assert idx.search("daily log")[0].path == "notes/Daily Log.md"  # by file name
        assert idx.search("pkvs")[0].path == "pkvs.md"  # by H1 title


def test_rrf_fusion_is_still_available(
    tmp_path: Path, vault: Path, fake_embedder: FakeEmbedder
) -> None:
    from noteseek import SearchSettings

    settings = SearchSettings(fusion="rrf", exact_names=False)
    with Index(tmp_path / "i.db", embedder=fake_embedder, settings=settings) as idx:
        idx.update(vault)
        hit = idx.search("refresh token keychain", explain=True)[0]
        assert hit.path == "security/oauth.md"
        assert hit.explanation is not None and hit.explanation.fusion == "rrf"
        e = hit.explanation
        assert e.fused == pytest.approx(e.bm25_term + e.vector_term) and 0 <= hit.score <= 1


def test_allow_list_keeps_a_known_false_positive_and_rescrubs_on_change(
    tmp_path: Path, make_vault: WriteNotes, fake_embedder: FakeEmbedder
) -> None:
    from noteseek import Allowlist

    vault = make_vault(
        {
            "demo.md": "# Demo\n\nThe tutorial login is `password: tutorialpass2024` for the sandbox.\n"
        }
    )
    db = tmp_path / "i.db"
    with Index(db, embedder=fake_embedder) as idx:
        idx.update(vault)
        assert idx.search("tutorialpass2024", mode="bm25") == []  # scrubbed by default
    allow = Allowlist(regexes=(r"tutorialpass\d+",))
    with Index(db, embedder=fake_embedder, options=IndexOptions(allow=allow)) as idx:
        stats = idx.update(vault)
        assert stats.changed == 1  # a new allow-list re-scrubs the notes
        assert idx.search("tutorialpass2024", mode="bm25")[0].path == "demo.md"


def test_a_folder_with_an_ignore_marker_is_not_indexed(
    tmp_path: Path, make_vault: WriteNotes, fake_embedder: FakeEmbedder
) -> None:
    vault = make_vault(
        {
            "keep/a.md": "# A\n\nkept note text here",
            "private/b.md": "# B\n\nprivate note text here",
            "private/deeper/c.md": "# C\n\nalso private text",
            "private/.noteseekignore": "",
        }
    )
    with Index(tmp_path / "i.db", embedder=fake_embedder) as idx:
        idx.update(vault)
        paths = {r[0] for r in idx._store.conn.db.execute("SELECT path FROM files")}
        assert paths == {"keep/a.md"}
        # Adding the marker later drops the folder's notes on the next run.
        (vault / "keep" / ".noteseekignore").touch()
        idx.update(vault)
        assert idx._store.conn.scalar("SELECT count(*) FROM files") == 0


def test_max_term_share_leaves_common_words_out_of_bm25(
    tmp_path: Path, make_vault: WriteNotes, fake_embedder: FakeEmbedder
) -> None:
    # 'widget' is in 4 of 10 notes (40 %), 'sprocket' in one.
    files: dict[str, str | bytes] = {
        f"n{i}.md": f"# Note {i}\n\n{'widget ' * 5 if i < 4 else 'filler '}text number {i}."
        for i in range(10)
    }
    files["n9.md"] = "# Note 9\n\nthe sprocket text lives here."
    vault = make_vault(files)
    with Index(tmp_path / "i.db", embedder=fake_embedder) as idx:
        idx.update(vault)
        full = [h.path for h in idx.search("widget sprocket", mode="bm25", limit=10)]
        pruned = [h.path for h in idx.search("widget sprocket", mode="bm25", limit=10, max_term_share=0.2)]
        assert set(full) == {"n0.md", "n1.md", "n2.md", "n3.md", "n9.md"}
        assert pruned == ["n9.md"]  # 'widget' (40 % > 20 %) was left out
        # A query made only of common words keeps them rather than matching nothing.
        assert len(idx.search("widget", mode="bm25", limit=10, max_term_share=0.2)) == 4


def test_rewriting_most_notes_leaves_a_text_index_as_small_as_a_fresh_one(
    tmp_path: Path, make_vault: WriteNotes, fake_embedder: FakeEmbedder
) -> None:
    vault = make_vault(
        {
            f"n{i}.md": note(f"Note {i}", ("Body", f"word{i} shared text " * 30), ("More", "x " * 40))
            for i in range(60)
        }
    )

    def fts_bytes(idx: Index) -> int:
        return int(idx._store.conn.scalar("SELECT sum(length(block)) FROM chunks_fts_data"))

    with Index(tmp_path / "fresh.db", embedder=fake_embedder) as fresh:
        fresh.update(vault)
        fresh_size = fts_bytes(fresh)
        # A first build deletes nothing, so it does not merge (which would leave free pages).
        assert fresh._store.conn.scalar("PRAGMA freelist_count") == 0
    with Index(tmp_path / "i.db", embedder=fake_embedder) as idx:
        idx.update(vault)
        for _ in range(3):
            idx.update(vault, full=True)  # every note deleted and written again
        # Without a merge FTS5 keeps the deleted rows' terms until segments happen to merge.
        assert fts_bytes(idx) <= fresh_size * 1.1
        assert idx.search("word7 shared", mode="bm25", limit=3)[0].path == "n7.md"


def test_an_index_opened_without_options_keeps_the_folders_it_was_built_with(
    tmp_path: Path, make_vault: WriteNotes, fake_embedder: FakeEmbedder
) -> None:
    vault = make_vault({"work/a.md": "# A\n\nwork note text", "private/b.md": "# B\n\ndiary text"})
    options = IndexOptions(exclude=(*IndexOptions().exclude, "private"))
    with Index(tmp_path / "i.db", embedder=fake_embedder, options=options) as idx:
        idx.update(vault)
    (vault / "private" / "c.md").write_text("# C\n\nmore diary text")
    # What a background refresh (MCP --refresh) does: open the file, update, no options given.
    with Index(tmp_path / "i.db", embedder=fake_embedder) as idx:
        assert "private" in idx.options.exclude
        idx.update(vault)
        paths = {r[0] for r in idx._store.conn.db.execute("SELECT path FROM files")}
    assert paths == {"work/a.md"}


@pytest.mark.parametrize("fusion", ["convex", "rrf"])
def test_the_first_hits_do_not_depend_on_limit(
    tmp_path: Path, make_vault: WriteNotes, fake_embedder: FakeEmbedder, fusion: str
) -> None:
    """Asking for 100 hits must not reshuffle the first 10 (the lists are read further, but
    only their heads decide the ranking)."""
    import random

    from noteseek import SearchSettings

    rng = random.Random(11)
    words = [f"w{i}" for i in range(60)]
    notes = {
        f"d{n // 40}/n{n:03}.md": note(
            f"Note {n}",
            *[(f"Part {p}", " ".join(rng.choices(words, k=rng.randint(3, 30)))) for p in range(3)],
        )
        for n in range(160)
    }
    settings = SearchSettings(fusion=fusion)  # type: ignore[arg-type]
    with Index(tmp_path / "i.db", embedder=fake_embedder, settings=settings) as idx:
        idx.update(make_vault(notes))
        for query in ("w1 w2", "w3 w17 w40 w59", "w5", "Note 7 Part 1"):
            for mode in ("hybrid", "bm25", "vector"):
                first = [(h.path, h.chunk_id, h.score) for h in idx.search(query, mode=mode)]
                for limit in (31, 100):
                    more = idx.search(query, mode=mode, limit=limit)
                    assert [(h.path, h.chunk_id, h.score) for h in more[:10]] == first, (
                        query,
                        mode,
                        limit,
                    )


def test_a_no_op_update_loads_no_preparing_stage(tmp_path: Path) -> None:
    """A run that finds nothing changed compiles no scrubber rule and imports neither YAML nor
    the preparing and extraction pools (their imports were most of a fresh no-op run's time)."""
    import subprocess
    import sys

    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "a.md").write_text("---\ntags: [x]\n---\n# A\n\nSome text about rebases.\n")
    (vault / "b.pdf").write_bytes(b"%PDF-1.4 not really")
    build = (
        "import sys, noteseek\n"
        "with noteseek.Index(sys.argv[1]) as idx:\n"
        "    idx.update(sys.argv[2])\n"
    )
    again = (
        "import sys, noteseek\n"
        "heavy = ['yaml', 'noteseek.secrets.scrubber', 'noteseek.documents.pool',\n"
        "         'noteseek.engine.update.workers', 'noteseek.engine.update.prepare']\n"
        "with noteseek.Index(sys.argv[1]) as idx:\n"
        "    before = {m for m in heavy if m in sys.modules}\n"
        "    s = idx.update(sys.argv[2])\n"
        "    assert s.unchanged == 2 and not (s.added or s.changed), s\n"
        "    print(sorted(m for m in heavy if m in sys.modules and m not in before))\n"
    )
    args = [str(tmp_path / "i.db"), str(vault)]
    for code in (build, again):  # each in a process of its own: the second starts with none
        out = subprocess.run(
            [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300
        )
        assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
