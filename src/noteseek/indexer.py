"""Bring an index up to date with a vault: full or incremental, one atomic transaction per file."""

from __future__ import annotations

import hashlib
import json
import logging
import signal
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt

from .chunker import ChunkOptions, chunk_note, content_hash, embedding_text
from .embedder import Embedder
from .errors import VectorSupportError
from .language import note_language
from .quantize import quantize
from .query import name_key, tag_key
from .scrubber import RULES_FINGERPRINT, Allowlist, ScrubResult, scrub
from .store import ChunkRecord, FileRecord, FileState, Store
from .vault import (
    DEFAULT_EXCLUDE,
    DEFAULT_MAX_FILE_BYTES,
    NoteFile,
    decode_note,
    read_note,
    scan_vault,
)

__all__ = ["IndexOptions", "IndexStats", "Progress", "run_update"]

log = logging.getLogger("noteseek.indexer")

# Bump when chunking or the embedded text changes in a way that should re-process every note.
PIPELINE_VERSION = "6"  # 2: title/tags fields and note names (m002); 3: note_tags (m003);
# 4: code left out of the embedded text (chunker.prose_text); 5: German stems (m004);
# 6: bare secrets scrubbed (entropy.py), short sections merged instead of dropped, left-out
# counts per file (m005)
EMBED_BATCH_CHUNKS = 512

Progress = Callable[[int, int, str], None]


