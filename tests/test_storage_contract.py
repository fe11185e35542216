"""The `Storage` protocol's behaviour, the same on both backends (SQLite and PostgreSQL).

Every test runs twice through the `backend` fixture (tests/backends.py). They call the protocol
the way the engine does: writes inside `write()`, reads with ids the backend assigned, int8
vectors, planned query terms.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from noteseek import IndexLockedError, IndexNotFoundError
from noteseek.storage import meta
from noteseek.storage.queries import FileFilter, KeywordQuery
from noteseek.storage.records import ChunkRecord, FileRecord, FileWrite

from .backends import Backend

DIM = 8


def record(path: str, *, title: str = "", tags: tuple[str, ...] = (), names=(), size=10):  # type: ignore[no-untyped-def]
    return FileRecord(
        path, 1_000 + size, size, f"h-{path}", title or path, "ok", None,
        title_field=title, tags_field=" ".join(tags), names=tuple(names), tags=tags,
    )  # fmt: skip


def chunks(*texts: str, section: str = "Intro") -> list[ChunkRecord]:
    return [ChunkRecord(i, section, t, hash(t) & 0x7FFFFFFFFFFF) for i, t in enumerate(texts)]


def vectors(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.integers(-127, 128, size=(n, DIM)).astype(np.int8)


def fill(store) -> None:  # type: ignore[no-untyped-def]
    """Three notes in two folders, with tags, names and vectors."""
    with store.write():
        store.reset_vectors(DIM, "fake:8")
        store.set_meta(meta.VAULT_ROOT, "/vault")
        store.replace_file(
            FileWrite(
                record(
                    "howto/git.md", title="Git rebase", tags=("dev/git",), names=("git rebase",)
                ),
                chunks("undo a rebase with the reflog", "interactive rebase squashes commits"),
                vectors(2, 1),
            )
        )
        store.replace_file(
            FileWrite(
                record("howto/tokens.md", title="Token rotation", tags=("security",)),
                chunks("rotate api tokens every ninety days", "refresh tokens rotate on use"),
                vectors(2, 2),
            )
        )
        store.replace_file(
            FileWrite(
                record("notes/cooking.md", title="Cooking", tags=("home",)),
                chunks("a recipe for bread with a long rise"),
                vectors(1, 3),
            )
        )


def paths_of(store, ids) -> list[str]:  # type: ignore[no-untyped-def]
    rows = store.chunk_rows(list(ids))
    return [rows[i].path for i in ids]


def test_filter_lists_of_any_length_answer_in_one_statement(backend: Backend) -> None:
    """1,500 folders, tags or files: the same answer as one, where a clause per value overflowed
    SQLite's expression depth (~1,000) and took PostgreSQL minutes to plan. Tags are AND-ed, a
    tag also matches its nested tags, folders and files are OR-ed; wildcards are literal."""
    store = backend.open()
    try:
        fill(store)
        with store.write():
            store.replace_file(
                FileWrite(
                    record("a_b/x%y/deep.md", tags=("dev/git/hooks", "home")),
                    chunks("a deep note with odd folder names"),
                    vectors(1, 4),
                )
            )
        by_path = {v: k for k, v in store.file_paths().items()}

        def match(**filters: Any) -> set[int]:
            return store.files_matching(FileFilter(**filters))

        many = [f"nowhere/{i}" for i in range(1_500)]
        assert match(folders=[*many, "howto"], tags=None, files=None) == {
            by_path["howto/git.md"],
            by_path["howto/tokens.md"],
        }
        assert match(folders=many, tags=None, files=None) == set()
        assert match(folders=None, tags=[*many, "dev"], files=None) == set()  # every tag needed
        assert match(folders=None, tags=["dev", "dev", "dev/git"], files=None) == {
            by_path["howto/git.md"],
            by_path["a_b/x%y/deep.md"],
        }
        assert match(folders=None, tags=["dev/git", "home"], files=None) == {
            by_path["a_b/x%y/deep.md"]
        }
        assert match(folders=None, tags=["dev/gi"], files=None) == set()  # a prefix, not a tag
        assert match(folders=None, tags=None, files=[*many, "notes/cooking.md"]) == {
            by_path["notes/cooking.md"]
        }
        assert match(folders=["a_b/x%y"], tags=None, files=None) == {by_path["a_b/x%y/deep.md"]}
        assert match(folders=["a%b", "a_b/x_y", "a"], tags=None, files=None) == set()
    finally:
        store.close()


def test_files_round_trip(backend: Backend) -> None:
    store = backend.open()
    try:
        fill(store)
        states = store.file_states()
        assert sorted(states) == ["howto/git.md", "howto/tokens.md", "notes/cooking.md"]
        assert states["howto/git.md"].content_hash == "h-howto/git.md"
        assert store.chunk_count() == 5
        assert sorted(store.file_paths().values()) == sorted(states)
        assert store.chunk_texts("howto/git.md") == [
            "undo a rebase with the reflog",
            "interactive rebase squashes commits",
        ]
        with store.write():
            store.touch_file("notes/cooking.md", 5, 6)
            store.delete_file("howto/tokens.md")
            store.delete_file("missing.md")  # nothing to delete: no error
        states = store.file_states()
        assert (states["notes/cooking.md"].mtime_ns, states["notes/cooking.md"].size) == (5, 6)
        assert "howto/tokens.md" not in states
        assert store.chunk_count() == 3
        assert store.counts()["chunks"] == 3 and store.counts()["files"] == 2
        assert store.integrity_problems() == []
        found = store.indexed_file("howto/git.md")
        assert found is not None and found.title == "Git rebase" and found.status == "ok"
        assert store.indexed_file("howto/tokens.md") is None
        assert store.vault_location("howto/git.md") == ("/vault", "howto/git.md")
        assert store.similar_paths("git.md", 3) == ["howto/git.md"]
    finally:
        store.close()


@pytest.mark.parametrize("length", [49_996, 60_000, 1_000_000])
def test_reads_of_any_length_answer_without_a_backend_error(backend: Backend, length: int) -> None:
    """A 'did you mean' for a file name of any length: SQLite refuses LIKE patterns over 50,000
    bytes, so a pattern built from the name made `/api/notes/<50,000 characters>` a 500."""
    store = backend.open()
    try:
        fill(store)
        name = "a" * (length - 3) + ".md"
        assert store.similar_paths(name, 3) == []
        assert store.similar_paths("%" * length, 3) == []
        assert store.similar_paths("_it.md", 3) == []  # no wildcard meaning for '_' or '%'
        assert store.similar_paths("GIT.md".lower(), 3) == ["howto/git.md"]
        assert store.indexed_file("howto/" + name) is None
    finally:
        store.close()


def test_replacing_a_file_replaces_its_chunks_and_statistics(backend: Backend) -> None:
    store = backend.open()
    try:
        fill(store)
        with store.write():
            store.replace_file(FileWrite(record("howto/git.md"), chunks("cherry pick one commit")))
        assert store.chunk_texts("howto/git.md") == ["cherry pick one commit"]
        assert (
            store.keyword_search(KeywordQuery(["reflog"], limit=5, column_weights=(1, 2, 4, 2)))
            == []
        )
        hit = store.keyword_search(KeywordQuery(["cherry"], limit=5, column_weights=(1, 2, 4, 2)))
        assert paths_of(store, [h[0] for h in hit]) == ["howto/git.md"]
        assert store.integrity_problems() == []
        assert store.chunks_missing_vectors(10)[0][3] == "cherry pick one commit"
    finally:
        store.close()


def test_a_batch_of_files_is_written_as_one_file_after_another(backend: Backend) -> None:
    """`replace_files` gives the ids, rows and statistics of one `replace_file` per file, in
    order: new files and replaced ones in one batch, their chunks' ids ascending in file order."""
    store = backend.open()
    try:
        fill(store)
        batch = [
            FileWrite(
                record("howto/git.md", title="Git", tags=("dev",), names=("git",)),
                chunks("cherry pick one commit", "then rebase"),
                vectors(2, 5),
            ),
            FileWrite(record("b.md", tags=("home",)), chunks("bread and cherry jam"), vectors(1, 6)),
            FileWrite(record("empty.md")),  # no chunks
            FileWrite(record("a.md"), chunks("apple cherry pie", "apple tart"), vectors(2, 7)),
            # A path twice in one batch: written in turn, the second wins.
            FileWrite(record("c.md"), chunks("plum jam"), vectors(1, 8)),
            FileWrite(record("c.md"), chunks("plum cake", "plum tart"), vectors(2, 9)),
        ]
        with store.write():
            store.replace_files(batch)
        assert store.integrity_problems() == []
        hits = store.keyword_search(KeywordQuery(["cherry"], limit=9, column_weights=(1, 2, 4, 2)))
        ids = sorted(h[0] for h in hits)
        # Chunk ids ascend in the batch's order: git.md's, then b.md's, then a.md's.
        assert paths_of(store, ids) == ["howto/git.md", "b.md", "a.md"]
        assert store.chunk_texts("a.md") == ["apple cherry pie", "apple tart"]
        assert store.chunk_texts("howto/git.md") == ["cherry pick one commit", "then rebase"]
        assert store.chunk_texts("c.md") == ["plum cake", "plum tart"]
        assert (store.counts()["files"], store.counts()["chunks"]) == (7, 10)
        by_path = {v: k for k, v in store.file_paths().items()}
        tagged = store.files_matching(FileFilter(folders=None, tags=["home"], files=None))
        assert tagged == {by_path["b.md"], by_path["notes/cooking.md"]}
        assert store.files_named("git") == [by_path["howto/git.md"]]
        assert store.chunks_missing_vectors(10) == []
    finally:
        store.close()


