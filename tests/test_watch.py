"""The vault watcher with real filesystem events in temporary folders (no mocked watcher).

The machine may be loaded: every wait polls for its result with a 20 s limit instead of sleeping
a fixed time. A test that must show something was *not* reported writes a sentinel note after the
noise and waits for the sentinel: batches arrive in order, so anything the noise caused is in by
then.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from noteseek.errors import VaultGoneError, VaultNotFoundError
from noteseek.watch.changes import ChangeBatch
from noteseek.watch.watcher import VaultWatcher

TIMEOUT = 20.0


class Recorder:
    """Collects batches from the watcher thread."""

    def __init__(self) -> None:
        self.batches: list[ChangeBatch] = []
        self.threads: set[str] = set()
        self._lock = threading.Lock()

    def __call__(self, batch: ChangeBatch) -> None:
        with self._lock:
            self.batches.append(batch)
            self.threads.add(threading.current_thread().name)

    @property
    def notes(self) -> set[str]:
        with self._lock:
            return {n for b in self.batches for n in b.notes}

    @property
    def folders(self) -> set[str]:
        with self._lock:
            return {f for b in self.batches for f in b.folders}


def wait_until(condition: Callable[[], object], timeout: float = TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not reached within {timeout} s")
        time.sleep(0.02)


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    (root / "notes").mkdir(parents=True)
    (root / "notes" / "a.md").write_text("# A\n\nalpha\n")
    (root / "notes" / "b.md").write_text("# B\n\nbeta\n")
    (root / ".obsidian").mkdir()
    return root


def start(vault: Path, rec: Recorder, **options: object) -> VaultWatcher:
    options.setdefault("quiet", 0.2)
    watcher = VaultWatcher(vault, rec, **options)  # type: ignore[arg-type]
    watcher.start()
    assert watcher.wait_ready(TIMEOUT)
    return watcher


def finish(watcher: VaultWatcher) -> None:
    watcher.stop()
    assert watcher.join(TIMEOUT)


def sentinel(vault: Path, rec: Recorder, name: str = "sentinel.md") -> None:
    (vault / name).write_text("# sentinel\n")
    wait_until(lambda: name in rec.notes)


def test_new_edited_and_deleted_notes_are_reported(vault: Path) -> None:
    rec = Recorder()
    watcher = start(vault, rec)
    (vault / "notes" / "c.md").write_text("# C\n")
    wait_until(lambda: "notes/c.md" in rec.notes)
    with (vault / "notes" / "a.md").open("a") as f:
        f.write("more\n")
    wait_until(lambda: "notes/a.md" in rec.notes)
    (vault / "notes" / "b.md").unlink()
    wait_until(lambda: "notes/b.md" in rec.notes)
    finish(watcher)
    assert rec.folders == set()
    assert rec.threads == {"noteseek-watch"}  # never the caller's thread


def test_vim_save_dance_names_only_the_note(vault: Path) -> None:
    rec = Recorder()
    watcher = start(vault, rec)
    folder = vault / "notes"
    # vim :w with 'backup' on: probe file, swap writes, original renamed to x~, new file, backup gone.
    (folder / ".a.md.swp").write_bytes(b"swap")
    (folder / "4913").write_bytes(b"")
    (folder / "4913").unlink()
    os.rename(folder / "a.md", folder / "a.md~")
    (folder / "a.md").write_text("# A\n\nalpha, edited in vim\n")
    (folder / "a.md~").unlink()
    (folder / ".a.md.swx").write_bytes(b"swap")
    (folder / ".a.md.swp").unlink()
    wait_until(lambda: "notes/a.md" in rec.notes)
    sentinel(vault, rec)
    finish(watcher)
    assert rec.notes == {"notes/a.md", "sentinel.md"}
    assert rec.folders == set()


def test_atomic_rename_over_names_the_note(vault: Path) -> None:
    rec = Recorder()
    watcher = start(vault, rec)
    for temp in ("a.md.tmp", ".a.md.tmp.1234", "a.md___jb_tmp___"):
        (vault / "notes" / temp).write_text("# A\n\nnew text\n")
        os.replace(vault / "notes" / temp, vault / "notes" / "a.md")
    wait_until(lambda: "notes/a.md" in rec.notes)
    sentinel(vault, rec)
    finish(watcher)
    assert rec.notes == {"notes/a.md", "sentinel.md"}
    assert rec.folders == set()


def test_touch_only_still_names_the_note(vault: Path) -> None:
    # A sync tool setting the mtime: the index decides by content hash that nothing is re-embedded.
    rec = Recorder()
    watcher = start(vault, rec)
    os.utime(vault / "notes" / "b.md", ns=(1_000_000_000, 1_000_000_000))
    wait_until(lambda: "notes/b.md" in rec.notes)
    finish(watcher)


def test_noise_outside_the_index_is_ignored(vault: Path) -> None:
    rec = Recorder()
    (vault / "private").mkdir()
    (vault / "private" / ".noteseekignore").write_text("")
    (vault / "drafts").mkdir()
    watcher = start(vault, rec, exclude=(".obsidian", ".trash", ".git", "drafts"))
    (vault / ".obsidian" / "workspace.json").write_text("{}")
    (vault / ".obsidian" / "x.md").write_text("# not a note\n")
    (vault / ".trash").mkdir()
    (vault / ".trash" / "old.md").write_text("# gone\n")
    (vault / ".git").mkdir()
    (vault / ".git" / "index.lock").write_text("")
    (vault / "notes" / ".hidden").mkdir()
    (vault / "notes" / ".hidden" / "h.md").write_text("# hidden\n")
    (vault / "private" / "secret.md").write_text("# private\n")
    (vault / "drafts" / "d.md").write_text("# draft\n")
    (vault / "notes" / "sound.mp3").write_bytes(b"ID3")  # not a kind noteseek reads
    (vault / "notes" / "#a.md#").write_text("emacs autosave")
    os.symlink("root@host.1234", vault / "notes" / ".#a.md")  # emacs lock
    (vault / "notes" / "a.md.bak").write_text("backup")
    sentinel(vault, rec)
    finish(watcher)
    assert rec.notes == {"sentinel.md"}
    assert rec.folders == set()


def test_mass_create_and_delete_come_as_one_batch_each(vault: Path) -> None:
    rec = Recorder()
    watcher = start(vault, rec, quiet=1.0, max_delay=30.0)
    bulk = vault / "bulk"
    bulk.mkdir()
    names = {f"bulk/n{i:04}.md" for i in range(1000)}
    for name in sorted(names):
        (vault / name).write_text(f"# {name}\n")
    # A new folder is re-checked whole, so its notes need not be listed one by one.
    wait_until(lambda: "bulk" in rec.folders)
    assert len(rec.batches) == 1
    for name in sorted(names):
        (vault / name).unlink()
    wait_until(lambda: len(rec.batches) >= 2 and rec.batches[1].notes == names)
    finish(watcher)
    assert len(rec.batches) == 2, [len(b.notes) for b in rec.batches]
    assert rec.batches[1].events >= 1000


def test_folder_moved_in_out_and_renamed(vault: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.md").write_text("# X\n")
    rec = Recorder()
    watcher = start(vault, rec)
    os.rename(outside, vault / "moved")
    wait_until(lambda: "moved" in rec.folders)
    os.rename(vault / "moved", vault / "renamed")
    wait_until(lambda: {"moved", "renamed"} <= {f for b in rec.batches[1:] for f in b.folders})
    os.rename(vault / "notes", tmp_path / "notes-out")
    wait_until(lambda: "notes" in rec.folders)
    finish(watcher)
    assert rec.notes == set()


def test_ignore_marker_appearing_rechecks_its_folder(vault: Path) -> None:
    rec = Recorder()
    watcher = start(vault, rec)
    (vault / "notes" / ".noteseekignore").write_text("")
    wait_until(lambda: "notes" in rec.folders)
    (vault / "notes" / "c.md").write_text("# C\n")  # inside an ignored folder now
    sentinel(vault, rec)
    finish(watcher)
    assert rec.notes == {"sentinel.md"}


def test_vault_deleted_ends_with_vault_gone(vault: Path) -> None:
    rec = Recorder()
    watcher = start(vault, rec)
    shutil.rmtree(vault)
    wait_until(lambda: not watcher.running)
    with pytest.raises(VaultGoneError, match="deleted or moved"):
        watcher.join(TIMEOUT)


def test_vault_replaced_ends_with_vault_gone(vault: Path, tmp_path: Path) -> None:
    rec = Recorder()
    watcher = start(vault, rec)
    os.rename(vault, tmp_path / "elsewhere")
    vault.mkdir()
    wait_until(lambda: not watcher.running)
    with pytest.raises(VaultGoneError):
        watcher.join(TIMEOUT)


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")
def test_vault_unmounted_ends_with_vault_gone(tmp_path: Path) -> None:
    mount = tmp_path / "mnt"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)], check=False
    )
    if done.returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        (mount / "n.md").write_text("# N\n")
        rec = Recorder()
        watcher = start(mount, rec)
        subprocess.run(["umount", "-l", str(mount)], check=True)
        wait_until(lambda: not watcher.running)
        with pytest.raises(VaultGoneError, match="unmounted"):
            watcher.join(TIMEOUT)
        assert "n.md" not in rec.notes  # the vanished notes were not reported as deleted
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False, capture_output=True)


def test_missing_vault_is_refused(tmp_path: Path) -> None:
    with pytest.raises(VaultNotFoundError, match="does not exist"):
        VaultWatcher(tmp_path / "nope", Recorder())


def test_forced_polling_sees_changes(vault: Path) -> None:
    rec = Recorder()
    watcher = start(vault, rec, force_polling=True, poll_interval=0.2)
    assert watcher.polling
    (vault / "notes" / "p.md").write_text("# P\n")
    wait_until(lambda: "notes/p.md" in rec.notes)
    (vault / "notes" / "a.md").unlink()
    wait_until(lambda: "notes/a.md" in rec.notes)
    finish(watcher)


_LIMIT_SCRIPT = """
import json, sys, time
from pathlib import Path
from noteseek.watch.watcher import VaultWatcher
vault = Path(sys.argv[1])
notices, batches = [], []
w = VaultWatcher(vault, batches.append, quiet=0.2, poll_interval=0.2, on_notice=notices.append)
w.start()
w.wait_ready(20)
(vault / "f19" / "new.md").write_text("# new")
deadline = time.monotonic() + 20
while time.monotonic() < deadline and not any("f19/new.md" in b.notes for b in batches):
    time.sleep(0.05)
