"""Dates and time filters end to end: a generated journal vault, the real CLI in a child process,
the real bundled model, on both backends.

The vault has daily notes named by date, notes dated by frontmatter and notes dated only by their
mtime, each about the same boiler, so only the date decides which one a time filter keeps. Dates
are relative to the day the test runs (the CLI reads "yesterday" against the local date).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from noteseek import Index

from .conftest import user_env

TODAY = date.today()
MONTHS = "January February March April May June July August September October November December"


def _day(days_ago: int) -> date:
    return TODAY - timedelta(days=days_ago)


def _month_back(months: int) -> date:
    total = TODAY.year * 12 + TODAY.month - 1 - months
    return date(total // 12, total % 12 + 1, 12)


OLD_MONTH = _month_back(5)  # a frontmatter-dated note, five months back, on the 12th


def journal(root: Path) -> Path:
    """The generated vault; returns its folder."""
    vault = root / "journal"
    (vault / "daily").mkdir(parents=True)
    (vault / "meetings").mkdir()
    yesterday = _day(1)
    (vault / "daily" / f"{yesterday.isoformat()}.md").write_text(
        "# Boiler\n\nThe boiler made a rattling noise in the night; I called the plumber about "
        "the pressure valve.\n"
    )
    for days_ago in (3, 20, 45, 90, 200):
        day = _day(days_ago)
        (vault / "daily" / f"{day.isoformat()}.md").write_text(
            f"# Day {days_ago}\n\nA quiet day; checked the boiler pressure gauge, reading "
            f"{days_ago % 7 + 1} bar. Groceries and a walk.\n"
        )
    # A daily note whose template wrote another day into its frontmatter: the name wins.
    (vault / "daily" / "2021-06-15.md").write_text(
        "---\ncreated: 2021-06-16T08:00\n---\n# Boiler service\n\nAnnual boiler service, "
        "the technician replaced the pressure valve.\n"
    )
    (vault / "meetings" / "boiler-budget.md").write_text(
        f"---\ndate: {OLD_MONTH.isoformat()}\ntags: [house]\n---\n# Boiler budget meeting\n\n"
        "We agreed on the budget for a new boiler and the pressure valve.\n"
    )
    (vault / "meetings" / "listed.md").write_text(
        f"---\nupdated:\n  - {_day(400).isoformat()}\n  - 2000-01-01\n---\n# Insulation\n\n"
        "Roof insulation quotes; the boiler might be undersized afterwards.\n"
    )
    recent = vault / "boiler-log.md"
    recent.write_text("# Boiler log\n\nBoiler pressure dropped again, topped it up to 1.5 bar.\n")
    stamp = time.time() - 2 * 86400
    os.utime(recent, (stamp, stamp))
    # Notes about other things, so a word of the boiler notes is not in most chunks (the prompt
    # hook leaves such words out of its BM25 query), dated by an mtime outside every range below.
    topics = ("sourdough starter", "tomato seedlings", "bike chain", "tax forms", "guitar strings")
    for i in range(20):
        topic = topics[i % len(topics)]
        filler = vault / "misc" / f"note-{i}.md"
        filler.parent.mkdir(exist_ok=True)
        filler.write_text(f"# {topic.title()} {i}\n\nNotes on the {topic}, part {i}.\n")
        stamp = time.time() - 60 * 86400
        os.utime(filler, (stamp, stamp))
    stale = vault / "boiler-manual.md"
    stale.write_text("# Boiler manual notes\n\nHow to bleed the radiators and reset the boiler.\n")
    stamp = time.time() - 300 * 86400
    os.utime(stale, (stamp, stamp))
    return vault


def run(*args: str, env: dict[str, str], check: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "-m", "noteseek", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    if check and result.returncode != 0:
        raise AssertionError(f"exit {result.returncode}\n{result.stdout}\n{result.stderr}")
    return result


@pytest.fixture(params=["sqlite", "postgres"])
def indexed(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[dict[str, str], str]:
    """(environment, --db value) of the journal vault indexed on each backend."""
    if request.param == "sqlite":
        db = str(tmp_path / "index.db")
    else:
        from .backends import pg_locator

        db = pg_locator(request.getfixturevalue("pg_schema")).url
    env = user_env()
    # Every hit: these tests are about dates, not about the relevance thresholds.
    env.update(
        NOTESEEK_HOME=str(tmp_path / "home"), HF_HUB_OFFLINE="1",
        NOTESEEK_MIN_SCORE="0", NOTESEEK_MIN_ANSWER="0",
    )
    run("index", str(journal(tmp_path)), "--db", db, env=env)
    return env, db


def search(indexed: tuple[dict[str, str], str], *args: str) -> dict[str, Any]:
    env, db = indexed
    result = run("search", *args, "--db", db, "--json", "-n", "20", env=env)
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


def day_of(hit: dict[str, Any]) -> date:
    return date.fromisoformat(hit["date"][:10])


def inside(doc: dict[str, Any], since: date | None, until: date | None) -> None:
    assert doc["hits"], doc
    for hit in doc["hits"]:
        if since is not None:
            assert day_of(hit) >= since, hit
        if until is not None:
            assert day_of(hit) <= until, hit


def test_every_note_has_a_date_and_its_source(indexed: tuple[dict[str, str], str]) -> None:
    doc = search(indexed, "boiler", "--no-time-parse")
    by_path = {h["path"]: h for h in doc["hits"]}
    daily = by_path[f"daily/{_day(1).isoformat()}.md"]
    assert (daily["date"], daily["date_source"]) == (_day(1).isoformat(), "filename")
    # The file name says which day a daily note is about, whatever its template wrote.
    assert by_path["daily/2021-06-15.md"]["date"] == "2021-06-15"
    assert by_path["daily/2021-06-15.md"]["date_source"] == "filename"
    meeting = by_path["meetings/boiler-budget.md"]
    assert (meeting["date"], meeting["date_source"]) == (OLD_MONTH.isoformat(), "frontmatter")
    listed = by_path["meetings/listed.md"]  # a list takes its first item
    assert (listed["date"], listed["date_source"]) == (_day(400).isoformat(), "frontmatter")
    log = by_path["boiler-log.md"]
    assert log["date_source"] == "mtime" and day_of(log) == _day(2)
    assert doc["time_range"] is None and doc["searched"] is None


def test_since_7d(indexed: tuple[dict[str, str], str]) -> None:
    doc = search(indexed, "boiler noise plumber", "--since", "7d")
    assert doc["hits"][0]["path"] == f"daily/{_day(1).isoformat()}.md"
    inside(doc, _day(7), None)
    paths = {h["path"] for h in doc["hits"]}
    assert "boiler-log.md" in paths  # mtime-only, two days ago
    assert "boiler-manual.md" not in paths


def test_iso_range(indexed: tuple[dict[str, str], str]) -> None:
    since, until = OLD_MONTH - timedelta(days=3), OLD_MONTH + timedelta(days=3)
    doc = search(indexed, "boiler", "--since", since.isoformat(), "--until", until.isoformat())
    assert doc["hits"][0]["path"] == "meetings/boiler-budget.md"
    inside(doc, since, until)
    assert doc["time_range"]["since"] == since.isoformat()


def test_in_the_last_7_days_in_the_query(indexed: tuple[dict[str, str], str]) -> None:
    doc = search(indexed, "boiler noise plumber in the last 7 days")
    assert doc["hits"][0]["path"] == f"daily/{_day(1).isoformat()}.md"
    inside(doc, _day(7), TODAY)
    assert doc["time_range"]["phrase"] == "in the last 7 days"
    assert doc["searched"] == "boiler noise plumber"


def test_gestern(indexed: tuple[dict[str, str], str]) -> None:
    doc = search(indexed, "was habe ich gestern über den Boiler geschrieben")
    assert doc["hits"][0]["path"] == f"daily/{_day(1).isoformat()}.md"
    inside(doc, _day(1), _day(1))
    assert doc["time_range"]["since"] == doc["time_range"]["until"] == _day(1).isoformat()


def test_from_month_year(indexed: tuple[dict[str, str], str]) -> None:
    month = MONTHS.split()[OLD_MONTH.month - 1]
    doc = search(indexed, f"boiler budget from {month} {OLD_MONTH.year}")
    assert doc["hits"][0]["path"] == "meetings/boiler-budget.md"
    inside(doc, OLD_MONTH.replace(day=1), OLD_MONTH.replace(day=28) + timedelta(days=4))
    assert doc["time_range"]["phrase"] == f"from {month} {OLD_MONTH.year}"


def test_a_query_without_a_time_phrase_is_not_filtered(
    indexed: tuple[dict[str, str], str],
) -> None:
    doc = search(indexed, "boiler pressure valve")
    assert doc["time_range"] is None
    years = {day_of(h).year for h in doc["hits"]}
    assert 2021 in years and TODAY.year in years


@pytest.mark.parametrize(
    "query", ["march in step", "may I change the font", "remind me in 2 minutes", "Sunday"]
)
def test_words_that_only_look_like_dates_are_searched(
    indexed: tuple[dict[str, str], str], query: str
) -> None:
    doc = search(indexed, query)
    assert doc["time_range"] is None and doc["searched"] is None


def test_no_time_parse_searches_the_phrase_as_words(indexed: tuple[dict[str, str], str]) -> None:
    doc = search(indexed, "boiler gestern", "--no-time-parse")
    assert doc["time_range"] is None
    assert len({day_of(h) for h in doc["hits"]}) > 3


def test_an_empty_range_is_an_empty_answer(indexed: tuple[dict[str, str], str]) -> None:
    env, db = indexed
    args = ("search", "boiler", "--db", db, "--since", "1990-01-01", "--until", "1990-02-01")
    doc = json.loads(run(*args, "--json", env=env).stdout)
    assert doc["hits"] == []
    plain = run(*args, env=env)
    assert plain.returncode == 0 and "no matches" in plain.stdout
    # since after until: nothing can be inside, still a normal answer
    later = run("search", "boiler", "--db", db, "--since", "3d", "--until", "30d", env=env)
    assert later.returncode == 0


def test_sort_date_is_newest_first_and_a_bare_phrase_browses(
    indexed: tuple[dict[str, str], str],
) -> None:
    doc = search(indexed, "boiler", "--sort", "date", "--no-time-parse")
    days = [h["date"] for h in doc["hits"]]
    assert days == sorted(days, reverse=True) and len(days) > 5
    browsed = search(indexed, "in the last 7 days")
    assert browsed["searched"] == ""
    assert [day_of(h) for h in browsed["hits"]] == sorted(
        (day_of(h) for h in browsed["hits"]), reverse=True
    )
    inside(browsed, _day(7), TODAY)


def test_plain_output_shows_the_date_and_explain_the_range(
    indexed: tuple[dict[str, str], str],
) -> None:
    env, db = indexed
    out = run("search", "boiler plumber gestern", "--db", db, "--explain", env=env).stdout
    assert f"dates {_day(1).isoformat()} … {_day(1).isoformat()}" in out
    assert 'from "gestern"' in out and 'searched: "boiler plumber"' in out
    assert f"daily/{_day(1).isoformat()}.md › Boiler  {_day(1).isoformat()}" in out
    assert "(filename)" in out


def test_a_bad_date_is_a_usage_error(indexed: tuple[dict[str, str], str]) -> None:
    env, db = indexed
    result = run("search", "boiler", "--db", db, "--since", "soonish", env=env, check=False)
    assert result.returncode == 2
    assert "'soonish' is not a date" in result.stderr and "Traceback" not in result.stderr


def test_an_mtime_date_follows_the_file(
    tmp_path: Path, indexed: tuple[dict[str, str], str]
) -> None:
    """Touching a file without changing it moves its mtime date (not a frontmatter one)."""
    env, db = indexed
    vault = tmp_path / "journal"
    stamp = datetime(2022, 2, 2, 12).timestamp()
    os.utime(vault / "boiler-log.md", (stamp, stamp))
    os.utime(vault / "meetings" / "boiler-budget.md", (stamp, stamp))
    run("index", str(vault), "--db", db, env=env)
    doc = search(indexed, "boiler", "--no-time-parse")
    by_path = {h["path"]: h for h in doc["hits"]}
    assert by_path["boiler-log.md"]["date"].startswith("2022-02-02")
    assert by_path["meetings/boiler-budget.md"]["date"] == OLD_MONTH.isoformat()


def test_the_prompt_hook_keeps_the_period_of_a_time_phrase(
    indexed: tuple[dict[str, str], str],
) -> None:
    env, db = indexed
    prompt = "what did the plumber say about the rattling noise yesterday"
    out = run("context", prompt, "--db", db, "--json", env=env).stdout
    block = json.loads(out)
    assert block["hits"], block
    assert {h["date"] for h in block["hits"]} == {_day(1).isoformat()}
    assert "rattling noise" in block["text"]


def test_the_real_hook_process_keeps_the_period_of_a_time_phrase(
    indexed: tuple[dict[str, str], str],
) -> None:
    """`noteseek hook prompt` as Claude Code runs it (UserPromptSubmit JSON on stdin, a fresh
    process): a prompt with "yesterday" gets sections of yesterday's note only, while the same
    words without the phrase also find the other periods' boiler notes."""
    env, db = indexed
    env = dict(env, NOTESEEK_NO_DAEMON="1")  # the one-shot path; no daemon left behind

    def sources(prompt: str) -> set[str]:
        payload = json.dumps(
            {
                "session_id": "s1",
                "transcript_path": "/tmp/transcript.jsonl",
                "cwd": "/tmp",
                "permission_mode": "default",
                "hook_event_name": "UserPromptSubmit",
                "prompt": prompt,
            }
        )
        done = subprocess.run(
            [sys.executable, "-m", "noteseek", "hook", "prompt", "--db", db],
            input=payload, capture_output=True, text=True, env=env, timeout=300,
        )  # fmt: skip
        assert done.returncode == 0 and done.stderr == "", done.stderr
        text = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
        return {
            # "### heading (path; relevance P)": the source is what comes before the "; "
            line.rsplit("(", 1)[1].rstrip(")").split("; ")[0]
            for line in text.splitlines()
            if line.startswith("### ")
        }

    dated = sources("what did the plumber say about the boiler pressure valve yesterday")
    assert dated == {f"daily/{_day(1).isoformat()}"}, dated
    # Without the phrase the same words find the other periods' boiler notes too (the hook then
    # shows only its most confident sections), so the phrase's date filter is what kept them out.
    with Index(db, create=False) as idx:
        hits = idx.search(
            "what did the plumber say about the boiler pressure valve", min_score=0, min_answer=0
        )
    undated = {hit.path.removesuffix(".md") for hit in hits}
    assert undated - dated, undated