def test_one_transaction_writes_replaces_and_deletes_a_file(backend: Backend) -> None:
    """Statistics a write sums up for its commit (PostgreSQL's) agree with the rows whatever
    a transaction does to one file: written, replaced, deleted, written again."""
    store = backend.open()
    try:
        fill(store)
        before = store.counts()
        with store.write():
            store.replace_file(FileWrite(record("new.md"), chunks("cherry pick", "rebase onto")))
            store.replace_file(FileWrite(record("new.md"), chunks("cherry tree")))
            store.delete_file("new.md")
            store.delete_file("howto/git.md")
            store.replace_file(FileWrite(record("howto/git.md"), chunks("cherry again")))
        assert store.integrity_problems() == []
        after = store.counts()
        # git.md's two chunks became one; new.md is gone with everything it added.
        assert (after["files"], after["chunks"]) == (before["files"], before["chunks"] - 1)
        hit = store.keyword_search(KeywordQuery(["cherry"], limit=5, column_weights=(1, 2, 4, 2)))
        assert paths_of(store, [h[0] for h in hit]) == ["howto/git.md"]
    finally:
        store.close()


def test_a_failed_write_changes_nothing(backend: Backend) -> None:
    store = backend.open()
    try:
        fill(store)
        with pytest.raises(RuntimeError), store.write():
            store.delete_file("howto/git.md")
            raise RuntimeError("disk full, say")
        assert "howto/git.md" in store.file_states()
        assert store.integrity_problems() == []
    finally:
        store.close()


