"""Targeted updates (`Index.update(vault, paths=…, folders=…)`): the same rows as a whole pass.

Two indexes of one vault start equal; random edits of every kind an editor, a sync tool or a shell
makes are applied to the vault, each recording the paths a watcher would name; then one index gets
a targeted update of just those paths and the other a whole incremental pass, and every row
(files, chunks, vectors, names, tags, meta) must be the same.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest

from noteseek import Index, IndexLockedError, VaultGoneError

from .conftest import FakeEmbedder, note

WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "rebase",
    "token",
    "rotate",
    "certificate",
    "banana",
    "flour",
    "query",
    "index",
]


def _text(rng: random.Random, title: str) -> str:
    sections = [
        (f"Part {i}", " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 40))))
        for i in range(rng.randint(1, 4))
    ]
    tags = ", ".join(rng.sample(WORDS, 2)) if rng.random() < 0.5 else ""
    return note(title, *sections, tags=tags)


def make_vault(root: Path, rng: random.Random, count: int = 40) -> None:
    for i in range(count):
        path = root / f"f{i % 5}" / (f"sub{i % 3}" if i % 2 else "") / f"n{i}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_text(rng, f"Note {i}"))
    (root / ".obsidian").mkdir()
    (root / ".obsidian" / "workspace.md").write_text("# not a note\n")


def _without_time(value: str) -> str:
    record = json.loads(value)
    record.pop("finished_at", None)
    return json.dumps(record, sort_keys=True)


def rows(index: Index) -> dict[str, Any]:
    """Every row of the index that an update decides, keyed by path (ids and times left out)."""
    db = index._store.conn.db  # type: ignore[attr-defined]
    files = db.execute(
        "SELECT path, mtime_ns, size, content_hash, title, status, problem, chunk_count, "
        "skipped_sections, secrets_scrubbed, kind, outcome, engine FROM files ORDER BY path"
    ).fetchall()
    chunks = db.execute(
        "SELECT f.path, c.seq, c.section, c.chunk_text, f.heading_context, f.title_field, f.tags_field, "
        "c.content_hash, f.lang, c.page, c.page_label, c.slide, c.sheet, "
        "c.row_first, c.row_last, c.overlap, c.embedded, v.embedding "
        "FROM chunks c JOIN files f ON f.id = c.file_id "
        "LEFT JOIN chunks_vec v ON v.rowid = c.id ORDER BY f.path, c.seq"
    ).fetchall()
    names = db.execute(
        "SELECT f.path, n.name FROM note_names n JOIN files f ON f.id = n.file_id ORDER BY 1, 2"
    ).fetchall()
    tags = db.execute(
        "SELECT f.path, t.tag FROM note_tags t JOIN files f ON f.id = t.file_id ORDER BY 1, 2"
    ).fetchall()
    # A link row's id holds its note's file id (storage/sqlite/links.py), which may differ.
    links = db.execute(
        "SELECT f.path, k.id % 16384, k.line, k.target, k.target_key, k.fragment, k.kind, "
        "k.context, k.context_seq, k.context_at, k.context_len, k.context_cut, k.target_at, "
        "k.target_len FROM links k JOIN files f ON f.id = k.id / 16384 ORDER BY 1, 2"
    ).fetchall()
    # last_run holds times, generation a random token (what reply cursors check), and the OCR
    # pass's record the time it finished; folder_listings is what the last whole pass saw of
    # folders that had settled by then (a targeted run keeps it as it was; tests/
    # test_folder_listings.py holds it to the walk).
    meta = [
        (key, _without_time(value) if key == "ocr_progress" else value)
        for key, value in db.execute(
            "SELECT key, value FROM meta "
            "WHERE key NOT IN ('last_run', 'generation', 'folder_listings') ORDER BY key"
        ).fetchall()
    ]
    fts = db.execute("SELECT count(*) FROM chunks_fts_docsize").fetchall()
    return {
        "files": files,
        "chunks": chunks,
        "names": names,
        "tags": tags,
        "links": links,
        "meta": meta,
        "fts": fts,
    }


_NUMBERS = itertools.count(1)  # unique new names across rounds


class Edits:
    """Random changes to a vault, with the paths a file watcher would name for each."""

    def __init__(self, root: Path, rng: random.Random) -> None:
        self.root, self.rng = root, rng
        self.notes: set[str] = set()
        self.folders: set[str] = set()
        self._numbers = _NUMBERS

    @property
    def counter(self) -> int:
        return next(self._numbers)

    def _existing(self, suffix: str = ".md") -> list[Path]:
        return sorted(
            p
            for p in self.root.rglob(f"*{suffix}")
            if p.is_file() and ".obsidian" not in p.parts and not p.is_symlink()
        )

    def _rel(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def _folders(self) -> list[Path]:
        return sorted(
            p
            for p in self.root.rglob("*")
            if p.is_dir() and not p.is_symlink() and ".obsidian" not in p.parts
        )

    def apply(self, count: int) -> None:
        ops = [
            self.edit,
            self.edit,
            self.touch,
            self.same_bytes,
            self.new_note,
            self.new_folder,
            self.delete,
            self.rename,
            self.move_folder,
            self.delete_folder,
            self.marker,
            self.binary,
            self.symlinks,
            self.note_becomes_folder,
            self.odd_names,
            self.document,
            self.document,
        ]
        for _ in range(count):
            self.rng.choice(ops)()

    def _pick(self) -> Path | None:
        notes = self._existing()
        return self.rng.choice(notes) if notes else None

    def edit(self) -> None:
        if path := self._pick():
            path.write_text(_text(self.rng, "Edited " + path.stem))
            self.notes.add(self._rel(path))

    def touch(self) -> None:  # a sync tool: only the mtime moves
        if path := self._pick():
            st = path.stat()
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 7_000_000_000))
            self.notes.add(self._rel(path))

    def same_bytes(self) -> None:  # an atomic save of unchanged content: temp file renamed over
        if path := self._pick():
            tmp = path.with_name(path.name + ".tmp")
            tmp.write_bytes(path.read_bytes())
            os.replace(tmp, path)
            self.notes.add(self._rel(path))

    def new_note(self) -> None:
        folder = self.rng.choice(self._folders() or [self.root])
        n = self.counter
        path = folder / f"new{n}.md"
        path.write_text(_text(self.rng, f"New {n}"))
        self.notes.add(self._rel(path))

    def new_folder(self) -> None:
        n = self.counter
        folder = self.root / f"bulk{n}" / "deep"
        folder.mkdir(parents=True)
        for i in range(self.rng.randint(1, 6)):
            (folder / f"b{i}.md").write_text(_text(self.rng, f"Bulk {i}"))
        self.folders.add(f"bulk{n}")

    def delete(self) -> None:
        if path := self._pick():
            path.unlink()
            self.notes.add(self._rel(path))

    def rename(self) -> None:
        if path := self._pick():
            new = path.with_name(f"renamed{self.counter}.md")
            path.rename(new)
            self.notes |= {self._rel(path), self._rel(new)}

    def move_folder(self) -> None:
        folders = [f for f in self._folders() if f != self.root]
        if folders:
            src = self.rng.choice(folders)
            dst = self.root / f"moved{self.counter}"
            src.rename(dst)
            self.folders |= {self._rel(src), self._rel(dst)}

    def delete_folder(self) -> None:
        folders = [f for f in self._folders() if f != self.root]
        if folders:
            folder = self.rng.choice(folders)
            shutil.rmtree(folder)
            self.folders.add(self._rel(folder))

    def marker(self) -> None:
        folders = [f for f in self._folders() if f != self.root]
        if folders:
            folder = self.rng.choice(folders)
            marker = folder / ".noteseekignore"
            if marker.exists():
                marker.unlink()
            else:
                marker.touch()
            self.folders.add(self._rel(folder))

    def binary(self) -> None:
        if path := self._pick():
            path.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)
            self.notes.add(self._rel(path))

    def symlinks(self) -> None:
        target = self._pick()
        if target is None:
            return
        n = self.counter
        inside = target.parent / f"link{n}.md"
        inside.symlink_to(target)
        outside = target.parent / f"out{n}.md"
        outside.symlink_to("/etc/hostname")
        folder_link = self.root / f"dirlink{n}"
        folder_link.symlink_to(target.parent, target_is_directory=True)
        self.notes |= {self._rel(inside), self._rel(outside)}
        self.folders.add(self._rel(folder_link))

    def note_becomes_folder(self) -> None:
        if path := self._pick():
            path.unlink()
            path.mkdir()
            (path / "inner.md").write_text(_text(self.rng, "Inner"))
            self.notes.add(self._rel(path))  # the watcher names the deleted note only

    def document(self) -> None:
        """A document beside the notes created, rewritten, touched or deleted: CSV and HTML (read
        without optional libraries), a canvas, a drawing; an Office lock file and a damaged PDF."""
        docs = [
            p for p in self._existing("") if not p.name.endswith(".md") or ".excalidraw" in p.name
        ]
        action = self.rng.choice(["new", "new", "edit", "touch", "delete"])
        if action != "new" and docs:
            path = self.rng.choice(docs)
            if action == "delete":
                path.unlink()
            elif action == "touch":
                st = path.stat()
                os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 3_000_000_000))
            else:
                path.write_bytes(path.read_bytes() + b"\n")
            self.notes.add(self._rel(path))
            return
        folder = self.rng.choice(self._folders() or [self.root])
        n = self.counter
        words = " ".join(self.rng.choice(WORDS) for _ in range(12))
        name, data = self.rng.choice(
            [
                (f"table{n}.csv", f"name,value\n{words.replace(' ', ',')}\nrow,{n}\n"),
                (f"page{n}.html", f"<html><body><h1>Page {n}</h1><p>{words}</p></body></html>"),
                (f"board{n}.canvas", '{"nodes":[{"id":"a","type":"text","text":"' + words + '"}]}'),
                (f"~$deck{n}.pptx", "owner file of an open Office document"),
                (f"broken{n}.pdf", "%PDF-1.4 not really a PDF"),
            ]
        )
        (folder / name).write_text(data)
        self.notes.add(self._rel(folder / name))

    def odd_names(self) -> None:
        folder = self.rng.choice(self._folders() or [self.root])
        n = self.counter
        token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # a secret in a file name
        for name, data in (
            (f"{token}.md", "# secret name\n"),
            (f"empty{n}.md", ""),
            (f"nul{n}.md", "\x00\x00"),
            (f"x{n}.txt", "not a note"),
            (f".hidden{n}.md", "# hidden\n"),
        ):
            (folder / name).write_text(data)
            self.notes.add(self._rel(folder / name))


def _pair(tmp_path: Path, seed: int) -> tuple[Path, Index, Index]:
    vault = tmp_path / "vault"
    make_vault(vault, random.Random(seed))
    a = Index(tmp_path / "targeted.db", embedder=FakeEmbedder())
    b = Index(tmp_path / "full.db", embedder=FakeEmbedder())
    a.update(vault)
    b.update(vault)
    assert rows(a) == rows(b)
    return vault, a, b


@pytest.mark.parametrize("seed", range(12))
def test_targeted_update_leaves_exactly_the_rows_of_a_whole_pass(tmp_path: Path, seed: int) -> None:
    vault, targeted, whole = _pair(tmp_path, seed)
    rng = random.Random(1000 + seed)
    try:
        for round_ in range(3):
            edits = Edits(vault, rng)
            edits.apply(rng.randint(1, 12))
            stats = targeted.update(vault, paths=edits.notes, folders=edits.folders)
            whole.update(vault)
            assert stats.targeted, round_
            got, want = rows(targeted), rows(whole)
            for key in want:  # one table at a time, so a failure shows the rows that differ
                assert set(got[key]) ^ set(want[key]) == set(), (key, edits.notes, edits.folders)
                assert got[key] == want[key], key
            assert targeted.check() == []
    finally:
        targeted.close()
        whole.close()


def test_a_targeted_update_looks_only_at_the_named_paths(tmp_path: Path) -> None:
    vault, idx, other = _pair(tmp_path, 1)
    other.close()
    embedder = FakeEmbedder()
    with Index(tmp_path / "targeted.db", embedder=embedder) as idx2:
        idx.close()
        # Changed on disk but not named: a targeted update leaves it for a whole pass.
        (vault / "f1" / "sub1" / "n1.md").write_text(
            note("Unnamed", ("S", "an unnamed edit of this note, long enough to keep"))
        )
        edited = vault / "f0" / "n0.md"
        edited.write_text(note("Edited", ("S", "zqedited word in a section long enough to keep")))
        stats = idx2.update(vault, paths=["f0/n0.md"])
        assert (stats.targeted, stats.files_seen, stats.changed) == (True, 1, 1)
        assert [h.path for h in idx2.search("zqedited", mode="bm25")] == ["f0/n0.md"]
        assert idx2.search("unnamed", mode="bm25") == []
        # A touched note (same bytes, new mtime) is neither re-read into the index nor re-embedded.
        embedded = embedder.texts_embedded
        chunk_ids = idx2._store.conn.db.execute("SELECT id FROM chunks ORDER BY id").fetchall()  # type: ignore[attr-defined]
        st = edited.stat()
        os.utime(edited, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
        stats = idx2.update(vault, paths=["f0/n0.md"])
        assert (stats.changed, stats.unchanged, stats.chunks_written) == (0, 1, 0)
        assert embedder.texts_embedded == embedded
        assert idx2._store.conn.db.execute("SELECT id FROM chunks ORDER BY id").fetchall() == chunk_ids  # type: ignore[attr-defined]
        assert idx2._store.file_states()["f0/n0.md"].mtime_ns == edited.stat().st_mtime_ns
        # "" is the whole vault: the unnamed edit is found now.
        stats = idx2.update(vault, folders=[""])
        assert not stats.targeted and stats.files_seen == 40
        assert [h.path for h in idx2.search("unnamed", mode="bm25")] == ["f1/sub1/n1.md"]


def test_a_symlink_to_a_named_note_is_read_again_with_it(tmp_path: Path) -> None:
    # An event names the file written, never a symlink to it elsewhere in the vault; a whole
    # pass re-reads the link too (its stat is its target's), so a targeted update must as well.
    vault, targeted, whole = _pair(tmp_path, 5)
    target, link = vault / "f0" / "n0.md", vault / "f1" / "alias.md"
    link.symlink_to(target)
    targeted.update(vault, paths=["f1/alias.md"])
    whole.update(vault)
    target.write_text(note("Edited", ("S", "zqalias in a section long enough to be kept")))
    stats = targeted.update(vault, paths=["f0/n0.md"])
    assert stats.targeted and stats.changed == 2
    whole.update(vault)
    assert rows(targeted) == rows(whole)
    hits = sorted(h.path for h in targeted.search("zqalias", mode="bm25"))
    assert hits == ["f0/n0.md", "f1/alias.md"]
    targeted.close()
    whole.close()


def test_a_document_to_read_again_is_read_by_a_targeted_update_too(tmp_path: Path) -> None:
    # A document stored as a note (an index from before documents were read) is extracted again
    # by a whole pass though its stat is unchanged; a targeted update naming other paths too.
    vault, targeted, whole = _pair(tmp_path, 6)
    (vault / "f2" / "cars.csv").write_text("model,zqseats\nroadster,2\nvan,9\n")
    for idx in (targeted, whole):
        idx.update(vault)
        db = idx._store.conn.db  # type: ignore[attr-defined]
        with idx._store.write():
            db.execute("UPDATE files SET kind = NULL, outcome = NULL WHERE path = 'f2/cars.csv'")
    stats = targeted.update(vault, paths=["f0/n0.md"])
    assert stats.targeted and stats.changed == 1
    whole.update(vault)
    assert rows(targeted) == rows(whole)
    assert targeted._store.file_states()["f2/cars.csv"].kind == "csv"
    targeted.close()
    whole.close()


def test_targeted_becomes_a_whole_pass_after_a_run_that_did_not_finish(tmp_path: Path) -> None:
    vault, idx, other = _pair(tmp_path, 2)
    other.close()
    for path in sorted(vault.rglob("n*.md"))[:6]:
        path.write_text(
            note("Changed", ("S", f"zqchanged {path.stem} in a section long enough to keep"))
        )
    stop = threading.Event()
    # Stopped (from the progress callback, as another thread would) after the first note.
    stats = idx.update(vault, progress=lambda done, total, path: stop.set(), stop=stop)
    assert stats.interrupted and stats.changed == 1
    # The five notes left unread are not among the named paths, yet a targeted call finds them.
    stats = idx.update(vault, paths=["f0/n0.md"])
    assert not stats.targeted and not stats.interrupted and stats.changed == 5
    assert idx.update(vault, paths=["f0/n0.md"]).targeted
    idx.close()


def test_a_stop_after_the_last_note_cuts_nothing_short(tmp_path: Path) -> None:
    # A server stopped just as its watcher's catch-up reaches the last note: nothing was left
    # undone, so the run is finished (no "interrupted" in status, the next call stays targeted).
    vault, idx, other = _pair(tmp_path, 2)
    other.close()
    paths = sorted(vault.rglob("n*.md"))[:3]
    for path in paths:
        path.write_text(note("Changed", ("S", f"zqlast {path.stem} in a section long enough")))
    stop = threading.Event()
    stats = idx.update(
        vault, progress=lambda done, total, path: stop.set() if done == total else None, stop=stop
    )
    assert stop.is_set() and not stats.interrupted and stats.changed == 3
    last = idx.status().last_run
    assert last is not None and not last["interrupted"]
    assert idx.update(vault, paths=["f0/n0.md"]).targeted
    idx.close()


def test_a_stop_from_another_thread_ends_the_run_after_the_current_file(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    make_vault(vault, random.Random(3))
    stop, second = threading.Event(), threading.Event()
    release = threading.Event()

    def progress(done: int, total: int, path: str) -> None:
        if done == 2:
            second.set()
            assert release.wait(20)

    with Index(tmp_path / "x.db", embedder=FakeEmbedder()) as idx:
        result: list[Any] = []
        worker = threading.Thread(
            target=lambda: result.append(idx.update(vault, progress=progress, stop=stop))
        )
        worker.start()
        assert second.wait(20)
        stop.set()  # from this (not the main) thread's point of view: another thread
        release.set()
        worker.join(20)
        (stats,) = result
        assert stats.interrupted and stats.added == 2
        assert idx.check() == []


def test_a_second_writer_waits_or_is_refused_with_the_holder_named(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    make_vault(vault, random.Random(4))
    with (
        Index(tmp_path / "x.db", embedder=FakeEmbedder()) as first,
        Index(tmp_path / "x.db", embedder=FakeEmbedder()) as second,
    ):
        inside, release = threading.Event(), threading.Event()

        def slow(done: int, total: int, path: str) -> None:
            inside.set()
            release.wait(20)

        worker = threading.Thread(target=first.update, args=(vault,), kwargs={"progress": slow})
        worker.start()
        assert inside.wait(20)
        with pytest.raises(IndexLockedError, match=r"is being updated by .+ \(pid \d+, since "):
            second.update(vault, wait=0)
        with pytest.raises(IndexLockedError):
            second.update(vault, wait=0.2)
        waiter: list[Any] = []
        thread = threading.Thread(target=lambda: waiter.append(second.update(vault)))
        thread.start()
        thread.join(0.5)
        assert thread.is_alive()  # waits for the first run (wait=None)
        release.set()
        worker.join(20)
        thread.join(20)
        assert waiter and waiter[0].added == 0 and waiter[0].unchanged == 40
        assert second.update(vault, wait=0).unchanged == 40  # the lock is free again


def test_a_vault_unmounted_during_the_walk_deletes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = tmp_path / "vault"
    make_vault(vault, random.Random(5))
    with Index(tmp_path / "x.db", embedder=FakeEmbedder()) as idx:
        idx.update(vault)
        before = rows(idx)
        import noteseek.engine.update.plan as plan_module

        real_walk = plan_module.walk_vault

        def walk_then_swap(root: Path, **options: Any) -> Any:
            listing = real_walk(root, **options)
            # What an unmount looks like: the folder is still there, but another one, now empty.
            shutil.move(str(vault), str(tmp_path / "elsewhere"))
            vault.mkdir()
            return listing[0][:3], listing[1]

        monkeypatch.setattr(plan_module, "walk_vault", walk_then_swap)
        with pytest.raises(VaultGoneError, match="replaced or unmounted"):
            idx.update(vault)
        assert rows(idx)["files"] == before["files"]
        assert rows(idx)["chunks"] == before["chunks"]
