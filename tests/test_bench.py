"""bench/ as product code: every script documented and smoke-run (or saying why not), no private
access to an `Index` outside bench/_internals.py. Static checks; `python bench/smoke.py` runs them."""

from __future__ import annotations

import ast
import re
import sys

import pytest

from .conftest import REPO

BENCH = REPO / "bench"
SCRIPTS = sorted(p.name for p in BENCH.glob("*.py"))
# What an Index keeps inside; only bench/_internals.py may reach for it.
PRIVATE = re.compile(r"\._(store|searcher|embedder|bm25|knn|query_vector)\b")


@pytest.fixture(scope="module")
def smoke() -> object:
    sys.path.insert(0, str(BENCH))
    try:
        import smoke as module
    finally:
        sys.path.remove(str(BENCH))
    return module


def test_every_script_has_a_smoke_run_or_says_why_not(smoke: object) -> None:
    runs, without = smoke.SMOKE, smoke.NO_SMOKE  # type: ignore[attr-defined]
    assert not set(runs) & set(without)
    assert sorted(set(runs) | set(without)) == SCRIPTS
    assert all(reason.strip() for reason in without.values())


def test_every_script_is_in_the_bench_readme() -> None:
    readme = (BENCH / "README.md").read_text(encoding="utf-8")
    missing = [name for name in SCRIPTS if f"`{name}`" not in readme]
    assert missing == []


@pytest.mark.parametrize("name", [n for n in SCRIPTS if n != "_internals.py"])
def test_no_private_access_outside_internals(name: str) -> None:
    text = (BENCH / name).read_text(encoding="utf-8")
    found = [
        f"{name}:{number}: {line.strip()}"
        for number, line in enumerate(text.splitlines(), 1)
        if PRIVATE.search(line)
    ]
    assert found == []
    # Nor a private name imported from the package.
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("noteseek"):
            assert not [a.name for a in node.names if a.name.startswith("_")], node.module


def test_the_ci_runs_the_smoke_runs() -> None:
    assert "bench/smoke.py" in (REPO / ".ci" / "run").read_text(encoding="utf-8")


def test_the_lab_scripts_stay_gone() -> None:
    labs = {"floor_lab.py", "prf_lab.py", "rerank_lab.py", "rerank_pool.py", "multilingual_lab.py"}
    assert not labs & set(SCRIPTS)
    assert not [n for n in SCRIPTS if n.startswith("lab_")]
