"""Backlinks of the most-linked notes of a real vault against an independent reference parse.

Usage::

    nice -n 10 python bench/links_hub.py --vault VAULT --db INDEX.db [--top 15] [--json OUT]

Builds the index when `--db` does not exist yet. The reference shares no code with noteseek's
link parser (`noteseek.core.links`): it strips code fences, inline code and `%% comments %%` from
each file's raw text with whole-text regular expressions, takes `[[…]]` / `![[…]]` and Markdown
`[…](…)` targets, and resolves them with its own reading of Obsidian's rule (an exact path from
the root, else the file of that name whose path ends with the link's folders: same folder as the
source first, then the fewest folders, then by path). For the `--top` notes with the most
reference backlinks it compares the sets of linking notes (and of linking (note, line) pairs)
with `Index.links(note).backlinks`: recall and precision per note and pooled.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import noteseek

_FENCED = re.compile(r"^[ ]{0,3}(```|~~~).*?^[ ]{0,3}\1[^\n]*$", re.S | re.M)
_CODE = re.compile(r"`[^`\n]+`")
_COMMENT = re.compile(r"%%.*?%%", re.S)
_WIKI = re.compile(r"!?\[\[([^\]\[\n]+)\]\]")
_MD = re.compile(r"!?\[[^\]\n]*\]\(([^)\n]+)\)")


def _blank(m: re.Match[str]) -> str:
    # Keep the newlines so line numbers stay true.
    return re.sub(r"[^\n]", " ", m.group(0))


def reference_links(text: str) -> list[tuple[int, str]]:
    """(line, target path) of every link in a note's raw text."""
    text = _FENCED.sub(_blank, text)
    text = _COMMENT.sub(_blank, text)
    text = _CODE.sub(_blank, text)
    out: list[tuple[int, str]] = []
    for number, line in enumerate(text.split("\n"), start=1):
        for m in _WIKI.finditer(line):
            target = m.group(1).split("|")[0].rstrip("\\").split("#")[0].strip()
            if target:
                out.append((number, target))
        for m in _MD.finditer(line):
            raw = m.group(1).strip().split(" ")[0].strip("<>")
            if "://" in raw or raw.startswith(("mailto:", "#", "obsidian:")):
                continue
            target = unquote(raw.split("#")[0]).strip()
            if target:
                out.append((number, target))
    return out


class Reference:
    """Every note of the vault by lower-case name, and the resolution rule."""

    def __init__(self, paths: list[str]) -> None:
        self.paths = paths
        self.lower = {p.lower(): p for p in paths}
        self.by_name: dict[str, list[str]] = defaultdict(list)
        for p in paths:
            name = p.rsplit("/", 1)[-1]
            name = name[:-3] if name.lower().endswith(".md") else name
            self.by_name[name.lower()].append(p)

    def resolve(self, target: str, source: str) -> str | None:
        t = target.replace("\\", "/").lstrip("/")
        low = t.lower()
        if low.startswith(("./", "../")):
            parts = source.split("/")[:-1]
            for piece in low.split("/"):
                if piece == "..":
                    if not parts:
                        return None
                    parts.pop()
                elif piece not in ("", "."):
                    parts.append(piece)
            low = "/".join(parts).lower()
            return self.lower.get(low + ".md") or self.lower.get(low)
        if low + ".md" in self.lower or low in self.lower:
            return self.lower.get(low + ".md") or self.lower.get(low)
        name = low.rsplit("/", 1)[-1]
        name = name[:-3] if name.endswith(".md") else name
        found = [
            p
            for p in self.by_name.get(name, [])
            if p.lower().endswith("/" + low) or p.lower().endswith("/" + low + ".md")
        ]
        if not found:
            return None
        here = source.rsplit("/", 1)[0].lower() if "/" in source else ""

        def rank(p: str) -> tuple[int, int, str]:
            folder = p.rsplit("/", 1)[0].lower() if "/" in p else ""
            return (0 if folder == here else 1, p.count("/"), p)

        return min(found, key=rank)


def _ratio(a: int, b: int) -> float:
    return a / b if b else 1.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vault", type=Path, required=True)
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args()
    vault: Path = args.vault
    with noteseek.Index(args.db) as idx:
        if idx.status().files == 0:
            started = time.perf_counter()
            idx.update(vault)
            print(f"indexed {vault} in {time.perf_counter() - started:.1f} s", file=sys.stderr)
        indexed = set(idx.note_paths())
        files = sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*.md"))
        files = [f for f in files if f in indexed]
        ref = Reference(files)
        backlinks: dict[str, set[tuple[str, int]]] = defaultdict(set)
        total = 0
        for source in files:
            text = (vault / source).read_text(encoding="utf-8", errors="replace")
            for line, target in reference_links(text):
                total += 1
                dest = ref.resolve(target, source)
                if dest is not None and dest != source:
                    backlinks[dest].add((source, line))
        top = sorted(backlinks, key=lambda p: (-len({s for s, _ in backlinks[p]}), p))[: args.top]
        rows: list[dict[str, Any]] = []
        hit_n = hit_l = got_n = got_l = want_n = want_l = 0
        for path in top:
            started = time.perf_counter()
            got = idx.links(path).backlinks
            ms = (time.perf_counter() - started) * 1000
            want_pairs = backlinks[path]
            got_pairs = {(b.path, b.line) for b in got}
            want_notes = {s for s, _ in want_pairs}
            got_notes = {b.path for b in got}
            rows.append(
                {
                    "note": path,
                    "reference_notes": len(want_notes),
                    "noteseek_notes": len(got_notes),
                    "recall_notes": round(_ratio(len(want_notes & got_notes), len(want_notes)), 4),
                    "precision_notes": round(
                        _ratio(len(want_notes & got_notes), len(got_notes)), 4
                    ),
                    "recall_lines": round(_ratio(len(want_pairs & got_pairs), len(want_pairs)), 4),
                    "precision_lines": round(
                        _ratio(len(want_pairs & got_pairs), len(got_pairs)), 4
                    ),
                    "ms": round(ms, 1),
                    "missed": sorted(want_notes - got_notes)[:5],
                    "extra": sorted(got_notes - want_notes)[:5],
                }
            )
            hit_n += len(want_notes & got_notes)
            got_n += len(got_notes)
            want_n += len(want_notes)
            hit_l += len(want_pairs & got_pairs)
            got_l += len(got_pairs)
            want_l += len(want_pairs)
    summary = {
        "notes_in_vault": len(files),
        "reference_links": total,
        "top": args.top,
        "pooled": {
            "recall_notes": round(_ratio(hit_n, want_n), 4),
            "precision_notes": round(_ratio(hit_n, got_n), 4),
            "recall_lines": round(_ratio(hit_l, want_l), 4),
            "precision_lines": round(_ratio(hit_l, got_l), 4),
        },
        "min_recall_notes": min(r["recall_notes"] for r in rows),
        "min_precision_notes": min(r["precision_notes"] for r in rows),
        "notes": rows,
    }
    for r in rows:
        print(
            f"{r['reference_notes']:>5} ref {r['noteseek_notes']:>5} got  "
            f"R {r['recall_notes']:.3f} P {r['precision_notes']:.3f}  "
            f"lines R {r['recall_lines']:.3f} P {r['precision_lines']:.3f}  "
            f"{r['ms']:>6.1f} ms  {r['note']}"
        )
    print(json.dumps(summary["pooled"]), f"min R {summary['min_recall_notes']}",
          f"min P {summary['min_precision_notes']}")  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
