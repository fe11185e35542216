"""A file's rows (`FileRows`): written in its transaction, and read back over the selected
collections with paths as they are shown (vault-relative for one collection, `collection/path`
for several: collections.py).

Writes: files, names, tags, chunks with their vectors, and the BM25 statistics that hang on the
chunks (postings, document frequencies, collection counts). Everything a file changes is written
inside the caller's `write()`, so a reader sees the file and its statistics entirely old or
entirely new, and a killed indexer leaves neither half. Each step is one statement over arrays
(`unnest`, sent in binary), all of them sent in one pipeline; the postings, a file's largest
part by far, go by one binary COPY per transaction, just before it commits, and so do the
totals (stems' document counts, the collection's counts and version), summed over its files
(`_totals`). `replace_files` writes a transaction's files together, one statement per table
for all of them (their ids, their rows, then names, tags, links, note terms and chunks in one
pipeline): three waits for the server per batch, where a dozen statements per file waited three
times per file (and one statement after another, fourteen). bench/pg_build.py measured the hub's
first build at 2.97x SQLite's wall time written file by file and 1.68x in batches.

Methods that return `records` values import that module on first use: a one-shot search
defines no records dataclass (storage/rows.py).
"""

from __future__ import annotations

# Deferred imports: the record types are made by the update and the status calls only; a
# one-shot search imports this module and reads none of them.
import struct
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from .. import meta
from ..rows import ChunkRow, strings_by_file
from .connection import PostgresConnection
from .links import LinkTable
from .note_terms import NoteTermsTable
from .terms import ChunkTerms, chunk_terms
from .vector_table import VectorTable

if TYPE_CHECKING:  # the record types, for annotations only (see the imports note above)
    from .. import records
    from ..queries import FileFilter

__all__ = ["FileRows"]

_SMALLINT = 32767  # postings' term frequencies are smallint: a chunk is far shorter than this
# A postings row in COPY's binary format: 8 fields; collection_id (int4) and the term come first,
# then chunk_id (int8), doc_len (int4) and the four smallint frequencies, each after its length.
_POSTING_HEAD = struct.Struct("!hii")
_INT4 = struct.Struct("!i")
_POSTING_TAIL = struct.Struct("!iqiiihihihih")


def _like_prefix(folder: str) -> str:
    """A LIKE pattern for paths under `folder`, with LIKE's wildcards escaped."""
    escaped = folder.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return escaped + "/%"


