"""bench/ as product code: every script documented and smoke-run (only helper modules without), no
private access to an `Index` outside bench/_internals.py, and the stand-in data sets the smoke runs
read. Static checks but the last; `python bench/smoke.py` runs the smoke runs."""

from __future__ import annotations

import ast
import itertools
import re
import sys
from pathlib import Path

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


def test_only_helper_modules_go_without_a_smoke_run(smoke: object) -> None:
    without = smoke.NO_SMOKE  # type: ignore[attr-defined]
    scripts = {
        name
        for name in without
        if '__name__ == "__main__"' in (BENCH / name).read_text(encoding="utf-8")
    }
    # The runner itself, and benchmark.py's one-process CLI for its alternatives (run by
    # benchmark.py's smoke run).
    assert scripts == {"smoke.py", "alternatives.py"}


def test_smoke_runs_write_only_into_their_own_folder(smoke: object) -> None:
    runs = smoke.SMOKE  # type: ignore[attr-defined]
    assert set(runs) >= smoke.STAND_IN  # type: ignore[attr-defined]
    outputs = {"--json", "--out", "--export", "--work", "--dest", "--db"}
    for name, args in runs.items():
        for option, value in itertools.pairwise(args):
            if option in outputs:
                assert value.startswith("{"), (name, option, value)  # {tmp}, {sample_db}, {pg}
        assert not [a for a in args if "results" in a and not a.endswith("quality.json")], name
        # Only the placeholders the runner fills in.
        for a in args:
            a.format(tmp="t", sample_db="s", pg="p")


def test_the_stand_in_sets_judge_notes_they_hold(tmp_path: Path) -> None:
    sys.path.insert(0, str(BENCH))
    try:
        import datasets
    finally:
        sys.path.remove(str(BENCH))
    made = datasets.stand_in(tmp_path)
    assert made.data_dir == tmp_path / "data"
    for ds in datasets.DATASETS.values():
        corpus = datasets.ensure_corpus(datasets.CORPORA[ds.corpus], made.data_dir, made.cache_dir)
        vault = corpus / ds.vault if ds.vault else corpus
        notes = [p.relative_to(vault).as_posix() for p in vault.rglob("*.md")]
        matcher = datasets.NoteMatcher(notes, ds.id_prefix)
        qrels, unmatched = matcher.map_qrels(datasets.load_qrels(ds, made.data_dir, made.cache_dir))
        queries = datasets.read_queries(made.data_dir / ds.queries)
        assert qrels and set(qrels) <= set(queries), ds.name
        # Sets over one corpus half: every judged note is there; cross-lingual ones through
        # permalinks the sample notes lack keep their ids and count as missed.
        assert ds.qrels_via or not unmatched, (ds.name, unmatched)
        assert (made.cache_dir / f"{ds.index}.db").is_file()
    # Two halves: the off-topic pairs meet notes that are not their answers.
    hub = set((made.cache_dir / "obsidian-hub" / "obsidian-hub").rglob("*.md"))
    mdn = set((made.cache_dir / "mdn-content-en" / "files" / "en-us").rglob("*.md"))
    assert hub and mdn
    assert not {p.name for p in hub} & {p.name for p in mdn}


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
