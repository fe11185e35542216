"""The calibrated relevance score and the thresholds every surface applies (docs/relevance.md):
pure parts, the library, and the real bundled model on a small vault."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import noteseek
from noteseek import DEFAULT_MIN_ANSWER, DEFAULT_MIN_SCORE, Index, SearchRequest
from noteseek.core.calibration import (
    ANSWER_WIDTH,
    CALIBRATION_FEATURES,
    HEAD_FEATURES,
    RARE_CHUNKS,
    Calibrator,
    answer_features,
    calibration_features,
    head_features,
    non_increasing,
    query_facts,
    rarity,
    word_shares,
)
from noteseek.core.markup import readable
from noteseek.core.query import identifiers
from noteseek.engine.search.calibration import bundled_calibrator

from .backends import Backend
from .conftest import FakeEmbedder, WriteNotes, note

# A small vault of real-sounding notes, indexed with the real bundled model.
NOTES = {
    "howto/sourdough.md": note(
        "Sourdough bread",
        ("Starter", "Feed the sourdough starter with flour and water every day until it doubles."),
        ("Baking", "Bake the loaf in a dutch oven at 250 degrees, lid on for twenty minutes."),
    ),
    "howto/bike-repair.md": note(
        "Fixing a flat bicycle tyre",
        ("Patch", "Remove the inner tube, find the puncture in a bucket of water and patch it."),
    ),
    "garden/tomatoes.md": note(
        "Growing tomatoes",
        ("Planting", "Plant tomato seedlings after the last frost, deep, with support stakes."),
        ("Watering", "Water tomatoes at the base in the morning; avoid wetting the leaves."),
    ),
    "travel/lisbon.md": note(
        "Lisbon trip",
        ("Tram", "Tram 28 climbs through Alfama; buy a Viva Viagem card for the metro and trams."),
    ),
    "music/guitar.md": note(
        "Guitar practice",
        ("Chords", "Practise switching between G, C and D chords slowly with a metronome."),
    ),
}


@pytest.fixture(autouse=True)
def _default_threshold(_show_every_hit: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are about the default thresholds: undo conftest's NOTESEEK_MIN_SCORE=0 and
    NOTESEEK_MIN_ANSWER=0."""
    monkeypatch.delenv("NOTESEEK_MIN_SCORE", raising=False)
    monkeypatch.delenv("NOTESEEK_MIN_ANSWER", raising=False)


def test_non_increasing_caps_each_score_at_the_one_above() -> None:
    assert non_increasing([0.9, 0.95, 0.2, 0.5, -1.0, 2.0]) == [0.9, 0.9, 0.2, 0.2, 0.0, 0.0]
    assert non_increasing([]) == []


def test_query_facts_weigh_unknown_words_and_count_the_known_share() -> None:
    mass, known, words = query_facts([0, 10, 1000], 1000)
    assert words == 3 and mass > 0
    assert 0 < known < 1
    assert query_facts([5, 5], 100)[1] == 1.0
    assert query_facts([0, 0], 100)[1] == 0.0
    # A chunk count above the total never raises (a stale total).
    assert query_facts([5], 2)[0] == pytest.approx(0.1)
    assert word_shares([5], 2) == [pytest.approx(1.0)]


def test_rarity_counts_the_notes_that_hold_an_identifier_not_a_share_of_the_index() -> None:
    # An identifier in one note is a pointer to one place, in a small vault as in a large one.
    one_word = word_shares([1], 200)
    assert one_word == [1.0] and word_shares([1], 50_000) == [1.0]
    assert rarity(1.0, notes=1, chunks=1) == 1.0
    assert rarity(1.0, notes=1, chunks=8) == 1.0  # one note, several of its sections
    assert rarity(1.0, notes=2, chunks=2) == 0.5
    assert rarity(1.0, notes=0, chunks=0) == 0.0  # nothing holds it
    assert rarity(1.0, notes=3, chunks=RARE_CHUNKS) > 0.0
    assert rarity(1.0, notes=3, chunks=RARE_CHUNKS + 1) == 0.0  # past the lookup: no pointer
    mixed = word_shares([1, 400], 50_000)
    assert 0.5 < mixed[0] < 1.0 and mixed[0] + mixed[1] == pytest.approx(1.0)
    assert word_shares([], 10) == []


def identifier_terms(text: str) -> set[str]:
    return {term for terms in identifiers(text) for term in terms}