class FileRows:
    """A file's rows: written in one collection (inside `write()`), with the BM25 statistics,
    vectors, note terms and links that hang on them, and read back over the selected
    collections."""

    def __init__(
        self,
        conn: PostgresConnection,
        *,
        vectors: VectorTable,
        terms: NoteTermsTable,
        links: LinkTable,
    ) -> None:
        self.conn = conn
        self.vectors = vectors
        self.terms = terms
        self.links = links

    def _file_id(self, path: str) -> int | None:
        value = self.conn.scalar(
            "SELECT id FROM files WHERE collection_id = %s AND path = %s",
            (self.conn.collections.only, path),
        )
        return None if value is None else int(value)

    def touch_file(self, path: str, mtime_ns: int, size: int) -> None:
        from ...core.note_dates import mtime_date  # deferred: not on a search's import path

        self.conn.run(
            "UPDATE files SET mtime_ns = %s, size = %s, note_date = CASE WHEN date_source = "
            "'mtime' THEN %s ELSE note_date END WHERE collection_id = %s AND path = %s",
            (mtime_ns, size, mtime_date(mtime_ns), self.conn.collections.only, path),
        )

    def delete_file(self, path: str) -> None:
        """Remove a file with its chunks, postings, names and tags (inside `write()`)."""
        file_id = self._file_id(path)
        if file_id is None:
            return
        chunks, tokens = self._delete_chunks(file_id)
        # Names and tags go by their foreign keys' cascade.
        self.conn.run("DELETE FROM files WHERE id = %s", (file_id,))
        self._bump(-chunks, -tokens)

    def _delete_chunks(self, file_id: int) -> tuple[int, int]:
        """Delete a file's chunks and their statistics; (chunks, tokens) removed."""
        cid = self.conn.collections.only
        # What the transaction added first: the postings deleted and the counts lowered below
        # may be its own.
        self._copy_postings()
        self._write_totals()
        # The chunks' postings, and their stems' document counts down by one per chunk (each
        # posting is one chunk holding the stem); a stem no chunk holds any more loses its row.
        emptied = self.conn.rows(
            "WITH gone AS (DELETE FROM postings WHERE chunk_id IN "
            "(SELECT id FROM chunks WHERE file_id = %s) RETURNING term), "
            "t AS (SELECT term, count(*) AS n FROM gone GROUP BY term) "
            "UPDATE term_stats s SET df = s.df - t.n FROM t "
            "WHERE s.collection_id = %s AND s.term = t.term RETURNING s.term, s.df",
            (file_id, cid),
        )
        zero = [str(term) for term, df in emptied if int(df) == 0]
        if zero:
            self.conn.run(
                "DELETE FROM term_stats WHERE collection_id = %s AND term = ANY(%s) AND df = 0",
                (cid, zero),
            )
        gone = self.conn.rows("DELETE FROM chunks WHERE file_id = %s RETURNING doc_len", (file_id,))
        self.conn.chunks_deleted += len(gone)
        return len(gone), sum(int(r[0]) for r in gone)

    def _bump(self, chunks: int, tokens: int) -> None:
        """The collection's BM25 counts, and its version (every file written moves it)."""
        # update(), not +=: a Counter's + drops the negative sums a file that shrank leaves.
        self._totals()["counts"].update(chunks=chunks, tokens=tokens, files=1)

    def _totals(self) -> dict[str, Counter[str]]:
        """The statistics the transaction's files add up to, written once before it commits:
        a batch's files each adding to the same `term_stats` rows (a common stem's in every
        file) and the same `collections` row left hundreds of versions of each row for every
        later update of it to walk."""
        totals: dict[str, Counter[str]] = self.conn.per_transaction.setdefault(
            "totals", {"df": Counter(), "counts": Counter()}
        )
        self.conn.before_commit.setdefault("totals", self._write_totals)
        return totals

    def _write_totals(self) -> None:
        totals = self.conn.per_transaction.pop("totals", None)
        self.conn.before_commit.pop("totals", None)
        if totals is None:
            return
        cid = self.conn.collections.only
        df, counts = totals["df"], totals["counts"]
        if df:
            stems = sorted(df)
            # %b: the arrays go in binary, so the server parses no array text.
            self.conn.run(
                "INSERT INTO term_stats(collection_id, term, df) SELECT %s, * FROM "
                "unnest(%b::text[], %b::int4[]) ON CONFLICT (collection_id, term) "
                "DO UPDATE SET df = term_stats.df + excluded.df",
                (cid, stems, [df[t] for t in stems]),
            )
        if counts["files"]:
            self.conn.run(
                "UPDATE collections SET chunk_count = chunk_count + %s, "
                "token_count = token_count + %s, version = version + %s WHERE id = %s",
                (counts["chunks"], counts["tokens"], counts["files"], cid),
            )

    def replace_file(self, file: records.FileWrite) -> None:
        self.replace_files([file])

    def replace_files(self, files: Sequence[records.FileWrite]) -> None:
        """The files' rows, in order, by one statement per table for all of them (inside
        `write()`): the rows, ids and statistics one file after another gives. Statements per
        file waited for the server three times per file and paid psycopg's few hundred
        microseconds per statement a dozen times (bench/pg_build.py)."""
        run: list[records.FileWrite] = []
        paths: set[str] = set()
        for file in files:  # a path twice (a file written again in one transaction): in turn
            if file.record.path in paths:
                self._replace_run(run)
                run, paths = [], set()
            run.append(file)
            paths.add(file.record.path)
        if run:
            self._replace_run(run)

    def _replace_run(self, files: Sequence[records.FileWrite]) -> None:
        """`replace_files` for files of distinct paths."""
        paths = [f.record.path for f in files]
        cid = self.conn.collections.only
        known = dict(
            self.conn.rows(
                "SELECT path, id FROM files WHERE collection_id = %s AND path = ANY(%s)",
                (cid, paths),
            )
        )
        removed = {path: self._delete_chunks(int(fid)) for path, fid in known.items()}
        now = time.time()
        recs = [f.record for f in files]
        ids_by_path = {
            str(path): int(fid)
            for fid, path in self.conn.rows(
                "INSERT INTO files(collection_id, path, mtime_ns, size, content_hash, title, "
                "status, problem, chunk_count, indexed_at, skipped_sections, secrets_scrubbed, "
                "kind, outcome, engine, note_date, date_source, title_field, tags_field, "
                "heading_context) SELECT %(cid)s, path, mtime_ns, size, content_hash, title, "
                "status, problem, chunk_count, %(now)s, skipped_sections, secrets_scrubbed, "
                "kind, outcome, engine, note_date, date_source, title_field, tags_field, "
                "heading_context FROM unnest(%(path)b::text[], %(mtime)b::bigint[], "
                "%(size)b::bigint[], %(hash)b::text[], %(title)b::text[], %(status)b::text[], "
                "%(problem)b::text[], %(chunks)b::int[], %(skipped)b::int[], "
                "%(secrets)b::int[], %(kind)b::text[], %(outcome)b::text[], "
                "%(engine)b::text[], %(date)b::text[], %(date_source)b::text[], "
                "%(title_field)b::text[], %(tags_field)b::text[], %(context)b::text[]) "
                "WITH ORDINALITY AS u(path, mtime_ns, size, content_hash, title, status, "
                "problem, chunk_count, skipped_sections, secrets_scrubbed, kind, outcome, "
                "engine, note_date, date_source, title_field, tags_field, heading_context, n) "
                "ORDER BY u.n "
                "ON CONFLICT (collection_id, path) DO UPDATE SET mtime_ns = excluded.mtime_ns, "
                "size = excluded.size, content_hash = excluded.content_hash, "
                "title = excluded.title, status = excluded.status, problem = excluded.problem, "
                "chunk_count = excluded.chunk_count, indexed_at = excluded.indexed_at, "
                "skipped_sections = excluded.skipped_sections, "
                "secrets_scrubbed = excluded.secrets_scrubbed, kind = excluded.kind, "
                "outcome = excluded.outcome, engine = excluded.engine, "
                "note_date = excluded.note_date, date_source = excluded.date_source, "
                "title_field = excluded.title_field, tags_field = excluded.tags_field, "
                "heading_context = excluded.heading_context RETURNING id, path",
                {
                    "cid": cid,
                    "now": now,
                    "path": paths,
                    "mtime": [r.mtime_ns for r in recs],
                    "size": [r.size for r in recs],
                    "hash": [r.content_hash for r in recs],
                    "title": [r.title for r in recs],
                    "status": [r.status for r in recs],
                    "problem": [r.problem for r in recs],
                    "chunks": [len(f.chunks) for f in files],
                    "skipped": [r.skipped_sections for r in recs],
                    "secrets": [r.secrets_scrubbed for r in recs],
                    "kind": [r.kind for r in recs],
                    "outcome": [r.outcome for r in recs],
                    "engine": [r.engine for r in recs],
                    "date": [r.date for r in recs],
                    "date_source": [r.date_source for r in recs],
                    "title_field": [r.title_field for r in recs],
                    "tags_field": [r.tags_field for r in recs],
                    "context": [r.heading_context for r in recs],
                },
            )
        }
        file_ids = [ids_by_path[path] for path in paths]
        tokenizer = self.conn.tokenizer
        terms = [
            [
                chunk_terms(
                    tokenizer,
                    text=c.text,
                    section=c.section,
                    title=f.record.title_field,
                    tags=f.record.tags_field,
                    lang=f.record.lang,
                )
                for c in f.chunks
            ]
            for f in files
        ]
        with_vectors = self.vectors.has_vector_table()
        with self.conn.pipelined():
            self._replace_keys("note_names", "name", file_ids, [r.names for r in recs])
            self._replace_keys("note_tags", "tag", file_ids, [r.tags for r in recs])
            self.links.write_links(file_ids, [r.links for r in recs], [r.aliases for r in recs])
            self.terms.write_note_terms(file_ids, files)
            for file, chunk_terms_of in zip(files, terms):
                self._add_document_counts(chunk_terms_of)
                gone = removed.get(file.record.path, (0, 0))
                self._bump(
                    len(file.chunks) - gone[0], sum(t.doc_len for t in chunk_terms_of) - gone[1]
                )
            chunk_ids = self._insert_chunks(files, file_ids, terms, with_vectors, now)
        for ids, chunk_terms_of in zip(chunk_ids, terms):
            self._insert_postings(ids, chunk_terms_of)

    def _replace_keys(
        self, table: str, column: str, file_ids: Sequence[int], keys: Sequence[Sequence[str]]
    ) -> None:
        # `table` and `column` are this module's constants, never user text.
        self.conn.run(f"DELETE FROM {table} WHERE file_id = ANY(%s)", (list(file_ids),))
        pairs = [(key, fid) for fid, some in zip(file_ids, keys) for key in sorted(set(some))]
        if pairs:
            self.conn.run(
                f"INSERT INTO {table}(collection_id, {column}, file_id) "
                "SELECT %s, k, f FROM unnest(%b::text[], %b::bigint[]) AS u(k, f)",
                (self.conn.collections.only, [k for k, _ in pairs], [f for _, f in pairs]),
            )

    def _insert_chunks(
        self,
        files: Sequence[records.FileWrite],
        file_ids: Sequence[int],
        terms: Sequence[Sequence[ChunkTerms]],
        with_vectors: bool,
        now: float,
    ) -> list[list[int]]:
        """Every file's chunks in one statement, in file order and each file's chunks in order
        (ids ascend as on SQLite, so ties rank the same); each file's chunk ids."""
        if not any(f.chunks for f in files):
            return [[] for _ in files]
        fids: list[int] = []
        langs: list[str | None] = []
        mtimes: list[int] = []
        embeddings: list[object] = []
        for file, fid in zip(files, file_ids):
            n = len(file.chunks)
            fids += [fid] * n
            langs += [file.record.lang] * n
            mtimes += [file.record.mtime_ns] * n
            if with_vectors and file.vectors is not None:
                embeddings += self.vectors.halfvecs(file.vectors)
            else:
                embeddings += [None] * n
        chunks = [c for f in files for c in f.chunks]
        rows = self.conn.rows(
            "WITH u AS (SELECT * FROM unnest(%(fid)b::bigint[], %(lang)b::text[], "
            "%(mtime)b::bigint[], %(seq)b::int[], %(section)b::text[], "
            "%(body)b::text[], %(hash)b::bigint[], %(len)b::int[], %(vec)b::halfvec[], "
            "%(page)b::int[], %(label)b::text[], %(slide)b::int[], %(sheet)b::text[], "
            "%(row_first)b::int[], %(row_last)b::int[], %(overlap)b::int[]) "
            "WITH ORDINALITY AS u(fid, lang, mtime, seq, section, body, hash, len, vec, page, "
            "label, slide, sheet, row_first, row_last, overlap, n)), "
            "c AS (INSERT INTO chunks(collection_id, file_id, seq, section, chunk_text, "
            "lang, mtime_ns, content_hash, doc_len, embedded_at, page, "
            "page_label, slide, sheet, row_first, row_last, overlap) "
            "SELECT %(cid)s, u.fid, u.seq, u.section, u.body, "
            "u.lang, u.mtime, u.hash, u.len, "
            "CASE WHEN u.vec IS NULL THEN NULL ELSE %(now)s::float8 END, "
            "u.page, u.label, u.slide, u.sheet, u.row_first, u.row_last, u.overlap "
            "FROM u ORDER BY u.n RETURNING id, file_id, seq), "
            "v AS (INSERT INTO chunk_vectors(chunk_id, collection_id, embedding) "
            "SELECT c.id, %(cid)s, u.vec FROM c JOIN u ON u.fid = c.file_id AND u.seq = c.seq "
            "WHERE u.vec IS NOT NULL) "
            "SELECT id, file_id, seq FROM c",
            {
                "cid": self.conn.collections.only,
                "now": now,
                "fid": fids,
                "lang": langs,
                "mtime": mtimes,
                "seq": [c.seq for c in chunks],
                "section": [c.section for c in chunks],
                "body": [c.text for c in chunks],
                "hash": [c.content_hash for c in chunks],
                "len": [t.doc_len for some in terms for t in some],
                "vec": embeddings,
                "page": [c.page for c in chunks],
                "label": [c.page_label for c in chunks],
                "slide": [c.slide for c in chunks],
                "sheet": [c.sheet for c in chunks],
                "row_first": [c.row_first for c in chunks],
                "row_last": [c.row_last for c in chunks],
                "overlap": [c.overlap for c in chunks],
            },
        )
        by_key = {(int(fid), int(seq)): int(chunk_id) for chunk_id, fid, seq in rows}
        return [[by_key[fid, c.seq] for c in f.chunks] for f, fid in zip(files, file_ids)]

    def _add_document_counts(self, terms: Sequence[ChunkTerms]) -> None:
        """The stems' document counts up by one per chunk that holds them (at commit)."""
        df = self._totals()["df"]
        for chunk in terms:
            df.update(chunk.tf.keys())

    def _insert_postings(self, ids: Sequence[int], terms: Sequence[ChunkTerms]) -> None:
        """The chunks' postings, one row per (stem, chunk): kept for one binary COPY of the
        whole transaction's before it commits (a COPY per file waited for the server twice
        per file)."""
        if not any(chunk.tf for chunk in terms):
            return
        pending: list[tuple[Sequence[int], Sequence[ChunkTerms]]] = (
            self.conn.per_transaction.setdefault("postings", [])
        )
        pending.append((ids, terms))
        self.conn.before_commit.setdefault("postings", self._copy_postings)

    def _copy_postings(self) -> None:
        """The postings `_insert_postings` kept, by binary COPY."""
        pending = self.conn.per_transaction.pop("postings", None)
        self.conn.before_commit.pop("postings", None)
        if not pending:
            return
        cid = self.conn.collections.only
        head = _POSTING_HEAD.pack(8, 4, cid)
        stems: dict[str, bytes] = {}  # each stem's length-prefixed UTF-8, once per COPY

        def stem_field(stem: str) -> bytes:
            data = stem.encode("utf-8")
            field = stems[stem] = _INT4.pack(len(data)) + data
            return field

        pack, known = _POSTING_TAIL.pack, stems.get
        m = _SMALLINT
        self.conn.copy_rows(
            "COPY postings(collection_id, term, chunk_id, doc_len, tf_text, tf_section, "
            "tf_title, tf_tags) FROM STDIN (FORMAT binary)",
            (
                head
                + (known(stem) or stem_field(stem))
                + pack(
                    8,
                    chunk_id,
                    4,
                    chunk.doc_len,
                    2,
                    text if text < m else m,
                    2,
                    section if section < m else m,
                    2,
                    title if title < m else m,
                    2,
                    tags if tags < m else m,
                )
                for ids, terms in pending
                for chunk_id, chunk in zip(ids, terms)
                for stem, (text, section, title, tags) in chunk.tf.items()
            ),
        )

    # -- reads ------------------------------------------------------------------------------

    def file_states(self, near: Sequence[str] | None = None) -> dict[str, records.FileState]:
        # Every file, `near` or not: a superset is what the contract allows, and a targeted
        # update here costs a round trip more than this query's rows do.
        from ..records import file_state_of

        rows = self.conn.rows(
            "SELECT collection_id, path, mtime_ns, size, content_hash, status, kind, engine "
            "FROM files WHERE collection_id = ANY(%s)",
            (self.conn.collections.ids,),
        )
        show = self.conn.collections.show
        return {show(r[0], r[1]): file_state_of(r[2:]) for r in rows}

    def file_paths(self) -> dict[int, str]:
        rows = self.conn.rows(
            "SELECT id, collection_id, path FROM files WHERE collection_id = ANY(%s)",
            (self.conn.collections.ids,),
        )
        return {int(r[0]): self.conn.collections.show(r[1], r[2]) for r in rows}

    def left_out(self) -> list[tuple[str, int, int]]:
        rows = self.conn.rows(
            "SELECT collection_id, path, skipped_sections, secrets_scrubbed FROM files "
            "WHERE collection_id = ANY(%s) AND (skipped_sections > 0 OR secrets_scrubbed > 0)",
            (self.conn.collections.ids,),
        )
        return sorted((self.conn.collections.show(r[0], r[1]), int(r[2]), int(r[3])) for r in rows)

    def file_problems(self) -> list[tuple[str, str, str]]:
        rows = self.conn.rows(
            "SELECT collection_id, path, status, problem FROM files "
            "WHERE collection_id = ANY(%s) AND status != 'ok'",
            (self.conn.collections.ids,),
        )
        return sorted((self.conn.collections.show(r[0], r[1]), r[2], r[3] or "") for r in rows)

    def file_entries(self) -> list[records.FileEntry]:
        from ..records import file_entry_of

        rows = self.conn.rows(
            "SELECT collection_id, path, status, problem, mtime_ns, size, chunk_count, indexed_at "
            "FROM files WHERE collection_id = ANY(%s)",
            (self.conn.collections.ids,),
        )
        show = self.conn.collections.show
        entries = (file_entry_of(show(r[0], r[1]), r[2:]) for r in rows)
        return sorted(entries, key=lambda e: e.path)

    def indexed_file(self, path: str) -> records.IndexedFile | None:
        from ..records import indexed_file_of

        where = self.conn.collections.split(path)
        if where is None:
            return None
        found = self.conn.rows(
            "SELECT status, problem, mtime_ns, size, title, kind FROM files "
            "WHERE collection_id = %s AND path = %s",
            where,
        )
        return indexed_file_of(found[0]) if found else None

    def document_outcomes(self) -> list[records.KindOutcomes]:
        from ..records import kind_outcomes_of

        rows = self.conn.rows(
            "SELECT kind, outcome, count(*), CASE WHEN engine LIKE 'missing:%%' "
            "THEN substr(engine, 9) END AS missing FROM files "
            "WHERE collection_id = ANY(%s) AND kind IS NOT NULL "
            "GROUP BY kind, outcome, missing ORDER BY kind, outcome, missing",
            (self.conn.collections.ids,),
        )
        return kind_outcomes_of(rows)

    def vault_location(self, path: str) -> tuple[str, str] | None:
        """(vault folder, path inside it) of a note path as shown; None when its collection
        has not been indexed from a folder yet."""
        where = self.conn.collections.split(path)
        if where is None:
            return None
        root = self.conn.scalar(
            "SELECT value FROM meta WHERE collection_id = %s AND key = %s",
            (where[0], meta.VAULT_ROOT),
        )
        return None if root is None else (str(root), where[1])

    def similar_paths(self, file_name: str, limit: int) -> list[str]:
        rows = self.conn.rows(
            "SELECT collection_id, path FROM files WHERE collection_id = ANY(%s) "
            "AND status != 'skipped' AND (lower(path) = %s OR lower(path) LIKE %s) "
            "ORDER BY path, collection_id LIMIT %s",
            (self.conn.collections.ids, file_name, "%/" + _like_prefix(file_name)[:-2], limit),
        )
        return [self.conn.collections.show(r[0], r[1]) for r in rows]

    def files_named(self, name: str) -> list[int]:
        rows = self.conn.rows(
            "SELECT file_id FROM note_names WHERE collection_id = ANY(%s) AND name = %s "
            "ORDER BY file_id",
            (self.conn.collections.ids, name),
        )
        return [int(r[0]) for r in rows]

    def files_matching(self, filters: FileFilter) -> set[int]:
        # Each list is one array parameter, so the statement does not grow with it (a nested
        # IN per tag took 4.9 s to plan at 200 tags and never finished at 2,000), and each value
        # is one index lookup (bench/filter_lists.py).
        clauses = ["collection_id = ANY(%s)"]
        params: list[object] = [self.conn.collections.ids]
        for op, day in filters.day_bounds():
            clauses.append(f"left(note_date, 10) {op} %s")
            params.append(day)
        folders = filters.folder_prefixes()
        if folders is not None:
            # (collection, prefix) pairs; a prefix's paths are a range of files_by_path_c: from
            # 'x/' up to 'x0' ('0' follows '/' byte-wise). A whole collection is its id alone.
            cids: list[int] = []
            prefixes: list[str] = []
            whole: list[int] = []
            for folder in folders:
                where = self.conn.collections.split_folder(folder)
                if where is None:
                    continue  # names no collection of ours: matches nothing
                cid, inner = where
                for one in self.conn.collections.ids if cid is None else [cid]:
                    if inner:
                        cids.append(one)
                        prefixes.append(inner)
                    else:
                        whole.append(one)
            # LATERAL ... OFFSET 0: one index range per prefix. Joined plainly, the planner
            # hashes on collection_id and tests every file against every prefix (4.4 s for
            # 1,500 folders over 5,000 files, against 46 ms).
            clauses.append(
                "(collection_id = ANY(%s) OR id IN (SELECT f.id FROM "
                "unnest(%s::int[], %s::text[]) AS q(cid, prefix) CROSS JOIN LATERAL ("
                "SELECT id FROM files f WHERE f.collection_id = q.cid "
                "AND (f.path COLLATE \"C\") >= q.prefix || '/' "
                "AND (f.path COLLATE \"C\") < q.prefix || '0' OFFSET 0) f))"
            )
            params += [whole, cids, prefixes]
        wanted = filters.all_tags()
        if wanted:
            # A tag matches itself (note_tags' key, a hash join) and its nested tags (a range of
            # note_tags_by_tag_c per tag, fenced as for folders); a note must match every tag.
            clauses.append(
                "id IN (SELECT file_id FROM ("
                "SELECT t.file_id, q.tag FROM unnest(%s::text[]) AS q(tag) JOIN note_tags t "
                "ON t.collection_id = ANY(%s) AND t.tag = q.tag "
                "UNION ALL SELECT t.file_id, q.tag FROM unnest(%s::text[]) AS q(tag) "
                "CROSS JOIN LATERAL (SELECT file_id FROM note_tags t "
                "WHERE t.collection_id = ANY(%s) AND (t.tag COLLATE \"C\") >= q.tag || '/' "
                "AND (t.tag COLLATE \"C\") < q.tag || '0' OFFSET 0) t"
                ") m GROUP BY file_id HAVING count(DISTINCT tag) = %s)"
            )
            ids = self.conn.collections.ids
            params += [wanted, ids, wanted, ids, len(wanted)]
        if filters.files:
            # Paths as shown -> (collection, path) pairs, looked up in UNIQUE (collection_id,
            # path) through two array parameters: any number of files, one statement.
            pairs = [
                where
                for where in map(self.conn.collections.split, filters.files)
                if where is not None
            ]
            clauses.append("(collection_id, path) IN (SELECT * FROM unnest(%s::int[], %s::text[]))")
            params += [[p[0] for p in pairs], [p[1] for p in pairs]]
        rows = self.conn.rows(f"SELECT id FROM files WHERE {' AND '.join(clauses)}", params)
        return {int(r[0]) for r in rows}

    def files_by_date(self, allowed: set[int] | None, limit: int) -> list[int]:
        if allowed is not None and not allowed:
            return []
        where = (
            "collection_id = ANY(%s) AND status != 'skipped' AND chunk_count > 0 "
            "AND note_date IS NOT NULL"
        )
        params: list[object] = [self.conn.collections.ids]
        if allowed is not None:
            where += " AND id = ANY(%s)"
            params.append(sorted(allowed))
        rows = self.conn.rows(
            f"SELECT id FROM files WHERE {where} ORDER BY note_date DESC, path, id LIMIT %s",
            [*params, limit],
        )
        return [int(r[0]) for r in rows]

    def note_tags(self, file_ids: Sequence[int] | None = None) -> dict[int, tuple[str, ...]]:
        where, params = (
            "t.collection_id = ANY(%s) AND f.status != 'skipped'",
            [self.conn.collections.ids],
        )
        if file_ids is not None:
            where += " AND t.file_id = ANY(%s)"
            params.append(list(file_ids))
        rows = self.conn.rows(
            "SELECT t.file_id, t.tag FROM note_tags t JOIN files f ON f.id = t.file_id "
            f"WHERE {where} ORDER BY t.file_id, t.tag",
            tuple(params),
        )
        return strings_by_file(rows)

    # -- chunks -----------------------------------------------------------------------------

    def chunk_count(self) -> int:
        """Number of chunks in the selected collections."""
        return int(
            self.conn.scalar(
                "SELECT coalesce(sum(chunk_count), 0) FROM collections WHERE id = ANY(%s)",
                (self.conn.collections.ids,),
            )
        )

    def chunk_rows(self, ids: Sequence[int]) -> dict[int, ChunkRow]:
        if not ids:
            return {}
        rows = self.conn.rows(
            "SELECT c.id, f.collection_id, f.path, c.section, c.chunk_text, f.heading_context, "
            "c.page, c.page_label, c.slide, c.sheet, c.row_first, c.row_last, f.note_date, "
            "f.date_source FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.id = ANY(%s) "
            "AND c.collection_id = ANY(%s)",
            ([int(i) for i in ids], self.conn.collections.ids),
        )
        show = self.conn.collections.show
        return {
            int(r[0]): ChunkRow(int(r[0]), show(r[1], r[2]), r[3], r[4], r[5], *r[6:]) for r in rows
        }

    def chunk_texts(self, path: str) -> list[str]:
        where = self.conn.collections.split(path)
        if where is None:
            return []
        rows = self.conn.rows(
            "SELECT c.chunk_text FROM chunks c JOIN files f ON f.id = c.file_id "
            "WHERE f.collection_id = %s AND f.path = %s ORDER BY c.seq",
            where,
        )
        return [str(r[0]) for r in rows]

    def file_chunks(self, path: str) -> list[records.StoredChunk]:
        from ..records import StoredChunk

        where = self.conn.collections.split(path)
        if where is None:
            return []
        rows = self.conn.rows(
            "SELECT c.seq, c.section, c.chunk_text, c.page, c.page_label, c.slide, c.sheet, "
            "c.row_first, c.row_last, c.overlap FROM chunks c JOIN files f ON f.id = c.file_id "
            "WHERE f.collection_id = %s AND f.path = %s ORDER BY c.seq",
            where,
        )
        return [StoredChunk(*r) for r in rows]

    def file_ids(self, chunk_ids: Sequence[int]) -> dict[int, int]:
        known = self.conn.per_transaction.get("file_of", {})  # read by this transaction's knn
        if chunk_ids and all(int(i) in known for i in chunk_ids):
            return {int(i): known[int(i)] for i in chunk_ids}
        # Read with the in-memory vectors (vector_table.py), valid while nothing was written
        # since: checked in a read transaction, whose BEGIN read the state (elsewhere the check
        # would cost a statement of its own).
        state, loaded = self.conn.chunk_files
        if (
            chunk_ids
            and "collections" in self.conn.per_transaction
            and state == self.conn.collections_state()
            and all(int(i) in loaded for i in chunk_ids)
        ):
            return {int(i): loaded[int(i)] for i in chunk_ids}
        rows = self.conn.rows(
            "SELECT id, file_id FROM chunks WHERE id = ANY(%s) AND collection_id = ANY(%s)",
            (sorted({int(i) for i in chunk_ids}), self.conn.collections.ids),
        )
        return {int(r[0]): int(r[1]) for r in rows}

    def chunks_of_files(self, file_ids: Iterable[int]) -> set[int]:
        rows = self.conn.rows(
            "SELECT id FROM chunks WHERE file_id = ANY(%s) AND collection_id = ANY(%s)",
            (sorted({int(i) for i in file_ids}), self.conn.collections.ids),
        )
        return {int(r[0]) for r in rows}

    def first_chunk(self, file_id: int) -> int | None:
        value = self.conn.scalar(
            "SELECT id FROM chunks WHERE file_id = %s AND collection_id = ANY(%s) "
            "ORDER BY seq LIMIT 1",
            (file_id, self.conn.collections.ids),
        )
        return None if value is None else int(value)
