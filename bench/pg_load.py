"""Copy SQLite indexes built by the current noteseek into PostgreSQL, in the proposed schema.

Used by bench/pg_bm25.py and bench/pg_hnsw.py. Each SQLite index becomes one collection: its
files, chunks and int8 vectors (as halfvec: int8 values are exact in float16), and the BM25 term
statistics noteseek would maintain (postings, term_stats, the collection's counts), tokenised by
noteseek's own tokenizer (noteseek.storage.postgres.terms). Ids are the SQLite ids plus
`offset(collection)`, so results map back to the SQLite index row for row.

Also builds the two alternative posting stores measured against the postings table:
`term_arrays` (one row per stem with its postings as arrays) and `chunk_tsv` (a tsvector per
chunk, fed the pre-stemmed tokens with one weight label per field, and a GIN index).
"""

from __future__ import annotations

import io
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # tests.pgserver

import _internals  # noqa: E402
import noteseek  # noqa: E402
from noteseek.storage.postgres.schema import MIGRATIONS  # noqa: E402
from noteseek.storage.postgres.terms import Tokenizer, chunk_terms  # noqa: E402

OFFSET = 100_000_000
WEIGHT_LABEL = ("D", "B", "A", "C")  # tsvector label per field: text, section, title, tags
MAX_POS = 16383  # tsvector's largest position


def offset(collection_id: int) -> int:
    return collection_id * OFFSET


def apply_schema(conn: Any) -> None:
    """Drop everything and apply the migrations (bench database only)."""
    conn.execute(
        "DROP TABLE IF EXISTS chunk_tsv, term_arrays, postings, term_stats, chunks, note_tags, "
        "note_names, files, meta, collections, noteseek_schema CASCADE"
    )
    for m in MIGRATIONS:
        conn.execute(m.sql)
        conn.execute(
            "INSERT INTO noteseek_schema(version, name) VALUES (%s, %s)", (m.version, m.name)
        )


def _escape_copy(value: object) -> str:
    if value is None:
        return "\\N"
    text = str(value)
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def _copy(conn: Any, table: str, columns: str, rows: Iterator[tuple[object, ...]]) -> int:
    count = 0
    with conn.cursor().copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
        buf = io.StringIO()
        for row in rows:
            buf.write("\t".join(_escape_copy(v) for v in row) + "\n")
            count += 1
            if buf.tell() > 1 << 20:
                copy.write(buf.getvalue())
                buf = io.StringIO()
        copy.write(buf.getvalue())
    return count


def _tsv_literal(tf: dict[str, tuple[int, int, int, int]]) -> str:
    """A tsvector literal: each stem with one position per occurrence, labelled by its field."""
    parts = []
    position = 1
    for stem, counts in tf.items():
        entries = []
        for field, n in enumerate(counts):
            for _ in range(n):
                entries.append(f"{min(position, MAX_POS)}{WEIGHT_LABEL[field]}")
                position += 1
        quoted = stem.replace("\\", "\\\\").replace("'", "''")
        parts.append(f"'{quoted}':{','.join(entries)}")
    return " ".join(parts)


