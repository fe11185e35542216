"""Crash safety: an indexer killed with SIGKILL at random moments never leaves a broken index.

Every trial runs the indexer in a child process, kills it after a random (seeded) delay, then checks
in the parent that SQLite's and FTS5's integrity checks pass with the row counts in step, and that
the next run finishes and answers a fixed set of queries exactly like an index built from scratch.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from noteseek import Index
from noteseek.storage.sqlite.text_index import TextIndex

from .conftest import REPO, FakeEmbedder

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL (POSIX)"),
]

TOPICS = {
    "databases": "postgres sqlite index vacuum wal checkpoint transaction lock query planner "
    "btree page replica backup migration schema column tuple autovacuum",
    "security": "oauth token rotation secret keychain certificate tls cipher password hash "
    "salt audit firewall credential session cookie csrf scope",
    "kubernetes": "pod deployment rollout service ingress helm chart namespace node taint "
    "toleration probe liveness readiness configmap volume cluster",
    "cooking": "sourdough starter flour hydration proof oven crust dough knead yeast salt "
    "butter roast braise simmer stock onion garlic",
    "travel": "train ticket passport visa hostel itinerary luggage airport layover museum "
    "ferry border currency booking reservation hiking trail",
    "music": "chord scale arpeggio tempo metronome guitar piano rhythm melody harmony "
    "interval cadence modulation practice fingering pedal",
    "finance": "budget invoice tax receipt pension dividend index fund expense ledger "
    "interest mortgage savings rebalance allocation inflation",
    "writing": "draft outline chapter editor revision manuscript plot character scene "
    "dialogue voice tense paragraph footnote citation",
}
COMMON = [
    "the",
    "a",
    "and",
    "of",
    "to",
    "in",
    "for",
    "with",
    "on",
    "when",
    "how",
    "why",
    "note",
    "remember",
    "check",
    "use",
    "keep",
    "after",
    "before",
    "always",
    "never",
    "first",
    "then",
    "later",
    "again",
    "because",
    "which",
    "that",
    "this",
]

QUERIES = (
    "postgres vacuum wal checkpoint",
    "oauth token rotation",
    "kubernetes rollout readiness probe",
    "sourdough hydration",
    "passport visa border",
    "chord cadence modulation",
    "index fund rebalance",
    "manuscript revision",
    "lock",
    "how do I keep the secret in the keychain",
    "Topic 7",
    "zq0042",
)


def note_text(rng: random.Random, number: int, version: int = 0) -> str:
    """A realistic note: frontmatter, H1, a few H2 sections with prose, lists and code."""
    topic = rng.choice(sorted(TOPICS))
    vocab = TOPICS[topic].split()
    other = TOPICS[rng.choice(sorted(TOPICS))].split()

    def sentence() -> str:
        words = [rng.choice(vocab if rng.random() < 0.6 else other + COMMON) for _ in range(12)]
        return " ".join(words).capitalize() + "."

    tags = rng.sample(vocab, 2)
    head = f"---\ntags: [{topic}, {tags[0]}]\naliases: [Topic {number}]\n---\n"
    parts = [head, f"# {vocab[number % len(vocab)].title()} notes {number}\n"]
    # A token no other note has, so each note can be found by name and by word.
    parts.append(f"Intro for note {number}: zq{number:04} {sentence()}\n")
    for s in range(rng.randint(2, 5)):
        heading = f"{rng.choice(vocab).title()} {rng.choice(vocab)}"
        body = " ".join(sentence() for _ in range(rng.randint(2, 6)))
        parts.append(f"## {heading}\n\n{body}\n")
        if rng.random() < 0.3:
            parts.append("\n".join(f"- {sentence()}" for _ in range(3)) + "\n")
        if rng.random() < 0.2:
            parts.append(f"```sh\n{rng.choice(vocab)} --{rng.choice(vocab)} {s}\n```\n")
    if version:
        parts.append(f"## Update {version}\n\nRevised: {sentence()} {sentence()}\n")
    return "\n".join(parts)


def write_vault(root: Path, rng: random.Random, count: int) -> list[Path]:
    """`count` notes in a few folders under `root`."""
    paths = []
    for number in range(count):
        folder = root / sorted(TOPICS)[number % len(TOPICS)]
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"note-{number:04}.md"
        path.write_text(note_text(rng, number), encoding="utf-8")
        paths.append(path)
    return paths


Ranking = list[tuple[float, tuple[tuple[str, str], ...]]]


def results(idx: Index) -> dict[tuple[str, str], Ranking]:
    """Every query's hits in every mode, as (score, the (path, section)s with that score), best first.

    Hits with exactly the same score are ordered by chunk id, and chunk ids depend on the order files
    were written in (a resumed run writes them in another order than a clean one), so hits tied
    on score are compared as a set. A tie group cut by the limit of 10 is compared by its size only.
    """
    out: dict[tuple[str, str], Ranking] = {}
    for query in QUERIES:
        for mode in ("hybrid", "bm25", "vector"):
            hits = idx.search(query, limit=11, mode=mode)
            groups: dict[float, list[tuple[str, str]]] = {}
            for hit in hits[:10]:
                groups.setdefault(round(hit.score, 9), []).append((hit.path, hit.section))
            ranking = [(score, tuple(sorted(group))) for score, group in groups.items()]
            if len(hits) > 10 and round(hits[10].score, 9) == ranking[-1][0]:
                score, group = ranking[-1]
                ranking[-1] = (score, (("<tie cut by the limit>", str(len(group))),))
            out[(query, mode)] = ranking
    return out


def clean_results(vault: Path, db: Path) -> dict[tuple[str, str], Ranking]:
    """The reference: a new index of the vault built from scratch."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    with Index(db, embedder=FakeEmbedder()) as idx:
        idx.update(vault)
        return results(idx)