def test_keyword_search(backend: Backend) -> None:
    store = backend.open()
    try:
        fill(store)
        weights = (1.0, 2.0, 4.0, 2.0)
        hits = store.keyword_search(
            KeywordQuery(["rotate", "tokens"], limit=10, column_weights=weights)
        )
        assert hits and all(score > 0 for _, score, _ in hits)
        assert [s for _, s, _ in hits] == sorted((s for _, s, _ in hits), reverse=True)
        assert set(paths_of(store, [h[0] for h in hits])) == {"howto/tokens.md"}
        file_of = store.file_ids([h[0] for h in hits])
        assert all(file_of[cid] == fid for cid, _, fid in hits)
        # Title weight: "rebase" in the title field outranks the same word only in the text.
        assert (
            store.keyword_search(
                KeywordQuery(["nothing-like-this"], limit=5, column_weights=weights)
            )
            == []
        )
        assert store.keyword_search(KeywordQuery([], limit=5, column_weights=weights)) == []
        git = store.files_named("git rebase")
        assert len(git) == 1
        only = store.keyword_search(
            KeywordQuery(["rebase", "bread"], limit=10, column_weights=weights, allowed=set(git))
        )
        assert only and {fid for *_, fid in only} == set(git)
        assert len(store.chunks_of_files(git)) == 2
        assert store.first_chunk(git[0]) == min(store.chunks_of_files(git))
        # Stems: the planner's view and the shares of frequent stems.
        assert store.index_stems("rotating") == ["rotat"]
        with store.write():  # what an update does at its end (a no-op where counts are live)
            store.refresh_common_terms()
        shares = store.term_shares()
        assert shares["rotat"] == pytest.approx(2 / 5)
        assert store.term_shares() is shares  # unchanged counts: the same object
    finally:
        store.close()


