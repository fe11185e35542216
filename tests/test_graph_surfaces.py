"""`noteseek links` / `noteseek related` as processes, and `/api/links`, `/api/related` over HTTP
from a real server, on a copy of the sample vault (bundled model): the same JSON everywhere."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from .conftest import SAMPLE_VAULT
from .web_support import LOOPBACK_HOSTS, build_index, make_pool, serve


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("graph")
    vault = root / "vault"
    shutil.copytree(SAMPLE_VAULT, vault)
    return vault, build_index(vault, root / "sample.db")


def noteseek(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "noteseek", *args], capture_output=True, text=True, timeout=300
    )


def test_links_and_related_commands(sample: tuple[Path, Path]) -> None:
    _vault, db = sample
    done = noteseek("links", "howto/git-rebase-recipes.md", "--db", str(db), "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["note"] == "howto/git-rebase-recipes.md"
    journal = [b for b in doc["backlinks"] if b["path"] == "journal/2024-01-08.md"]
    assert [b["line"] for b in journal] == [11]
    assert "Notes in [[git-rebase-recipes]]." in journal[0]["text"]
    assert doc["backlinks"] == sorted(doc["backlinks"], key=lambda b: (b["path"], b["line"]))
    assert {"target": "ssh-config-tips", "path": "howto/ssh-config-tips.md"} in doc["outlinks"]
    plain = noteseek("links", "git-rebase-recipes", "--db", str(db))  # by name
    assert plain.returncode == 0 and "journal/2024-01-08.md:11" in plain.stdout
    related = noteseek(
        "related", "howto/git-rebase-recipes.md", "--db", str(db), "-n", "5", "--json"
    )
    assert related.returncode == 0, related.stderr
    hits = json.loads(related.stdout)["hits"]
    paths = [h["path"] for h in hits]
    assert len(paths) == 5 and "howto/git-rebase-recipes.md" not in paths
    assert len(set(paths)) == 5
    assert set(hits[0]) >= {"path", "section", "text", "score", "cosine"}
    missing = noteseek("links", "no/such-note.md", "--db", str(db))
    assert missing.returncode == 1
    assert "not an indexed note" in missing.stderr and "Traceback" not in missing.stderr


def test_links_and_related_over_http(sample: tuple[Path, Path]) -> None:
    from noteseek.web.app import create_app

    _vault, db = sample
    cli = json.loads(
        noteseek("links", "howto/git-rebase-recipes.md", "--db", str(db), "--json").stdout
    )
    pool = make_pool(db)
    try:
        with serve(create_app(pool, hosts=LOOPBACK_HOSTS)) as base:
            links = httpx.get(f"{base}/api/links/howto/git-rebase-recipes.md", timeout=30)
            related = httpx.get(
                f"{base}/api/related/howto/git-rebase-recipes.md?limit=4", timeout=30
            )
            unknown = httpx.get(f"{base}/api/links/../etc/passwd", timeout=30)
            nothing = httpx.get(f"{base}/api/related/nope.md", timeout=30)
            schema = httpx.get(f"{base}/openapi.json", timeout=30).json()
    finally:
        pool.close()
    assert links.status_code == 200 and links.json() == cli
    assert related.status_code == 200
    paths = [h["path"] for h in related.json()["hits"]]
    assert len(paths) == 4 and "howto/git-rebase-recipes.md" not in paths
    assert unknown.status_code == 404 and "error" in unknown.json()
    assert nothing.status_code == 404 and "not an indexed note" in nothing.json()["error"]
    assert "/api/links/{path}" in schema["paths"] and "/api/related/{path}" in schema["paths"]
