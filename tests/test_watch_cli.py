"""`noteseek watch` as a real process on real filesystem events, and `noteseek status --files`.

Each test starts `python -m noteseek watch VAULT --db DB` (the bundled model), changes the vault the
way editors, sync tools and shells do, and polls a search (BM25: no model needed in the test
process) or the watcher's stderr until the change shows, with generous limits and no fixed sleeps
for results. A test that must show something did *not* happen writes a sentinel note afterwards
and waits for it: batches are handled in order.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from noteseek import Index, IndexNotFoundError

from .conftest import REPO, note

TIMEOUT = 60.0
SECRET = "ghp_" + "Zq9xW8vU7tS6rQ5pO4nM3lK2jI1hG0fE9dC8"


def wait_until(condition: Callable[[], object], timeout: float = TIMEOUT, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not reached within {timeout} s: {what}")
        time.sleep(0.05)


def body(word: str, title: str = "Note") -> str:
    return note(title, ("Body", f"The word {word} is in a section long enough to be kept."))


class Watch:
    """One `noteseek watch` process, its stderr in a file."""

    def __init__(self, vault: Path, db: Path, log: Path, *args: str) -> None:
        self.vault, self.db, self.log = vault, db, log
        self._log = log.open("wb")
        env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "noteseek", "watch", str(vault), "--db", str(db), *args],
            stdout=subprocess.PIPE,
            stderr=self._log,
            stdin=subprocess.DEVNULL,
            env=env,
        )

    def text(self) -> str:
        return self.log.read_text("utf-8", "replace")

    def lines(self, marker: str) -> list[str]:
        return [line for line in self.text().splitlines() if marker in line]

    def wait_for(self, marker: str, count: int = 1) -> None:
        wait_until(
            lambda: len(self.lines(marker)) >= count or self.proc.poll() is not None,
            what=f"{marker!r} in {self.text()}",
        )
        assert len(self.lines(marker)) >= count, self.text()

    def runs(self) -> list[str]:
        return self.lines("updated: ")

    def wait_for_run(self, after: int, text: str) -> str:
        """The first run line after the first `after` ones that holds `text` (waited for). A
        change is searchable a moment before its run's line is printed, so a test that counts
        runs waits for the line itself, never only for the search."""
        wait_until(
            lambda: (
                any(text in line for line in self.runs()[after:]) or self.proc.poll() is not None
            ),
            what=f"a run with {text!r} after {after} in {self.text()}",
        )
        (line,) = [line for line in self.runs()[after:] if text in line][:1] or [self.text()]
        return line

    def stop(self, signum: int = signal.SIGINT) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signum)
        code = self.proc.wait(TIMEOUT)
        self._log.close()
        return code


@contextmanager
def watching(vault: Path, db: Path, tmp_path: Path, *args: str) -> Iterator[Watch]:
    watch = Watch(vault, db, tmp_path / f"watch-{time.monotonic_ns()}.log", *args)
    try:
        watch.wait_for("caught up")
        yield watch
    finally:
        if watch.proc.poll() is None:
            watch.proc.kill()
            watch.proc.wait(TIMEOUT)


def found(db: Path, word: str) -> list[str]:
    try:
        with Index(db, create=False) as idx:
            return [h.path for h in idx.search(word, mode="bm25")]
    except IndexNotFoundError:  # the file exists, its first batch of notes is not committed yet
        return []


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    (root / "notes").mkdir(parents=True)
    for i in range(5):
        (root / "notes" / f"n{i}.md").write_text(body(f"zqstart{i}", f"Note {i}"))
    (root / ".obsidian").mkdir()
    return root


def test_catch_up_then_edits_new_notes_and_deletions_are_searchable(
    vault: Path, tmp_path: Path
) -> None:
    db = tmp_path / "i.db"
    with watching(vault, db, tmp_path) as watch:
        assert found(db, "zqstart3") == ["notes/n3.md"]  # the catch-up built the index
        (vault / "notes" / "n1.md").write_text(body("zqedited"))
        wait_until(lambda: found(db, "zqedited") == ["notes/n1.md"], what="edit")
        (vault / "notes" / "new.md").write_text(body("zqnewnote"))
        wait_until(lambda: found(db, "zqnewnote") == ["notes/new.md"], what="new note")
        (vault / "notes" / "n2.md").unlink()
        wait_until(lambda: found(db, "zqstart2") == [], what="deletion")
        assert watch.lines("updated: ") and all(
            "changed path(s)" in line for line in watch.lines("updated: ")
        )
        assert watch.stop() == 0
    assert watch.proc.stdout is not None and watch.proc.stdout.read() == b""  # stderr only
    assert "stopped; the index is consistent" in watch.text()
    with Index(db, create=False) as idx:
        assert idx.check() == []


def test_editor_and_sync_patterns_end_to_end(vault: Path, tmp_path: Path) -> None:
    db = tmp_path / "i.db"
    folder = vault / "notes"
    with watching(vault, db, tmp_path) as watch:
        # vim :w with backup: probe file, swap files, rename to x~, new file, backup deleted.
        runs = len(watch.runs())
        (folder / ".n0.md.swp").write_bytes(b"swap")
        (folder / "4913").write_bytes(b"")
        (folder / "4913").unlink()
        os.rename(folder / "n0.md", folder / "n0.md~")
        (folder / "n0.md").write_text(body("zqvim"))
        (folder / "n0.md~").unlink()
        (folder / ".n0.md.swp").unlink()
        wait_until(lambda: found(db, "zqvim") == ["notes/n0.md"], what="vim save")
        watch.wait_for_run(runs, ": 0 added, 1 changed,")
        # An atomic save: a temp file renamed over the note.
        runs = len(watch.runs())
        (folder / "n1.md.tmp").write_text(body("zqatomic"))
        os.replace(folder / "n1.md.tmp", folder / "n1.md")
        wait_until(lambda: found(db, "zqatomic") == ["notes/n1.md"], what="atomic save")
        watch.wait_for_run(runs, ": 0 added, 1 changed,")
        with Index(db, create=False) as idx:
            before = idx._store.conn.db.execute(  # type: ignore[attr-defined]
                "SELECT id, embedded, content_hash FROM chunks ORDER BY id"
            ).fetchall()
        runs = len(watch.runs())
        # A sync tool touching the mtime only: an update run that changes and embeds nothing.
        st = (folder / "n3.md").stat()
        os.utime(folder / "n3.md", ns=(st.st_atime_ns, st.st_mtime_ns + 9_000_000_000))
        watch.wait_for("updated: ", runs + 1)
        assert "0 added, 0 changed, 0 removed" in watch.runs()[runs], watch.text()
        with Index(db, create=False) as idx:
            after = idx._store.conn.db.execute(  # type: ignore[attr-defined]
                "SELECT id, embedded, content_hash FROM chunks ORDER BY id"
            ).fetchall()
            assert after == before  # nothing re-read into the index (same chunk rows), nothing re-embedded
            assert (
                idx._store.file_states()["notes/n3.md"].mtime_ns == st.st_mtime_ns + 9_000_000_000
            )
        runs = len(watch.runs())
        # Obsidian's churn, editor side files, emacs locks: no update run at all.
        for i in range(20):
            (vault / ".obsidian" / "workspace.json").write_text(json.dumps({"i": i}))
        (folder / "#n4.md#").write_text("autosave")
        (folder / ".#n4.md").write_text("lock")
        (folder / "n4.md~").write_text("backup")
        (vault / "sentinel.md").write_text(body("zqsentinel"))
        wait_until(lambda: found(db, "zqsentinel") == ["sentinel.md"], what="sentinel")
        # Runs are handled in order: a run for the churn would come before the sentinel's.
        watch.wait_for_run(runs, ": 1 added,")
        assert len(watch.runs()) == runs + 1, watch.text()  # the sentinel's run only
        # A folder renamed: its notes move in one run (a second sentinel shows none came after).
        runs = len(watch.runs())
        os.rename(folder, vault / "renamed")
        wait_until(lambda: found(db, "zqstart4") == ["renamed/n4.md"], what="folder rename")
        (vault / "sentinel2.md").write_text(body("zqsentineltwo"))
        wait_until(lambda: found(db, "zqsentineltwo") == ["sentinel2.md"], what="sentinel 2")
        watch.wait_for_run(runs + 1, ": 1 added,")
        assert len(watch.runs()) == runs + 2, watch.text()
        assert ": 5 added, 0 changed, 5 removed" in watch.runs()[runs], watch.text()
        assert watch.stop(signal.SIGTERM) == 0
    with Index(db, create=False) as idx:
        assert idx.check() == []


def test_a_bulk_checkout_is_one_update_run(vault: Path, tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")

    def git(*args: str) -> None:
        subprocess.run(
            ["git", "-C", str(vault), "-c", "user.name=t", "-c", "user.email=t@t", *args],
            check=True,
            capture_output=True,
        )

    for i in range(300):
        path = vault / "bulk" / f"d{i % 10}" / f"b{i}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body(f"zqbase{i}"))
    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("commit", "-qm", "base")
    git("checkout", "-q", "-b", "other")
    for i in range(300):
        (vault / "bulk" / f"d{i % 10}" / f"b{i}.md").write_text(body(f"zqother{i}"))
    git("commit", "-qam", "other")
    git("checkout", "-q", "main")
    db = tmp_path / "i.db"
    with watching(vault, db, tmp_path) as watch:
        runs = len(watch.lines("updated: "))
        git("checkout", "-q", "other")
        wait_until(lambda: found(db, "zqother299") == ["bulk/d9/b299.md"], what="checkout")
        wait_until(lambda: "300 changed" in watch.text(), what=watch.text())
        assert len(watch.lines("updated: ")) == runs + 1, watch.text()
        assert watch.stop() == 0


def test_deleted_vault_ends_with_a_message_and_exit_1_and_leaves_the_index(
    vault: Path, tmp_path: Path
) -> None:
    db = tmp_path / "i.db"
    with watching(vault, db, tmp_path) as watch:
        shutil.rmtree(vault)
        assert watch.proc.wait(TIMEOUT) == 1
    assert "error: the vault folder" in watch.text() and "deleted or moved" in watch.text()
    assert "Traceback" not in watch.text()
    with Index(db, create=False) as idx:
        assert idx.check() == []


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")
def test_unmounted_vault_ends_with_exit_1_and_keeps_every_note(tmp_path: Path) -> None:
    mount = tmp_path / "mnt"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)], check=False
    )
    if done.returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    db = tmp_path / "i.db"
    try:
        for i in range(30):
            (mount / f"m{i}.md").write_text(body(f"zqmounted{i}"))
        with watching(mount, db, tmp_path) as watch:
            subprocess.run(["umount", "-l", str(mount)], check=True)
            assert watch.proc.wait(TIMEOUT) == 1
        assert "replaced or unmounted" in watch.text()
        with Index(db, create=False) as idx:
            assert idx.check() == [] and len(idx.note_paths()) == 30
        assert found(db, "zqmounted7") == ["m7.md"]
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False, capture_output=True)


def test_a_stop_signal_during_a_long_run_finishes_the_file_and_exits_0(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    for i in range(3000):
        path = vault / f"f{i % 30}" / f"n{i}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body(f"zqmany{i}", f"Many {i}"))
    db = tmp_path / "i.db"
    watch = Watch(vault, db, tmp_path / "watch.log")
    # Stopped while the first build (the catch-up) is writing notes.
    wait_until(lambda: db.exists() and found(db, "zqmany0"), what="first notes written")
    assert watch.stop(signal.SIGTERM) == 0
    assert "stopping after the current file" in watch.text()
    with Index(db, create=False) as idx:
        assert idx.check() == []
        indexed = len(idx.note_paths())
        assert 0 < indexed < 3000
        stats = idx.update(vault, paths=["f0/n0.md"])  # the run was cut short: a whole pass
        assert not stats.targeted and len(idx.note_paths()) == 3000


def test_watch_limit_falls_back_to_polling_with_a_message(tmp_path: Path) -> None:
    # A user namespace of its own whose inotify watch limit is below the vault's folder count:
    # the kernel's real ENOSPC, without lowering the machine-wide limit other processes use.
    if shutil.which("unshare") is None:
        pytest.skip("unshare is not installed")
    probe = subprocess.run(
        ["unshare", "--user", "--map-root-user", "true"], check=False, capture_output=True
    )
    if probe.returncode != 0:
        pytest.skip("user namespaces are not available here")
    vault = tmp_path / "vault"
    for i in range(20):
        (vault / f"f{i}").mkdir(parents=True)
        (vault / f"f{i}" / "n.md").write_text(body(f"zqfolder{i}"))
    db, log = tmp_path / "i.db", tmp_path / "watch.log"
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    command = (
        f"echo 5 > /proc/sys/user/max_inotify_watches && exec {sys.executable} -m noteseek "
        f"watch {vault} --db {db} --poll-interval 0.5 2> {log}"
    )
    proc = subprocess.Popen(["unshare", "--user", "--map-root-user", "sh", "-c", command], env=env)
    try:
        wait_until(lambda: log.exists() and "caught up" in log.read_text(), what="catch-up")
        assert "max_user_watches" in log.read_text() and "polling every 0.5 s" in log.read_text()
        (vault / "f19" / "new.md").write_text(body("zqpolled"))
        wait_until(lambda: found(db, "zqpolled") == ["f19/new.md"], what=log.read_text())
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(TIMEOUT) == 0


def test_another_writer_makes_watch_wait_and_index_wait_with_a_message(
    vault: Path, tmp_path: Path
) -> None:
    db = tmp_path / "i.db"
    with watching(vault, db, tmp_path) as watch:
        holder = Index(db, create=False)
        lock = holder._store.update_lock(wait=0, holder="a test holding the lock")  # type: ignore[attr-defined]
        lock.__enter__()
        try:
            (vault / "notes" / "late.md").write_text(body("zqlate"))
            watch.wait_for("is being updated by a test holding the lock")
            env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
            index = subprocess.Popen(
                [sys.executable, "-m", "noteseek", "index", str(vault), "--db", str(db), "-q"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
            )
            assert index.stderr is not None
            first = index.stderr.readline()
            assert "is being updated by a test holding the lock" in first and "waiting" in first
            assert index.poll() is None  # it waits
            assert found(db, "zqlate") == []  # nobody indexed it meanwhile
        finally:
            lock.__exit__(None, None, None)
            holder.close()
        _, err = index.communicate(timeout=TIMEOUT)
        assert index.returncode == 0, err
        wait_until(lambda: found(db, "zqlate") == ["notes/late.md"], what="after the release")
        assert watch.stop() == 0
    with Index(db, create=False) as idx:
        assert idx.check() == []


def test_no_secret_reaches_the_watchers_output(vault: Path, tmp_path: Path) -> None:
    db = tmp_path / "i.db"
    with watching(vault, db, tmp_path) as watch:
        (vault / "notes" / "creds.md").write_text(
            note("Creds", ("Token", f"the deploy token is {SECRET} and must stay secret"))
        )
        (vault / "notes" / f"{SECRET}.md").write_text(body("zqsecretname"))
        (vault / "notes" / "bin.md").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
        wait_until(lambda: found(db, "deploy") == ["notes/creds.md"], what="secret note")
        watch.wait_for("skipped")
        assert watch.stop() == 0
    assert SECRET not in watch.text()
    assert "[REDACTED:github-token].md" in watch.text() or "file(s) with problems" in watch.text()


def test_status_files_lists_every_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from noteseek.cli.main import cli

    vault = tmp_path / "vault"
    (vault / "a").mkdir(parents=True)
    (vault / "a" / "ok.md").write_text(body("zqok"))
    (vault / "a" / "changed.md").write_text(body("zqbefore"))
    (vault / "a" / "gone.md").write_text(body("zqgone"))
    (vault / "a" / "bin.md").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
    (vault / "a" / "locked.md").write_text(body("zqlocked"))
    (vault / "a" / "bad.md").write_text("# Bad\n\ninvalid \xff byte\n", encoding="latin-1")
    (vault / "a" / f"{SECRET}.md").write_text(body("zqsecret"))
    db = tmp_path / "i.db"
    real_open = os.open

    def refuse(path: str | os.PathLike[str], flags: int, *args: int) -> int:
        if Path(path).name == "locked.md":
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *args)

    with monkeypatch.context() as patch:
        patch.setattr(os, "open", refuse)
        with Index(db) as idx:
            idx.update(vault)
    (vault / "a" / "changed.md").write_text(body("zqafter, a longer text than before"))
    (vault / "a" / "gone.md").unlink()
    (vault / "a" / "new.md").write_text(body("zqnew"))
    runner = CliRunner()
    plain = runner.invoke(cli, ["status", "--db", str(db), "--files"])
    assert plain.exit_code == 0, plain.output
    data = json.loads(runner.invoke(cli, ["status", "--db", str(db), "--files", "--json"]).output)
    files = {f["path"]: f for f in data["files"]}
    assert {p: f["state"] for p, f in files.items()} == {
        "a/ok.md": "indexed",
        "a/bad.md": "indexed",
        "a/changed.md": "pending",
        "a/gone.md": "pending",
        "a/new.md": "pending",
        "a/bin.md": "skipped",
        "a/locked.md": "failed",
        "a/[REDACTED:github-token].md": "skipped",
    }
    assert files["a/ok.md"]["chunks"] >= 1 and files["a/ok.md"]["reason"] is None
    assert files["a/ok.md"]["indexed_at"] > 0
    assert "read as Windows-1252" in files["a/bad.md"]["reason"]
    assert files["a/changed.md"]["reason"] == "changed since the last update"
    assert files["a/gone.md"]["reason"] == "deleted since the last update"
    assert files["a/new.md"]["reason"] == "new since the last update"
    assert files["a/new.md"]["indexed_at"] is None
    assert "permission denied" in files["a/locked.md"]["reason"]
    assert "binary file" in files["a/bin.md"]["reason"]
    assert set(files["a/ok.md"]) == {"path", "state", "reason", "chunks", "indexed_at"}
    assert data["counts"] == {"indexed": 2, "skipped": 2, "failed": 1, "pending": 3}
    assert data["pending_checked"] is True and data["vault_root"] == str(vault.resolve())
    assert SECRET not in plain.output and SECRET not in json.dumps(data)
    for path, entry in files.items():
        assert f"{entry['state']:<8}" in plain.output and path in plain.output
    problems = json.loads(
        runner.invoke(cli, ["status", "--db", str(db), "--files", "--problems", "--json"]).output
    )
    assert {f["path"] for f in problems["files"]} == set(files) - {"a/ok.md"}
    # Without the vault, pending cannot be told, and status says so.
    shutil.rmtree(vault)
    gone = json.loads(runner.invoke(cli, ["status", "--db", str(db), "--files", "--json"]).output)
    assert gone["pending_checked"] is False and "is not there" in gone["pending_problem"]
    assert runner.invoke(cli, ["status", "--db", str(db), "--problems"]).exit_code == 2


def test_an_index_deleted_under_the_watcher_is_built_again(vault: Path, tmp_path: Path) -> None:
    """`rm` of the index file while `watch` runs: the next change reopens the path and checks the
    whole vault, instead of writing every later change into the deleted file."""
    db = tmp_path / "i.db"
    with watching(vault, db, tmp_path) as watch:
        assert found(db, "zqstart3") == ["notes/n3.md"]
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
        (vault / "notes" / "after.md").write_text(body("zqafterdelete"))
        wait_until(lambda: found(db, "zqafterdelete") == ["notes/after.md"], what="rebuilt")
        assert found(db, "zqstart3") == ["notes/n3.md"]  # the whole vault, not only the change
        watch.wait_for("the index file was deleted or replaced")
        assert watch.stop() == 0
    with Index(db, create=False) as idx:
        assert idx.check() == []