def test_identifiers_are_the_words_written_as_identifiers() -> None:
    assert identifier_terms("E0597") == {"e0597"}
    assert identifier_terms("ProgressDeadlineExceeded") == {"progressdeadlineexceeded"}
    assert identifier_terms("§35a EStG") == {"estg"}  # `35a` reads as a count
    assert identifier_terms("see INC-2291, please") == {"inc", "2291"}
    assert identifier_terms("(idle_in_transaction)") == {"idle", "in", "transaction"}
    assert identifiers("INC-2291 and E0597, INC-2291") == [("inc", "2291"), ("e0597",)]
    assert identifier_terms("p53 x86") == {"p53", "x86"}
    plain = (
        "ok",
        "hallo",
        "thanks!",
        "git push --force-with-lease",
        "line 42",
        "1:1",
        "",
        "see you on the 25th",
        "at 6pm",
        "make it 10x faster",
        "100ms",
        "64GB",
        "Q1",
        "H1",
    )
    for text in plain:
        assert identifiers(text) == [], text


def test_rarity_is_clamped_into_the_feature_range() -> None:
    facts = query_facts([1], 200)
    rare = CALIBRATION_FEATURES.index("rare_match")
    assert calibration_features(facts, 1, (1, 4.0), (2, 0.3), 0.0, False, 1.0)[rare] == 1.0
    assert calibration_features(facts, 1, (1, 4.0), (2, 0.3), 0.0, False, 3.0)[rare] == 1.0
    assert calibration_features(facts, 2, (None, None), (1, 0.3), 0.0, False)[rare] == 0.0


def test_features_and_probability_stay_in_range() -> None:
    cal = bundled_calibrator()
    facts = query_facts([3, 40], 5000)
    for rank, bm25, vec, rerank, exact in [
        (1, (1, 25.0), (1, 0.9), 2.0, True),
        (10, (None, None), (40, 0.1), None, False),
        (3, (2, 1e9), (None, None), -50.0, False),  # an absurd BM25 is capped, not extrapolated
    ]:
        row = calibration_features(facts, rank, bm25, vec, rerank, exact)
        assert len(row) == len(CALIBRATION_FEATURES)
        for mode in ("hybrid", "bm25", "vector"):
            p = cal.probability(mode, row)
            assert 0.0 <= p <= 1.0 and not math.isnan(p)


def test_calibrator_json_round_trip_and_refuses_other_features() -> None:
    cal = Calibrator(
        {"hybrid": ([0.5] * len(CALIBRATION_FEATURES), -1.0)}, {"hybrid": ([0.0, 1.0], [0.1, 0.9])}
    )
    again = Calibrator.from_json(json.loads(json.dumps(cal.to_json())))
    row = [0.3] * len(CALIBRATION_FEATURES)
    assert again.probability("hybrid", row) == cal.probability("hybrid", row)
    # A mode without its own model uses the hybrid one; the table maps into [0.1, 0.9].
    assert 0.1 <= cal.probability("bm25", row) <= 0.9
    with pytest.raises(ValueError):
        Calibrator.from_json({"features": ["other"], "modes": {}})
    with pytest.raises(ValueError):
        Calibrator({"hybrid": ([1.0], 0.0)})
    with pytest.raises(ValueError):
        Calibrator(
            {"hybrid": ([0.5] * len(CALIBRATION_FEATURES), 0.0)}, answers={"hybrid": ([1.0], 0.0)}
        )


def test_the_query_level_model_reads_a_fixed_depth_and_round_trips() -> None:
    width = len(CALIBRATION_FEATURES)
    cal = Calibrator(
        {"hybrid": ([0.1] * width, -2.0)}, answers={"hybrid": ([0.05] * ANSWER_WIDTH, -1.0)}
    )
    rows = [[0.5 - 0.01 * i] * width for i in range(30)]
    p = [cal.probability("hybrid", r) for r in rows]
    q = cal.answered("hybrid", rows, p)
    assert 0.0 < q < 1.0
    # Rows past the first ten do not count: a longer list (a larger limit) gives the same answer.
    assert cal.answered("hybrid", rows[:10], p[:10]) == q
    assert cal.answered("hybrid", [], []) == 0.0
    assert cal.answered("bm25", rows, p) == 1.0  # no query-level model for the mode: no gate
    again = Calibrator.from_json(json.loads(json.dumps(cal.to_json())))
    assert again.answered("hybrid", rows, p) == q
    # The bundled model has one for hybrid search.
    assert "answer" in bundled_calibrator().to_json()["modes"]["hybrid"]


