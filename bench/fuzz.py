"""Coverage-guided fuzzing (atheris / libFuzzer) of the parsers noteseek runs on untrusted text.

    pip install atheris
    nice -n 10 python bench/fuzz.py --target chunker --minutes 10 [--work DIR]
    python bench/fuzz.py --target scrubber --minutes 10 --max-len 20000
    python bench/fuzz.py --replay bench/.cache/fuzz/scrubber/crash-…   # re-run one input

Targets and the property each one checks on every input (bytes decoded as UTF-8 with
replacement, as ``vault.decode_note`` would leave a note):

* ``frontmatter``: ``parse_frontmatter`` returns or raises ``FrontmatterError``, nothing else.
* ``chunker``: ``chunk_note`` never raises; every chunk has text; every word of the body (outside
  skipped link sections) is in a chunk's text or section name, or is the title.
* ``scrubber``: ``scrub`` is idempotent, ``find_secrets`` finds what ``scrub`` counts, no
  marker is split, and scrubbing the result again with every value found changes nothing (no
  occurrence of a found value is left).
* ``query``: ``fts_query`` and a real BM25 search over a small index never raise (a query is
  user input: no query may crash a search).

An input slower than ``--timeout`` seconds counts as a hang.  Crashes and hangs are written to
``bench/.cache/fuzz/<target>/`` (``crash-…``, ``timeout-…``); the corpus kept there makes the next
run start where this one stopped.  Each finding becomes a regression test in tests/test_fuzz_regressions.py.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CACHE = REPO / "bench" / ".cache" / "fuzz"

try:
    import atheris
except ImportError:  # pragma: no cover - bench dependency
    # The smoke run (bench/smoke.py) says so and passes; a real run needs it.
    print("fuzz skipped: bench/fuzz.py needs atheris (pip install atheris)")
    raise SystemExit(0 if "--smoke" in sys.argv else 1) from None

with atheris.instrument_imports():
    import noteseek
    from noteseek.core.chunker import DEFAULT_SKIP_SECTIONS, chunk_note
    from noteseek.core.frontmatter import FrontmatterError, parse_frontmatter
    from noteseek.core.query import fts_query
    from noteseek.secrets.scrubber import find_secrets, scrub

# Tokens libFuzzer splices into inputs: Markdown structure, secret shapes and keywords.
DICTIONARY = [
    "---\n", "\n---\n", "...\n", "## ", "# ", "### ", "```", "~~~", "\n\n", "> ", "- ", "| ", "|---|",
    "[[", "]]", "title: ", "tags: ", "aliases:\n  - ", "See also", "Related", "password=",
    "api_key: ", "token: ", "Bearer ", "Authorization: Basic ", "://user:", "@host", "AKIA",
    "gh" + "p_", "sk" + "-", "xo" + "xb-", "-----BEGIN PRIVATE KEY-----", "-----END PRIVATE KEY-----",
    "-----BEGIN CERTIFICATE-----", "data:image/png;base64,", "sha256:", "key-", "[REDACTED:jwt]",
    "eyJ", "=", "==", "/", "+", "_", "-", "\u0130", "\ufeff", "\r\n", "\t", '"', "'", "`",
    "| Password |", "| password | ", "|---|---|", " | ", "Passwort: ", "Kennwort ist ", "PIN ",
    "The password is ", "Password - ", "pass: ", "PW: ", "mysql -u root -p", "curl -u admin:",
    "sshpass -p '", "redis-cli -a ", "--password ", "site,user,password\n", "\u200b", "\u00ad",
    "\uff47\uff48\uff50\uff3f", "\ufb01", "[REDACTED:table-password]",
]  # fmt: skip

_WORD = re.compile(r"[^\W_]+")
_SKIP = {s.lower() for s in DEFAULT_SKIP_SECTIONS}


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def check_frontmatter(data: bytes) -> None:
    """Only FrontmatterError may escape."""
    with contextlib.suppress(FrontmatterError):
        parse_frontmatter(_text(data))


def check_chunker(data: bytes) -> None:
    """No exception; no empty chunk; no word of the body lost unless its section was skipped."""
    text = _text(data)
    note = chunk_note(text, file_stem="fuzz")
    for chunk in note.chunks:
        if not chunk.text.strip():
            raise AssertionError(f"empty chunk {chunk.seq}")
    if note.skipped_sections or note.warning:
        return  # the word check needs the note's exact body; skipped text is allowed to go
    normalised = re.sub(r"\r\n?", "\n", text.lstrip("\ufeff")).replace("\x00", "")
    try:
        _meta, body = parse_frontmatter(normalised)
    except FrontmatterError:
        return
    found: set[str] = set()
    for chunk in note.chunks:
        found.update(w.lower() for w in _WORD.findall(chunk.text))
        found.update(w.lower() for w in _WORD.findall(chunk.section))
    found.update(w.lower() for w in _WORD.findall(note.title))
    missing = {w.lower() for w in _WORD.findall(body)} - found
    if missing:
        raise AssertionError(f"words lost: {sorted(missing)[:10]}")


def check_scrubber(data: bytes) -> None:
    """Idempotent; find_secrets agrees with scrub's counts; no found value is left anywhere."""
    text = _text(data)
    once = scrub(text)
    twice = scrub(once.text)
    if twice.text != once.text:
        raise AssertionError("scrub is not idempotent")
    if len(find_secrets(text)) != sum(once.counts.values()):
        raise AssertionError("find_secrets and scrub disagree")
    # Scrubbing the result with every value found must change nothing: no occurrence is left.
    if scrub(once.text, known=once.found).text != once.text:
        raise AssertionError("a found value survives elsewhere in the text")


