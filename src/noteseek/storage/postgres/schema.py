"""The PostgreSQL schema, as append-only migrations. Never edit a released one; add one at the end.

Design (docs/postgres.md; the measurements behind each choice are in bench/results/pg_*.md):

- One database holds every vault; a vault is a row of `collections` and every other table
  carries `collection_id`, so a search names one, several or all collections.
- `collections` also holds BM25's collection statistics (chunks, tokens over the four fields);
  `term_stats` the document frequency of each stem; `postings` one row per (stem, chunk) with the
  term frequency per field and the chunk's length, covered by its primary key so a BM25 query is
  an index-only scan of the query's stems (bm25.py). The indexer keeps all three in step with
  `chunks` in the same transaction as the file it writes.
- Vectors are `halfvec` (the int8 vectors of the SQLite backend are exact in float16, so cosine
  is unchanged) in `chunk_vectors`, one row per embedded chunk, without a fixed dimension, because each collection may use its own model; each
  collection gets its own partial HNSW index over `embedding::halfvec(<dim>)` when it is
  embedded (`hnsw_index_sql`), which also keeps one vault's search from wading through another's
  graph.
- `noteseek_schema` records the migrations applied; a database from a newer noteseek is refused.

Migration 1 is the schema as first released; only new migrations are appended after it.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "Migration", "hnsw_index_name", "hnsw_index_sql"]


@dataclass(frozen=True)
class Migration:
    """One schema step: its version (1, 2, ...), a name and the SQL that performs it."""

    version: int
    name: str
    sql: str


M001_INITIAL = """
CREATE TABLE noteseek_schema(
    version int PRIMARY KEY,
    name text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE collections(
    id int GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name text NOT NULL UNIQUE,                 -- the vault's name, or --collection
    created_at timestamptz NOT NULL DEFAULT now(),
    chunk_count bigint NOT NULL DEFAULT 0,     -- BM25: N
    token_count bigint NOT NULL DEFAULT 0,     -- BM25: avgdl = token_count / chunk_count
    version bigint NOT NULL DEFAULT 0          -- +1 per file written: term-count caches key on it
);
CREATE TABLE meta(
    collection_id int NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
    key text NOT NULL,
    value text NOT NULL,
    PRIMARY KEY (collection_id, key)
);
CREATE TABLE files(
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    collection_id int NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
    path text NOT NULL,                        -- relative to the vault, '/'-separated
    mtime_ns bigint NOT NULL,
    size bigint NOT NULL,
    content_hash text,
    title text,
    status text NOT NULL CHECK (status IN ('ok', 'warning', 'skipped')),
    problem text,
    chunk_count int NOT NULL DEFAULT 0,
    indexed_at double precision NOT NULL,
    UNIQUE (collection_id, path)
);
CREATE TABLE note_names(
    collection_id int NOT NULL,
    name text NOT NULL,                        -- query.name_key() of title, aliases, file name
    file_id bigint NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    PRIMARY KEY (collection_id, name, file_id)
);
CREATE INDEX note_names_by_file ON note_names(file_id);
CREATE TABLE note_tags(
    collection_id int NOT NULL,
    tag text NOT NULL,                         -- query.tag_key()
    file_id bigint NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    PRIMARY KEY (collection_id, tag, file_id)
);
CREATE INDEX note_tags_by_file ON note_tags(file_id);
CREATE TABLE chunks(
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    collection_id int NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
    file_id bigint NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    seq int NOT NULL,
    section text NOT NULL,
    chunk_text text NOT NULL,
    heading_context text NOT NULL,
    title text NOT NULL,                       -- BM25 field: title, aliases, file name
    tags text NOT NULL,                        -- BM25 field: type and tags
    lang text,                                 -- the stemmer of its note (NULL = default)
    mtime_ns bigint NOT NULL,
    content_hash bigint NOT NULL,              -- first 64 bits of sha256(embedded text)
    doc_len int NOT NULL,                      -- tokens over the four BM25 fields
    embedding halfvec,                         -- NULL until embedded; dim per collection (meta)
    embedded_at double precision
);
CREATE INDEX chunks_by_file ON chunks(file_id, seq);
CREATE INDEX chunks_by_hash ON chunks(collection_id, content_hash);
CREATE INDEX chunks_unembedded ON chunks(collection_id, id) WHERE embedded_at IS NULL;
CREATE TABLE term_stats(
    collection_id int NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
    term text NOT NULL,
    df int NOT NULL CHECK (df >= 0),           -- chunks of the collection that hold the stem
    PRIMARY KEY (collection_id, term)
);
CREATE INDEX term_stats_by_df ON term_stats(collection_id, df);  -- the common stems of a query plan
CREATE TABLE postings(
    collection_id int NOT NULL,
    term text NOT NULL,
    chunk_id bigint NOT NULL,                  -- no foreign key: checking it cost a lookup per
                                               -- row written; files.py deletes them with the chunk
    doc_len int NOT NULL,                      -- the chunk's, copied: no join while scoring
    tf_text smallint NOT NULL,
    tf_section smallint NOT NULL,
    tf_title smallint NOT NULL,
    tf_tags smallint NOT NULL,
    PRIMARY KEY (collection_id, term, chunk_id)
        INCLUDE (doc_len, tf_text, tf_section, tf_title, tf_tags)
);
CREATE INDEX postings_by_chunk ON postings(chunk_id);  -- deletes
"""

# SQLite's m005: per file, what the index leaves out of search on purpose (skipped link sections,
# scrubbed secrets), for `status`. Existing rows get 0; the pipeline version that comes
# with it re-processes every note on the next update and fills them in. ADD COLUMN with a constant
# default is a catalog change in PostgreSQL 11+: no table rewrite, however many files.
M002_LEFT_OUT = """
ALTER TABLE files ADD COLUMN skipped_sections int NOT NULL DEFAULT 0;
ALTER TABLE files ADD COLUMN secrets_scrubbed int NOT NULL DEFAULT 0;
"""

# SQLite's m006: documents beside the notes (PDF, Office, spreadsheets, CSV, HTML, canvases).
# Per file what it is, how its extraction ended and the library that read it; per
# chunk where in the document its text is (NULL where a field does not apply: every note chunk)
# and how many leading characters repeat the chunk before. Existing rows are notes (kind NULL).
M003_DOCUMENTS = """
ALTER TABLE files ADD COLUMN kind text;      -- NULL: a Markdown note; else pdf, pptx, xlsx, csv, ...
ALTER TABLE files ADD COLUMN outcome text;   -- documents: ok | encrypted | no_text | corrupt | ...
ALTER TABLE files ADD COLUMN engine text;    -- 'pypdfium2 5.15.2', or 'missing:<module>'
ALTER TABLE chunks ADD COLUMN page int;      -- 1-based PDF page
ALTER TABLE chunks ADD COLUMN page_label text;
ALTER TABLE chunks ADD COLUMN slide int;
ALTER TABLE chunks ADD COLUMN sheet text;
ALTER TABLE chunks ADD COLUMN row_first int;
ALTER TABLE chunks ADD COLUMN row_last int;
ALTER TABLE chunks ADD COLUMN overlap int NOT NULL DEFAULT 0;
"""

# SQLite's m007: per note the distinct index tokens of its title field, tags field and headings,
# for the reranker's coverage features (note_terms.py; filled as notes are re-processed: the
# pipeline bump that comes with it re-processes every note), and the optional multilingual
# lane's int8 vectors by content hash (multilingual_table.py), per collection.
M004_NOTE_TERMS = """
CREATE TABLE note_terms(
    file_id bigint PRIMARY KEY REFERENCES files(id) ON DELETE CASCADE,
    collection_id int NOT NULL,
    title text NOT NULL,      -- space-separated distinct tokens
    tags text NOT NULL,
    headings text NOT NULL
);
CREATE TABLE chunks_e5(
    collection_id int NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
    content_hash bigint NOT NULL,   -- chunks.content_hash of the embedded text
    vector bytea NOT NULL,          -- int8 row of the multilingual model
    PRIMARY KEY (collection_id, content_hash)
);
"""

# SQLite's m008: each file's date (an ISO day or local date-time) and its source (frontmatter,
# filename, document, mtime; core/note_dates.py). Existing rows get NULL until the pipeline bump
# that comes with it re-processes them; a date filter keeps no NULL.
M005_NOTE_DATES = """
ALTER TABLE files ADD COLUMN note_date text;    -- '2026-11-30' or '2026-11-30T14:05:00'
ALTER TABLE files ADD COLUMN date_source text;  -- frontmatter | filename | document | mtime
CREATE INDEX files_by_date ON files(collection_id, note_date);
"""

# SQLite's m009: the links every note makes, as written, and each note's aliases (links.py; the
# columns, the same on both backends, are described once in storage/link_rows.py); backlinks are
# a lookup by target_key, resolved against the paths when read (engine/links.py). Filled as notes
# are re-processed (the pipeline bump that comes with it). IF NOT EXISTS, so the migration stands
# on its own whatever number it gets.
M006_LINKS = """
CREATE TABLE IF NOT EXISTS links(
    id bigserial PRIMARY KEY,
    collection_id int NOT NULL,
    file_id bigint NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    line int NOT NULL,
    target text NOT NULL,
    target_key text NOT NULL,
    fragment text NOT NULL,
    kind text NOT NULL,
    context text NOT NULL
);
CREATE INDEX IF NOT EXISTS links_by_key ON links(collection_id, target_key);
CREATE INDEX IF NOT EXISTS links_by_file ON links(file_id);
CREATE TABLE IF NOT EXISTS note_aliases(
    collection_id int NOT NULL,
    alias text NOT NULL,
    file_id bigint NOT NULL REFERENCES files(id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS note_aliases_by_file ON note_aliases(file_id);
"""

# SQLite's m010: a note's title field, tags field and heading context once, on its file row, not
# copied into every chunk (core/field_caps.py caps them too). The BM25 postings keep the fields'
# term frequencies per chunk (computed from the file's fields when the chunk is written), so
# nothing is re-tokenized; the values are copied from each file's first chunk (every chunk of a
# file carries the same ones). Also the two indexes that let a filter list of any length be one
# statement (as on SQLite, where the path and tag indexes are byte-ordered already).
M007_NOTE_FIELDS_ONCE = """
ALTER TABLE files ADD COLUMN title_field text NOT NULL DEFAULT '';
ALTER TABLE files ADD COLUMN tags_field text NOT NULL DEFAULT '';
ALTER TABLE files ADD COLUMN heading_context text NOT NULL DEFAULT '';
UPDATE files f SET title_field = c.title, tags_field = c.tags, heading_context = c.heading_context
FROM (SELECT DISTINCT ON (file_id) file_id, title, tags, heading_context FROM chunks
      ORDER BY file_id, seq) c
WHERE c.file_id = f.id;
ALTER TABLE chunks DROP COLUMN title, DROP COLUMN tags, DROP COLUMN heading_context;
-- Filters (files.py files_matching): a folder or a tag is a prefix, so its matches are a range of
-- these byte-ordered ("C") indexes, looked up once per filter value whatever the database's
-- collation (under en_US 'a/' .. 'a0' is not the set of strings that start with 'a/').
CREATE INDEX files_by_path_c ON files(collection_id, (path COLLATE "C"));
CREATE INDEX note_tags_by_tag_c ON note_tags(collection_id, (tag COLLATE "C"));
"""

# The vectors in a table of their own, beside the chunks they belong to: an exact KNN scan (every
# collection below vector_table.EXACT_KNN_MAX_CHUNKS) reads vectors only, not the chunks' text
# and metadata that shared their rows (hub: 14 MB of vectors against 31 MB of chunks; the exact
# top 100 in about half the time), and through `chunk_vectors_by_collection` only its own
# collection's rows. `chunks.embedded_at` stays: the unembedded chunks' partial
# index keys on it. Dropping `chunks.embedding` drops the HNSW indexes built over it; the next
# update's checkpoint builds each collection's again, on this table (an exact scan until then).
M008_CHUNK_VECTORS = """
CREATE TABLE chunk_vectors(
    chunk_id bigint PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
    collection_id int NOT NULL,
    embedding halfvec NOT NULL                 -- dim per collection (meta)
);
INSERT INTO chunk_vectors(chunk_id, collection_id, embedding)
SELECT id, collection_id, embedding FROM chunks WHERE embedding IS NOT NULL;
CREATE INDEX chunk_vectors_by_collection ON chunk_vectors(collection_id, chunk_id);
ALTER TABLE chunks DROP COLUMN embedding;
"""

MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "initial", M001_INITIAL),
    Migration(2, "left_out", M002_LEFT_OUT),
    Migration(3, "documents", M003_DOCUMENTS),
    Migration(4, "note_terms", M004_NOTE_TERMS),
    Migration(5, "note_dates", M005_NOTE_DATES),
    Migration(6, "links", M006_LINKS),
    Migration(7, "note_fields_once", M007_NOTE_FIELDS_ONCE),
    Migration(8, "chunk_vectors", M008_CHUNK_VECTORS),
)
SCHEMA_VERSION = MIGRATIONS[-1].version


def hnsw_index_name(collection_id: int) -> str:
    """The name of a collection's HNSW index."""
    return f"chunks_hnsw_c{int(collection_id)}"


def hnsw_index_sql(
    collection_id: int,
    dim: int,
    *,
    m: int = 16,
    ef_construction: int = 200,
    concurrently: bool = False,
) -> str:
    """DDL of a collection's partial HNSW index (cosine over halfvec(dim)).

    ef_construction 200, not pgvector's 64: query vectors lie away from the chunks' and a denser
    graph finds more of their true neighbours (hub recall@100 0.74 -> 0.91 with ef_search 400;
    bench/results/pg_vectors.md); MDN's index (59k chunks) built in 20.9 s so.

    Numbers, not user text, are interpolated: DDL cannot take parameters, and the planner can
    only use a partial index when the collection id in the query is a constant too (bm25.py).
    """
    cid, dim = int(collection_id), int(dim)
    return (
        f"CREATE INDEX {'CONCURRENTLY ' if concurrently else ''}IF NOT EXISTS "
        f"{hnsw_index_name(cid)} ON chunk_vectors USING hnsw "
        f"((embedding::halfvec({dim})) halfvec_cosine_ops) WITH (m = {int(m)}, "
        f"ef_construction = {int(ef_construction)}) WHERE collection_id = {cid}"
    )