w.stop(); w.join(20)
print(json.dumps({"polling": w.polling, "notices": notices,
                  "notes": sorted(n for b in batches for n in b.notes),
                  "full": any(b.full for b in batches)}))
"""


def test_watch_limit_falls_back_to_polling(tmp_path: Path) -> None:
    # A user namespace of its own with max_inotify_watches = 5: the real kernel limit, hit on the
    # 6th of 21 folders, without touching the machine-wide limit other processes rely on.
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
    script = tmp_path / "limit.py"
    script.write_text(_LIMIT_SCRIPT)
    shell = f"echo 5 > /proc/sys/user/max_inotify_watches && exec {sys.executable} {script} {vault}"
    done = subprocess.run(
        ["unshare", "--user", "--map-root-user", "sh", "-c", shell],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["polling"] is True
    assert any("max_user_watches" in n and "polling" in n for n in report["notices"])
    assert "f19/new.md" in report["notes"] or report["full"]


def test_stop_finishes_the_current_batch_first(vault: Path) -> None:
    entered, release, finished = threading.Event(), threading.Event(), threading.Event()
    batches: list[ChangeBatch] = []

    def slow(batch: ChangeBatch) -> None:
        batches.append(batch)
        entered.set()
        release.wait(TIMEOUT)
        finished.set()

    watcher = VaultWatcher(vault, slow, quiet=0.2).start()
    assert watcher.wait_ready(TIMEOUT)
    (vault / "notes" / "c.md").write_text("# C\n")
    assert entered.wait(TIMEOUT)
    watcher.stop()
    (vault / "notes" / "d.md").write_text("# D\n")  # after the stop: never handed over
    assert not watcher.join(0.3)  # still inside the batch
    release.set()
    assert watcher.join(TIMEOUT)
    assert finished.is_set()
    assert len(batches) == 1


def test_idle_watcher_stops_promptly(vault: Path) -> None:
    watcher = start(vault, Recorder())
    watcher.stop()
    assert watcher.join(TIMEOUT)
    assert not watcher.running


def test_callback_error_ends_the_watcher(vault: Path) -> None:
    calls: list[ChangeBatch] = []

    def broken(batch: ChangeBatch) -> None:
        calls.append(batch)
        raise OSError("disk full")  # the callback's, not the watcher's: no restart

    watcher = VaultWatcher(vault, broken, quiet=0.2).start()
    assert watcher.wait_ready(TIMEOUT)
    (vault / "notes" / "c.md").write_text("# C\n")
    wait_until(lambda: not watcher.running)
    with pytest.raises(OSError, match="disk full"):
        watcher.join(TIMEOUT)
    assert len(calls) == 1


def test_refused_batch_comes_again_with_the_next_changes(vault: Path) -> None:
    seen: list[ChangeBatch] = []

    def locked_once(batch: ChangeBatch) -> bool:
        seen.append(batch)
        return len(seen) > 1  # the first hand-over finds the index locked

    watcher = VaultWatcher(vault, locked_once, quiet=0.2).start()
    assert watcher.wait_ready(TIMEOUT)
    (vault / "notes" / "c.md").write_text("# C\n")
    wait_until(lambda: len(seen) >= 2)  # again at the next idle tick, without a new event
    watcher.stop()
    assert watcher.join(TIMEOUT)
    assert "notes/c.md" in seen[0].notes and "notes/c.md" in seen[1].notes
    assert watcher.pending is None


def test_catch_up_asks_for_a_whole_vault_pass_first(vault: Path) -> None:
    rec = Recorder()
    watcher = start(vault, rec, catch_up=True)
    wait_until(lambda: rec.batches)
    finish(watcher)
    assert rec.batches[0].full
    assert rec.batches[0].reason


@pytest.mark.skipif(sys.platform == "darwin", reason="APFS refuses names that are not UTF-8")
def test_name_not_utf8_restarts_the_watcher_with_a_full_pass(vault: Path) -> None:
    # watchfiles cannot hand such a path to Python and stops; the watcher starts it again and asks
    # for a whole-vault pass (which names the file as skipped), rather than dying.
    rec, notices = Recorder(), []
    watcher = start(vault, rec, on_notice=notices.append)
    with open(os.path.join(os.fsencode(vault), b"caf\xe9.md"), "wb") as f:
        f.write(b"# cafe\n")
    wait_until(lambda: any(b.full for b in rec.batches))
    sentinel(vault, rec)
    finish(watcher)
    assert any("restarting" in n for n in notices)