_INDEX: list[noteseek.Index] = []


def _index() -> noteseek.Index:
    if not _INDEX:
        vault = Path(tempfile.mkdtemp(prefix="noteseek-fuzz-"))
        (vault / "a.md").write_text("# Alpha\n\n## Setup\n\nInstall the tokens and rotate keys.\n")
        (vault / "b.md").write_text(
            "# Beta\n\nGerman: Die Häuser und Bäume.\n\n## See also\n\n- x\n"
        )
        idx = noteseek.Index(vault / "fuzz.db")
        idx.update(str(vault))
        _INDEX.append(idx)
    return _INDEX[0]


def check_query(data: bytes) -> None:
    """A query never crashes fts_query or a BM25 search."""
    query = _text(data)
    built = fts_query(query)
    if built is not None and built.count('"') % 2:
        raise AssertionError("unbalanced quotes in the FTS5 expression")
    # A typed error with a message is an answer, not a crash.
    with contextlib.suppress(noteseek.NoteseekError):
        _index().search(query, mode="bm25", limit=5)


def _dict_entry(token: str) -> str:
    """libFuzzer's dictionary syntax: printable ASCII as is, every other byte as \\xNN."""
    return "".join(
        chr(b) if 32 <= b < 127 and b not in (34, 92) else f"\\x{b:02X}"
        for b in token.encode("utf-8")
    )


TARGETS: dict[str, Callable[[bytes], None]] = {
    "frontmatter": check_frontmatter,
    "chunker": check_chunker,
    "scrubber": check_scrubber,
    "query": check_query,
}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--target", choices=sorted(TARGETS), required=True)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--max-len", type=int, default=8192, help="longest input in bytes")
    parser.add_argument("--timeout", type=int, default=10, help="seconds before an input is a hang")
    parser.add_argument("--replay", type=Path, nargs="*", help="run these inputs once and stop")
    parser.add_argument("--work", type=Path, default=CACHE, help="corpus and findings go here")
    parser.add_argument("--smoke", action="store_true", help=argparse.SUPPRESS)
    args, rest = parser.parse_known_args()
    target = TARGETS[args.target]
    if args.replay:
        for path in args.replay:
            started = time.perf_counter()
            target(path.read_bytes())
            print(f"{path}: ok in {time.perf_counter() - started:.2f} s")
        return
    work = args.work / args.target
    corpus = work / "corpus"
    corpus.mkdir(parents=True, exist_ok=True)
    dictionary = work / "tokens.dict"
    dictionary.write_text("".join(f'"{_dict_entry(t)}"\n' for t in DICTIONARY))
    argv = [
        sys.argv[0],
        str(corpus),
        f"-max_total_time={int(args.minutes * 60)}",
        f"-max_len={args.max_len}",
        f"-timeout={args.timeout}",
        f"-dict={dictionary}",
        f"-artifact_prefix={work}/",
        "-print_final_stats=1",
        *rest,
    ]
    print(f"fuzzing {args.target} for {args.minutes:g} min: {' '.join(argv[1:])}", flush=True)
    atheris.Setup(argv, target)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
