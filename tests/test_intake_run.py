"""End to end: a small generated vault, an inbox, a run, its log, the JSON document and undo."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from noteseek import Index
from noteseek.intake import IntakeConfig, IntakeLogError, run_intake, undo_run
from noteseek.intake.errors import InboxNotFoundError
from noteseek.intake.log import read_log

from .conftest import FakeEmbedder

TOPICS = {
    "git": "git commit branch rebase merge remote push pull stash checkout cherry-pick reflog",
    "cooking": "recipe oven flour butter sugar bake simmer onion garlic pasta sauce salt",
    "astronomy": "telescope galaxy nebula orbit planet star comet eclipse redshift parallax",
}
SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def note(topic: str, seed: int, *, words: int = 120, code: bool = True) -> str:
    vocab = TOPICS[topic].split()
    rng = random.Random(f"{topic}-{seed}")  # distinct word order per note: no false duplicates
    body = " ".join(rng.choice(vocab) for _ in range(words))
    parts = [f"# {topic} note {seed}", "", body]
    if code:
        parts += [
            "",
            "1. Run the first step.",
            "2. Check the result.",
            "",
            "```sh",
            f"$ {vocab[0]} --go",
            "```",
        ]
    return "\n".join(parts) + "\n"


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path, Index]:
    vault = tmp_path / "vault"
    for topic in TOPICS:
        for i in range(8):
            path = vault / topic / f"{topic}-{i}.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(note(topic, i), encoding="utf-8")
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    index = Index(tmp_path / "index.db", embedder=FakeEmbedder(dim=64))
    index.update(vault)
    return vault, inbox, index


def write(folder: Path, name: str, content: str | bytes) -> Path:
    path = folder / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def test_items_are_routed_queued_set_aside_and_undone(setup: tuple[Path, Path, Index]) -> None:
    vault, inbox, index = setup
    write(inbox, "git-0.md", note("git", 42, words=400))  # a name that exists in git/
    write(inbox, "stub.txt", "TODO\n")
    write(
        inbox,
        "dup.md",
        "---\nsource: https://example.com/x\n---\n" + note("cooking", 3).split("\n", 2)[2],
    )
    before = {p.name: p.read_bytes() for p in inbox.iterdir()}
    report = run_intake(inbox, vault=vault, index=index)
    by_path = {r.assessment.path: r for r in report.items}
    git = by_path["git-0.md"]
    assert git.assessment.domain == "git"
    assert git.assessment.decision == "route"
    assert git.destination == "git/git-0 (2).md"  # the existing git/git-0.md is untouched
    assert (vault / "git" / "git-0.md").read_text(encoding="utf-8") == note("git", 0)
    stub = by_path["stub.txt"]
    assert stub.assessment.decision == "set_aside"
    assert stub.destination == "_intake/set-aside/stub.md"
    # Set aside means out of search for every later run, whatever its options.
    assert (vault / "_intake" / "set-aside" / ".noteseekignore").exists()
    fresh = Index(vault.parent / "plain.db", embedder=index._embedder)
    fresh.update(vault)
    assert fresh._store.conn.scalar("SELECT count(*) FROM files WHERE path LIKE '_intake/set-aside/%'") == 0
    fresh.close()
    dup = by_path["dup.md"]
    assert dup.assessment.duplicate_of == "cooking/cooking-3.md"
    assert dup.assessment.decision != "route"
    assert not list(inbox.iterdir())  # every item left the inbox ...
    # ... and the routed note is searchable at once.
    assert any(h.path == "git/git-0 (2).md" for h in index.search("git note 42", limit=20))
    if dup.assessment.decision == "review":
        text = (vault / dup.destination).read_text(encoding="utf-8")  # type: ignore[operator]
        assert "proposed_domain: cooking" in text and "duplicate_of: cooking/cooking-3.md" in text
    undone = undo_run(report.run_id, vault=vault)
    assert len(undone.restored) == 3 and not undone.problems
    assert {p.name: p.read_bytes() for p in inbox.iterdir()} == before
    assert not (vault / "git" / "git-0 (2).md").exists()
    # A second undo finds nothing left to do.
    assert undo_run(report.run_id, vault=vault).restored == ()
    index.close()


def test_review_items_get_scores_in_frontmatter_and_undo_restores_bytes(
    setup: tuple[Path, Path, Index],
) -> None:
    vault, inbox, index = setup
    original = "---\ntitle: Orbits\ntags: [space]\n---\n" + note(
        "astronomy", 9, words=60, code=False
    )
    write(inbox, "orbits.md", original)
    # Thresholds that put any item in review, so the frontmatter path is exercised.
    config = IntakeConfig(route_threshold=1.0, review_threshold=0.0)
    report = run_intake(inbox, vault=vault, index=index, config=config)
    (result,) = report.items
    assert result.assessment.decision == "review"
    assert result.destination == "_intake/review/orbits.md"
    moved = (vault / "_intake" / "review" / "orbits.md").read_text(encoding="utf-8")
    assert "intake:" in moved and "proposed_domain: astronomy" in moved and "relevance:" in moved
    assert "title: Orbits" in moved
    undo_run(report.run_id, vault=vault, config=config)
    assert (inbox / "orbits.md").read_text(encoding="utf-8") == original
    index.close()


def test_dry_run_moves_and_logs_nothing(setup: tuple[Path, Path, Index]) -> None:
    vault, inbox, index = setup
    write(inbox, "a.md", note("git", 5))
    report = run_intake(inbox, vault=vault, index=index, dry_run=True)
    assert report.dry_run and len(report.items) == 1
    assert (inbox / "a.md").exists()
    assert not (vault / "_intake").exists()
    doc = report.to_json()
    (item,) = doc["items"]
    assert set(item) >= {"path", "total", "scores", "decision", "domain", "runner_up"}
    assert set(item["scores"]) == {"relevance", "actionability", "depth", "authority"}
    assert item["decision"] in ("route", "review", "set_aside")
    assert all(0.0 <= v <= 1.0 for v in item["scores"].values())
    json.dumps(doc)  # serialisable as it is
    index.close()


def test_bad_input_is_left_in_place_with_a_warning(setup: tuple[Path, Path, Index]) -> None:
    vault, inbox, index = setup
    write(inbox, "latin1.md", "caf\xe9 notes\n".encode("latin-1"))
    write(inbox, "image.md", b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)
    write(inbox, "yaml.md", "---\ntitle: [unclosed\n---\nbody\n")
    write(inbox, "good.md", note("git", 3))
    report = run_intake(inbox, vault=vault, index=index)
    reasons = {p.rel: p.reason for p in report.skipped}
    assert set(reasons) == {"latin1.md", "image.md", "yaml.md"}
    assert "UTF-8" in reasons["latin1.md"] and "binary" in reasons["image.md"]
    assert "YAML" in reasons["yaml.md"]
    assert all("left in place" in r for r in reasons.values())
    assert sorted(p.name for p in inbox.iterdir()) == ["image.md", "latin1.md", "yaml.md"]
    assert [r.assessment.path for r in report.items] == ["good.md"]
    index.close()


def test_log_records_every_decision_and_never_a_secret(setup: tuple[Path, Path, Index]) -> None:
    vault, inbox, index = setup
    write(inbox, "creds.md", note("git", 7) + f"\ntoken: {SECRET}\nexport GITHUB_TOKEN={SECRET}\n")
    write(inbox, "other.md", note("cooking", 11))
    report = run_intake(inbox, vault=vault, index=index)
    log_path = vault / "_intake" / "log.jsonl"
    raw = log_path.read_text(encoding="utf-8")
    assert SECRET not in raw
    records = list(read_log(log_path))
    decisions = [r for r in records if r["event"] == "decision"]
    assert {d["path"] for d in decisions} == {"creds.md", "other.md"}
    for d in decisions:
        assert d["run"] == report.run_id
        assert set(d["scores"]) == {"relevance", "actionability", "depth", "authority"}
        assert d["decision"] in ("route", "review", "set_aside") and d["reason"]
    phases = [(r["path"], r["phase"]) for r in records if r["event"] == "move"]
    assert phases.count(("creds.md", "start")) == phases.count(("creds.md", "done")) == 1
    # The secret was scrubbed from what the index holds, too.
    assert not any(SECRET in h.text for h in index.search("token", limit=50))
    index.close()


def test_errors_name_the_problem(setup: tuple[Path, Path, Index], tmp_path: Path) -> None:
    vault, inbox, index = setup
    with pytest.raises(InboxNotFoundError):
        run_intake(tmp_path / "missing", vault=vault, index=index)
    with pytest.raises(IntakeLogError, match="no intake log"):
        undo_run("20990101-000000-abcd", vault=vault)
    write(inbox, "a.md", note("git", 1))
    run_intake(inbox, vault=vault, index=index)
    with pytest.raises(IntakeLogError, match="no run"):
        undo_run("nope", vault=vault)
    index.close()


def test_an_empty_index_is_built_first(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    for topic in TOPICS:
        for i in range(3):
            (vault / topic).mkdir(parents=True, exist_ok=True)
            (vault / topic / f"n{i}.md").write_text(note(topic, i), encoding="utf-8")
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    write(inbox, "a.md", note("astronomy", 77, words=300))
    with Index(tmp_path / "new.db", embedder=FakeEmbedder(dim=64)) as index:
        report = run_intake(inbox, vault=vault, index=index, dry_run=True)
    assert report.index_built
    assert report.domains == ("astronomy", "cooking", "git")
    assert report.items[0].assessment.domain == "astronomy"