CHILD = """
import sys
sys.path.insert(0, {repo!r})
from tests.conftest import FakeEmbedder
import noteseek
idx = noteseek.Index({db!r}, embedder=FakeEmbedder())
print("ready", flush=True)
stats = idx.update({vault!r}, full={full!r})
idx.close()
print("done", stats.added, stats.changed, stats.removed, flush=True)
"""


@contextmanager
def indexer_process(
    db: Path, vault: Path, *, full: bool = False
) -> Iterator[subprocess.Popen[str]]:
    """A child process that opens the index, prints 'ready', updates it and prints 'done'."""
    code = CHILD.format(repo=str(REPO), db=str(db), vault=str(vault), full=full)
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=60)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def kill_after(proc: subprocess.Popen[str], delay: float) -> tuple[str, float]:
    """Kill the child `delay` s after it opened the index: ('killed' or 'finished', seconds run)."""
    assert proc.stdout is not None
    first = proc.stdout.readline()
    if first.strip() != "ready":  # it died while opening: show why
        proc.wait(timeout=60)
        err = proc.stderr.read() if proc.stderr else ""
        raise AssertionError(f"indexer child failed to open the index: {first!r} {err}")
    start = time.perf_counter()
    try:
        proc.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
    elapsed = time.perf_counter() - start
    if proc.returncode == -signal.SIGKILL:
        return "killed", elapsed
    assert proc.returncode == 0, proc.stderr.read() if proc.stderr else ""
    return "finished", elapsed


