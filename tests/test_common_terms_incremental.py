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