def test_head_features_read_the_best_of_both_lists_and_the_query() -> None:
    cosines = [0.9 - 0.01 * i for i in range(30)]
    bm25 = [12.0 - i for i in range(12)]
    row = dict(zip(HEAD_FEATURES, head_features(bm25, cosines, 4.0, 2)))  # IDF mass 4, two words
    assert row["head_cosine"] == 0.9
    assert (row["head_cosine_one_word"], row["one_word"]) == (0.0, 0.0)
    assert row["head_bm25_per_idf"] == 3.0  # 12 / 4, capped at 3 as a hit's coverage is
    lone = dict(zip(HEAD_FEATURES, head_features([2.0], [0.5], 4.0, 1)))
    assert (lone["head_cosine"], lone["head_cosine_one_word"], lone["one_word"]) == (0.5, 0.5, 1.0)
    assert lone["head_bm25_per_idf"] == 0.5
    # No list (no vectors, no word matched): zeros, not an error.
    assert head_features([], [], 0.0, 0) == [0.0] * len(HEAD_FEATURES)


def test_the_query_level_model_reads_the_list_heads() -> None:
    width = len(CALIBRATION_FEATURES)
    weights = [0.0] * ANSWER_WIDTH
    weights[-len(HEAD_FEATURES)] = 4.0  # only the vector list's best cosine counts
    cal = Calibrator({"hybrid": ([0.1] * width, -2.0)}, answers={"hybrid": (weights, -2.0)})
    rows = [[0.5] * width for _ in range(10)]
    p = [cal.probability("hybrid", r) for r in rows]
    near = cal.answered("hybrid", rows, p, head_features([3.0], [0.9] * 30, 4.0, 2))
    far = cal.answered("hybrid", rows, p, head_features([3.0], [0.2] * 30, 4.0, 2))
    assert near == pytest.approx(1 / (1 + math.exp(-(4.0 * 0.9 - 2.0))))
    assert far < near
    # Without heads, their features are zeros: the model's bias alone.
    assert cal.answered("hybrid", rows, p) == pytest.approx(1 / (1 + math.exp(2.0)))
    assert len(answer_features(rows, p)) == ANSWER_WIDTH


def test_readable_drops_obsidian_syntax() -> None:
    text = (
        "See [[Back up your Obsidian files|backup guide]] and [[Daily notes]], [[Sync#Limits]].\n"
        "![[diagram.png]]\n> [!tip]- Keep it short\n> A callout body %% hidden %% with "
        '[a link](https://example.com) and <span class="x">html</span>.'
    )
    out = readable(text)
    assert "backup guide" in out and "Daily notes" in out and "Sync › Limits" in out
    for noise in ("[[", "]]", "![[", "[!tip]", "%%", "hidden", "https://", "<span", "> "):
        assert noise not in out, noise
    assert "Keep it short" in out and "A callout body" in out and "a link" in out
    assert readable("plain text, Array<string> stays") == "plain text, Array<string> stays"


def test_min_score_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    assert SearchRequest("q").min_score == DEFAULT_MIN_SCORE
    assert SearchRequest("q").min_answer == DEFAULT_MIN_ANSWER
    monkeypatch.setenv("NOTESEEK_MIN_ANSWER", "0.3")
    assert SearchRequest("q").min_answer == 0.3
    monkeypatch.delenv("NOTESEEK_MIN_ANSWER")
    with pytest.raises(ValueError):
        SearchRequest("q", min_answer=2)
    monkeypatch.setenv("NOTESEEK_MIN_SCORE", "0.4")
    assert SearchRequest("q").min_score == 0.4
    monkeypatch.setenv("NOTESEEK_MIN_SCORE", "lots")
    with pytest.raises(ValueError, match="NOTESEEK_MIN_SCORE"):
        SearchRequest("q")
    monkeypatch.delenv("NOTESEEK_MIN_SCORE")
    with pytest.raises(ValueError):
        SearchRequest("q", min_score=1.5)
    with pytest.raises(ValueError):
        SearchRequest("q", min_score=-0.1)


