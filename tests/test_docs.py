"""The docs say how it works now and point at files that exist.

Every relative link in the README, docs/, bench/README.md, bench/results/*.md and examples/README.md
opens a file of the repository, and a `#fragment` names a heading (or an `id=` anchor) of the file it
points into. The README, docs/ and the package's sources carry no work-log residue: no load averages,
machine paths, issue or session numbers, or dated headings (the CHANGELOG's release headings are its
own, and bench/results/ records the machine a figure came from).
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = sorted((REPO / "docs").glob("*.md"))
LINKED = [
    REPO / "README.md",
    *DOCS,
    REPO / "bench" / "README.md",
    *sorted((REPO / "bench" / "results").glob("*.md")),
    REPO / "examples" / "README.md",
]
PROSE = [REPO / "README.md", *DOCS]
SOURCES = sorted((REPO / "src" / "noteseek").rglob("*.py"))

# [text](target) outside code spans and fenced blocks; images too.
_LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_FENCE = re.compile(r"^(```|~~~)")
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
_ID = re.compile(r"""<a\s+id=["']([^"']+)["']""")


def _prose_lines(text: str, *, blank_code: bool = True) -> list[tuple[int, str]]:
    """The lines outside fenced code, with code spans blanked unless `blank_code` is False."""
    out, fenced = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if _FENCE.match(line.lstrip()):
            fenced = not fenced
            continue
        if not fenced:
            out.append((number, _CODE_SPAN.sub("``", line) if blank_code else line))
    return out


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, markup and punctuation dropped, spaces to '-'."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = text.replace("`", "").lower()
    kept = [ch for ch in text if ch in " -_" or unicodedata.category(ch)[0] in "LN"]
    return "".join(kept).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = path.read_text("utf-8")
    found: set[str] = set(_ID.findall(text))
    seen: dict[str, int] = {}
    for _, line in _prose_lines(text, blank_code=False):
        match = _HEADING.match(line)
        if not match:
            continue
        slug = _slug(match.group(1))
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def _broken_links(path: Path, root: Path = REPO) -> list[str]:
    problems = []
    for number, line in _prose_lines(path.read_text("utf-8")):
        for target in _LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, mailto:, …
                continue
            file_part, _, fragment = target.partition("#")
            dest = (path.parent / file_part).resolve() if file_part else path
            where = f"{path.relative_to(root)}:{number}: {target}"
            if not dest.exists():
                problems.append(f"{where} (no such file)")
            elif fragment and dest.suffix == ".md" and fragment not in _anchors(dest):
                problems.append(f"{where} (no such heading)")
    return problems


@pytest.mark.parametrize("path", LINKED, ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_resolve(path: Path) -> None:
    assert _broken_links(path) == []


def test_the_link_check_sees_a_missing_file_and_heading(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# Title\n\n## Some `code` part\n", "utf-8")
    doc = tmp_path / "b.md"
    doc.write_text(
        "[ok](a.md#some-code-part) [gone](missing.md) [no heading](a.md#nope)\n"
        "`[in code](missing.md)`\n```\n[fenced](missing.md)\n```\n",
        "utf-8",
    )
    problems = _broken_links(doc, root=tmp_path)
    assert problems == ["b.md:1: missing.md (no such file)", "b.md:1: a.md#nope (no such heading)"]


# What a work log leaves behind. Each pattern names what it catches.
RESIDUE = {
    "load average": re.compile(r"\bload (?:average|avg)\b|\bload [0-9~≈]", re.IGNORECASE),
    "machine path": re.compile(r"(?<![\w.~$-])/(?:work|home/(?!me\b)\w+|root|Users/\w+)/|/tmp/ns"),
    "issue number": re.compile(r"\bissue\s*#?\d+|\bsession\s+\d+\b", re.IGNORECASE),
    "dated heading": re.compile(r"^#{1,6} .*\b20\d\d-\d\d-\d\d\b"),
}


def _residue(path: Path) -> list[str]:
    text = path.read_text("utf-8")
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        for name, pattern in RESIDUE.items():
            if name == "dated heading" and path.suffix != ".md":
                continue  # a Python comment starts with '#' too
            if pattern.search(line):
                found.append(f"{path.relative_to(REPO)}:{number}: {name}: {line.strip()[:100]}")
    return found


def test_no_work_log_residue_in_readme_docs_and_sources() -> None:
    found = [hit for path in PROSE + SOURCES for hit in _residue(path)]
    assert found == []


@pytest.mark.parametrize(
    ("line", "name"),
    [
        ("p50 334 ms (load 2-5 on 2 cores)", "load average"),
        ("load average 5-11 during the run", "load average"),
        ("see /work/shared/data", "machine path"),
        ("kept in /tmp/ns-old/src", "machine path"),
        ("as asked in issue 12", "issue number"),
        ("found in session 3", "issue number"),
        ("## Results 2026-12-01", "dated heading"),
    ],
)
def test_each_residue_pattern_catches_its_kind(line: str, name: str) -> None:
    assert RESIDUE[name].search(line)


@pytest.mark.parametrize(
    "line",
    [
        "the load of a page",
        "`~/notes`, `/home/me/notes` in an example config",
        "$XDG_RUNTIME_DIR/noteseek",
        "the session starts before a prompt",
        "dated 2026-11-30 in the frontmatter",
    ],
)
def test_ordinary_text_is_not_residue(line: str) -> None:
    assert not any(pattern.search(line) for pattern in RESIDUE.values())