def load_collection(
    conn: Any, db_path: Path, name: str, *, alternatives: bool = False
) -> dict[str, Any]:
    """Copy one SQLite index into a new collection; what was copied and how long it took."""
    started = time.perf_counter()
    cid = int(
        conn.execute("INSERT INTO collections(name) VALUES (%s) RETURNING id", (name,)).fetchone()[
            0
        ]
    )
    base = offset(cid)
    with noteseek.Index(db_path, create=False) as idx:
        db = _internals.sqlite_db(idx)
        german = _internals.storage(idx).get_meta("german_notes") == "1"
        matrix = _internals.vector_matrix(idx)
        assert matrix is not None, f"{db_path}: vectors could not be read"
        vectors = {
            int(i): bytes(matrix.rows[n * matrix.dim : (n + 1) * matrix.dim])
            for n, i in enumerate(matrix.ids)
        }
        files = list(
            db.execute(
                "SELECT id, path, mtime_ns, size, content_hash, title, status, problem, "
                "chunk_count, indexed_at, title_field, tags_field, heading_context FROM files"
            )
        )
        _copy(
            conn,
            "files",
            "id, collection_id, path, mtime_ns, size, content_hash, title, status, problem, "
            "chunk_count, indexed_at, title_field, tags_field, heading_context",
            ((base + r[0], cid, *r[1:]) for r in files),
        )
        for table, column in (("note_names", "name"), ("note_tags", "tag")):
            _copy(
                conn,
                table,
                f"collection_id, {column}, file_id",
                (
                    (cid, r[0], base + r[1])
                    for r in db.execute(f"SELECT DISTINCT {column}, file_id FROM {table}")
                ),
            )
        tokenizer = Tokenizer(german_queries=german)
        chunk_rows = []
        vector_rows: list[tuple[object, ...]] = []
        postings: list[tuple[object, ...]] = []
        tsv_rows: list[tuple[object, ...]] = []
        tokens = 0
        for row in db.execute(
            "SELECT c.id, c.file_id, c.seq, c.section, c.chunk_text, f.title_field, "
            # Language and mtime are per file since SQLite's m011, and `embedded` a flag: the
            # loaded rows keep their columns (the file's indexing time stands for embedded_at).
            "f.tags_field, f.lang, f.mtime_ns, c.content_hash, "
            "CASE WHEN c.embedded THEN f.indexed_at END FROM chunks c "
            "JOIN files f ON f.id = c.file_id ORDER BY c.id"
        ):
            (chunk_id, file_id, seq, section, text, title, tags, lang, mtime, h, emb) = row
            terms = chunk_terms(
                tokenizer, text=text, section=section, title=title, tags=tags, lang=lang
            )
            tokens += terms.doc_len
            vec = vectors.get(int(chunk_id))
            literal = None
            if vec is not None:
                literal = "[" + ",".join(str(v) for v in memoryview(vec).cast("b")) + "]"
            pid = base + chunk_id
            chunk_rows.append(
                (pid, cid, base + file_id, seq, section, text, lang, mtime,
                 h, terms.doc_len, emb)
            )  # fmt: skip
            if literal is not None:
                vector_rows.append((pid, cid, literal))
            postings.extend((cid, t, pid, terms.doc_len, *tf) for t, tf in terms.tf.items())
            if alternatives:
                tsv_rows.append((pid, cid, terms.doc_len, _tsv_literal(terms.tf)))
        tokenised = time.perf_counter() - started
        _copy(
            conn,
            "chunks",
            "id, collection_id, file_id, seq, section, chunk_text, "
            "lang, mtime_ns, content_hash, doc_len, embedded_at",
            iter(chunk_rows),
        )
        _copy(conn, "chunk_vectors", "chunk_id, collection_id, embedding", iter(vector_rows))
        _copy(
            conn,
            "postings",
            "collection_id, term, chunk_id, doc_len, tf_text, tf_section, tf_title, tf_tags",
            iter(postings),
        )
    conn.execute(
        "INSERT INTO term_stats(collection_id, term, df) SELECT collection_id, term, count(*) "
        "FROM postings WHERE collection_id = %s GROUP BY collection_id, term",
        (cid,),
    )
    conn.execute(
        "UPDATE collections SET chunk_count = %s, token_count = %s WHERE id = %s",
        (len(chunk_rows), tokens, cid),
    )
    if alternatives:
        _build_alternatives(conn, cid, tsv_rows)
    return {
        "collection": cid,
        "name": name,
        "chunks": len(chunk_rows),
        "postings": len(postings),
        "german_notes": german,
        "tokenise_seconds": round(tokenised, 1),
        "load_seconds": round(time.perf_counter() - started, 1),
    }


def _build_alternatives(conn: Any, cid: int, tsv_rows: list[tuple[object, ...]]) -> None:
    conn.execute(
        "CREATE TABLE IF NOT EXISTS term_arrays(collection_id int NOT NULL, term text NOT NULL, "
        "df int NOT NULL, chunk_ids bigint[] NOT NULL, doc_lens int[] NOT NULL, "
        "tf_text smallint[] NOT NULL, tf_section smallint[] NOT NULL, "
        "tf_title smallint[] NOT NULL, tf_tags smallint[] NOT NULL, "
        "PRIMARY KEY (collection_id, term))"
    )
    conn.execute(
        "INSERT INTO term_arrays SELECT collection_id, term, count(*), "
        "array_agg(chunk_id ORDER BY chunk_id), array_agg(doc_len ORDER BY chunk_id), "
        "array_agg(tf_text ORDER BY chunk_id), array_agg(tf_section ORDER BY chunk_id), "
        "array_agg(tf_title ORDER BY chunk_id), array_agg(tf_tags ORDER BY chunk_id) "
        "FROM postings WHERE collection_id = %s GROUP BY collection_id, term",
        (cid,),
    )
    conn.execute(
        "CREATE TABLE IF NOT EXISTS chunk_tsv(chunk_id bigint PRIMARY KEY, "
        "collection_id int NOT NULL, doc_len int NOT NULL, tsv tsvector NOT NULL)"
    )
    _copy(conn, "chunk_tsv", "chunk_id, collection_id, doc_len, tsv", iter(tsv_rows))
    conn.execute("CREATE INDEX IF NOT EXISTS chunk_tsv_gin ON chunk_tsv USING gin (tsv)")
