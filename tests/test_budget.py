from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given
from hypothesis import strategies as st

from noteseek.core.budget import estimate_tokens, fit_to_budget, truncate_at_word


@dataclass(frozen=True)
class Item:
    text: str


def test_whole_hits_are_kept_in_rank_order() -> None:
    hits = [Item("a" * 40), Item("b" * 40), Item("c" * 40)]  # 10 tokens each
    assert fit_to_budget(hits, 25) == hits[:2]
    assert fit_to_budget(hits, 30) == hits


def test_a_too_long_first_hit_is_cut_at_a_word() -> None:
    hits = [Item("alpha beta gamma delta epsilon " * 10)]
    kept = fit_to_budget(hits, 5)
    assert len(kept) == 1
    assert kept[0].text.endswith("…")
    assert len(kept[0].text) <= 20
    assert kept[0].text[:-1].split() == hits[0].text[: len(kept[0].text) - 1].split()


def test_truncate_never_cuts_inside_a_word() -> None:
    assert truncate_at_word("hello wonderful world", 12) == "hello…"
    assert truncate_at_word("short", 10) == "short"
    assert truncate_at_word("unbreakablelongword", 8) == ""


@given(st.text(alphabet="ab cd\n", max_size=300), st.integers(2, 100))
def test_truncation_is_a_prefix_made_of_whole_words(text: str, limit: int) -> None:
    cut = truncate_at_word(text, limit)
    assert len(cut) <= limit
    if cut and cut != text:
        body = cut[:-1]
        assert text.startswith(body)
        nxt = text[len(body) : len(body) + 1]
        assert nxt in (" ", "\n", "")


def test_estimate_tokens() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("abcde") == 2
