"""Files a run leaves out are named, with a reason, in its summary and in `status --files`.

Through the real `noteseek index` and `noteseek status --files` processes: FIFOs (as a note, as a
document, behind a symlink) must never block the run, hidden note names such as `..md` must not
vanish without a word, and a size over a limit must read as over it.
"""

from __future__ import annotations

import io
import os
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from .conftest import user_env

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")

FIFO = "a named pipe (FIFO), not a regular file: noteseek reads only regular files"
HIDDEN = "hidden file (its name starts with '.'): not indexed; rename it to index it"


def run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    # A blocking open of a FIFO would hang here: the timeout turns that into a failure.
    return subprocess.run(
        [sys.executable, "-m", "noteseek", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
    )


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    clean = user_env()
    clean.update(NOTESEEK_HOME=str(tmp_path / "home"), HF_HUB_OFFLINE="1")
    return clean


def _status_lines(db: Path, env: dict[str, str]) -> dict[str, str]:
    """`status --files` as {path: the whole line}."""
    out = run("status", "--db", str(db), "--files", env=env)
    assert out.returncode == 0, out.stderr
    lines: dict[str, str] = {}
    for line in out.stdout.splitlines():
        for part in line.split("  "):
            path = part.strip().split(": ", 1)[0]
            if path:
                lines.setdefault(path, line)
    return lines


def test_fifos_and_hidden_notes_are_named_and_never_block(
    tmp_path: Path, env: dict[str, str]
) -> None:
    vault = tmp_path / "vault"
    (vault / "pipes").mkdir(parents=True)
    (vault / "a.md").write_text("# A\n\nalpha note about gardening\n")
    os.mkfifo(vault / "fifo.md")
    os.mkfifo(vault / "x.pdf")
    os.mkfifo(vault / "pipes" / "p")
    (vault / "link.md").symlink_to(Path("pipes") / "p")
    (vault / "..md").write_text("# two dots\n")
    (vault / ".hidden.md").write_text("# hidden\n")
    (vault / ".#a.md").write_text("emacs lock\n")  # a tool's lock file: left out unnamed
    db = tmp_path / "index.db"

    first = run("index", str(vault), "--db", str(db), env=env)
    assert first.returncode == 0, first.stderr
    summary = first.stdout + first.stderr
    for name in ("fifo.md", "x.pdf", "link.md"):
        assert f"{name}: {FIFO}" in summary
    for name in ("..md", ".hidden.md"):
        assert f"{name}: {HIDDEN}" in summary
    assert ".#a.md" not in summary
    assert "5 skipped" in first.stdout

    lines = _status_lines(db, env)
    for name in ("fifo.md", "x.pdf", "link.md", "..md", ".hidden.md"):
        assert lines[name].startswith("skipped"), lines[name]
    assert FIFO in lines["x.pdf"] and HIDDEN in lines["..md"]
    assert lines["a.md"].startswith("indexed")
    assert ".#a.md" not in lines

    # A second run names them again and counts nothing as removed or added.
    again = run("index", str(vault), "--db", str(db), env=env)
    assert again.returncode == 0, again.stderr
    assert "0 added" in again.stdout and "0 removed" in again.stdout


def _forged_zip(declared: int) -> bytes:
    """A small .docx whose central directory declares `declared` unpacked bytes."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        archive.writestr("word/document.xml", "<w:document/>")
    data = bytearray(buffer.getvalue())
    central = data.find(b"PK\x01\x02")
    # The central directory's uncompressed-size field (offset 24), of its first entry.
    struct.pack_into("<I", data, central + 24, declared)
    return bytes(data)


def test_an_unpacked_size_over_the_limit_reads_as_over_it(
    tmp_path: Path, env: dict[str, str]
) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "note.md").write_text("# Note\n\nbeside a bomb\n")
    limit = 1024 * 1024 * 1024
    # One byte over in all: the second member holds 13 bytes.
    (vault / "bomb.docx").write_bytes(_forged_zip(limit + 1 - len("<w:document/>")))
    db = tmp_path / "index.db"
    done = run("index", str(vault), "--db", str(db), env=env)
    assert done.returncode == 0, done.stderr
    line = _status_lines(db, env)["bomb.docx"]
    assert "(the limit is 1,024 MiB)" not in line
    # The figure itself shows it is more than the limit.
    assert "unpack to 1,073,741,825 bytes, more than the 1,024 MiB limit" in line, line
