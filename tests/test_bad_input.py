"""Bad input: a hostile vault indexes to completion, names every problem file, and loses no text.

Every case asserts the same four things: the run completes, a problem file is named with a reason a
user understands (in the run's `IndexStats.problems` and in `Index.status().problems`), the good
notes and the readable parts of damaged ones are found by BM25, and `Index.check()` is clean.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import random
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from noteseek import Index, IndexOptions, IndexStats
from noteseek.core.chunker import chunk_note
from noteseek.engine.vault_walk import decode_note

from .conftest import FakeEmbedder, WriteNotes, note

MB = 1024 * 1024

# Symlinks need privileges on Windows, and its file names cannot hold a newline.
pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX symlinks and file names")


def body_note(title: str, text: str) -> str:
    """A note whose one section is long enough to be kept (sections under 30 characters are not)."""
    return note(title, ("Body", f"{text} This sentence makes the section long enough to keep."))


def assert_consistent(idx: Index) -> None:
    """SQLite, FTS5 and vectors agree, and no chunk kept a NUL or a carriage return."""
    assert idx.check() == []
    counts = idx._store.counts()
    assert counts["chunks"] == counts["fts"] == counts["vectors"] == counts["embedded"]
    dirty = idx._store.conn.scalar(
        "SELECT count(*) FROM chunks WHERE instr(chunk_text, char(0)) OR instr(chunk_text, char(13))"
    )
    assert dirty == 0


def problems_of(stats: IndexStats) -> dict[str, str]:
    return dict(stats.problems)


def status_of(idx: Index) -> dict[str, tuple[str, str]]:
    return {path: (state, problem) for path, state, problem in idx.status().problems}


def top(idx: Index, query: str) -> str | None:
    hits = idx.search(query, mode="bm25", min_score=0)
    return hits[0].path if hits else None


def found(idx: Index, query: str) -> set[str]:
    return {h.path for h in idx.search(query, mode="bm25", limit=50)}


@pytest.fixture
def index(tmp_path: Path, fake_embedder: FakeEmbedder) -> Iterator[Index]:
    with Index(tmp_path / "i.db", embedder=fake_embedder) as idx:
        yield idx


# ---------------------------------------------------------------------------------------------
# The hostile vault: every kind of bad input at once, next to good notes.


@dataclass(frozen=True)
class Case:
    """One file of the hostile vault and what must happen to it."""

    content: bytes
    problem: str | None = None  # part of the reason reported; None: indexed without a problem
    skipped: bool = False  # True: not indexed at all (else indexed, with a warning if `problem`)
    query: str | None = None  # a BM25 query this note must come first for


def _latin1_note() -> bytes:
    return (
        "# Espresso\n\nCafé notes: the espresso machine needs descaling every month, "
        "Grüße from the barista.\n"
    ).encode("latin-1")


def _headings_note() -> bytes:
    # 10,000 headings whose sections are each below `min_chars`: the note falls back to its
    # whole text, which must be kept in full, not cut at the first 2,000 characters.
    return "".join(f"## Heading {i}\n\nw{i}\n\n" for i in range(10_000)).encode()


def _deep_note() -> bytes:
    lines = [
        "# Deep nesting",
        "",
        "> " * 5000 + "abyssal quote text",
        "",
        "- " * 5000 + "bathyal list text",
        "",
        *("> " * depth + f"layer {depth}" for depth in range(1, 1000)),
        "",
        *("  " * depth + f"- item {depth}" for depth in range(1000)),
        "hadal trench bottom of the nesting",
    ]
    return "\n".join(lines).encode()


def _long_line_note() -> bytes:
    line = ("filler words " * 80_000)[: 1_000_000 - len(" zanzibar")] + " zanzibar"
    assert len(line) == 1_000_000
    return f"# One line\n\n{line}\n".encode()


HOSTILE: dict[str, Case] = {
    "good.md": Case(
        note("Good", ("WAL", "Checkpoint the sqlite write-ahead log after a bulk load.")).encode(),
        query="checkpoint write-ahead",
    ),
    "invalid-utf8.md": Case(
        _latin1_note(), problem="not UTF-8: read as Windows-1252", query="Grüße barista"
    ),
    "bom-utf8.md": Case(
        codecs.BOM_UTF8
        + note("Bom Note", ("Body", "Marmalade recipe with Seville oranges.")).encode(),
        query="marmalade seville",
    ),
    "utf16-le.md": Case(
        codecs.BOM_UTF16_LE
        + note("Wide LE", ("Body", "Saved by Notepad as little-endian pangolin.")).encode(
            "utf-16-le"
        ),
        query="little-endian pangolin",
    ),
    "utf16-be.md": Case(
        codecs.BOM_UTF16_BE
        + note("Wide BE", ("Body", "Saved by an old Mac editor as big-endian narwhal.")).encode(
            "utf-16-be"
        ),
        query="big-endian narwhal",
    ),
    "utf16-no-bom.md": Case(
        note("No Mark", ("Body", "UTF-16 without its mark, about a wombat.")).encode("utf-16-le"),
        problem="UTF-16 without a byte-order mark",
        query="wombat",
    ),
    "crlf.md": Case(
        note("Windows", ("Line Ends", "CRLF endings from a Windows laptop, okapi."), tags="crlf")
        .replace("\n", "\r\n")
        .encode(),
        query="okapi laptop",
    ),
    "lone-cr.md": Case(
        b"# Classic Mac\r\rLone carriage returns from Mac OS 9 about the axolotl.\r"
        b"## Second\r\rAnother section with enough text about the quetzal bird.\r",
        query="quetzal",
    ),
    "nul-inside.md": Case(
        b"# Damaged\n\nA sync glitch wrote NUL\x00\x00 bytes into this note about the ibex.\n",
        problem="2 NUL bytes removed",
        query="ibex",
    ),
    "nul-padded.md": Case(
        b"# Crash\n\nThe editor crashed while saving this note about the tapir.\n" + b"\0" * 4096,
        problem="4096 NUL bytes removed",
        query="tapir",
    ),
    "image.md": Case(
        b"\x89PNG\r\n\x1a\n" + random.Random(1).randbytes(4096),
        problem="binary file (PNG image), not a text note",
        skipped=True,
    ),
    "random.md": Case(
        random.Random(2).randbytes(4096),
        problem="binary file (binary data), not a text note",
        skipped=True,
    ),
    "long-line.md": Case(_long_line_note(), query="zanzibar"),
    "empty.md": Case(b""),
    "blank.md": Case(b"  \n\n\t\n"),
    "fm-bad-yaml.md": Case(
        b"---\ntitle: [oops\n---\n# Broken YAML\n\nThe body of a note about the kakapo survives.\n",
        problem="frontmatter is not valid YAML",
        query="kakapo",
    ),
    "fm-list.md": Case(
        b"---\n- just\n- a list\n---\n# Listy\n\nA list frontmatter above a note on the dugong.\n",
        problem="frontmatter is a YAML list, not a mapping",
        query="dugong",
    ),
    "fm-scalar.md": Case(
        b"---\njust a sentence\n---\n# Scalar\n\nA scalar frontmatter above the gharial note.\n",
        problem="frontmatter is a YAML str, not a mapping",
        query="gharial",
    ),
    "fm-unclosed.md": Case(
        b"---\ntitle: Never closed\ntags: [x]\n\n# Unclosed\n\nThe frontmatter never ends; saola.\n",
        problem="frontmatter block starts with '---' but is never closed",
        query="saola",
    ),
    "headings.md": Case(_headings_note(), query="w9999"),
    "deep.md": Case(_deep_note(), query="abyssal"),
    "with spaces in name.md": Case(b"# Spaces\n\nA file name with spaces, about the caracal.\n"),
    "caf\u00e9 nfc.md": Case("# Caf\u00e9 NFC\n\nComposed accents: kinkajou.\n".encode()),
    "cafe\u0301 nfd.md": Case("# Cafe\u0301 NFD\n\nDecomposed accents: binturong.\n".encode()),
    "new\nline.md": Case(b"# Newline\n\nA newline inside the file name, about the fossa.\n"),
}


def _make_hostile_vault(root: Path, outside: Path) -> None:
    for rel, case in HOSTILE.items():
        (root / rel).write_bytes(case.content)
    # 50 MB, sparse after a real first line: over the 20 MB default, so it is never even read.
    with open(root / "huge.md", "wb") as handle:
        handle.write(b"# Huge\n\nAn export that grew to fifty megabytes.\n")
        handle.truncate(50 * MB)
    outside.write_text("# Outside\n\nPrivate diary outside the vault: the secret pudu.\n")
    (root / "inside-link.md").symlink_to("good.md")
    (root / "outside-link.md").symlink_to(outside)
    (root / "loop-a.md").symlink_to("loop-b.md")
    (root / "loop-b.md").symlink_to("loop-a.md")
    (root / "self-loop.md").symlink_to("self-loop.md")
    (root / "dangling.md").symlink_to("no-such-note.md")
    (root / "folder-loop").symlink_to(root, target_is_directory=True)
    (root / "outside-folder").symlink_to(outside.parent, target_is_directory=True)
    # A file name that is not UTF-8 (Linux allows any bytes; macOS refuses to create one).
    with contextlib.suppress(OSError, UnicodeError):
        (root / os.fsdecode(b"latin1-caf\xe9.md")).write_bytes(b"# Latin name\n\nHello there.\n")


SKIPPED_ELSEWHERE = {
    "huge.md": "too large: 50 MB is over the 20 MB limit; raise IndexOptions(max_file_bytes=...)"
    " to index it",
    "outside-link.md": "symlink points outside the vault",
    "loop-a.md": "symlink loop: the link leads back to itself",
    "loop-b.md": "symlink loop: the link leads back to itself",
    "self-loop.md": "symlink loop: the link leads back to itself",
    "dangling.md": "broken symlink: its target does not exist",
}


def test_hostile_vault_indexes_completely_names_problems_and_keeps_good_text(
    tmp_path: Path, index: Index
) -> None:
    root = tmp_path / "vault"
    root.mkdir()
    (tmp_path / "private").mkdir()
    _make_hostile_vault(root, tmp_path / "private" / "diary.md")

    stats = index.update(root)

    assert not stats.interrupted
    problems = problems_of(stats)
    status = status_of(index)
    expected_skips = dict(SKIPPED_ELSEWHERE)
    if (root / os.fsdecode(b"latin1-caf\xe9.md")).exists():
        expected_skips["latin1-caf\\xe9.md"] = (
            "file name is not valid UTF-8; rename the file to index it"
        )
    for path, reason in expected_skips.items():
        assert problems[path] == reason, path
        assert status[path] == ("skipped", reason), path
    for path, case in HOSTILE.items():
        if case.problem is None:
            assert path not in problems, (path, problems.get(path))
            assert path not in status, path
            continue
        assert case.problem in problems[path], (path, problems[path])
        assert status[path] == ("skipped" if case.skipped else "warning", problems[path])
    assert (
        set(problems)
        == set(status)
        == expected_skips.keys() | {p for p, c in HOSTILE.items() if c.problem}
    )
    assert stats.skipped == len(expected_skips) + sum(c.skipped for c in HOSTILE.values())

    for path, case in HOSTILE.items():
        if case.query:
            assert top(index, case.query) == path, (case.query, found(index, case.query))
    # Names with spaces, NFC and NFD accents and newlines are kept exactly, so they can be opened.
    assert found(index, "caracal") == {"with spaces in name.md"}
    assert found(index, "kinkajou") == {"caf\u00e9 nfc.md"}
    assert found(index, "binturong") == {"cafe\u0301 nfd.md"}
    assert found(index, "fossa") == {"new\nline.md"}
    assert {"caf\u00e9 nfc.md", "cafe\u0301 nfd.md"} <= found(index, "café")  # accents fold
    # Readable parts of damaged notes, and nothing of what must stay out.
    assert top(index, "barista") == "invalid-utf8.md"
    assert found(index, "hadal trench") == {"deep.md"} == found(index, "bathyal")
    assert found(index, "secret pudu private diary") == set()
    assert found(index, "fifty megabytes export") == set()
    assert found(index, "checkpoint write-ahead") == {"good.md", "inside-link.md"}
    # The BOM is not part of the title; CRLF leaves no `\r` in titles, sections or tags.
    assert index.search("marmalade", mode="bm25")[0].heading_context == "Bom Note"
    crlf = index.search("okapi laptop", mode="bm25")[0]
    assert (crlf.section, crlf.heading_context) == ("Line Ends", "Windows |  | crlf")
    assert top(index, "crlf") == "crlf.md"  # found by its tag
    assert_consistent(index)

    # Every hit in every mode is well-formed text, and a second run is quiet and consistent.
    for mode in ("bm25", "vector", "hybrid"):
        for hit in index.search("note about the", mode=mode, limit=50):
            assert "\x00" not in hit.text and "\r" not in hit.text
    again = index.update(root)
    assert again.added == again.changed == again.removed == 0
    # Problems that may clear up without the file changing (size limit, symlinks) are looked at
    # again, and so named again; damaged content is not re-read until the file changes.
    assert problems_of(again) == {p: r for p, r in problems.items() if p in expected_skips}
    assert_consistent(index)


# ---------------------------------------------------------------------------------------------
# Focused cases.


def test_decode_note_cases() -> None:
    text = "# Café ☕\n\nbody"
    assert decode_note(text.encode()).text == text
    assert decode_note(codecs.BOM_UTF8 + text.encode()).text == text
    assert decode_note(text.encode("utf-16")).text == text
    assert decode_note(codecs.BOM_UTF16_BE + text.encode("utf-16-be")).text == text
    assert decode_note(text.encode("utf-32")).text == text
    assert decode_note(b"").text == ""
    # A cut-off last byte of UTF-16 keeps the text and says so.
    cut = decode_note(text.encode("utf-16") + b"\x41")
    assert cut.text is not None and cut.text.startswith(text)
    assert "invalid UTF-16" in (cut.warning or "")
    # A note of an 8-bit code page (no UTF-8 character in it at all) is read as Windows-1252...
    latin = decode_note("Grüße aus Köln, 20 € a longer line of text".encode("cp1252"))
    assert latin.text == "Grüße aus Köln, 20 € a longer line of text"
    assert latin.warning == "not UTF-8: read as Windows-1252 (Latin-1); save it as UTF-8"
    # ... but damage in a UTF-8 note keeps its correct characters and replaces the bad bytes.
    damaged = decode_note("Grüße aus Köln ".encode() + b"\xff\xfe broken")
    assert damaged.text == "Grüße aus Köln \ufffd\ufffd broken"
    assert damaged.warning == "invalid UTF-8 at byte 18; undecodable bytes replaced"
    # One NUL in a short note is damage, not a binary file.
    short = decode_note(b"tiny\x00note")
    assert (short.text, short.warning) == ("tinynote", "1 NUL byte removed")
    assert decode_note(b"\x00" * 100).problem == "contains only NUL bytes, no text"
    assert decode_note(b"%PDF-1.7\n" + bytes(range(256)) * 4).problem == (
        "binary file (PDF document), not a text note"
    )
    # Arrays of small 16-bit numbers are not BOM-less UTF-16 text.
    numbers = b"".join(i.to_bytes(2, "little") for i in range(1, 20)) * 50
    assert decode_note(numbers).problem == "binary file (binary data), not a text note"


def test_chunker_keeps_every_word_of_split_and_many_tiny_sections() -> None:
    # The last cut of a 10,000-character quote line leaves a short remainder: it must stay.
    deep = "> " * 5000 + "abyssal quote text\n\n" + "- " * 5000 + "bathyal list text"
    words = " ".join(c.text for c in chunk_note(deep, file_stem="d").chunks)
    assert "abyssal" in words and "bathyal" in words
    # Every section under min_chars: the whole note is kept, packed, not cut at max_chars.
    many = "".join(f"## H{i}\n\nw{i}\n\n" for i in range(3000))
    chunks = chunk_note(many, file_stem="m").chunks
    assert all(len(c.text) <= 2000 for c in chunks)
    assert [w for c in chunks for w in c.text.split() if w.startswith("w")] == [
        f"w{i}" for i in range(3000)
    ]
    # A short note is still one chunk, unchanged.
    assert [c.text for c in chunk_note("# T\n\nshort", file_stem="t").chunks] == ["short"]


def test_too_large_note_is_skipped_with_the_limit_and_indexed_once_it_is_raised(
    tmp_path: Path, make_vault: WriteNotes, fake_embedder: FakeEmbedder
) -> None:
    # Chosen: notes over `max_file_bytes` (20 MB) are skipped, not indexed. A 50 MB note took
    # ~24 s and ~590 MB peak memory here with the fake embedder and adds ~52,000 chunks (as many
    # as all of MDN), so one log dump would dominate the index; a user who wants it raises the limit.
    text = body_note("Big", "A big note about the serval. " * 3000)
    vault = make_vault({"big.md": text, "small.md": body_note("Small", "About the margay.")})
    db = tmp_path / "i.db"
    with Index(db, embedder=fake_embedder, options=IndexOptions(max_file_bytes=64 * 1024)) as idx:
        stats = idx.update(vault)
        kb = (vault / "big.md").stat().st_size / 1024
        assert problems_of(stats) == {
            "big.md": f"too large: {kb:.1f} KB is over the 64 KB limit; "
            "raise IndexOptions(max_file_bytes=...) to index it"
        }
        assert top(idx, "serval") is None and top(idx, "margay") == "small.md"
        assert_consistent(idx)
    # The file did not change, but the limit did: the next run must pick it up.
    with Index(db, embedder=fake_embedder) as idx:
        stats = idx.update(vault)
        assert stats.changed == 1 and stats.problems == ()
        assert top(idx, "serval") == "big.md"
        assert idx.status().problems == ()
        assert_consistent(idx)


def test_note_that_grows_past_the_limit_after_listing_is_not_read_whole(
    tmp_path: Path, make_vault: WriteNotes, fake_embedder: FakeEmbedder
) -> None:
    vault = make_vault({"a.md": body_note("A", "First note, the aardwolf."), "b.md": "# B\n"})
    options = IndexOptions(max_file_bytes=1024 * 1024)

    def grow_b(done: int, total: int, path: str) -> None:
        if path == "a.md":
            with open(vault / "b.md", "ab") as handle:
                handle.write(b"x" * (2 * 1024 * 1024))

    with Index(tmp_path / "i.db", embedder=fake_embedder, options=options) as idx:
        stats = idx.update(vault, progress=grow_b)
        assert problems_of(stats)["b.md"].startswith("too large: 2.0 MB is over the 1 MB limit")
        assert top(idx, "aardwolf") == "a.md"
        assert_consistent(idx)


def test_file_deleted_between_listing_and_reading(
    tmp_path: Path, make_vault: WriteNotes, fake_embedder: FakeEmbedder
) -> None:
    vault = make_vault(
        {
            "a.md": body_note("A", "The first note, about the aardvark."),
            "b.md": body_note("B", "Deleted while indexing, about the bongo."),
            "c.md": body_note("C", "The last note, about the civet."),
        }
    )

    def delete_b(done: int, total: int, path: str) -> None:
        if path == "a.md":  # files are read in path order: b.md is listed but not read yet
            (vault / "b.md").unlink()

    with Index(tmp_path / "i.db", embedder=fake_embedder) as idx:
        stats = idx.update(vault, progress=delete_b)
        reason = "vanished before it could be read (deleted or moved during indexing)"
        assert problems_of(stats) == {"b.md": reason}
        assert status_of(idx) == {"b.md": ("skipped", reason)}
        assert top(idx, "aardvark") == "a.md" and top(idx, "civet") == "c.md"
        assert top(idx, "bongo") is None
        assert_consistent(idx)
        # The next run sees it is gone and forgets it.
        again = idx.update(vault)
        assert again.removed == 1 and again.problems == () and idx.status().problems == ()
        assert_consistent(idx)


def test_indexed_file_deleted_before_rereading_loses_its_old_text(
    tmp_path: Path, make_vault: WriteNotes, fake_embedder: FakeEmbedder
) -> None:
    vault = make_vault(
        {
            "a.md": body_note("A", "The first note, about the aardvark."),
            "b.md": body_note("B", "Soon to change, about the bongo."),
        }
    )
    with Index(tmp_path / "i.db", embedder=fake_embedder) as idx:
        idx.update(vault)
        assert top(idx, "bongo") == "b.md"
        (vault / "b.md").write_text(body_note("B", "Changed, about the bontebok."))

        def delete_b(done: int, total: int, path: str) -> None:
            (vault / "b.md").unlink(missing_ok=True)

        (vault / "a.md").write_text(body_note("A", "Changed first note, the addax."))
        stats = idx.update(vault, progress=delete_b)
        assert "vanished" in problems_of(stats)["b.md"]
        assert top(idx, "bongo") is None and top(idx, "addax") == "a.md"
        assert_consistent(idx)


def test_file_changed_between_listing_and_reading_is_indexed_as_read(
    tmp_path: Path, make_vault: WriteNotes, fake_embedder: FakeEmbedder
) -> None:
    vault = make_vault(
        {
            "a.md": body_note("A", "The first note, about the aardvark."),
            "b.md": body_note("B", "Listed with this text, about the bongo."),
        }
    )

    def edit_b(done: int, total: int, path: str) -> None:
        if path == "a.md":
            (vault / "b.md").write_text(body_note("B", "Rewritten before reading: the gerenuk."))

    with Index(tmp_path / "i.db", embedder=fake_embedder) as idx:
        stats = idx.update(vault, progress=edit_b)
        assert stats.problems == () and stats.added == 2
        assert top(idx, "gerenuk") == "b.md" and top(idx, "bongo") is None
        # What was recorded is the stat of what was read, so the next run has nothing to do.
        again = idx.update(vault)
        assert (again.added, again.changed, again.unchanged) == (0, 0, 2)
        assert_consistent(idx)


def test_file_that_keeps_changing_while_read_is_skipped_then_retried(
    tmp_path: Path,
    make_vault: WriteNotes,
    fake_embedder: FakeEmbedder,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    vault = make_vault({"busy.md": body_note("Busy", "Being written: the jerboa.")})
    real_fstat = os.fstat
    ticks = iter(range(1, 1000))

    def fstat_of_a_file_being_written(fd: int) -> os.stat_result:
        st = real_fstat(fd)
        fields = list(st)
        fields[8] = st.st_mtime + next(ticks)  # every look shows a newer mtime
        return os.stat_result(fields, {"st_mtime_ns": st.st_mtime_ns + next(ticks) * 10**9})

    monkeypatch.setattr(os, "fstat", fstat_of_a_file_being_written)
    with Index(tmp_path / "i.db", embedder=fake_embedder) as idx:
        stats = idx.update(vault)
        assert problems_of(stats) == {
            "busy.md": "kept changing while it was read (still being written?); "
            "it is read again next run"
        }
        assert top(idx, "jerboa") is None
        monkeypatch.undo()
        again = idx.update(vault)  # unchanged on disk since, but retried
        assert again.changed == 1 and again.problems == ()
        assert top(idx, "jerboa") == "busy.md"
        assert_consistent(idx)


def test_file_swapped_for_a_symlink_out_of_the_vault_after_listing_is_not_followed(
    tmp_path: Path, make_vault: WriteNotes, fake_embedder: FakeEmbedder
) -> None:
    outside = tmp_path / "secret.md"
    outside.write_text("# Secret\n\nPrivate text about the pudu, outside the vault.\n")
    vault = make_vault(
        {
            "a.md": body_note("A", "The first note, about the aardvark."),
            "b.md": body_note("B", "An innocent note, about the bongo."),
        }
    )

    def swap_b(done: int, total: int, path: str) -> None:
        if path == "a.md":
            (vault / "b.md").unlink()
            (vault / "b.md").symlink_to(outside)

    with Index(tmp_path / "i.db", embedder=fake_embedder) as idx:
        stats = idx.update(vault, progress=swap_b)
        assert problems_of(stats) == {"b.md": "symlink points outside the vault"}
        assert top(idx, "pudu private") is None and top(idx, "bongo") is None
        assert_consistent(idx)


def test_folder_swapped_for_a_symlink_out_of_the_vault_after_listing_is_not_followed(
    tmp_path: Path, make_vault: WriteNotes, fake_embedder: FakeEmbedder
) -> None:
    # The note's own name is no symlink: only the folder above it leads out (the kernel follows
    # it when the path is opened; where the descriptor leads is checked, not the path).
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "b.md").write_text("# Secret\n\nPrivate text about the pudu, outside the vault.\n")
    vault = make_vault(
        {
            "a.md": body_note("A", "The first note, about the aardvark."),
            "sub/b.md": body_note("B", "An innocent note, about the bongo."),
        }
    )

    def swap_sub(done: int, total: int, path: str) -> None:
        if path == "a.md":
            shutil.rmtree(vault / "sub")
            (vault / "sub").symlink_to(elsewhere, target_is_directory=True)

    with Index(tmp_path / "i.db", embedder=fake_embedder) as idx:
        stats = idx.update(vault, progress=swap_sub)
        assert problems_of(stats) == {"sub/b.md": "symlink points outside the vault"}
        assert top(idx, "pudu private") is None and top(idx, "bongo") is None
        assert_consistent(idx)


def _unreadable_vault(make_vault: WriteNotes) -> Path:
    return make_vault(
        {
            "ok.md": body_note("Ok", "A readable note about the quoll."),
            "locked.md": body_note("Locked", "A note nobody may read, about the numbat."),
        }
    )


PERMISSION_REASON = "permission denied: noteseek may not read this file (check its permissions)"


def test_unreadable_file_chmod_000(
    tmp_path: Path, make_vault: WriteNotes, fake_embedder: FakeEmbedder
) -> None:
    vault = _unreadable_vault(make_vault)
    locked = vault / "locked.md"
    locked.chmod(0)
    try:
        try:
            locked.read_bytes()
        except PermissionError:
            pass
        else:
            pytest.skip(
                "chmod 000 does not stop this user from reading (root, or a filesystem without "
                "permissions); test_unreadable_file_simulated covers the case"
            )
        with Index(tmp_path / "i.db", embedder=fake_embedder) as idx:
            stats = idx.update(vault)
            assert problems_of(stats) == {"locked.md": PERMISSION_REASON}
            assert top(idx, "quoll") == "ok.md" and top(idx, "numbat") is None
            locked.chmod(0o644)  # chmod changes ctime only: the next run must still retry
            again = idx.update(vault)
            assert again.changed == 1 and top(idx, "numbat") == "locked.md"
            assert_consistent(idx)
    finally:
        locked.chmod(0o644)


def test_unreadable_file_simulated(
    tmp_path: Path,
    make_vault: WriteNotes,
    fake_embedder: FakeEmbedder,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    vault = _unreadable_vault(make_vault)
    real_open = os.open

    def open_refusing_locked(path: str | os.PathLike[str], flags: int, *args: int) -> int:
        if Path(path).name == "locked.md":
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", open_refusing_locked)
    with Index(tmp_path / "i.db", embedder=fake_embedder) as idx:
        stats = idx.update(vault)
        assert problems_of(stats) == {"locked.md": PERMISSION_REASON}
        assert status_of(idx) == {"locked.md": ("skipped", PERMISSION_REASON)}
        assert top(idx, "quoll") == "ok.md" and top(idx, "numbat") is None
        assert_consistent(idx)
        monkeypatch.undo()  # permissions fixed; the file itself is unchanged
        again = idx.update(vault)
        assert again.changed == 1 and again.problems == () and idx.status().problems == ()
        assert top(idx, "numbat") == "locked.md"
        assert_consistent(idx)


def test_unexpected_error_in_one_note_is_reported_and_the_run_goes_on(
    tmp_path: Path,
    make_vault: WriteNotes,
    fake_embedder: FakeEmbedder,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    vault = make_vault(
        {
            "a.md": body_note("A", "Fine note about the aardvark."),
            "boom.md": body_note("Boom", "Triggers a bug: the bilby."),
        }
    )
    real_chunk = chunk_note

    def chunk_with_a_bug(text: str, **kwargs: object) -> object:
        if "bilby" in text:
            raise RecursionError("maximum recursion depth exceeded")
        return real_chunk(text, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr("noteseek.engine.update.prepare.chunk_note", chunk_with_a_bug)
    with Index(tmp_path / "i.db", embedder=fake_embedder) as idx:
        stats = idx.update(vault)
        assert problems_of(stats) == {
            "boom.md": "could not be indexed (RecursionError: maximum recursion depth exceeded); "
            "this is a bug in noteseek, please report it"
        }
        assert top(idx, "aardvark") == "a.md"
        assert_consistent(idx)


# ---------------------------------------------------------------------------------------------
# Any query text is safe.

_FRAGMENTS = [
    "AND", "OR", "NOT", "NEAR", "NEAR(", "NEAR/3", "(", ")", '"', "'", "*", "^", "-", "+", ":",
    "{", "}", "[", "]", "col:", "title:", "tags:x", "chunks_fts", "rank", "MATCH", "';--",
    "\\", "%", "_", "\x00", "\x01", "\x1f", "\x7f", "\t", "\n", "\r", "\u200b", "\u202e",
    "\ufeff", "\ufffd", "\ud800", "\udfff", "é", "e\u0301", "ß", "İ", "ﬁ", "日本語", "العربية",
    "😀", "👩‍💻", "§3", "Absatz", "C++", "-Math.floor", "a.b.c", "x" * 300, "0", "-1", "1e309",
    "NaN", "NULL", "token", "rotation", "sqlite", "wal", "the", "der", " ", "",
]  # fmt: skip


def _generated_queries(count: int) -> list[str]:
    """Deterministic hostile queries: operators, quotes, Unicode, control characters, long text."""
    rng = random.Random(20240601)
    queries = ["", " ", '"', '""', "*", "NEAR(a b, 2)", "a NOT", "(((", ")))", "\x00" * 10]
    queries += ["word " * 2000, "x" * 100_000, "日本" * 5000, '"' * 1001, "OR " * 3000]
    while len(queries) < count:
        shape = rng.random()
        if shape < 0.5:
            parts = rng.choices(_FRAGMENTS, k=rng.randint(1, 8))
            queries.append(rng.choice(["", " "]).join(parts))
        elif shape < 0.8:
            length = rng.randint(1, 40)
            queries.append("".join(chr(rng.randint(0, 0x10FFFF)) for _ in range(length)))
        elif shape < 0.99:
            length = rng.randint(1, 60)
            queries.append("".join(chr(rng.randint(0, 0x7F)) for _ in range(length)))
        else:  # long ones are slow to embed, so there are ~100 of them besides the five above
            queries.append(rng.choice(_FRAGMENTS) * rng.randint(50, 500))
    return queries


@pytest.fixture(scope="module")
def small_index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Index]:
    root = tmp_path_factory.mktemp("fuzz")
    vault = root / "vault"
    vault.mkdir()
    (vault / "oauth.md").write_text(
        note("OAuth", ("Rotation", "Rotate the token when the API answers 401."), tags="security")
    )
    (vault / "wal.md").write_text(note("WAL", ("Mode", "sqlite wal mode lets readers go on.")))
    (vault / "miete.md").write_text(note("Miete", ("Frist", "§3 Absatz 2: drei Monate, Grüße.")))
    (vault / "emoji.md").write_text(note("Emoji", ("Faces", "😀 日本語 text with C++ and ß.")))
    with Index(root / "i.db", embedder=FakeEmbedder()) as idx:
        idx.update(vault)
        yield idx


def test_ten_thousand_generated_queries_never_raise_in_any_mode(small_index: Index) -> None:
    queries = _generated_queries(10_000)
    assert len(queries) == 10_000
    for query in queries:
        for mode in ("bm25", "vector", "hybrid"):
            hits = small_index.search(query, mode=mode)
            assert isinstance(hits, list), (mode, query[:80])
    assert small_index.search("token rotation", mode="bm25")[0].path == "oauth.md"
    assert small_index.check() == []


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=200))
def test_any_query_text_returns_a_list(small_index: Index, query: str) -> None:
    for mode in ("bm25", "vector", "hybrid"):
        assert isinstance(small_index.search(query, mode=mode, explain=True), list)