def test_filters(backend: Backend) -> None:
    store = backend.open()
    try:
        fill(store)
        by_path = {v: k for k, v in store.file_paths().items()}

        def match(**filters: Any) -> set[int]:
            return store.files_matching(FileFilter(**filters))

        assert match(folders=["howto"], tags=None, files=None) == {
            by_path["howto/git.md"],
            by_path["howto/tokens.md"],
        }
        everything = set(by_path.values())
        assert match(folders=[""], tags=None, files=None) == everything
        assert match(folders=[], tags=[], files=[]) == everything  # empty filters are no filters
        assert match(folders=None, tags=["dev"], files=None) == {by_path["howto/git.md"]}
        assert match(folders=["notes"], tags=["security"], files=None) == set()
        assert match(folders=["how"], tags=None, files=None) == set()  # a prefix, not a folder
        assert match(folders=None, tags=None, files=["howto/git.md", "notes/cooking.md"]) == {
            by_path["howto/git.md"],
            by_path["notes/cooking.md"],
        }
        assert match(folders=None, tags=None, files=["howto/git"]) == set()  # exact paths only
        assert match(folders=["howto"], tags=["security"], files=["howto/tokens.md"]) == {
            by_path["howto/tokens.md"]
        }
        assert match(folders=["notes"], tags=None, files=["howto/tokens.md"]) == set()
        assert store.note_tags() == {
            by_path["howto/git.md"]: ("dev/git",),
            by_path["howto/tokens.md"]: ("security",),
            by_path["notes/cooking.md"]: ("home",),
        }
        problems = [("notes/skipped.md", "skipped", "too big")]
        with store.write():
            store.replace_file(
                FileWrite(FileRecord("notes/skipped.md", 0, 0, None, None, "skipped", "too big"))
            )
        assert store.file_problems() == problems
        assert len(store.note_tags()) == 3  # a skipped file has no tags to list
    finally:
        store.close()


def test_left_out_counts_are_stored_and_replaced_with_the_file(backend: Backend) -> None:
    store = backend.open()
    try:
        fill(store)
        assert store.left_out() == []  # nothing left out: nothing listed
        with store.write():
            base = record("notes/links.md")
            store.replace_file(
                FileWrite(
                    FileRecord(**{**base.__dict__, "skipped_sections": 2, "secrets_scrubbed": 0}),
                    chunks("a note whose See also list was skipped"),
                )
            )
            base = record("howto/tokens.md", title="Token rotation", tags=("security",))
            store.replace_file(
                FileWrite(
                    FileRecord(**{**base.__dict__, "secrets_scrubbed": 3}),
                    chunks("rotate [REDACTED] every ninety days"),
                )
            )
        assert store.left_out() == [("howto/tokens.md", 0, 3), ("notes/links.md", 2, 0)]
        with store.write():
            store.replace_file(FileWrite(record("howto/tokens.md"), chunks("rotate them")))
            store.delete_file("notes/links.md")
        assert store.left_out() == []
    finally:
        store.close()


def test_vectors(backend: Backend) -> None:
    store = backend.open()
    try:
        fill(store)
        assert store.vectors_available and store.has_vector_table()
        counts = store.counts()
        assert counts["vectors"] == counts["embedded"] == 5
        git = store.chunks_of_files(store.files_named("git rebase"))
        stored = vectors(2, 1)
        query = stored[0].tobytes()
        nearest = store.knn(query, 3)
        assert nearest[0][0] == min(git) and nearest[0][1] == pytest.approx(1.0, abs=1e-6)
        assert [c for c, _ in nearest] == [c for c, _ in sorted(nearest, key=lambda x: -x[1])]
        rows = store.vector_rows()  # both hand a collection this small out whole
        assert rows is not None and len(rows.ids) == 5 and rows.dim == DIM
        first = list(rows.ids).index(min(git))
        assert bytes(rows.rows[first * DIM : (first + 1) * DIM]) == query
        hashes = [c.content_hash for c in chunks("undo a rebase with the reflog")]
        assert store.vectors_by_hash(hashes) == {hashes[0]: query}
        with store.write():
            store.reset_vectors(DIM, "fake:8:v2")
        assert store.get_meta(meta.MODEL_FINGERPRINT) == "fake:8:v2"
        missing = store.chunks_missing_vectors(10)
        assert len(missing) == 5 and store.knn(query, 3) == []
        ids = [m[0] for m in missing]
        with store.write():
            store.delete_file("notes/cooking.md")  # one chunk goes while "embedding"
        version = store.data_version()
        with store.write():
            store.set_vectors(ids, vectors(5, 9))  # the gone chunk's vector is not stored
        assert store.data_version() != version  # in-memory vectors must be read again
        assert store.counts()["vectors"] == 4 and store.integrity_problems() == []
        rows = store.vector_rows()
        assert rows is not None and len(rows.ids) == 4
        assert store.chunks_missing_vectors(10) == []
    finally:
        store.close()


