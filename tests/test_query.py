"""No user text can make FTS5 raise: checked against a real FTS5 table."""

from __future__ import annotations

import apsw
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from noteseek.core.query import MAX_QUERY_TERMS, fts_query, query_terms

NASTY = [
    "",
    "   ",
    '"',
    '""',
    '"unbalanced',
    "a AND",
    "OR",
    "NOT NOT",
    "NEAR(a b, 3)",
    "NEAR",
    "title:oauth",
    "col:",
    "-token",
    "foo*",
    "*",
    "^start",
    "(a OR b",
    "a) b(",
    "§3 Absatz 2",
    "C++ && C#",
    "🔥🚀 emoji only",
    "🔥",
    "x" * 10_000,
    " ".join(["word"] * 5000),
    "'; DROP TABLE chunks; --",
    "\x00nul\x00",
    "snake_case camelCase kebab-case",
    "Ünïcödé straße",
    "日本語のテキスト",
    "a+b=c",
    "{}[]<>|\\/",
    "\u200b\u200d",
    "{{domxref('Window')}}",
]


@pytest.fixture(scope="module")
def fts() -> apsw.Connection:
    db = apsw.Connection(":memory:")
    db.execute(
        "CREATE VIRTUAL TABLE t USING fts5(a, b, tokenize='unicode61 remove_diacritics 2');"
        "INSERT INTO t VALUES ('Kündigung nach §3 Absatz 2 des Mietvertrags', 'miete');"
        "INSERT INTO t VALUES ('OAuth token rotation on 401', 'security');"
        "INSERT INTO t VALUES ('snake_case and camelCase identifiers', 'code');"
    )
    return db


def run(db: apsw.Connection, text: str) -> list[int]:
    match = fts_query(text)
    if match is None:
        return []
    return [r[0] for r in db.execute("SELECT rowid FROM t WHERE t MATCH ? ORDER BY rank", (match,))]


@pytest.mark.parametrize("text", NASTY)
def test_nasty_queries_never_raise(fts: apsw.Connection, text: str) -> None:
    run(fts, text)


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=300))
def test_any_text_never_raises(fts: apsw.Connection, text: str) -> None:
    run(fts, text)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            ['"', "AND", "OR", "NOT", "NEAR", "(", ")", "*", ":", "-", "^", "+", "a", "b"]
        ),
        max_size=20,
    ).map(" ".join)
)
def test_operator_soup_never_raises(fts: apsw.Connection, text: str) -> None:
    run(fts, text)


def test_identifiers_and_german_are_found(fts: apsw.Connection) -> None:
    assert run(fts, "§3 Absatz 2")[0] == 1
    assert run(fts, "kundigung")[0] == 1  # diacritics folded
    assert run(fts, "snake_case")[0] == 3
    assert run(fts, "token:rotation")[0] == 2  # ':' is not a column filter
    assert run(fts, "NOT oauth")[0] == 2  # operators are plain words


def test_terms_are_or_ed_and_stopwords_dropped() -> None:
    assert fts_query("the rotation of tokens") == '"rotation" OR "tokens"'
    assert fts_query("the who") == '"the" OR "who"'  # only stopwords: keep them
    assert fts_query("🔥 !!") is None


def test_long_queries_are_capped() -> None:
    text = " ".join(f"w{i}" for i in range(1000))
    match = fts_query(text)
    assert match is not None
    assert match.count(" OR ") == MAX_QUERY_TERMS - 1


def test_query_terms_dedupe_and_lowercase() -> None:
    assert query_terms("Foo foo FOO bar-baz") == ["foo", "bar", "baz"]


def test_name_key_folds_case_accents_and_punctuation() -> None:
    from noteseek.core.query import name_key

    assert name_key("Mietvertrag Kündigung §3") == name_key("mietvertrag-kundigung 3")
    assert name_key("  Git_Rebase   Recipes! ") == "git rebase recipes"
    assert name_key("🔥") == ""
