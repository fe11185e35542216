"""The agent tools through the real MCP server over stdio, driven by the SDK's own client, on a
copy of the sample vault: links and related, writes only with --allow-writes (scrubbed, inside
the vault, searchable at once, undone by `noteseek intake --undo`), and search / get_note pages
that continue by cursor without repeats and refuse a cursor from before an index update."""

from __future__ import annotations

import json
import random
import shlex
import shutil
import string
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from noteseek import Index

from .conftest import SAMPLE_VAULT

mcp = pytest.importorskip("mcp")
from mcp import Client, StdioServerParameters  # noqa: E402


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content)


def _token() -> str:
    # A fake GitHub token drawn at run time (no literal a scanner would flag in this file).
    rng = random.Random()
    return (
        "gh" + "p_" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(36))
    )


@pytest.fixture
def vault_db(tmp_path: Path) -> tuple[Path, Path]:
    vault = tmp_path / "vault"
    shutil.copytree(SAMPLE_VAULT, vault)
    db = tmp_path / "sample.db"
    with Index(db) as idx:
        idx.update(vault)
    return vault, db


def client(db: Path, vault: Path, *extra: str) -> Client:
    args = ["-m", "noteseek", "mcp", "--db", str(db), "--vault", str(vault), "--no-watch", *extra]
    params = StdioServerParameters(command=sys.executable, args=args, cwd=str(vault.parent))
    return Client(params, mode="legacy")


def run(c: Client, body: Any) -> Any:
    async def main() -> Any:
        async with c:
            return await body(c)

    return anyio.run(main)


def test_links_and_related_are_listed_and_writes_are_not_without_the_flag(
    vault_db: tuple[Path, Path],
) -> None:
    vault, db = vault_db
    before = sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*"))

    async def body(c: Client) -> dict[str, Any]:
        names = {t.name for t in (await c.list_tools()).tools}
        return {
            "names": names,
            "links": await c.call_tool("links", {"path": "git-rebase-recipes"}),
            "related": await c.call_tool("related", {"path": "howto/git-rebase-recipes.md"}),
            "save": await c.call_tool("save_note", {"title": "x", "text": "y"}),
            "append": await c.call_tool(
                "append_to_note", {"path": "Home.md", "text": "written anyway"}
            ),
        }

    out = run(client(db, vault), body)
    assert {"links", "related"} <= out["names"]
    assert not {"save_note", "append_to_note"} & out["names"]
    links = text_of(out["links"])
    assert not out["links"].is_error, links
    assert links.startswith("howto/git-rebase-recipes.md: ")
    assert "journal/2024-01-08.md:11 — " in links  # the linking line, by path and line
    related = text_of(out["related"])
    assert not out["related"].is_error, related
    assert "howto/git-rebase-recipes.md ›" not in related  # never the note itself
    assert related.count(" › ") >= 3
    assert out["save"].is_error and out["append"].is_error
    assert sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*")) == before
    assert "written anyway" not in (vault / "Home.md").read_text()