def test_meta_and_identity(backend: Backend) -> None:
    store = backend.open()
    try:
        assert store.get_meta("nothing") is None and store.get_json("nothing") is None
        with store.write():
            store.set_meta(meta.LAST_RUN, '{"files_seen": 3}')
            store.set_meta(meta.LAST_RUN, '{"files_seen": 4}')
        assert store.get_json(meta.LAST_RUN) == {"files_seen": 4}
        assert store.schema_version >= 1 and store.size_bytes() > 0
        identity = store.identity()
        version = store.data_version()
    finally:
        store.close()
    again = backend.open(create=False)
    try:
        assert again.identity() == identity
        secret = backend.password()
        assert again.location and (secret is None or secret not in again.location)
        with again.write():
            again.replace_file(FileWrite(record("a.md"), chunks("text")))
        assert again.data_version() != version
    finally:
        again.close()


def test_a_missing_index_is_not_created_without_create(backend: Backend) -> None:
    with pytest.raises(IndexNotFoundError):
        backend.open(create=False)


def test_readers_see_one_snapshot_and_never_wait_for_a_writer(backend: Backend) -> None:
    store, other = backend.open(), backend.open()
    try:
        fill(store)
        entered, release = threading.Event(), threading.Event()

        def write() -> None:
            with other.write():
                other.delete_file("howto/git.md")
                entered.set()
                release.wait(10)

        writer = threading.Thread(target=write)
        writer.start()
        assert entered.wait(10)
        started = time.monotonic()
        with store.snapshot():
            before = set(store.file_states())
            release.set()
            writer.join(10)
            during = set(store.file_states())  # the writer committed meanwhile
        waited = time.monotonic() - started
        assert before == during and "howto/git.md" in before
        assert "howto/git.md" not in store.file_states()
        assert waited < 5  # not the 10 s a blocked read would wait for the lock
    finally:
        store.close()
        other.close()


