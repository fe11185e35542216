"""The two new-user queries on the real Obsidian hub vault: what search and the prompt hook give.

Usage (after ``bench/quality.py`` built ``bench/.cache/obsidian-hub.db``)::

    python bench/new_user_examples.py [--db bench/.cache/obsidian-hub.db] [--top 5]
    python bench/new_user_examples.py --smoke      # a three-note vault built here, in seconds

Prints, for each query, the first notes of the hybrid search as shipped (with the learned rerank)
and with ``SearchSettings(rerank=False)``, each search's time, and what ``prompt_context`` (the
prompt hook's block) says.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import noteseek
from datasets import CACHE_DIR
from noteseek import SearchSettings, prompt_context

QUERIES = ("what is the difference between tags and links", "tags versus links")


def _smoke_db(folder: Path) -> Path:
    vault = folder / "vault"
    vault.mkdir()
    (vault / "tags.md").write_text("# Tags\nTags group notes by topic, unlike links.", encoding="utf-8")
    (vault / "links.md").write_text("# Links\nLinks connect one note to another.", encoding="utf-8")
    (vault / "daily.md").write_text("# Daily notes\nOne note per day.", encoding="utf-8")
    with noteseek.Index(folder / "smoke.db") as idx:
        idx.update(vault)
    return folder / "smoke.db"


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--db", type=Path, default=CACHE_DIR / "obsidian-hub.db")
    parser.add_argument("--top", type=int, default=5)
    parser.add_argument("--smoke", action="store_true", help="a three-note vault, in seconds")
    args = parser.parse_args()
    tmp = tempfile.TemporaryDirectory()
    db = _smoke_db(Path(tmp.name)) if args.smoke else args.db
    with (
        noteseek.Index(db, create=False) as shipped,
        noteseek.Index(db, create=False, settings=SearchSettings(rerank=False)) as fused,
    ):
        for text in QUERIES:
            print(f"\n### {text!r}\n")
            for label, idx in (("shipped (hybrid + rerank)", shipped), ("without rerank", fused)):
                idx.search(text)  # warm: the first search of an index loads the model
                started = time.perf_counter()
                hits = idx.search(text, limit=args.top)
                spent = time.perf_counter() - started
                print(f"{label}, {1e3 * spent:.1f} ms:")
                for i, hit in enumerate(hits, 1):
                    print(f"  {i}. {hit.path}")
            block = prompt_context(shipped, text, max_tokens=500)
            said = f"block of {len(block.text)} chars" if block.text else f"nothing ({block.reason})"
            print(f"prompt hook: {said}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