def test_writes_scrub_stay_inside_the_vault_are_searchable_and_undo(
    vault_db: tuple[Path, Path], tmp_path: Path
) -> None:
    vault, db = vault_db
    secret = _token()
    outside = tmp_path / "outside.md"
    outside.write_text("# Outside\n\nuntouched\n")
    (vault / ".obsidian").mkdir(exist_ok=True)
    (vault / ".obsidian" / "notes.md").write_text("# hidden\n")
    (vault / "howto" / "link.md").symlink_to(outside)
    text = (
        "Rotating the quokka relay keys: revoke the old deploy key first, then rotate the "
        f"quokka relay credentials with the CLI. token = {secret}\n\nKeep the quokka runbook short."
    )

    async def body(c: Client) -> dict[str, Any]:
        names = {t.name for t in (await c.list_tools()).tools}
        started = time.perf_counter()
        saved = await c.call_tool(
            "save_note",
            {"title": "Quokka relay key rotation", "text": text, "tags": ["security"]},
        )
        found = await c.call_tool("search", {"query": "quokka relay key rotation", "limit": 3})
        search_s = time.perf_counter() - started
        refused = {
            p: await c.call_tool("append_to_note", {"path": p, "text": "should not land"})
            for p in (
                "../outside.md",
                str(outside),
                "howto/link.md",
                ".obsidian/notes.md",
                "attachments/rrf-diagram.png",
                "howto/nope.md",
            )
        }
        appended = await c.call_tool(
            "append_to_note",
            {
                "path": "howto/git-rebase-recipes.md",
                "text": f"Wombat trick: rebase with --update-refs. api_key = {secret}",
                "heading": "Wombat tricks",
            },
        )
        again = await c.call_tool("search", {"query": "wombat trick update-refs", "limit": 3})
        # A stub intake would set aside (see the dry run below): the user asked to keep it.
        stub = await c.call_tool("save_note", {"title": "Later", "text": "TODO zebrafinch"})
        stub_found = await c.call_tool("search", {"query": "zebrafinch", "limit": 3})
        return {
            "stub": stub,
            "stub_found": stub_found,
            "names": names,
            "saved": saved,
            "found": found,
            "search_s": search_s,
            "refused": refused,
            "appended": appended,
            "again": again,
        }

    out = run(client(db, vault, "--allow-writes"), body)
    assert {"save_note", "append_to_note"} <= out["names"]
    saved = text_of(out["saved"])
    assert not out["saved"].is_error, saved
    path = saved.split("Saved ", 1)[1].split(":", 1)[0]
    assert (vault / path).is_file()
    assert "Indexed: search finds it now." in saved
    # The search right after the save (no waiting) finds it: it was indexed before the reply.
    assert path in text_of(out["found"]), text_of(out["found"])
    print(f"save_note + search: {out['search_s']:.2f} s")  # shown with -s; not asserted
    # The credential never reached the disk: not in the vault, the log, the staging folder.
    for file in vault.rglob("*"):
        if file.is_file() and not file.is_symlink():
            assert secret.encode() not in file.read_bytes(), file
    assert "[REDACTED:" in (vault / path).read_text()
    for p, result in out["refused"].items():
        assert result.is_error, p
    assert outside.read_text() == "# Outside\n\nuntouched\n"
    assert "should not land" not in (vault / ".obsidian" / "notes.md").read_text()
    appended = text_of(out["appended"])
    assert not out["appended"].is_error, appended
    note = (vault / "howto" / "git-rebase-recipes.md").read_text()
    original = (SAMPLE_VAULT / "howto" / "git-rebase-recipes.md").read_text()
    assert note.startswith(original)  # appended: nothing before it changed
    added = note[len(original) :]
    assert added.startswith("\n## Wombat tricks\n\nWombat trick: rebase with --update-refs. ")
    assert secret not in added and "[REDACTED:" in added
    assert "howto/git-rebase-recipes.md" in text_of(out["again"])
    stub = text_of(out["stub"])
    assert not out["stub"].is_error, stub
    stub_path = stub.split("Saved ", 1)[1].split(":", 1)[0]
    assert stub_path.startswith("_intake/review/") and "queued for review" in stub, stub
    assert "Indexed: search finds it now." in stub
    assert stub_path in text_of(out["stub_found"]), text_of(out["stub_found"])
    # The same note in an inbox: intake's own routing would set it aside.
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    (inbox / "Later.md").write_bytes((vault / stub_path).read_bytes())
    dry = subprocess.run(
        [sys.executable, "-m", "noteseek", "intake", str(inbox), "--vault", str(vault),
         "--db", str(db), "--dry-run", "--json"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert dry.returncode == 0, dry.stderr
    assert json.loads(dry.stdout)["items"][0]["decision"] == "set_aside"
    # Both writes are undone by their run ids, through the CLI.
    for reply in (saved, appended, stub):
        run_id = reply.rsplit("(run id ", 1)[1].split(")", 1)[0]
        # The reply's undo line names this vault, not a placeholder (it can be pasted and run).
        assert f"noteseek intake --undo {run_id} --vault {shlex.quote(str(vault))}" in reply
        done = subprocess.run(
            [sys.executable, "-m", "noteseek", "intake", "--undo", run_id, "--vault", str(vault),
             "--db", str(db)],
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
    assert not (vault / path).exists() and not (vault / stub_path).exists()
    assert (vault / "howto" / "git-rebase-recipes.md").read_text() == (
        SAMPLE_VAULT / "howto" / "git-rebase-recipes.md"
    ).read_text()
    with Index(db) as idx:
        assert path not in idx.note_paths()


def test_search_and_get_note_continue_by_cursor_without_repeats(
    vault_db: tuple[Path, Path],
) -> None:
    vault, db = vault_db
    args = {"query": "database migration", "limit": 10, "max_tokens": 300}

    async def body(c: Client) -> dict[str, Any]:
        tools = {t.name: t for t in (await c.list_tools()).tools}
        pages = [await c.call_tool("search", args)]
        while pages[-1].structured_content and pages[-1].structured_content["cursor"]:
            cursor = pages[-1].structured_content["cursor"]
            pages.append(await c.call_tool("search", {**args, "cursor": cursor}))
            assert len(pages) < 20
        other = await c.call_tool("search", {**args, "query": "other", "cursor": cursor})
        note = {"path": "projects/hybrid-search-notes.md", "max_tokens": 200}
        parts = [await c.call_tool("get_note", note)]
        while parts[-1].structured_content["cursor"]:
            parts.append(
                await c.call_tool(
                    "get_note", {**note, "cursor": parts[-1].structured_content["cursor"]}
                )
            )
            assert len(parts) < 200
        first = await c.call_tool("search", args)
        # An index update between two pages: the cursor no longer continues.
        (vault / "howto" / "new-note.md").write_text("# New\n\ndatabase migration steps\n")
        with Index(db) as idx:
            idx.update(vault)
        stale = await c.call_tool("search", {**args, "cursor": first.structured_content["cursor"]})
        return {"tools": tools, "pages": pages, "other": other, "parts": parts, "stale": stale}

    out = run(client(db, vault), body)
    assert out["tools"]["search"].output_schema is not None
    assert {"hits", "hidden", "cursor"} <= set(out["tools"]["search"].output_schema["properties"])
    assert out["tools"]["get_note"].output_schema is not None
    pages = out["pages"]
    assert len(pages) >= 2
    seen: list[tuple[str, str]] = []
    for page in pages:
        assert not page.is_error, text_of(page)
        hits = page.structured_content["hits"]
        assert hits and page.structured_content["hidden"] == 0
        seen.extend((h["path"], h["section"]) for h in hits)
        assert sum(len(h["text"]) for h in hits) <= 300 * 4
    assert len(seen) == len(set(seen))  # no section twice across the pages
    assert len({p for p, _ in seen}) == len(seen)  # one hit per note, as search ranks them
    assert out["other"].is_error and "other arguments" in text_of(out["other"])
    whole = "".join(p.structured_content["text"] for p in out["parts"])
    assert len(out["parts"]) >= 2
    assert whole == (vault / "projects" / "hybrid-search-notes.md").read_text()  # nothing lost
    assert out["stale"].is_error and "index changed" in text_of(out["stale"])