def test_a_second_writer_gets_index_locked_error(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    import noteseek.storage.postgres.connection as pg
    import noteseek.storage.sqlite.connection as lite

    monkeypatch.setattr(lite, "BUSY_TIMEOUT_MS", 500)
    monkeypatch.setattr(pg, "BUSY_TIMEOUT_S", 1)
    first, second = backend.open(), backend.open()
    try:
        with first.write(), pytest.raises(IndexLockedError) as caught, second.write():
            pass
        message = str(caught.value)
        assert "locked by another writer for over" in message
        assert message.endswith("(another 'noteseek index' running?); try again when it finishes")
        with second.write():  # free again once the first committed
            second.set_meta("k", "v")
    finally:
        first.close()
        second.close()


def test_separate_indexes_do_not_see_each_other(backend: Backend, tmp_path: Path) -> None:
    from noteseek.storage.open import open_storage

    store = backend.open()
    beside = open_storage(backend.other("second"), create=True)
    try:
        fill(store)
        with beside.write():
            beside.replace_file(FileWrite(record("howto/git.md"), chunks("another vault's text")))
        assert beside.chunk_texts("howto/git.md") == ["another vault's text"]
        assert len(store.chunk_texts("howto/git.md")) == 2
        assert (
            beside.keyword_search(KeywordQuery(["rebase"], limit=5, column_weights=(1, 2, 4, 2)))
            == []
        )
        assert beside.integrity_problems() == [] and store.integrity_problems() == []
    finally:
        store.close()
        beside.close()


def test_document_kinds_outcomes_and_chunk_locations(backend: Backend) -> None:
    from noteseek.storage.records import KindOutcomes, StoredChunk

    store = backend.open()
    try:
        fill(store)
        pdf = FileRecord(
            "docs/report.pdf", 5, 50, "h-pdf", "Report", "ok", None,
            kind="pdf", outcome="ok", engine="pypdfium2 5.15.2",
        )  # fmt: skip
        page_chunks = [
            ChunkRecord(0, "Report", "budget overview", 11, page=1, page_label="i"),
            ChunkRecord(1, "Report", "view of the budget lines", 12, page=2, overlap=4),
        ]
        sheet = FileRecord(
            "docs/sheet.xlsx", 6, 60, "h-x", "Sheet", "ok", None,
            kind="xlsx", outcome="ok", engine="python-calamine 0.3",
        )  # fmt: skip
        rows = [
            ChunkRecord(0, "Sheet", "alpha beta budget", 13, sheet="q1", row_first=2, row_last=9)
        ]
        missing = FileRecord(
            "docs/old.xls", 7, 70, None, None, "skipped", "needs the documents extra",
            kind="xls", outcome="unsupported", engine="missing:python_calamine",
        )  # fmt: skip
        with store.write():
            store.replace_file(FileWrite(pdf, page_chunks))
            store.replace_file(FileWrite(sheet, rows))
            store.replace_file(FileWrite(missing))
            store.replace_file(
                FileWrite(FileRecord("slides/deck.pptx", 8, 80, "h-p", "Deck", "ok", None, kind="pptx",
                           outcome="ok", engine="python-pptx 1.0"), [ChunkRecord(0, "Deck", "the budget slide", 14, slide=3)])
            )  # fmt: skip
        states = store.file_states()
        assert (states["docs/report.pdf"].kind, states["docs/report.pdf"].engine) == (
            "pdf",
            "pypdfium2 5.15.2",
        )
        assert states["howto/git.md"].kind is None and states["howto/git.md"].engine is None
        known = store.indexed_file("docs/sheet.xlsx")
        assert known is not None and known.kind == "xlsx"
        assert store.file_chunks("docs/report.pdf") == [
            StoredChunk(0, "Report", "budget overview", 1, "i", None, None, None, None, 0),
            StoredChunk(
                1, "Report", "view of the budget lines", 2, None, None, None, None, None, 4
            ),
        ]
        assert store.file_chunks("docs/nothing.pdf") == []
        found = store.keyword_search(
            KeywordQuery(["budget"], limit=10, column_weights=(1, 2, 4, 2))
        )
        by_path = {row.path: row for row in store.chunk_rows([c for c, _, _ in found]).values()}
        assert (by_path["docs/sheet.xlsx"].sheet, by_path["docs/sheet.xlsx"].row_first) == ("q1", 2)
        assert by_path["docs/sheet.xlsx"].row_last == 9 and by_path["slides/deck.pptx"].slide == 3
        assert by_path["docs/report.pdf"].page in (1, 2)
        assert store.document_outcomes() == [
            KindOutcomes("pdf", "ok", 1),
            KindOutcomes("pptx", "ok", 1),
            KindOutcomes("xls", "unsupported", 1, "python_calamine"),
            KindOutcomes("xlsx", "ok", 1),
        ]
    finally:
        store.close()


def test_update_lock_serialises_runs_and_names_the_holder(backend: Backend) -> None:
    first, second = backend.open(), backend.open()
    try:
        with first.update_lock(wait=0, holder="noteseek index (test)"):
            with pytest.raises(IndexLockedError) as caught, second.update_lock(wait=0, holder="b"):
                pass
            assert "is being updated by noteseek index (test) (pid " in str(caught.value)
            started = time.monotonic()
            with pytest.raises(IndexLockedError), second.update_lock(wait=0.3, holder="b"):
                pass
            assert time.monotonic() - started >= 0.25  # it waited before giving up
            with (
                pytest.raises(IndexLockedError),
                second.update_lock(wait=None, holder="b", cancel=lambda: True),
            ):
                pass
            with second.write():  # single writes outside a run still go through
                second.set_meta("k", "v")
        with second.update_lock(wait=0, holder="b"):  # released at the end of the block
            assert second.get_meta("k") == "v"
    finally:
        first.close()
        second.close()


def test_update_lock_nested_in_one_store_joins_the_outer_hold(backend: Backend) -> None:
    """A hold inside a hold of the same store takes nothing new and releases nothing: the lock
    stays held until the outer block ends (PostgreSQL's session locks stack; SQLite's counts)."""
    first, second = backend.open(), backend.open()
    try:
        with first.update_lock(wait=0, holder="outer"):
            with first.update_lock(wait=0, holder="inner"):
                pass
            with pytest.raises(IndexLockedError), second.update_lock(wait=0, holder="b"):
                pass
        with second.update_lock(wait=0, holder="b"):  # the outer block released it
            pass
    finally:
        first.close()
        second.close()


def test_ranking_facts_note_terms_and_query_term_counts(backend: Backend) -> None:
    store = backend.open()
    try:
        with store.write():
            store.replace_file(
                FileWrite(
                    FileRecord(
                        "a.md",
                        1,
                        10,
                        "h-a",
                        "Alpha",
                        "ok",
                        None,
                        title_field="Alpha Rebasing",
                        tags_field="dev git",
                    ),
                    [
                        ChunkRecord(0, "Undo rebase", "text one", 5),
                        ChunkRecord(1, "Other", "text rebasing", 6),
                    ],
                )
            )
            store.replace_file(
                FileWrite(
                    FileRecord("b.md", 1, 20, "h-b", "B", "ok", None, lang="de"),
                    [ChunkRecord(0, "Häuser", "die Häuser", 7)],
                )
            )
        ids = {v: k for k, v in store.file_paths().items()}
        facts = store.note_terms([ids["a.md"], ids["b.md"], 10**9])
        assert facts == {
            ids["a.md"]: (
                frozenset({"alpha", "rebas"}),
                frozenset({"dev", "git"}),
                frozenset({"undo", "rebas", "other"}),
                2,
                10,
            ),
            ids["b.md"]: (frozenset(), frozenset(), frozenset({"haus"}), 1, 20),
        }
        assert store.query_term_counts(["rebasing", "text", "unknownword", ""]) == [
            (("rebas",), 2),
            (("text",), 2),
            (("unknownword",), 0),
            ((), 0),
        ]
        with store.write():
            store.delete_file("b.md")
        assert store.note_terms([ids["b.md"]]) == {}
    finally:
        store.close()


def test_multilingual_lane_vectors_by_content(backend: Backend) -> None:
    store = backend.open()
    try:
        fill(store)
        assert store.multilingual_state() == (None, False)
        assert store.multilingual_rows() is None
        with store.write():
            store.reset_multilingual("e5:test")
            missing = store.multilingual_missing(100)
            assert len(missing) == 5 and len({m[0] for m in missing}) == 5
            assert store.multilingual_missing(2) == missing[:2]
            store.set_multilingual_vectors(
                [m[0] for m in missing], [bytes([i + 1] * 4) for i in range(len(missing))]
            )
        assert store.multilingual_state() == ("e5:test", False)
        assert store.multilingual_progress() == (5, 5)
        with store.write():
            store.mark_multilingual_built()
        assert store.multilingual_state() == ("e5:test", True)
        rows = store.multilingual_rows()
        assert rows is not None and rows.dim == 4 and len(rows.ids) == 5
        with store.write():
            store.delete_file("notes/cooking.md")
            assert store.prune_multilingual() == 1
            assert store.multilingual_missing(10) == []
            store.reset_multilingual("e5:other")
        assert store.multilingual_state() == ("e5:other", False)
        assert store.multilingual_progress() == (0, 4)
    finally:
        store.close()


def test_dates_round_trip_filter_and_order(backend: Backend) -> None:
    """A file's date and its source come back on its chunks; since/until keep the files whose
    date's day is inside (inclusive, date-times by their day, undated files never); files_by_date
    lists newest first; touch_file moves an mtime date and leaves any other date alone."""
    from dataclasses import replace

    from noteseek.core.note_dates import mtime_date

    store = backend.open()
    try:
        dated = {
            "daily/2026-11-30.md": ("2026-11-30", "filename"),
            "meeting.md": ("2026-11-12T09:30:00", "frontmatter"),
            "report.pdf": ("2026-10-01T08:00:00", "document"),
            "loose.md": (mtime_date(1_000 + 10), "mtime"),
        }
        with store.write():
            for path, (value, source) in dated.items():
                store.replace_file(
                    FileWrite(replace(record(path), date=value, date_source=source), chunks(path))
                )
            store.replace_file(FileWrite(record("undated.md"), chunks("undated")))
        ids = {p: i for i, p in store.file_paths().items()}
        rows = store.chunk_rows([store.first_chunk(ids[p]) for p in dated])  # type: ignore[misc]
        got = {row.path: (row.date, row.date_source) for row in rows.values()}
        assert got == dated

        def kept(since: str | None, until: str | None) -> set[str]:
            found = store.files_matching(FileFilter(since=since, until=until))
            return {store.file_paths()[i] for i in found}

        assert kept("2026-11-12", "2026-11-30") == {"daily/2026-11-30.md", "meeting.md"}
        assert kept("2026-11-13", None) == {"daily/2026-11-30.md"}
        assert kept(None, "2026-10-01") == {"report.pdf", "loose.md"}
        assert kept("2030-01-01", None) == set()
        assert "undated.md" in kept(None, None)
        newest = [store.file_paths()[i] for i in store.files_by_date(None, 10)]
        assert newest == ["daily/2026-11-30.md", "meeting.md", "report.pdf", "loose.md"]
        some = {ids["meeting.md"], ids["loose.md"], ids["undated.md"]}
        assert [store.file_paths()[i] for i in store.files_by_date(some, 1)] == ["meeting.md"]
        assert store.files_by_date(set(), 5) == []
        moved = 1_800_000_000 * 10**9
        with store.write():
            store.touch_file("loose.md", moved, 10)
            store.touch_file("meeting.md", moved, 10)
        rows = store.chunk_rows(
            [store.first_chunk(ids["loose.md"]), store.first_chunk(ids["meeting.md"])]
        )  # type: ignore[list-item]
        got = {row.path: row.date for row in rows.values()}
        assert got == {"loose.md": mtime_date(moved), "meeting.md": "2026-11-12T09:30:00"}
    finally:
        store.close()


def test_file_states_near_targets_hold_what_a_targeted_plan_reads(backend: Backend) -> None:
    """`file_states(near=...)`: the files at or below the targets, their possible aliases (same
    stat or content) and every file that is not a plain note; SQLite leaves the rest out."""

    def rec(path: str, mtime: int, size: int, digest: str, **kw: Any) -> FileRecord:
        return FileRecord(path, mtime, size, digest, path, "ok", None, **kw)

    rows = [
        rec("a/x.md", 7, 70, "h-x"),
        rec("a/sub/y.md", 8, 80, "h-y"),
        rec("a.md", 9, 90, "h-a"),  # sorts before "a/": not below the target "a"
        rec("ab/z.md", 10, 100, "h-z"),  # a prefix of the name only
        rec("a0/w.md", 11, 110, "h-w"),  # "a0" is where the range ends
        rec("link.md", 7, 70, "h-other"),  # the stat of a/x.md: a symlink to it, maybe
        rec("copy.md", 12, 120, "h-y"),  # the content of a/sub/y.md
        rec("report.PDF", 13, 130, "h-p", kind="pdf", engine="pypdfium2"),
        rec("sketch.Excalidraw.md", 14, 140, "h-s"),  # a document's suffix, stored as a note
        rec("shot.png", 15, 150, "h-i", kind="image", engine="rapidocr"),
        rec("plain.md", 16, 160, "h-n"),
    ]
    store = backend.open()
    try:
        with store.write():
            for row in rows:
                store.replace_file(FileWrite(row, [], None))
        everything = store.file_states()
        near = store.file_states(near=["a"])
        needed = {
            "a/x.md", "a/sub/y.md", "link.md", "copy.md", "report.PDF", "sketch.Excalidraw.md",
            "shot.png",
        }  # fmt: skip
        assert needed <= set(near)
        assert {path: everything[path] for path in near} == near
        if backend.name == "sqlite":
            assert set(near) == needed
            # a/sub/y.md not named, so neither is its copy; ab/z.md is
            other = needed - {"a/sub/y.md", "copy.md"} | {"ab/z.md"}
            assert set(store.file_states(near=["a/x.md", "ab"])) == other
    finally:
        store.close()
