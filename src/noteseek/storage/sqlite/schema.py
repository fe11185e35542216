"""Append-only schema migrations. Never edit a released migration; add a new one at the end."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["MIGRATIONS", "SCHEMA_VERSION"]

Connection = Any  # apsw.Connection; typed loosely because apsw ships no stubs for every version


def m001_initial(db: Connection) -> None:
    """Files, chunks, an external-content FTS5 index and the meta table."""
    db.execute(
        """
        CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE files(
            id INTEGER PRIMARY KEY,
            path TEXT NOT NULL UNIQUE,       -- relative to the vault, '/'-separated
            mtime_ns INTEGER NOT NULL,
            size INTEGER NOT NULL,
            content_hash TEXT,
            title TEXT,
            status TEXT NOT NULL,            -- ok | warning | skipped
            problem TEXT,                    -- why it was skipped or what was wrong
            chunk_count INTEGER NOT NULL DEFAULT 0,
            indexed_at REAL NOT NULL
        );
        CREATE TABLE chunks(
            id INTEGER PRIMARY KEY,
            file_id INTEGER NOT NULL REFERENCES files(id),  -- an id, not the path: ~7 MB less per 50k chunks
            seq INTEGER NOT NULL,
            section TEXT NOT NULL,
            chunk_text TEXT NOT NULL,
            heading_context TEXT NOT NULL,
            mtime_ns INTEGER NOT NULL,
            content_hash INTEGER NOT NULL,   -- first 64 bits of sha256(embedded text): vectors are reused by it
            embedded_at REAL                 -- NULL until the chunk has a vector
        );
        CREATE INDEX chunks_by_file ON chunks(file_id, seq);
        CREATE INDEX chunks_by_hash ON chunks(content_hash);
        -- External content keeps the text once. FTS5 cannot see changes to `chunks` by itself, so
        -- every insert and delete is mirrored by these triggers; without the 'delete' commands the
        -- index would silently keep stale terms.
        CREATE VIRTUAL TABLE chunks_fts USING fts5(
            chunk_text, section, heading_context,
            content='chunks', content_rowid='id',
            tokenize='unicode61 remove_diacritics 2'
        );
        CREATE TRIGGER chunks_ai AFTER INSERT ON chunks BEGIN
            INSERT INTO chunks_fts(rowid, chunk_text, section, heading_context)
            VALUES (new.id, new.chunk_text, new.section, new.heading_context);
        END;
        CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN
            INSERT INTO chunks_fts(chunks_fts, rowid, chunk_text, section, heading_context)
            VALUES ('delete', old.id, old.chunk_text, old.section, old.heading_context);
        END;
        CREATE TRIGGER chunks_au AFTER UPDATE OF chunk_text, section, heading_context ON chunks BEGIN
            INSERT INTO chunks_fts(chunks_fts, rowid, chunk_text, section, heading_context)
            VALUES ('delete', old.id, old.chunk_text, old.section, old.heading_context);
            INSERT INTO chunks_fts(rowid, chunk_text, section, heading_context)
            VALUES (new.id, new.chunk_text, new.section, new.heading_context);
        END;
        """
    )


def m002_title_fields_and_names(db: Connection) -> None:
    """Title and tags as their own BM25 fields, English stemming, and exact note-name lookup.

    The title field holds the note's title, aliases and file name; tags holds type and tags. The
    porter stemmer lets `rotate` find `rotating` (and folds many German plurals too). Existing rows
    get empty title/tags until the next update re-processes every note (the pipeline version is
    bumped with this migration), so searching keeps working in between.
    """
    db.execute(
        """
        ALTER TABLE chunks ADD COLUMN title TEXT NOT NULL DEFAULT '';
        ALTER TABLE chunks ADD COLUMN tags TEXT NOT NULL DEFAULT '';
        DROP TRIGGER chunks_ai;
        DROP TRIGGER chunks_ad;
        DROP TRIGGER chunks_au;
        DROP TABLE chunks_fts;
        CREATE VIRTUAL TABLE chunks_fts USING fts5(
            chunk_text, section, title, tags,
            content='chunks', content_rowid='id',
            tokenize='porter unicode61 remove_diacritics 2'
        );
        INSERT INTO chunks_fts(chunks_fts) VALUES ('rebuild');
        CREATE TRIGGER chunks_ai AFTER INSERT ON chunks BEGIN
            INSERT INTO chunks_fts(rowid, chunk_text, section, title, tags)
            VALUES (new.id, new.chunk_text, new.section, new.title, new.tags);
        END;
        CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN
            INSERT INTO chunks_fts(chunks_fts, rowid, chunk_text, section, title, tags)
            VALUES ('delete', old.id, old.chunk_text, old.section, old.title, old.tags);
        END;
        CREATE TRIGGER chunks_au AFTER UPDATE OF chunk_text, section, title, tags ON chunks BEGIN
            INSERT INTO chunks_fts(chunks_fts, rowid, chunk_text, section, title, tags)
            VALUES ('delete', old.id, old.chunk_text, old.section, old.title, old.tags);
            INSERT INTO chunks_fts(rowid, chunk_text, section, title, tags)
            VALUES (new.id, new.chunk_text, new.section, new.title, new.tags);
        END;
        -- Normalised note names (title, aliases, file name) for exact-name matches.
        CREATE TABLE note_names(
            name TEXT NOT NULL,
            file_id INTEGER NOT NULL REFERENCES files(id)
        );
        CREATE INDEX note_names_by_name ON note_names(name);
        CREATE INDEX note_names_by_file ON note_names(file_id);
        """
    )


def m003_note_tags(db: Connection) -> None:
    """Each note's frontmatter tags, normalised by `tag_key`, for tag filters in search.

    Filled as notes are (re-)processed; the pipeline version bump that comes with this migration
    makes the next update re-process every note (vectors are reused by content hash).
    """
    db.execute(
        """
        CREATE TABLE note_tags(
            tag TEXT NOT NULL,
            file_id INTEGER NOT NULL REFERENCES files(id)
        );
        CREATE INDEX note_tags_by_tag ON note_tags(tag);
        CREATE INDEX note_tags_by_file ON note_tags(file_id);
        """
    )


def m004_german_stemming(db: Connection) -> None:
    """Each chunk's language (`lang`, NULL = default stemming) reaches the FTS5 tokenizer as its
    locale, so German notes get German stems (storage/tokenizer.py; the connection must have registered
    the `noteseek` tokenizer, as every Store does).

    The FTS5 table's content is a view that hands each column to FTS5 with its chunk's locale, so
    whatever FTS5 re-reads (`rebuild`, `integrity-check`) is tokenized as it was indexed. The table
    is rebuilt with every chunk's language still NULL, which indexes exactly the Porter tokens of
    before; the pipeline version bump that comes with this migration makes the next update
    re-process every note and fill in `lang` (vectors are reused by content hash).
    """
    columns = ("chunk_text", "section", "title", "tags")
    names = ", ".join(columns)
    new = ", ".join(f"fts5_locale(new.lang, new.{c})" for c in columns)
    old = ", ".join(f"fts5_locale(old.lang, old.{c})" for c in columns)
    db.execute(
        f"""
        ALTER TABLE chunks ADD COLUMN lang TEXT;
        DROP TRIGGER chunks_ai;
        DROP TRIGGER chunks_ad;
        DROP TRIGGER chunks_au;
        DROP TABLE chunks_fts;
        CREATE VIEW chunks_fts_content(id, {names}) AS
            SELECT id, {", ".join(f"fts5_locale(lang, {c})" for c in columns)} FROM chunks;
        CREATE VIRTUAL TABLE chunks_fts USING fts5(
            {names},
            content='chunks_fts_content', content_rowid='id',
            tokenize='noteseek', locale=1
        );
        INSERT INTO chunks_fts(chunks_fts) VALUES ('rebuild');
        CREATE TRIGGER chunks_ai AFTER INSERT ON chunks BEGIN
            INSERT INTO chunks_fts(rowid, {names}) VALUES (new.id, {new});
        END;
        CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN
            INSERT INTO chunks_fts(chunks_fts, rowid, {names}) VALUES ('delete', old.id, {old});
        END;
        CREATE TRIGGER chunks_au AFTER UPDATE OF {names}, lang ON chunks BEGIN
            INSERT INTO chunks_fts(chunks_fts, rowid, {names}) VALUES ('delete', old.id, {old});
            INSERT INTO chunks_fts(rowid, {names}) VALUES (new.id, {new});
        END;
        """
    )


def m005_left_out(db: Connection) -> None:
    """Per file, what the index leaves out of search on purpose: skipped link sections (Related,
    See also, ...) and scrubbed secrets, so `status` can say so (no word lost silently).
    Existing rows get 0; the pipeline version bump that comes with this migration re-processes
    every note on the next update and fills them in."""
    db.execute(
        """
        ALTER TABLE files ADD COLUMN skipped_sections INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE files ADD COLUMN secrets_scrubbed INTEGER NOT NULL DEFAULT 0;
        """
    )


def m006_documents(db: Connection) -> None:
    """Documents beside the notes (PDF, Office, spreadsheets, CSV, HTML, canvases).

    Per file: what it is and how its extraction ended; the reason stays in `problem` and the
    status in `status` (ok | warning | skipped), as for notes. Per chunk: where in the document
    its text is, NULL where a field does not apply (every note chunk). Existing rows are notes,
    so nothing is re-processed: a NULL `kind` is a note, and an `.excalidraw.md` indexed as one
    before is re-read as a drawing because its kind changed.
    """
    db.execute(
        """
        ALTER TABLE files ADD COLUMN kind TEXT;      -- NULL: a Markdown note; else pdf, pptx, xlsx, csv, ...
        ALTER TABLE files ADD COLUMN outcome TEXT;   -- documents: ok | encrypted | no_text | corrupt | timed_out | too_large | unsupported
        ALTER TABLE files ADD COLUMN engine TEXT;    -- the library that read it ('pypdfium2 5.15.2'), or 'missing:<module>'
        ALTER TABLE chunks ADD COLUMN page INTEGER;       -- 1-based PDF page
        ALTER TABLE chunks ADD COLUMN page_label TEXT;    -- the PDF's own label of that page ('xii')
        ALTER TABLE chunks ADD COLUMN slide INTEGER;      -- 1-based slide
        ALTER TABLE chunks ADD COLUMN sheet TEXT;         -- spreadsheet sheet name
        ALTER TABLE chunks ADD COLUMN row_first INTEGER;  -- 1-based first and last row (spreadsheets, CSV)
        ALTER TABLE chunks ADD COLUMN row_last INTEGER;
        -- characters at the start repeated from the chunk before (a long unit cut inside a
        -- paragraph), left out when a document's text is put back together for reading
        ALTER TABLE chunks ADD COLUMN overlap INTEGER NOT NULL DEFAULT 0;
        """
    )


def m007_note_terms(db: Connection) -> None:
    """Each note's distinct index tokens of its title field, tags field and headings, for the
    reranker's coverage features (storage/sqlite/note_terms.py): tokenized once at index time,
    never at query time. Filled as notes are (re-)processed; the pipeline version bump that comes
    with this migration makes the next update re-process every note (vectors are reused by content
    hash); until then a note has no row and its coverage features are 0.

    `chunks_e5` holds the optional multilingual lane's int8 vectors (embedding/multilingual.py),
    keyed by the chunk's content hash rather than its id, so re-processed notes (a pipeline bump,
    an edit elsewhere in the note) keep them: e5 costs ~0.3 CPU-s per chunk. Created empty, filled
    only by `noteseek index --multilingual`, which also drops rows no chunk has any more. Both
    tables use IF NOT EXISTS, so the migration stands on its own whatever number it gets.
    """
    db.execute(
        """
        CREATE TABLE IF NOT EXISTS note_terms(
            file_id INTEGER PRIMARY KEY REFERENCES files(id),
            title TEXT NOT NULL,             -- space-separated distinct tokens
            tags TEXT NOT NULL,
            headings TEXT NOT NULL
        );
        CREATE TABLE IF NOT EXISTS chunks_e5(
            content_hash INTEGER PRIMARY KEY,  -- chunks.content_hash of the embedded text
            vector BLOB NOT NULL               -- int8 row of the multilingual model
        );
        """
    )


def m008_note_dates(db: Connection) -> None:
    """Each file's date and where it came from (core/note_dates.py): frontmatter, the file name
    of a daily or periodic note, a document's metadata, or the modification time. An ISO day or
    local date-time; date filters compare its first ten characters. Existing rows get NULL, which
    no date filter keeps, until the next update re-processes every note (the pipeline version
    bump that comes with this migration); vectors are reused by content hash."""
    db.execute(
        """
        ALTER TABLE files ADD COLUMN note_date TEXT;    -- '2026-11-30' or '2026-11-30T14:05:00'
        ALTER TABLE files ADD COLUMN date_source TEXT;  -- frontmatter | filename | document | mtime
        CREATE INDEX IF NOT EXISTS files_by_date ON files(note_date);
        """
    )


def m009_links(db: Connection) -> None:
    """The links every note makes, as written (target path, `#heading`/`^block` part, wiki, embed
    or Markdown link, the linking line), and each note's aliases: backlinks are a lookup by
    `target_key` (the folded file name a link points at), resolved against the paths when read
    (engine/links.py). Filled as notes are (re-)processed; the pipeline version bump that comes
    with this migration re-processes every note on the next update (vectors are reused by
    content hash). IF NOT EXISTS, so the migration stands on its own whatever number it gets."""
    db.execute(
        """
        CREATE TABLE IF NOT EXISTS links(
            file_id INTEGER NOT NULL REFERENCES files(id),  -- the linking note
            line INTEGER NOT NULL,           -- 1-based line of the link in the note
            target TEXT NOT NULL,            -- the link path as written, without #... or |shown
            target_key TEXT NOT NULL,        -- core.links.link_key(target): folded file name
            fragment TEXT NOT NULL,          -- '' or '#Heading' or '#^block'
            kind TEXT NOT NULL,              -- wiki | embed | markdown
            context TEXT NOT NULL            -- the linking line (scrubbed), trimmed
        );
        CREATE INDEX IF NOT EXISTS links_by_key ON links(target_key);
        CREATE INDEX IF NOT EXISTS links_by_file ON links(file_id);
        CREATE TABLE IF NOT EXISTS note_aliases(
            alias TEXT NOT NULL,             -- a frontmatter alias, folded like target_key
            file_id INTEGER NOT NULL REFERENCES files(id)
        );
        CREATE INDEX IF NOT EXISTS note_aliases_by_alias ON note_aliases(alias);
        CREATE INDEX IF NOT EXISTS note_aliases_by_file ON note_aliases(file_id);
        """
    )


def m010_note_fields_once(db: Connection) -> None:
    """A note's title field, tags field and heading context stored once, on its file row, rather
    than copied into every chunk (core/field_caps.py caps them too): a long frontmatter title over
    many sections multiplied the index by its number of chunks.

    FTS5 still indexes the two fields per chunk (BM25 scores chunks), so its content view reads
    them from the file row; the triggers do the same. The FTS5 'delete' of a chunk must see the
    values it was indexed with, and it does: `replace_file` deletes a file's chunks before it
    rewrites the file row. The values are copied from each file's first chunk (every chunk of a
    file carries the same ones), so the FTS5 index built before stays exact and is not rebuilt.
    """
    columns = ("chunk_text", "section", "title", "tags")
    names = ", ".join(columns)

    def values(row: str) -> str:
        own = f"fts5_locale({row}.lang, {row}.chunk_text), fts5_locale({row}.lang, {row}.section)"
        field = "(SELECT {col} FROM files WHERE id = {row}.file_id)"
        note = ", ".join(
            f"fts5_locale({row}.lang, {field.format(col=col, row=row)})"
            for col in ("title_field", "tags_field")
        )
        return f"{own}, {note}"

    db.execute(
        f"""
        ALTER TABLE files ADD COLUMN title_field TEXT NOT NULL DEFAULT '';
        ALTER TABLE files ADD COLUMN tags_field TEXT NOT NULL DEFAULT '';
        ALTER TABLE files ADD COLUMN heading_context TEXT NOT NULL DEFAULT '';
        UPDATE files SET (title_field, tags_field, heading_context) = (
            SELECT c.title, c.tags, c.heading_context FROM chunks c
            WHERE c.file_id = files.id ORDER BY c.seq LIMIT 1
        ) WHERE EXISTS (SELECT 1 FROM chunks c WHERE c.file_id = files.id);
        DROP TRIGGER chunks_ai;
        DROP TRIGGER chunks_ad;
        DROP TRIGGER chunks_au;
        DROP VIEW chunks_fts_content;
        ALTER TABLE chunks DROP COLUMN title;
        ALTER TABLE chunks DROP COLUMN tags;
        ALTER TABLE chunks DROP COLUMN heading_context;
        CREATE VIEW chunks_fts_content(id, {names}) AS
            SELECT c.id, fts5_locale(c.lang, c.chunk_text), fts5_locale(c.lang, c.section),
                   fts5_locale(c.lang, f.title_field), fts5_locale(c.lang, f.tags_field)
            FROM chunks c JOIN files f ON f.id = c.file_id;
        CREATE TRIGGER chunks_ai AFTER INSERT ON chunks BEGIN
            INSERT INTO chunks_fts(rowid, {names}) VALUES (new.id, {values("new")});
        END;
        CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN
            INSERT INTO chunks_fts(chunks_fts, rowid, {names}) VALUES ('delete', old.id, {values("old")});
        END;
        CREATE TRIGGER chunks_au AFTER UPDATE OF chunk_text, section, lang ON chunks BEGIN
            INSERT INTO chunks_fts(chunks_fts, rowid, {names}) VALUES ('delete', old.id, {values("old")});
            INSERT INTO chunks_fts(rowid, {names}) VALUES (new.id, {values("new")});
        END;
        """
    )


def m011_smaller_rows(db: Connection) -> None:
    """Per-file facts leave the chunk rows, and a linking line the chunks hold is not stored twice.

    Chunks: `lang` moves to the file row (every chunk of a file had its file's), `mtime_ns` goes
    (the file row has it; nothing read the chunk's), and `embedded_at`, a time nothing read,
    becomes the flag `embedded` (0 and 1 take no bytes in an SQLite record). The table is
    rebuilt once with the same ids, so the FTS5 index and the vectors stay as they are; its
    content view and triggers read the language from the file row, which holds the value each
    chunk was indexed with, so nothing is re-tokenized. A trigger finds the file row because
    `replace_file` and `delete_file` delete a file's chunks before they change or delete it.

    Files: the content hash is stored as its 32 bytes (read back as the hex digits), and the
    index by date goes: no query searches it (date filters compare `substr(note_date, 1, 10)`,
    a browse orders the ids a filter found), it only made them a scan of itself.

    Links: a linking line that one of the note's chunks holds is kept as its place there (chunk
    `seq`, character offset and length; the target as an offset and length inside the line)
    instead of its text, the kind as a small integer, and a note's links are rows `file_id *
    16384 + n`, together in the table, which makes the index by file unneeded
    (storage/sqlite/links.py). Existing rows keep their text and their order; notes written from
    now on store places where their chunks hold the line.
    """
    names = "chunk_text, section, title, tags"

    def select(row: str) -> str:
        # One lookup of the file row gives the language and both note fields.
        return (
            f"SELECT {row}.id, fts5_locale(f.lang, {row}.chunk_text), "
            f"fts5_locale(f.lang, {row}.section), fts5_locale(f.lang, f.title_field), "
            f"fts5_locale(f.lang, f.tags_field) FROM files f WHERE f.id = {row}.file_id"
        )

    def delete(row: str) -> str:
        return (
            f"SELECT 'delete', {row}.id, fts5_locale(f.lang, {row}.chunk_text), "
            f"fts5_locale(f.lang, {row}.section), fts5_locale(f.lang, f.title_field), "
            f"fts5_locale(f.lang, f.tags_field) FROM files f WHERE f.id = {row}.file_id"
        )

    db.execute(
        f"""
        ALTER TABLE files ADD COLUMN lang TEXT;  -- language.note_language(): its chunks' stemmer
        DROP INDEX IF EXISTS files_by_date;
        -- the SHA-256 of the file as its 32 bytes, not 64 hex digits (storage/sqlite/files.py)
        UPDATE files SET content_hash = unhex(content_hash)
        WHERE length(content_hash) = 64 AND unhex(content_hash) IS NOT NULL;
        UPDATE files SET lang = (
            SELECT c.lang FROM chunks c WHERE c.file_id = files.id ORDER BY c.seq LIMIT 1
        );
        DROP TRIGGER chunks_ai;
        DROP TRIGGER chunks_ad;
        DROP TRIGGER chunks_au;
        DROP VIEW chunks_fts_content;
        CREATE TABLE chunks_new(
            id INTEGER PRIMARY KEY,
            file_id INTEGER NOT NULL REFERENCES files(id),
            seq INTEGER NOT NULL,
            section TEXT NOT NULL,
            chunk_text TEXT NOT NULL,
            content_hash INTEGER NOT NULL,   -- first 64 bits of sha256(embedded text): vectors are reused by it
            embedded INTEGER NOT NULL DEFAULT 0,  -- 1 once the chunk has a vector
            page INTEGER,                    -- 1-based PDF page
            page_label TEXT,                 -- the PDF's own label of that page ('xii')
            slide INTEGER,                   -- 1-based slide
            sheet TEXT,                      -- spreadsheet sheet name
            row_first INTEGER,               -- 1-based first and last row (spreadsheets, CSV)
            row_last INTEGER,
            -- characters at the start repeated from the chunk before (a long unit cut inside a
            -- paragraph), left out when a document's text is put back together for reading
            overlap INTEGER NOT NULL DEFAULT 0
        );
        INSERT INTO chunks_new(id, file_id, seq, section, chunk_text, content_hash, embedded,
                               page, page_label, slide, sheet, row_first, row_last, overlap)
            SELECT id, file_id, seq, section, chunk_text, content_hash, embedded_at IS NOT NULL,
                   page, page_label, slide, sheet, row_first, row_last, overlap
            FROM chunks ORDER BY id;
        DROP TABLE chunks;
        ALTER TABLE chunks_new RENAME TO chunks;
        CREATE INDEX chunks_by_file ON chunks(file_id, seq);
        CREATE INDEX chunks_by_hash ON chunks(content_hash);
        CREATE VIEW chunks_fts_content(id, {names}) AS
            SELECT c.id, fts5_locale(f.lang, c.chunk_text), fts5_locale(f.lang, c.section),
                   fts5_locale(f.lang, f.title_field), fts5_locale(f.lang, f.tags_field)
            FROM chunks c JOIN files f ON f.id = c.file_id;
        CREATE TRIGGER chunks_ai AFTER INSERT ON chunks BEGIN
            INSERT INTO chunks_fts(rowid, {names}) {select("new")};
        END;
        CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN
            INSERT INTO chunks_fts(chunks_fts, rowid, {names}) {delete("old")};
        END;
        CREATE TRIGGER chunks_au AFTER UPDATE OF chunk_text, section ON chunks BEGIN
            INSERT INTO chunks_fts(chunks_fts, rowid, {names}) {delete("old")};
            INSERT INTO chunks_fts(rowid, {names}) {select("new")};
        END;
        CREATE TABLE links_new(
            -- file_id * 16384 + the link's place among the note's links (from 0): a note's links
            -- lie together, so deleting or reading them needs no index by file
            id INTEGER PRIMARY KEY,
            line INTEGER NOT NULL,           -- 1-based line of the link in the note
            target TEXT,                     -- the link path as written, without #... or |shown
            target_key TEXT NOT NULL,        -- core.links.link_key(target): folded file name
            fragment TEXT NOT NULL,          -- '' or '#Heading' or '#^block'
            kind INTEGER NOT NULL,           -- 0 wiki, 1 embed, 2 markdown
            context TEXT,                    -- the linking line (scrubbed), trimmed
            -- NULL context and target: both are in the note's chunk of this seq, the line (or
            -- the piece of it kept) at this character offset and length, '…' before it when
            -- cut & 1 and after it when cut & 2, the target at its own offset in that piece
            context_seq INTEGER,
            context_at INTEGER,
            context_len INTEGER,
            context_cut INTEGER,
            target_at INTEGER,
            target_len INTEGER
        );
        -- A note never kept more than core.links.MAX_LINKS_PER_NOTE (10,000) links since that
        -- cap came; one indexed before it keeps its first 16,384 until it is indexed again.
        INSERT INTO links_new(id, line, target, target_key, fragment, kind, context)
            SELECT file_id * 16384 + n, line, target, target_key, fragment,
                   CASE kind WHEN 'wiki' THEN 0 WHEN 'embed' THEN 1 ELSE 2 END, context
            FROM (SELECT *, row_number() OVER (PARTITION BY file_id ORDER BY rowid) - 1 AS n
                  FROM links)
            WHERE n < 16384;
        DROP TABLE links;
        ALTER TABLE links_new RENAME TO links;
        CREATE INDEX links_by_key ON links(target_key);
        """
    )


def m012_chunks_without_vectors(db: Connection) -> None:
    """An index of the chunks that lack a vector, for the vector backfill every update ends with.

    Without it the backfill's `WHERE NOT embedded` read the whole chunks table on every run, a
    no-op or a watcher's one-note update included (~13 ms on MDN's 59,000 chunks, a quarter of a
    warm one-note update). Partial: it holds only chunks waiting for a vector, which is none after
    a run with the model, so it takes a page or two.
    """
    db.execute("CREATE INDEX chunks_without_vectors ON chunks(id) WHERE NOT embedded")


def m013_chunk_text_indexed_by_the_writer(db: Connection) -> None:
    """A chunk's FTS5 row is inserted by the statement after the chunk's, not by a trigger.

    A statement that fires a trigger runs in a statement transaction, and FTS5 writes its pending
    terms to a new segment at every such savepoint: one tiny segment per chunk, merged again and
    again. Inserting 59,354 MDN chunks cost 4.9-5.3 CPU-s through the trigger and 2.4-2.6 CPU-s
    with the same rows inserted beside them (files.py `replace_file`, the one place chunks are
    inserted). The delete and update triggers stay: a file's chunks are deleted in one statement.
    """
    db.execute("DROP TRIGGER chunks_ai")


MIGRATIONS: tuple[Callable[[Connection], None], ...] = (
    m001_initial,
    m002_title_fields_and_names,
    m003_note_tags,
    m004_german_stemming,
    m005_left_out,
    m006_documents,
    m007_note_terms,
    m008_note_dates,
    m009_links,
    m010_note_fields_once,
    m011_smaller_rows,
    m012_chunks_without_vectors,
    m013_chunk_text_indexed_by_the_writer,
)
SCHEMA_VERSION = len(MIGRATIONS)