@dataclass(frozen=True)
class IndexOptions:
    """What to index and how."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    chunking: ChunkOptions = field(default_factory=ChunkOptions)
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    # Known false positives the scrubber must leave alone (`noteseek scan` shows fingerprints).
    allow: Allowlist | None = None

    def scope(self) -> str:
        """The folders indexed, as stored in the index's meta (JSON)."""
        return json.dumps({"include": list(self.include), "exclude": list(self.exclude)})

    @classmethod
    def from_scope(cls, stored: str | None) -> IndexOptions:
        """Options with the folders of a stored `scope()` (defaults for everything else)."""
        try:
            data = json.loads(stored) if stored else {}
            include = tuple(str(f) for f in data.get("include", ()))
            exclude = tuple(str(f) for f in data.get("exclude", DEFAULT_EXCLUDE))
        except (ValueError, TypeError, AttributeError):
            return cls()
        return cls(include=include, exclude=exclude)

    def fingerprint(self) -> str:
        """Changes when re-chunking (and re-scrubbing) every note is needed."""
        c = self.chunking
        allow = self.allow.fingerprint if self.allow is not None else "-"
        raw = (
            f"{PIPELINE_VERSION}|{c.max_chars}|{c.min_chars}|{sorted(c.skip_sections)}|"
            f"{RULES_FINGERPRINT}|{allow}"
        )
        return hashlib.sha256(raw.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class IndexStats:
    """What one `update` did."""

    files_seen: int = 0
    added: int = 0
    changed: int = 0
    unchanged: int = 0
    removed: int = 0
    skipped: int = 0
    chunks: int = 0
    chunks_written: int = 0
    chunks_embedded: int = 0
    vectors_reused: int = 0
    secrets_scrubbed: int = 0
    seconds: float = 0.0
    interrupted: bool = False
    vectors: bool = True
    problems: tuple[tuple[str, str], ...] = ()


@dataclass
class _Prepared:
    record: FileRecord
    chunks: list[ChunkRecord]
    embed_texts: list[str]
    is_new: bool
    secrets: int


@contextmanager
def _stop_on_first_interrupt() -> Iterator[threading.Event]:
    """First Ctrl-C: finish the current file, then stop. Second Ctrl-C: abort at once (rolled back)."""
    stop = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return

    def handler(signum: int, frame: object) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()
        log.warning(
            "interrupted: finishing the current file, then stopping (Ctrl-C again to abort)"
        )

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield stop
    finally:
        signal.signal(signal.SIGINT, previous)


def _file_names(rel_path: str, allow: Allowlist | None = None) -> list[str]:
    """Names a file is known by: its stem, and its folder's name for `index.md` / `README.md`."""
    parts = rel_path.split("/")
    stem = parts[-1].rsplit(".", 1)[0]
    if stem.lower() in ("index", "readme", "_index"):
        # `files/en-us/web/api/fetch_api/index.md` is known as `fetch_api`, not as `index`.
        names = [parts[-2]] if len(parts) > 1 else []
    else:
        names = [stem]
    return [scrub(n, allow=allow).text.replace("_", " ").replace("-", " ") for n in names]


@dataclass(frozen=True)
class _Skip:
    """Why a note is not indexed; `recheck`: look again next run even if the file is unchanged."""

    reason: str
    recheck: bool = False


def _prepare(
    note: NoteFile, root: Path, old: FileState | None, options: IndexOptions, force: bool
) -> _Prepared | _Skip | None:
    """Read and chunk one note. Returns None if unchanged, a _Skip if it must be skipped."""

    def clean(text: str) -> ScrubResult:
        return scrub(text, allow=options.allow)

    raw = read_note(note, root, max_bytes=options.max_file_bytes)
    if raw.data is None:
        return _Skip(raw.problem or "unreadable", recheck=raw.recheck)
    data = raw.data
    file_hash = hashlib.sha256(data).hexdigest()
    if not force and old is not None and old.content_hash == file_hash and old.status != "skipped":
        return None
    decoded = decode_note(data)
    if decoded.text is None:
        return _Skip(decoded.problem or "unreadable")
    scrubbed = clean(decoded.text)
    stem = note.rel_path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    note_chunks = chunk_note(scrubbed.text, file_stem=clean(stem).text, options=options.chunking)
    # Chunk text and sections are cut from already-scrubbed text; title and context come from
    # parsed YAML (escapes resolved), so they pass the scrubber once more.
    title = clean(note_chunks.title).text
    chunks: list[ChunkRecord] = []
    texts: list[str] = []
    for chunk in note_chunks.chunks:
        embed_text = embedding_text(title, chunk.section, chunk.text)
        texts.append(embed_text)
        chunks.append(
            ChunkRecord(
                seq=chunk.seq,
                section=chunk.section,
                text=chunk.text,
                heading_context=clean(chunk.heading_context).text,
                content_hash=content_hash(embed_text),
            )
        )
    warnings = [w for w in (decoded.warning, note_chunks.warning) if w]
    meta = note_chunks.meta
    names = [
        title,
        *(clean(a).text for a in meta.aliases),
        *_file_names(note.rel_path, options.allow),
    ]
    if scrubbed.counts:
        found = ", ".join(f"{name} x{n}" for name, n in sorted(scrubbed.counts.items()))
        log.info(
            "scrubbed %d secret(s) from %s: %s", sum(scrubbed.counts.values()), note.rel_path, found
        )
    record = FileRecord(
        path=note.rel_path,
        # The stat of the bytes actually read: the file may have changed since it was listed.
        mtime_ns=raw.mtime_ns,
        size=raw.size,
        content_hash=file_hash,
        title=title,
        status="warning" if warnings else "ok",
        problem="; ".join(warnings) or None,
        title_field=" ".join(names),
        tags_field=clean(" ".join([meta.type or "", *meta.tags]).strip()).text,
        names=tuple(k for k in (name_key(n) for n in names) if k),
        tags=tuple(k for k in (tag_key(clean(t).text) for t in meta.tags) if k),
        lang=note_language(scrubbed.text),
        skipped_sections=len(note_chunks.skipped_sections),
        secrets_scrubbed=sum(scrubbed.counts.values()),
    )
    return _Prepared(record, chunks, texts, old is None, sum(scrubbed.counts.values()))


def run_update(
    store: Store,
    embedder: Embedder | None,
    vault: str,
    *,
    full: bool = False,
    options: IndexOptions | None = None,
    progress: Progress | None = None,
) -> IndexStats:
    """Index new and changed notes, drop deleted ones, and embed what lacks a vector."""
    opts = options or IndexOptions()
    started = time.perf_counter()
    deleted_before = store.chunks_deleted
    root = Path(vault).resolve()
    use_vectors = embedder is not None and store.vectors_available
    counter: Counter[str] = Counter()
    problems: list[tuple[str, str]] = []

    if not store.vectors_available and store.has_vector_table():
        # Writing now would leave vectors of deleted chunks behind; searching still works.
        raise VectorSupportError(
            f"this index has vectors but sqlite-vec cannot be loaded ({store.vector_error}); "
            "reinstall it (pip install --force-reinstall sqlite-vec) before updating the index"
        )
    with store.write():
        if use_vectors:
            assert embedder is not None
            fingerprint = embedder.fingerprint
            if not store.has_vector_table() or store.get_meta("model_fingerprint") != fingerprint:
                log.info(
                    "embedding model changed (%s): every chunk will be re-embedded", fingerprint
                )
                store.reset_vectors(embedder.dim, fingerprint)
        pipeline = opts.fingerprint()
        force = full or store.get_meta("pipeline") != pipeline
        store.set_meta("vault_root", str(root))

    notes, passed_over = scan_vault(root, include=opts.include, exclude=opts.exclude)
    # A path is the files table's key and appears in results and logs, so it cannot be scrubbed
    # like text: a note whose path holds a secret is not indexed at all, only named (scrubbed).
    secret_paths = [n for n in notes if scrub(n.rel_path, allow=opts.allow).counts]
    for note in secret_paths:
        shown = scrub(note.rel_path, allow=opts.allow).text
        log.warning("not indexed: the path of %s contains a secret; rename the file", shown)
        problems.append((shown, "the file name contains a secret; rename the file to index it"))
    notes = [n for n in notes if n not in secret_paths]
    known = store.file_states()
    # Passed-over entries (symlinks out of the vault, loops) are re-recorded as skipped below; they
    # are still there, so they must not be counted as removed on every run.
    present = {n.rel_path for n in notes} | {path for path, _ in passed_over}
    candidates = [
        n
        for n in notes
        if force
        or n.rel_path not in known
        or known[n.rel_path].mtime_ns != n.mtime_ns
        or known[n.rel_path].size != n.size
    ]
    counter["unchanged"] = len(notes) - len(candidates)

    with _stop_on_first_interrupt() as stop:
        with store.write():
            for path in sorted(set(known) - present):
                store.delete_file(path)
                counter["removed"] += 1
            for path, reason in passed_over:
                store.replace_file(FileRecord(path, 0, 0, None, None, "skipped", reason), [], None)
                problems.append((path, reason))
                counter["skipped"] += 1

        pending: list[_Prepared] = []
        pending_chunks = 0

        def flush() -> None:
            nonlocal pending_chunks
            if not pending:
                return
            all_vectors = (
                _embed_batch(store, embedder, pending, reuse=not full, counter=counter)
                if use_vectors and embedder is not None
                else [None] * len(pending)
            )
            for item, vectors in zip(pending, all_vectors):
                with store.write():
                    store.replace_file(item.record, item.chunks, vectors)
                counter["added" if item.is_new else "changed"] += 1
                counter["chunks_written"] += len(item.chunks)
            pending.clear()
            pending_chunks = 0

        for done, note in enumerate(candidates, start=1):
            if stop.is_set():
                break
            try:
                result = _prepare(note, root, known.get(note.rel_path), opts, force)
            except Exception as exc:  # one note must never abort the whole run
                log.exception("failed to index %s", note.rel_path)
                result = _Skip(
                    f"could not be indexed ({type(exc).__name__}: {exc}); "
                    "this is a bug in noteseek, please report it",
                    recheck=True,
                )
            if result is None:
                with store.write():
                    store.touch_file(note.rel_path, note.mtime_ns, note.size)
                counter["unchanged"] += 1
            elif isinstance(result, _Skip):
                # mtime 0 never matches a real stat, so a problem that may clear up by itself
                # (permissions, the size limit, a file being written) is looked at again next run.
                mtime_ns = 0 if result.recheck else note.mtime_ns
                with store.write():
                    store.replace_file(
                        FileRecord(
                            note.rel_path, mtime_ns, note.size, None, None, "skipped", result.reason
                        ),
                        [],
                        None,
                    )
                log.warning("skipped %s: %s", note.rel_path, result.reason)
                problems.append((note.rel_path, result.reason))
                counter["skipped"] += 1
            else:
                if result.record.problem:
                    log.warning(
                        "indexed %s with a problem: %s", note.rel_path, result.record.problem
                    )
                    problems.append((note.rel_path, result.record.problem))
                counter["secrets"] += result.secrets
                pending.append(result)
                pending_chunks += len(result.chunks)
                if pending_chunks >= EMBED_BATCH_CHUNKS:
                    flush()
            if progress is not None:
                progress(done, len(candidates), note.rel_path)
        flush()

        if use_vectors and not stop.is_set():
            assert embedder is not None
            while not stop.is_set():
                missing = store.chunks_missing_vectors(EMBED_BATCH_CHUNKS)
                if not missing:
                    break
                texts = [
                    embedding_text(title, section, text) for _, title, section, text in missing
                ]
                vectors = quantize(embedder.embed(texts))
                with store.write():
                    store.set_vectors([m[0] for m in missing], vectors)
                counter["chunks_embedded"] += len(missing)

    stats = IndexStats(
        files_seen=len(notes),
        added=counter["added"],
        changed=counter["changed"],
        unchanged=counter["unchanged"],
        removed=counter["removed"],
        skipped=counter["skipped"],
        chunks=int(store.scalar("SELECT count(*) FROM chunks")),
        chunks_written=counter["chunks_written"],
        chunks_embedded=counter["chunks_embedded"],
        vectors_reused=counter["reused"],
        secrets_scrubbed=counter["secrets"],
        seconds=time.perf_counter() - started,
        interrupted=stop.is_set(),
        vectors=use_vectors,
        problems=tuple(problems),
    )
    with store.write():
        if _deleted_a_large_share(store.chunks_deleted - deleted_before, stats.chunks):
            store.optimize_text_index()
        if stats.added or stats.changed or stats.removed or store.common_terms_outdated():
            store.refresh_common_terms()
            store.refresh_languages()
        if not stats.interrupted:
            # Only a finished run proves every note went through this pipeline; an interrupted
            # one leaves the old fingerprint so the next run re-processes the rest.
            store.set_meta("pipeline", pipeline)
            store.set_meta("scope", opts.scope())
        store.set_meta("last_run", json.dumps({**_public(stats), "finished_at": time.time()}))
    store.checkpoint()
    return stats


# A run that deleted or replaced at least this share of the chunks merges the text index after.
OPTIMIZE_SHARE = 0.1


def _deleted_a_large_share(deleted: int, chunks: int) -> bool:
    # FTS5 removes a deleted row's terms only when it merges segments, and merges only a few at a
    # time. Re-processing every note (a pipeline change, --full) left MDN's text index at 4x its
    # size and BM25 at twice the time of a fresh build (9.4 vs 6.0 ms p50); one full merge, 0.7 s
    # there, brings both back. Small runs leave it to FTS5's automerge, and a first build, which
    # deletes nothing, skips it: merging would only leave the replaced pages free in the file.
    return deleted > 0 and deleted >= OPTIMIZE_SHARE * max(chunks, 1)


def _embed_batch(
    store: Store,
    embedder: Embedder,
    batch: list[_Prepared],
    *,
    reuse: bool,
    counter: Counter[str],
) -> list[npt.NDArray[np.int8]]:
    """int8 vectors for every chunk of a batch of files: reused by content hash, else embedded at once."""
    hashes = [c.content_hash for item in batch for c in item.chunks]
    known = store.vectors_by_hash(hashes) if reuse else {}
    todo = {c.content_hash: t for item in batch for c, t in zip(item.chunks, item.embed_texts)}
    todo = {h: t for h, t in todo.items() if h not in known}
    fresh: dict[int, npt.NDArray[np.int8]] = {}
    if todo:
        embedded = quantize(embedder.embed(list(todo.values())))
        fresh = dict(zip(todo.keys(), embedded))
    counter["chunks_embedded"] += len(todo)
    counter["reused"] += sum(1 for h in hashes if h in known)
    out: list[npt.NDArray[np.int8]] = []
    for item in batch:
        rows = [
            fresh[c.content_hash]
            if c.content_hash in fresh
            else np.frombuffer(known[c.content_hash], dtype=np.int8)
            for c in item.chunks
        ]
        out.append(np.vstack(rows) if rows else np.zeros((0, embedder.dim), dtype=np.int8))
    return out


def _public(stats: IndexStats) -> dict[str, object]:
    data = {k: v for k, v in stats.__dict__.items() if k != "problems"}
    data["problems"] = len(stats.problems)
    return data
