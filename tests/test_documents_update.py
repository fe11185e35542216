"""Documents in incremental updates: the worker pool opens only when some document's content
changed; outcomes are kept until the file changes; vectors are reused by content hash; the vault
rules of notes apply; a document indexed as a note before is read again as a document."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import ClassVar

import pytest

import noteseek.engine.update.documents as update_documents
from noteseek import Index, IndexOptions
from noteseek.documents import ExtractionPool
from noteseek.storage.records import FileRecord, FileWrite

from .conftest import FakeEmbedder, WriteNotes, note
from .documents_samples import sample


class CountingPool(ExtractionPool):
    """The real pool, counting how often a run opens one and which files it extracts."""

    opened: ClassVar[int] = 0
    files: ClassVar[list[str]] = []

    def __init__(self, **kwargs: object) -> None:
        CountingPool.opened += 1
        super().__init__(**kwargs)  # type: ignore[arg-type]

    def extract_many(self, paths, *, limits=None):  # type: ignore[no-untyped-def]
        paths = list(paths)
        CountingPool.files += [Path(p).name for p in paths]
        return super().extract_many(paths, limits=limits)


@pytest.fixture
def pools(monkeypatch: pytest.MonkeyPatch) -> type[CountingPool]:
    CountingPool.opened, CountingPool.files = 0, []
    monkeypatch.setattr(update_documents, "ExtractionPool", CountingPool)
    return CountingPool


@pytest.fixture
def vault(make_vault: WriteNotes) -> Path:
    root = make_vault({"notes/a.md": note("Alpha", ("Body", "Alpha note about sourdough."))})
    for name in ("crazyones.pdf", "mtcars.csv", "encrypted-file.pdf", "tbl-cell.pptx"):
        shutil.copy(sample(name), root / name)
    return root


def test_a_no_op_run_opens_no_pool_and_a_touch_reads_no_document(
    vault: Path, tmp_path: Path, pools: type[CountingPool]
) -> None:
    with Index(tmp_path / "i.db", embedder=FakeEmbedder()) as idx:
        first = idx.update(vault)
        assert pools.opened == 1 and first.documents_extracted == 4
        again = idx.update(vault)
        assert pools.opened == 1 and again.documents_extracted == 0 and again.unchanged == 5
        # A new mtime with the same bytes: hashed, not extracted; failed ones are not retried.
        for name in ("crazyones.pdf", "encrypted-file.pdf"):
            os.utime(vault / name, ns=(10**18, 10**18))
        touched = idx.update(vault)
        assert pools.opened == 1 and touched.unchanged == 5 and touched.skipped == 0
        problems = {p: why for p, _, why in idx.status().problems}
        assert problems["encrypted-file.pdf"].startswith("encrypted: ")


def test_a_changed_document_is_extracted_again_and_its_old_text_is_gone(
    vault: Path, tmp_path: Path, pools: type[CountingPool]
) -> None:
    with Index(tmp_path / "i.db", embedder=FakeEmbedder()) as idx:
        idx.update(vault)
        assert idx.search("Mazda", mode="bm25") == []
        csv = vault / "mtcars.csv"
        rows = csv.read_text().splitlines()
        csv.write_text("\n".join([*rows, "99,8,400,300,3,4,15,0,0,5,8"]) + "\n")
        stats = idx.update(vault)
        assert pools.opened == 2 and pools.files[-1:] == ["mtcars.csv"]
        assert stats.changed == 1 and stats.documents_extracted == 1
        # The first 20-row batch is the same text: its vector is reused, not embedded again.
        assert stats.vectors_reused >= 1
        hit = idx.search("99 8 400 300", mode="bm25")[0]
        assert hit.path == "mtcars.csv" and hit.rows == (22, 34)
        (vault / "mtcars.csv").unlink()
        removed = idx.update(vault)
        assert removed.removed == 1 and pools.opened == 2
        assert [h for h in idx.search("cyl disp", mode="bm25") if h.path == "mtcars.csv"] == []
        assert idx.check() == []


def test_a_failed_document_is_retried_once_it_changes(
    vault: Path, tmp_path: Path, pools: type[CountingPool]
) -> None:
    with Index(tmp_path / "i.db", embedder=FakeEmbedder()) as idx:
        idx.update(vault)
        shutil.copy(sample("crazyones.pdf"), vault / "encrypted-file.pdf")  # the password is gone
        stats = idx.update(vault)
        assert pools.files[-1:] == ["encrypted-file.pdf"] and stats.changed == 1
        assert "encrypted-file.pdf" not in {p for p, _, _ in idx.status().problems}


def test_documents_follow_the_vault_rules_of_notes(
    vault: Path, tmp_path: Path, pools: type[CountingPool]
) -> None:
    for folder in ("drafts", ".hidden", "ignored", "linked"):
        (vault / folder).mkdir()
    shutil.copy(sample("multilang.pdf"), vault / "drafts" / "excluded.pdf")
    shutil.copy(sample("multilang.pdf"), vault / ".hidden" / "dot.pdf")
    shutil.copy(sample("multilang.pdf"), vault / "ignored" / "marked.pdf")
    (vault / "ignored" / ".noteseekignore").write_text("")
    outside = tmp_path / "outside.pdf"
    shutil.copy(sample("multilang.pdf"), outside)
    (vault / "linked" / "out.pdf").symlink_to(outside)
    (vault / "linked" / "in.pdf").symlink_to(vault / "crazyones.pdf")
    options = IndexOptions(exclude=(".obsidian", "drafts"))
    with Index(tmp_path / "i.db", embedder=FakeEmbedder(), options=options) as idx:
        stats = idx.update(vault)
        paths = set(idx.note_paths())
        problems = dict(stats.problems)
    assert "linked/in.pdf" in paths and "crazyones.pdf" in paths
    assert not {"drafts/excluded.pdf", ".hidden/dot.pdf", "ignored/marked.pdf"} & paths
    assert problems["linked/out.pdf"] == "symlink points outside the vault"
    # The link and its target are one extraction.
    assert pools.files.count("crazyones.pdf") == 1


def test_documents_off_leaves_them_out(vault: Path, tmp_path: Path) -> None:
    with Index(tmp_path / "i.db", embedder=FakeEmbedder()) as idx:
        idx.update(vault)
    notes_only = IndexOptions(documents=False)
    with Index(tmp_path / "i.db", embedder=FakeEmbedder(), options=notes_only) as idx:
        stats = idx.update(vault)
        assert stats.removed == 4 and idx.note_paths() == ["notes/a.md"]


def test_a_drawing_indexed_as_a_note_before_is_read_as_a_drawing(
    make_vault: WriteNotes, tmp_path: Path, pools: type[CountingPool]
) -> None:
    drawing = (
        "---\nexcalidraw-plugin: parsed\n---\n# Excalidraw Data\n\n## Text Elements\n"
        "Sketch of the ingest pipeline ^aB3dE5fG\n\n%%\n## Drawing\n```json\n"
        '{"type":"excalidraw","elements":[{"id":"zzqdrawingjsonzz"}]}\n```\n%%\n'
    )
    vault = make_vault({"sketch.excalidraw.md": drawing})
    with Index(tmp_path / "i.db", embedder=FakeEmbedder()) as idx:
        idx.update(vault)
        assert idx.search("zzqdrawingjsonzz", mode="bm25") == []
        store = idx._store
        state = store.file_states()["sketch.excalidraw.md"]
        # What an index made before documents held: the drawing as a note, JSON and all.
        with store.write():
            store.replace_file(
                FileWrite(
                    FileRecord(
                        "sketch.excalidraw.md",
                        state.mtime_ns,
                        state.size,
                        state.content_hash,
                        "sketch",
                        "ok",
                        None,
                    )
                )
            )
        assert store.file_states()["sketch.excalidraw.md"].kind is None
        stats = idx.update(vault)
        assert stats.changed == 1 and pools.files[-1:] == ["sketch.excalidraw.md"]
        assert store.file_states()["sketch.excalidraw.md"].kind == "excalidraw"
        assert idx.search("ingest pipeline sketch", mode="bm25")[0].path == "sketch.excalidraw.md"


def test_a_missing_library_is_named_with_the_extra_and_retried_once_installed(
    vault: Path, tmp_path: Path
) -> None:
    import subprocess
    import sys

    from .conftest import REPO

    # What an install without the `documents` extra looks like to the reader: the import of
    # pypdfium2 fails (a package of that name that raises, first on the path of the indexer
    # and of its workers), through the same require() as a missing package.
    shim = tmp_path / "shim" / "pypdfium2"
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text("raise ImportError('simulated: not installed')\n")
    db = str(tmp_path / "i.db")
    base = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    without = {**base, "PYTHONPATH": str(tmp_path / "shim")}

    def cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "noteseek", *args, "--db", db],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=REPO,
            env=env,
        )

    first = cli("index", str(vault), "-q", env=without)
    assert first.returncode == 0, first.stderr
    assert "crazyones.pdf: unsupported: needs the Python package 'pypdfium2'" in first.stderr
    assert (
        "to read these documents, install the documents extra: "
        "pip install 'noteseek[documents]' (missing: pypdfium2)"
    ) in first.stderr
    status = cli("status", env=without)
    assert (
        "install   pip install 'noteseek[documents]' to read the documents that need "
        "pypdfium2" in status.stdout
    )
    assert "2 unsupported" in status.stdout  # both PDFs; the CSV and the slides were read
    second = cli("index", str(vault), "-q", env=base)  # the library is there now
    assert second.returncode == 0 and "unsupported" not in second.stderr, second.stderr
    found = cli("search", "crazy ones misfits", "-n", "1", env=base)
    assert found.stdout.startswith(" 1. crazyones.pdf › p. 1"), found.stdout
    after = cli("status", env=base).stdout
    assert "install" not in after and "encrypted: is password-protected" in after