def test_threshold_hides_a_suffix_and_counts_it(
    tmp_path: Path, make_vault: WriteNotes, fake_embedder: FakeEmbedder
) -> None:
    vault = make_vault(NOTES)
    with Index(tmp_path / "i.db", embedder=fake_embedder) as idx:
        idx.update(vault)
        everything = idx.run_search(SearchRequest("tomato watering", min_score=0, min_answer=0))
        assert everything.hidden == 0 and everything.hits
        scores = [h.score for h in everything.hits]
        assert all(0 <= s <= 1 for s in scores) and scores == sorted(scores, reverse=True)
        cut = scores[0] - 1e-9 if len(scores) > 1 else scores[0]
        some = idx.run_search(SearchRequest("tomato watering", min_score=cut, min_answer=0))
        shown = [h.score for h in some.hits]
        assert shown == [s for s in scores if s >= cut]
        assert some.hidden == len(scores) - len(shown)
        # `limit` stays the most hits shown, and the scores do not depend on it.
        one = idx.run_search(SearchRequest("tomato watering", min_score=0, min_answer=0, limit=1))
        assert [h.score for h in one.hits] == scores[:1]
        assert one.answered == everything.answered
        # Past the query-level threshold the whole list is hidden and counted.
        none = idx.run_search(SearchRequest("tomato watering", min_score=0, min_answer=1.0))
        if everything.answered < 1.0:
            assert none.hits == () and none.hidden == len(scores)


def _capture(idx: Index, feature: str) -> Callable[[str], dict[str, float]]:
    """query -> {path: the hit's value of `feature`} as the engine computed it."""
    calibration = idx._searcher.calibration
    calibration.capture = True
    column = CALIBRATION_FEATURES.index(feature)

    def rows(query: str) -> dict[str, float]:
        calibration.last = None
        idx.search(query, min_score=0, min_answer=0)
        assert calibration.last is not None
        _, paths, features = calibration.last
        return {path: row[column] for path, row in zip(paths, features)}

    return rows


def test_a_query_that_is_a_tag_reads_as_an_exact_name(
    backend: Backend, make_vault: WriteNotes, fake_embedder: FakeEmbedder
) -> None:
    """The calibration's exact-name feature is 1 for a note tagged with the query (or with a tag
    nested under it), 0 for a note that only mentions it, whose `type` is the word, or whose tag
    merely ends in it; a query with a space is no tag."""
    vault = make_vault(
        {
            "runbooks/rollout.md": note(
                "Rollout runbook",
                ("Steps", "Roll back the deployment when the pods stay pending."),
                tags="oncall",
            ),
            "runbooks/pager.md": note(
                "Pager rota",
                ("Who", "The rota decides who carries the pager each week."),
                tags="oncall/pager",
            ),
            "runbooks/team.md": note(
                "Team page",
                ("Who", "The team that is oncall this week, and its pager."),
                tags="team/oncall",
                fm="type: oncall\n",
            ),
            "notes/meeting.md": note(
                "Team meeting",
                ("Notes", "We talked about oncall fatigue and the rollout rota."),
            ),
            "notes/hosting.md": note(
                "Hosting",
                ("Where", "Everything runs on the box under the desk."),
                tags="self-hosting",
            ),
        }
    )
    with Index(backend.locator, embedder=fake_embedder) as idx:
        idx.update(vault)
        rows = _capture(idx, "exact_name")
        got = rows("oncall")
        assert {path: got[path] for path in got if path.startswith(("runbooks/", "notes/m"))} == {
            "runbooks/rollout.md": 1.0,
            "runbooks/pager.md": 1.0,
            "runbooks/team.md": 0.0,
            "notes/meeting.md": 0.0,
        }
        assert rows("#OnCall")["runbooks/rollout.md"] == 1.0
        assert set(rows("oncall rollout").values()) == {0.0}
        assert rows("self-hosting")["notes/hosting.md"] == 1.0
        assert rows("self").get("notes/hosting.md", 0.0) == 0.0