def test_sigkill_at_random_moments_leaves_a_consistent_index(tmp_path: Path) -> None:
    rng = random.Random(20240603)
    vault = tmp_path / "vault"
    paths = write_vault(vault, rng, 300)
    db = tmp_path / "index.db"
    reference_db = tmp_path / "reference.db"

    started = time.perf_counter()
    clean_results(vault, reference_db)
    full_seconds = time.perf_counter() - started

    trials = 24
    duration = {"first": full_seconds, "full": full_seconds}
    duration.update({"edit": 0.2, "delete": 0.2, "edit+add": 0.2})
    outcomes: dict[str, int] = {"killed": 0, "finished": 0}
    version = 0
    for trial in range(trials):
        # Change the vault as a user would between runs: edits, new notes and deletions.
        kind = ("full", "edit", "delete", "edit+add")[trial % 4] if trial else "first"
        if kind.startswith("edit"):
            version += 1
            for path in rng.sample(paths, 30):
                number = int(path.stem.split("-")[1])
                path.write_text(note_text(rng, number, version), encoding="utf-8")
        if kind == "delete":
            for path in rng.sample(paths, 10):
                path.unlink()
                paths.remove(path)
        if kind == "edit+add":
            for _ in range(6):
                number = 1000 + len(paths) + trial * 10
                path = vault / "inbox" / f"note-{number:04}.md"
                path.parent.mkdir(exist_ok=True)
                path.write_text(note_text(rng, number), encoding="utf-8")
                paths.append(path)

        full = kind == "full"
        # Anywhere in a run (set-up, middle, final bookkeeping), judged by how long the last
        # uninterrupted run of this kind took; a few delays overshoot and the run completes.
        delay = rng.uniform(0.0, 1.1 * duration[kind])
        with indexer_process(db, vault, full=full) as proc:
            outcome, elapsed = kill_after(proc, delay)
        outcomes[outcome] += 1
        if outcome == "finished":
            duration[kind] = elapsed

        with Index(db, embedder=FakeEmbedder()) as idx:
            assert idx.check() == [], f"trial {trial} ({kind}, {outcome} after {delay:.2f}s)"
            idx.update(vault)
            assert idx.check() == []
            counts = idx._store.counts()
            assert counts["chunks"] == counts["fts"] == counts["vectors"] == counts["embedded"]
            recovered = results(idx)
        expected = clean_results(vault, reference_db)
        assert recovered == expected, f"trial {trial} ({kind}, {outcome} after {delay:.2f}s)"

    # Most runs must really have been interrupted, or the test proves little.
    assert outcomes["killed"] >= trials // 2, outcomes
    print(f"\nkill trials: {trials}, outcomes: {outcomes}, run seconds: {duration}")


def test_crash_before_the_run_summary_still_refreshes_common_terms(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run killed after its last file but before its final bookkeeping must not leave the
    ubiquitous-term list (which words search drops) describing the old content forever."""
    vault = tmp_path / "vault"
    vault.mkdir()
    for i in range(6):
        (vault / f"n{i}.md").write_text(f"# N{i}\n\nshared words here, unique{i} text.\n")
    db = tmp_path / "i.db"
    with Index(db, embedder=FakeEmbedder()) as idx:
        idx.update(vault)
    # Now 'shared' stops being ubiquitous: most notes lose it.
    for i in range(5):
        (vault / f"n{i}.md").write_text(f"# N{i}\n\nother words here, unique{i} text.\n")

    def crash(self: TextIndex) -> None:
        raise KeyboardInterrupt  # the process dies here; nothing after it runs

    # The store binds its part's method when it opens: the part's class is where to patch.
    monkeypatch.setattr(TextIndex, "refresh_common_terms", crash)
    with Index(db, embedder=FakeEmbedder()) as idx, pytest.raises(KeyboardInterrupt):
        idx.update(vault)
    monkeypatch.undo()
    with Index(db, embedder=FakeEmbedder()) as idx:
        stats = idx.update(vault)
        assert (stats.added, stats.changed, stats.removed) == (0, 0, 0)
        recovered = [h.path for h in idx.search("shared other", mode="bm25")]
    with Index(tmp_path / "clean.db", embedder=FakeEmbedder()) as idx:
        idx.update(vault)
        # 'other' is now in 5 of 6 notes and is left out; a stale list would drop 'shared'.
        assert recovered == [h.path for h in idx.search("shared other", mode="bm25")] == ["n5.md"]
