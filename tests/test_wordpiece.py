"""The pure-Python WordPiece gives the `tokenizers` library's ids for the bundled model."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer

from noteseek.embedding.embedder import Model2VecEmbedder, bundled_model_path, default_embedder
from noteseek.embedding.query_encoder import _read_vocab
from noteseek.embedding.wordpiece import WordPiece

MODEL = bundled_model_path()
SAMPLE_VAULT = Path(__file__).resolve().parent.parent / "examples" / "sample-vault"


@functools.cache
def _library() -> Tokenizer:
    return Tokenizer.from_file(str(MODEL / "tokenizer.json"))


@functools.cache
def _ours() -> WordPiece:
    return WordPiece(_read_vocab(MODEL / "vocab.txt"))


@pytest.fixture
def library() -> Tokenizer:
    return _library()


@pytest.fixture
def ours() -> WordPiece:
    return _ours()


def test_the_bundled_tokenizer_is_the_one_wordpiece_py_repeats() -> None:
    config = json.loads((MODEL / "tokenizer.json").read_text("utf-8"))
    assert config["normalizer"] == {
        "type": "BertNormalizer",
        "clean_text": True,
        "handle_chinese_chars": True,
        "strip_accents": None,  # None: follows lowercase
        "lowercase": True,
    }
    assert config["pre_tokenizer"] == {"type": "BertPreTokenizer"}
    model = config["model"]
    assert (model["type"], model["unk_token"]) == ("WordPiece", "[UNK]")
    assert (model["continuing_subword_prefix"], model["max_input_chars_per_word"]) == ("##", 100)
    specials = {t["content"] for t in config["added_tokens"]}
    assert specials == {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}
    assert all(t["special"] and not t["normalized"] for t in config["added_tokens"])
    # vocab.txt (shipped with the upstream model) lists the same vocabulary in id order
    assert _read_vocab(MODEL / "vocab.txt") == model["vocab"]


EXAMPLES = [
    "",
    "   ",
    "How do I rotate the OAuth access token?",
    "Zwillingsprimzahlen und Turbinen: Übersicht über Größe, Maße & Äquivalenz",
    "naïve café résumé — “quoted” ‘text’ … ½ © ™ €100",
    "def parse_args(argv: list[str]) -> Namespace:  # snake_case camelCase §3 v2.0.1",
    "ΣΊΣΥΦΟΣ Ὀδυσσεύς Москва 東京タワー 中文字符 한국어",
    "tabs\tand\nnewlines\r\nand\x00nul\x07bell\u200bzero-width\u00a0nbsp",
    "[MASK] the [CLS]token[SEP] and [UNK] and [PAD]x",
    "a" * 101 + " " + "b" * 100,
    "https://example.com/path?query=1&x=y#frag user@example.org",
    "ǅemal İstanbul ß ﬁ ＡＢＣ ①②",
]


@pytest.mark.parametrize("text", EXAMPLES)
def test_examples_tokenise_identically(text: str, library: Tokenizer, ours: WordPiece) -> None:
    assert ours.ids(text) == library.encode(text, add_special_tokens=False).ids


def test_the_sample_vault_tokenises_identically(library: Tokenizer, ours: WordPiece) -> None:
    notes = sorted(SAMPLE_VAULT.rglob("*.md"))
    assert notes
    for path in notes:
        for paragraph in path.read_text("utf-8").split("\n\n"):
            expected = library.encode(paragraph, add_special_tokens=False).ids
            assert ours.ids(paragraph) == expected, (path.name, paragraph[:80])


# Characters whose Unicode properties are long settled. Code points assigned in recent Unicode
# versions (and private-use ones) may be classified differently by Python's unicodedata and the
# library's Rust tables; see wordpiece.py.
_SETTLED = st.one_of(
    st.characters(min_codepoint=0x00, max_codepoint=0x24F),
    st.characters(min_codepoint=0x370, max_codepoint=0x4FF),
    st.characters(min_codepoint=0x2000, max_codepoint=0x206F),
    st.characters(min_codepoint=0x3000, max_codepoint=0x30FF),
    st.characters(min_codepoint=0x4E00, max_codepoint=0x4E40),
    st.characters(min_codepoint=0x300, max_codepoint=0x36F),
    st.sampled_from(["[MASK]", "[CLS]", "[UNK]", " ", "##", "ing", "token"]),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_SETTLED, max_size=40).map("".join))
def test_random_text_tokenises_identically(text: str) -> None:
    assert _ours().ids(text) == _library().encode(text, add_special_tokens=False).ids


@functools.cache
def _embedder() -> Model2VecEmbedder:
    return default_embedder()


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=300))
def test_any_text_gives_a_query_vector_or_none(text: str) -> None:
    """Lone surrogates, controls, private use, unassigned code points: never an exception."""
    ids = _ours().ids(text)
    assert all(0 <= i < 29528 for i in ids)
    vector = _embedder().query_vector(text)
    assert vector is None or len(vector) == 256
