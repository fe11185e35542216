"""`noteseek watch` on documents beside the notes, as a real process on real filesystem events.

A PDF saved over (an app's atomic save), a new spreadsheet export and a deleted document each
become one targeted update run; Office's owner file (`~$x.pptx`) and LibreOffice's lock
(`.~lock.x.pptx#`) never start one and are never indexed.
"""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path

from noteseek import Index

from .documents_samples import sample
from .test_watch_cli import body, found, wait_until, watching


def test_documents_changed_added_and_deleted_are_targeted_runs(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    (vault / "docs").mkdir(parents=True)
    (vault / "notes.md").write_text(body("zqnote"))
    shutil.copy(sample("crazyones.pdf"), vault / "docs" / "essay.pdf")
    db = tmp_path / "i.db"
    with watching(vault, db, tmp_path) as watch:
        assert found(db, "misfits troublemakers") == ["docs/essay.pdf"]  # the catch-up read it
        # The PDF saved over by its app: written under a temporary name, renamed over the old.
        runs = len(watch.runs())
        shutil.copy(sample("multilang.pdf"), vault / "docs" / "essay.pdf.tmp")
        os.replace(vault / "docs" / "essay.pdf.tmp", vault / "docs" / "essay.pdf")
        wait_until(lambda: found(db, "hello") == ["docs/essay.pdf"], what="PDF replaced")
        line = watch.wait_for_run(runs, ": 0 added, 1 changed, 0 removed")
        assert "1 changed path(s)" in line, watch.text()  # targeted, not a whole-vault pass
        assert found(db, "misfits troublemakers") == []
        assert len(watch.runs()) == runs + 1, watch.text()
        # A new document, then a deleted one.
        runs = len(watch.runs())
        shutil.copy(sample("crazyones.txt"), vault / "docs" / "export.txt")
        wait_until(lambda: "docs/export.txt" in found(db, "troublemakers"), what="new document")
        watch.wait_for_run(runs, ": 1 added,")
        runs = len(watch.runs())
        (vault / "docs" / "essay.pdf").unlink()
        wait_until(lambda: found(db, "hello") == [], what="deleted document")
        watch.wait_for_run(runs, ": 0 added, 0 changed, 1 removed")
        # Office's owner file and LibreOffice's lock while a deck is open: no run, not indexed.
        runs = len(watch.runs())
        (vault / "docs" / "~$deck.pptx").write_bytes(b"\x05owner" + bytes(155))
        (vault / "docs" / ".~lock.deck.pptx#").write_text("user,host,/tmp,2026;")
        (vault / "sentinel.md").write_text(body("zqsentinel"))
        wait_until(lambda: found(db, "zqsentinel") == ["sentinel.md"], what="sentinel")
        watch.wait_for_run(runs, ": 1 added,")
        assert len(watch.runs()) == runs + 1, watch.text()  # the sentinel's run only
        assert watch.stop(signal.SIGTERM) == 0
    with Index(db, create=False) as idx:
        assert idx.check() == []
        coverage = {f.path: f.state for f in idx.file_coverage().files}
        assert coverage == {
            "notes.md": "indexed",
            "sentinel.md": "indexed",
            "docs/export.txt": "indexed",
        }
        # A whole pass finds nothing the watcher missed.
        again = idx.update(vault)
        assert (again.added, again.changed, again.removed, again.skipped) == (0, 0, 0, 0)