def test_rarity_reaches_only_the_notes_that_hold_the_identifier(
    tmp_path: Path, make_vault: WriteNotes, fake_embedder: FakeEmbedder
) -> None:
    vault = make_vault(
        {
            "rust.md": note(
                "Rust errors", ("Borrow", "E0597 means a borrowed value dies too soon.")
            ),
            "docker.md": note(
                "Docker", ("Bridge", "The docker bridge network and its docker DNS.")
            ),
            "home.md": note("Homelab", ("Box", "A docker host under the desk, and a NAS.")),
            "pg.md": note("Postgres", ("Idle", "Set idle_in_transaction_session_timeout to 60s.")),
            "web.md": note("Web app", ("Login", "The session timeout of the web app is an hour.")),
            "bill.md": note("Invoice", ("Total", "Invoice 2291 for the Acme Inc order.")),
            "incident.md": note("Outage", ("Ticket", "The gateway outage is INC-2291.")),
        }
    )
    with Index(tmp_path / "i.db", embedder=fake_embedder) as idx:
        idx.update(vault)
        rows = _capture(idx, "rare_match")
        alone = rows("E0597")
        assert alone["rust.md"] == pytest.approx(1.0)
        mixed = rows("E0597 docker")
        assert mixed["rust.md"] > 0.5
        assert mixed["docker.md"] == 0.0 and mixed["home.md"] == 0.0
        assert set(rows("docker bridge").values()) == {0.0}  # no identifier, no rarity
        # An identifier of several words counts whole: a note with some of its words gets none.
        whole = rows("idle_in_transaction_session_timeout")
        assert whole["pg.md"] > 0.5 and whole.get("web.md", 0.0) == 0.0
        ticket = rows("INC-2291")
        assert ticket["incident.md"] > 0.5 and ticket.get("bill.md", 0.0) == 0.0


@pytest.fixture(scope="module")
def real_vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The small vault indexed with the real bundled model (no fake vectors)."""
    root = tmp_path_factory.mktemp("relevance")
    vault = root / "vault"
    for rel, text in NOTES.items():
        path = vault / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        with noteseek.Index(root / "real.db") as idx:
            idx.update(vault)
    return root


OFF_TOPIC = (
    "fix this typescript error: Property 'foo' does not exist on type 'Bar'",
    "write a python function to reverse a linked list",
    "kubectl says CrashLoopBackOff for the api pod",
)


def test_off_topic_hides_everything_and_on_topic_shows_its_note(real_vault: Path) -> None:
    with noteseek.Index(real_vault / "real.db", create=False) as idx:
        for query in OFF_TOPIC:
            result = idx.run_search(SearchRequest(query))
            assert result.hits == () and result.hidden > 0, (query, result.hits)
            assert result.answered < DEFAULT_MIN_ANSWER, (query, result.answered)
            everything = idx.run_search(SearchRequest(query, min_score=0, min_answer=0))
            assert len(everything.hits) == result.hidden
        on = idx.run_search(SearchRequest("how do I feed a sourdough starter"))
        assert on.hits and on.hits[0].path == "howto/sourdough.md"
        assert on.answered >= DEFAULT_MIN_ANSWER


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("NOTESEEK_MIN_SCORE", "NOTESEEK_MIN_ANSWER")
    }
    return subprocess.run(
        [sys.executable, "-m", "noteseek", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def test_cli_json_hidden_and_all_restore(real_vault: Path) -> None:
    db = str(real_vault / "real.db")
    off = _cli("search", OFF_TOPIC[0], "--db", db, "--json")
    assert off.returncode == 0, off.stderr
    doc = json.loads(off.stdout)
    assert doc["hits"] == [] and doc["hidden"] > 0
    every = json.loads(_cli("search", OFF_TOPIC[0], "--db", db, "--json", "--all").stdout)
    assert every["hidden"] == 0 and len(every["hits"]) == doc["hidden"]
    scores = [h["score"] for h in every["hits"]]
    assert all(0 <= s <= 1 for s in scores) and scores == sorted(scores, reverse=True)
    hit = every["hits"][0]
    assert "heading_context" not in hit and {"title", "aliases", "tags"} <= set(hit)
    text = _cli("search", OFF_TOPIC[0], "--db", db)
    assert text.returncode == 0
    assert "no confident match" in text.stdout
    assert f"{doc['hidden']} weaker matches hidden (use --all)" in text.stdout
    on = _cli("search", "how do I feed a sourdough starter", "--db", db, "--explain")
    assert on.returncode == 0 and "howto/sourdough.md" in on.stdout
    assert "calibrated: P(relevant)" in on.stdout and "rerank" in on.stdout
    assert "calibration: P(the notes answer this)" in on.stdout


def test_prompt_hook_is_silent_off_topic_and_shows_probabilities(real_vault: Path) -> None:
    with noteseek.Index(real_vault / "real.db", create=False) as idx:
        for query in OFF_TOPIC:
            ctx = noteseek.prompt_context(idx, query)
            assert ctx.text == "" and "likely" in ctx.reason, (query, ctx.reason)
        ctx = noteseek.prompt_context(idx, "how do I feed a sourdough starter every day")
        assert "howto/sourdough" in ctx.text and "relevance 0." in ctx.text
