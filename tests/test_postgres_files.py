"""A batch of files written together on PostgreSQL (`replace_files`) leaves the rows that
writing them one at a time leaves (`replace_file`, a batch of one): the same files, chunks in the
same id order, vectors, postings, names, tags, links, aliases, note terms and statistics.

Needs a PostgreSQL server (tests/postgres_fixtures.py): skips locally without one, fails in CI.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from noteseek import DatabaseUrl, Index
from noteseek.core.locator import with_collection
from noteseek.storage.postgres.files import FileRows

from .conftest import SAMPLE_VAULT, FakeEmbedder

# Each table's rows of one collection, ids replaced by their rank in the collection (ids come
# from sequences shared by collections) and file ids by paths.
_TABLES = {
    "files": "SELECT path, mtime_ns, size, content_hash, title, status, problem, chunk_count, "
    "skipped_sections, secrets_scrubbed, kind, outcome, engine, note_date, date_source, "
    "title_field, tags_field, heading_context, rank() OVER (ORDER BY id) FROM files "
    "WHERE collection_id = %(c)s ORDER BY id",
    "chunks": "SELECT f.path, c.seq, c.section, c.chunk_text, c.lang, c.mtime_ns, "
    "c.content_hash, c.doc_len, c.embedded_at IS NULL, c.page, c.page_label, c.slide, c.sheet, "
    "c.row_first, c.row_last, c.overlap, rank() OVER (ORDER BY c.id) FROM chunks c "
    "JOIN files f ON f.id = c.file_id WHERE c.collection_id = %(c)s ORDER BY c.id",
    "vectors": "SELECT f.path, c.seq, v.embedding::text FROM chunk_vectors v "
    "JOIN chunks c ON c.id = v.chunk_id JOIN files f ON f.id = c.file_id "
    "WHERE v.collection_id = %(c)s ORDER BY c.id",
    "postings": "SELECT f.path, c.seq, p.term, p.doc_len, p.tf_text, p.tf_section, p.tf_title, "
    "p.tf_tags FROM postings p JOIN chunks c ON c.id = p.chunk_id JOIN files f "
    "ON f.id = c.file_id WHERE p.collection_id = %(c)s ORDER BY c.id, p.term",
    "term_stats": "SELECT term, df FROM term_stats WHERE collection_id = %(c)s ORDER BY term",
    "names": "SELECT f.path, n.name FROM note_names n JOIN files f ON f.id = n.file_id "
    "WHERE n.collection_id = %(c)s ORDER BY 1, 2",
    "tags": "SELECT f.path, t.tag FROM note_tags t JOIN files f ON f.id = t.file_id "
    "WHERE t.collection_id = %(c)s ORDER BY 1, 2",
    "links": "SELECT f.path, k.line, k.target, k.target_key, k.fragment, k.kind, k.context, "
    "rank() OVER (ORDER BY k.id) FROM links k JOIN files f ON f.id = k.file_id "
    "WHERE k.collection_id = %(c)s ORDER BY k.id",
    "aliases": "SELECT f.path, a.alias FROM note_aliases a JOIN files f ON f.id = a.file_id "
    "WHERE a.collection_id = %(c)s ORDER BY 1, 2",
    "note_terms": "SELECT f.path, t.title, t.tags, t.headings FROM note_terms t JOIN files f "
    "ON f.id = t.file_id WHERE t.collection_id = %(c)s ORDER BY 1",
    "counts": "SELECT chunk_count, token_count, version FROM collections WHERE id = %(c)s",
}


def _rows(idx: Index) -> dict[str, list[tuple[Any, ...]]]:
    conn = idx._store.conn  # type: ignore[attr-defined]
    cid = conn.collections.only
    return {name: conn.rows(sql, {"c": cid}) for name, sql in _TABLES.items()}


def test_a_batch_writes_what_one_file_at_a_time_writes(
    pg_schema: str, tmp_path: Path, fake_embedder: FakeEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(SAMPLE_VAULT, vault, symlinks=True)
    batch_url = DatabaseUrl(with_collection(pg_schema, "batch"))
    serial_url = DatabaseUrl(with_collection(pg_schema, "serial"))
    calls: list[int] = []
    batched = FileRows.replace_files

    def counted(self: FileRows, files: Any) -> None:
        calls.append(len(files))
        batched(self, files)

    monkeypatch.setattr(FileRows, "replace_files", counted)
    with Index(batch_url, embedder=fake_embedder) as idx:
        idx.update(vault)
        batch = _rows(idx)
    assert max(calls) > 10  # the sample vault's notes went in batches, not one by one

    def one_by_one(self: FileRows, files: Any) -> None:
        for file in files:
            batched(self, [file])  # what replace_file does

    monkeypatch.setattr(FileRows, "replace_files", one_by_one)
    with Index(serial_url, embedder=fake_embedder) as idx:
        idx.update(vault)
        serial = _rows(idx)
    for name in _TABLES:
        assert batch[name] == serial[name], name
    assert len(batch["chunks"]) > 40 and batch["links"] and batch["tags"] and batch["vectors"]

    # A second run that changes some notes and adds one: existing files are replaced in a batch.
    for path in sorted(vault.rglob("*.md"))[:5]:
        path.write_text(path.read_text(encoding="utf-8") + "\n\nOne more line.\n", "utf-8")
    (vault / "added.md").write_text("# Added\n\nA note [[with a link]] #tagged\n", "utf-8")
    for url, way in ((batch_url, counted), (serial_url, one_by_one)):
        monkeypatch.setattr(FileRows, "replace_files", way)
        with Index(url, embedder=fake_embedder) as idx:
            idx.update(vault)
            (batch if url is batch_url else serial).update(_rows(idx))
    for name in _TABLES:
        assert batch[name] == serial[name], name
