"""The agent tools on a copy of a real vault, through the official MCP client over stdio.

    nice -n 10 python bench/mcp_agents_vault.py --data-dir ../shared/data [--corpus obsidian-hub]
        [--json bench/results/mcp_agents_hub.json]

Copies the unpacked vault (and, when bench/quality.py has built it, its cached index, so the
copy's first update only compares mtimes) into a temporary folder, then runs `noteseek mcp`
twice, as a client would start it:

1. without `--allow-writes`: `links` and `related` are listed and answer (the most linked note's
   backlinks, related gives at least 3 other notes, never the note itself); `save_note` and
   `append_to_note` are not listed, a call by name is refused, and no file of the vault changed;
2. with it: `save_note` with a planted credential (a fake GitHub token drawn at run time), then
   `search` for the note's words until it is the first hit (the seconds from the save call to
   that answer); the credential must be in no file of the vault and in no file of the index
   (database, WAL); `append_to_note("../outside.md")` is refused and the file outside is unchanged;
   an append to a real note lands at its end; `search` (for `--page-query`) with `max_tokens`
   returns a `cursor` in `structuredContent`, and the page it opens shares no (path, section)
   with the first.

Each check is printed with its figure and PASS/FAIL; exit status 1 when one fails.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import string
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

import noteseek
from datasets import CACHE_DIR, CORPORA, DATA_DIR, ensure_corpus


def _token() -> str:
    rng = random.Random()
    return (
        "gh" + "p_" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(36))
    )


def _text(result: Any) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


def _files(root: Path) -> dict[str, int]:
    return {
        p.relative_to(root).as_posix(): p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()
    }


def _client(db: Path, vault: Path, *extra: str) -> Client:
    args = ["-m", "noteseek", "mcp", "--db", str(db), "--vault", str(vault), "--no-watch", *extra]
    return Client(
        StdioServerParameters(command=sys.executable, args=args, cwd=str(vault.parent)),
        mode="legacy",
    )


def _run(client: Client, body: Any) -> Any:
    async def main() -> Any:
        async with client:
            return await body(client)

    return anyio.run(main)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", type=Path, default=DATA_DIR)
    ap.add_argument("--cache-dir", type=Path, default=CACHE_DIR)
    ap.add_argument("--corpus", default="obsidian-hub", choices=["obsidian-hub", "obsidian-help"])
    ap.add_argument("--json", type=Path)
    ap.add_argument("--page-query", default="plugin settings", help="the paged search's query")
    args = ap.parse_args()
    source = ensure_corpus(CORPORA[args.corpus], args.data_dir, args.cache_dir)
    source = source / args.corpus if (source / args.corpus).is_dir() else source
    checks: dict[str, dict[str, Any]] = {}

    def check(name: str, ok: bool, **figures: Any) -> None:
        checks[name] = {"pass": bool(ok), **figures}
        shown = ", ".join(f"{k}={v}" for k, v in figures.items())
        print(f"{'PASS' if ok else 'FAIL'}  {name}" + (f"  ({shown})" if shown else ""), flush=True)

    with tempfile.TemporaryDirectory(prefix="noteseek-mcp-") as tmp:
        work = Path(tmp)
        vault = work / "vault"
        shutil.copytree(source, vault, symlinks=True)
        db = work / "index.db"
        cached = args.cache_dir / f"{args.corpus}.db"
        if cached.exists():  # nothing writes it now: the file and its WAL are one state
            for suffix in ("", "-wal"):
                if Path(f"{cached}{suffix}").exists():
                    shutil.copy2(f"{cached}{suffix}", f"{db}{suffix}")
        started = time.perf_counter()
        with noteseek.Index(db) as idx:
            idx.update(vault)
            note = max(idx.note_paths(), key=lambda p: len(idx.links(p).backlinks))
            expected_backlinks = len(idx.links(note).backlinks)
        print(
            f"vault {args.corpus}: index ready in {time.perf_counter() - started:.1f} s; most linked: {note}"
        )
        outside = work / "outside.md"
        outside.write_text("# Outside\n\nuntouched\n", encoding="utf-8")
        before = _files(vault)

        async def read_only(c: Client) -> dict[str, Any]:
            names = {t.name for t in (await c.list_tools()).tools}
            return {
                "names": names,
                "links": await c.call_tool("links", {"path": note}),
                "related": await c.call_tool("related", {"path": note, "limit": 10}),
                "save": await c.call_tool("save_note", {"title": "x", "text": "y"}),
                "append": await c.call_tool(
                    "append_to_note", {"path": note, "text": "written anyway"}
                ),
            }

        out = _run(_client(db, vault), read_only)
        check("links and related listed", {"links", "related"} <= out["names"])
        links = _text(out["links"])
        shown = links.count(" — ")
        check(
            "links answers with the backlinks",
            not out["links"].is_error and shown > 0,
            backlinks_in_index=expected_backlinks,
            context_lines_shown=shown,
        )
        related = _text(out["related"])
        listed = related.count(" › ")
        check(
            "related gives >= 3 other notes, never the note",
            not out["related"].is_error and listed >= 3 and f"{note} ›" not in related,
            notes_listed=listed,
        )
        check(
            "no write tool listed without --allow-writes",
            not {"save_note", "append_to_note"} & out["names"],
        )
        check("a write call by name is refused", out["save"].is_error and out["append"].is_error)
        check("no file of the vault changed", _files(vault) == before)

        secret = _token()
        word = "quokkafjord"
        target = next(p for p in sorted(before) if p.endswith(".md") and not p.startswith("."))

        async def save_and_find(c: Client, word: str) -> tuple[Any, str, float, float | None]:
            started = time.perf_counter()
            text = f"How we rotate the {word} relay keys: revoke the old deploy key first. token = {secret}\n"
            saved = await c.call_tool(
                "save_note", {"title": f"{word} relay key rotation", "text": text}
            )
            saved_s = time.perf_counter() - started
            path = _text(saved).split("Saved ", 1)[-1].split(":", 1)[0]
            found_s = None
            while time.perf_counter() - started < 20:
                hits = await c.call_tool("search", {"query": f"{word} relay keys", "limit": 3})
                first = (hits.structured_content or {}).get("hits") or [{}]
                if first[0].get("path") == path:
                    found_s = time.perf_counter() - started
                    break
                await anyio.sleep(0.1)
            return saved, path, saved_s, found_s

        async def writes(c: Client) -> dict[str, Any]:
            # The first save right after the session starts (the server's warm-up of the writing
            # index and the domain model still under way), the second once it is warm.
            saved, path, saved_s, found_s = await save_and_find(c, word)
            _, path2, saved2_s, found2_s = await save_and_find(c, word + "x")
            refused = await c.call_tool(
                "append_to_note", {"path": "../outside.md", "text": "should not land"}
            )
            appended = await c.call_tool(
                "append_to_note", {"path": target, "text": f"Appended {word} line."}
            )
            page_args = {"query": args.page_query, "limit": 10, "max_tokens": 600}
            first_page = await c.call_tool("search", page_args)
            cursor = (first_page.structured_content or {}).get("cursor")
            second = (
                await c.call_tool("search", {**page_args, "cursor": cursor}) if cursor else None
            )
            return {
                "saved": saved,
                "path": path,
                "found_s": found_s,
                "saved_s": saved_s,
                "path2": path2,
                "saved2_s": saved2_s,
                "found2_s": found2_s,
                "refused": refused,
                "appended": appended,
                "first": first_page,
                "second": second,
            }

        target_before = (vault / target).read_text(encoding="utf-8")
        w = _run(_client(db, vault, "--allow-writes"), writes)
        check(
            "save_note saved the note",
            not w["saved"].is_error and (vault / w["path"]).is_file(),
            path=w["path"],
        )
        for label, found, took in (
            ("first save, right after start", w["found_s"], w["saved_s"]),
            ("second save, warm", w["found2_s"], w["saved2_s"]),
        ):
            check(
                f"search finds it within 3 s of the save call ({label})",
                found is not None and found <= 3,
                save_call_s=round(took, 2),
                found_s=None if found is None else round(found, 2),
            )
        leaked = [
            p.relative_to(work).as_posix()
            for p in work.rglob("*")
            if p.is_file() and secret.encode() in p.read_bytes()
        ]
        check(
            "the credential is in no file of the vault or the index",
            not leaked,
            files_with_it=leaked,
            redacted_in_note="[REDACTED:" in (vault / w["path"]).read_text(encoding="utf-8"),
        )
        check(
            "append_to_note('../outside.md') refused",
            w["refused"].is_error
            and outside.read_text(encoding="utf-8") == "# Outside\n\nuntouched\n",
            reply=_text(w["refused"])[:120],
        )
        after = (vault / target).read_text(encoding="utf-8")
        check(
            "an inside append lands at the end",
            not w["appended"].is_error
            and after.startswith(target_before)
            and f"Appended {word} line." in after[len(target_before) :],
            note=target,
        )
        first = w["first"].structured_content or {}
        second = (w["second"].structured_content or {}) if w["second"] else {}
        a = {(h["path"], h["section"]) for h in first.get("hits", [])}
        b = {(h["path"], h["section"]) for h in second.get("hits", [])}
        check(
            "search with max_tokens returns a cursor in structuredContent",
            bool(first.get("cursor")),
            first_page_hits=len(a),
        )
        check(
            "the next page shares no section with the first",
            bool(b) and not (a & b),
            second_page_hits=len(b),
        )
    failed = [k for k, v in checks.items() if not v["pass"]]
    if args.json:
        args.json.write_text(
            json.dumps({"corpus": args.corpus, "checks": checks, "failed": failed}, indent=1) + "\n"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
