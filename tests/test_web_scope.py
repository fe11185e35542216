"""Scope is per request: 240 concurrent requests with different folder/tag/file scopes, fired at a
real uvicorn server from 8 threads, each checked against its own scope and against the same
request answered alone. Files are the library's filter (`SearchRequest.files`), applied before
the candidate lists are cut, so every note in scope is found (up to the limit)."""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("fastapi", reason="the web tests need the web extra: pip install -e '.[web]'")

from noteseek.web.app import create_app

from .web_support import build_index, make_pool, serve

FOLDERS = [f"f{i}" for i in range(6)]
TAGS = ["red", "green", "blue"]
WORDS = ["lantern", "harbour", "copper", "meadow", "signal", "orchard"]
REQUESTS = 240
THREADS = 8


def note_tags(folder: int, n: int) -> list[str]:
    return [TAGS[n % 3]] + ([TAGS[(n + folder) % 3]] if n % 2 else [])


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, set[str]]]:
    root = tmp_path_factory.mktemp("webscope") / "vault"
    tags: dict[str, set[str]] = {}
    for f, folder in enumerate(FOLDERS):
        for n in range(10):
            rel = f"{folder}/sub{n % 2}/note{n}.md"
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            own = note_tags(f, n)
            tags[rel] = set(own)
            # Every note holds every word, so any scope has matches and a leak would show.
            words = " ".join(WORDS[(n + k) % len(WORDS)] for k in range(len(WORDS)))
            (root / rel).write_text(
                f"---\ntags: [{', '.join(own)}]\n---\n# Note {folder} {n}\n\n"
                f"## Section {n}\n\nThis note in {folder} talks about {words} at length.\n",
                encoding="utf-8",
            )
    return root, tags


@pytest.fixture(scope="module")
def base_url(vault: tuple[Path, dict[str, set[str]]], tmp_path_factory: Any) -> Iterator[str]:
    db = build_index(vault[0], tmp_path_factory.mktemp("webscope-db") / "index.db")
    pool = make_pool(db, workers=2)
    with serve(create_app(pool)) as url:
        yield url
    pool.close()


def random_scope(rng: random.Random, paths: list[str]) -> dict[str, Any]:
    kind = rng.choice(
        ["folder", "subfolder", "tag", "file", "folder+tag", "file+tag", "file+folder"]
    )
    params: dict[str, Any] = {"q": " ".join(rng.sample(WORDS, 2)), "limit": rng.choice([5, 20, 60])}
    params["mode"] = rng.choice(["hybrid", "bm25", "vector"])
    if "folder" in kind:
        params["folder"] = rng.sample(FOLDERS, rng.randint(1, 2))
    if kind == "subfolder":
        params["folder"] = [f"{rng.choice(FOLDERS)}/sub{rng.randint(0, 1)}"]
    if "tag" in kind:
        params["tag"] = rng.sample(TAGS, rng.randint(1, 2))
    if "file" in kind:
        # Spelled as people do: with or without '.md', some with a './' in front.
        chosen = rng.sample(paths, rng.randint(1, 8))
        params["file"] = [rng.choice([p, p.removesuffix(".md"), "./" + p]) for p in chosen]
    return params


def in_scope(path: str, params: dict[str, Any], tags: dict[str, set[str]]) -> bool:
    folders = params.get("folder", [])
    if folders and not any(path.startswith(f + "/") for f in folders):
        return False
    if not set(params.get("tag", [])) <= tags[path]:
        return False
    files = {f.removeprefix("./").removesuffix(".md") + ".md" for f in params.get("file", [])}
    return not files or path in files


def test_concurrent_requests_never_see_each_others_scope(
    base_url: str, vault: tuple[Path, dict[str, set[str]]]
) -> None:
    _, tags = vault
    rng = random.Random(17)
    requests = [random_scope(rng, sorted(tags)) for _ in range(REQUESTS)]
    with httpx.Client(base_url=base_url, timeout=30) as alone:
        expected = [alone.get("/api/search", params=p).json()["hits"] for p in requests]
    start = threading.Barrier(THREADS)
    local = threading.local()

    def fire(i: int) -> tuple[int, int, list[dict[str, Any]]]:
        if not hasattr(local, "client"):
            local.client = httpx.Client(base_url=base_url, timeout=30)
            start.wait()  # every thread fires at once
        reply = local.client.get("/api/search", params=requests[i])
        return i, reply.status_code, reply.json()["hits"]

    with ThreadPoolExecutor(THREADS) as workers:
        results = list(workers.map(fire, range(REQUESTS)))
    hits_checked = 0
    for i, status, hits in results:
        assert status == 200
        for hit in hits:
            assert in_scope(hit["path"], requests[i], tags), (requests[i], hit["path"])
            hits_checked += 1
        # Not only inside the scope: the very hits the request gets when it is alone.
        assert [(h["path"], h["chunk_id"]) for h in hits] == [
            (h["path"], h["chunk_id"]) for h in expected[i]
        ], requests[i]
        possible = [p for p in tags if in_scope(p, requests[i], tags)]
        assert len(hits) == min(len(possible), requests[i]["limit"])  # every word is everywhere
    assert hits_checked > 1000
