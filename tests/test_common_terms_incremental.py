"""After a small run the stored counts of common stems equal a full recount, exactly."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from noteseek import Index
from noteseek.storage import meta
from noteseek.storage.sqlite import text_index

# A few frequent words, a long tail of rare ones (in one or two chunks each), and words no note
# holds at first, which edits then spread until they cross the floor (1 % of the chunks).
WORDS = [f"word{i}" for i in range(20)] + ["Kündigung", "und", "der", "die"]
RARE = [f"rare{i}" for i in range(4000)]
FRESH = [f"fresh{i}" for i in range(6)]


def _note(rng: random.Random, n: int) -> str:
    common = " ".join(rng.choice(WORDS) for _ in range(12))
    rare = " ".join(rng.choice(RARE) for _ in range(8))
    return (
        f"---\ntitle: Note {n} {rng.choice(RARE)}\ntags: [{rng.choice(RARE)}]\n---\n"
        f"# Note {n}\n\n{common}\n\n## Part\n\n{rare}\n"
    )


def _stored(idx: Index) -> Any:
    return json.loads(idx._store.get_meta(meta.COMMON_TERMS))  # type: ignore[attr-defined]


def _recount(idx: Index) -> Any:
    store = idx._store  # type: ignore[attr-defined]
    with store.write():
        store.text._written_chunks = None  # forget what was written: the full recount
        store.refresh_common_terms()
    return _stored(idx)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_small_runs_count_common_stems_exactly(
    tmp_path: Path, fake_embedder: Any, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    rng = random.Random(seed)
    vault = tmp_path / "vault"
    vault.mkdir()
    for n in range(120):
        (vault / f"n{n}.md").write_text(_note(rng, n), encoding="utf-8")
    quick: list[bool] = []
    real = text_index.TextIndex._common_terms_after_few_writes

    def spy(self: Any, floor: int) -> Any:
        got = real(self, floor)
        quick.append(got is not None)
        return got

    monkeypatch.setattr(text_index.TextIndex, "_common_terms_after_few_writes", spy)
    with Index(tmp_path / "i.db", embedder=fake_embedder) as idx:
        idx.update(vault)
        next_n = 120
        crossed = 0
        for _ in range(10):
            notes = sorted(vault.glob("*.md"))
            for _ in range(rng.randint(1, 4)):
                action = rng.random()
                if action < 0.3:
                    (vault / f"n{next_n}.md").write_text(_note(rng, next_n), encoding="utf-8")
                    next_n += 1
                elif action < 0.45:
                    # rewritten: the common words it held go, others come
                    path = rng.choice(notes)
                    if path.exists():
                        path.write_text(_note(rng, next_n), encoding="utf-8")
                elif action < 0.85:
                    path = rng.choice(notes)
                    if path.exists():
                        burst = " ".join(rng.sample(FRESH, 2))
                        path.write_text(path.read_text() + f"\n\n{burst}\n", encoding="utf-8")
                else:
                    path = rng.choice(notes)
                    path.unlink(missing_ok=True)
            idx.update(vault)
            stored = _stored(idx)
            assert stored == _recount(idx)
            crossed += any(t.startswith("fresh") for t in stored["terms"])
    assert sum(quick) >= 8, f"only {sum(quick)} of 11 runs took the incremental path"
    assert crossed, "no fresh word crossed the floor"


def test_a_rolled_back_batch_leaves_no_wrong_count(tmp_path: Path, fake_embedder: Any) -> None:
    """A run whose deletion committed and whose next batch rolled back (a second Ctrl-C, a full
    disk): the rows it had noted are not all there, and the next run still counts exactly."""
    vault = tmp_path / "vault"
    vault.mkdir()
    for n in range(120):
        (vault / f"n{n}.md").write_text(f"# Note {n}\n\ncommon alpha beta gamma {n}\n")
    with Index(tmp_path / "i.db", embedder=fake_embedder) as idx:
        idx.update(vault)
        store = idx._store  # type: ignore[attr-defined]
        (vault / "n2.md").unlink()  # the deletion commits first
        (vault / "n1.md").write_text("# Note 1\n\ncommon beta gamma changed\n")
        real = store.links.write_links

        def fail(*args: Any, **kwargs: Any) -> None:
            raise OSError("disk full")  # after the note's old chunks were deleted in the batch

        store.links.write_links = fail
        with pytest.raises(OSError):
            idx.update(vault)
        store.links.write_links = real
        idx.update(vault)
        stored = _stored(idx)
        assert stored["terms"]["alpha"] == 118  # n1 lost it, n2 is gone
        assert stored == _recount(idx)


def test_chunks_another_connection_wrote_meanwhile_are_counted(
    tmp_path: Path, fake_embedder: Any
) -> None:
    """This connection moved the list aside and wrote; another one wrote chunks too and was gone
    before its recount: the recount here must see them."""
    vault = tmp_path / "vault"
    vault.mkdir()
    for n in range(120):
        (vault / f"n{n}.md").write_text(f"# Note {n}\n\ncommon alpha {n}\n")
    db = tmp_path / "i.db"
    with Index(db, embedder=fake_embedder) as idx:
        idx.update(vault)
        store = idx._store  # type: ignore[attr-defined]
        (vault / "n1.md").write_text("# Note 1\n\ncommon beta\n")
        idx.update(vault, paths=["n1.md"])
        with store.write():
            store.text.chunks_changed()  # as a run that wrote and died before its recount
        with Index(db, embedder=fake_embedder) as other:
            for n in range(3, 60):
                (vault / f"n{n}.md").write_text(f"# Note {n}\n\ncommon beta {n}\n")
            other_store = other._store  # type: ignore[attr-defined]
            real = other_store.refresh_common_terms
            other_store.refresh_common_terms = lambda: None  # killed before its recount
            other.update(vault)
            other_store.refresh_common_terms = real
        with store.write():
            store.refresh_common_terms()
        assert _stored(idx) == _recount(idx)
