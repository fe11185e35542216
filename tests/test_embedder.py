"""The bundled model loads from the package, offline, and behaves like Model2Vec potion-base-8M."""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np

from noteseek.embedding.embedder import (
    BUNDLED_MODEL_NAME,
    Model2VecEmbedder,
    bundled_model_path,
    default_embedder,
)
from noteseek.embedding.static_model import read_safetensors_header


def test_bundled_model_files_ship_inside_the_package() -> None:
    folder = bundled_model_path()
    assert folder.is_relative_to(__import__("noteseek").__path__[0])
    for name in ("model.safetensors", "tokenizer.json", "config.json", "ATTRIBUTION.txt"):
        assert (folder / name).is_file(), name


def test_embeddings_are_unit_length_and_semantic() -> None:
    model = default_embedder()
    assert model.name == BUNDLED_MODEL_NAME and model.dim == 256
    vectors = model.embed(
        ["rotate the oauth access token", "refresh token expiry", "banana bread recipe"]
    )
    assert vectors.shape == (3, 256) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]
    assert model.embed([]).shape == (0, 256)


def test_fingerprint_is_stable_and_cheap() -> None:
    a, b = Model2VecEmbedder(), Model2VecEmbedder()
    assert a.fingerprint == b.fingerprint
    assert a._model is None  # computing the fingerprint did not load the weights


def test_loading_needs_no_network() -> None:
    """Load and embed in a fresh interpreter where every socket connection fails."""
    code = (
        "import socket\n"
        "def refuse(*a, **k): raise OSError('network disabled in test')\n"
        "socket.socket.connect = refuse\n"
        "socket.create_connection = refuse\n"
        "import noteseek\n"
        "v = noteseek.default_embedder().embed(['offline'])\n"
        "print(v.shape)\n"
    )
    env = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "(1, 256)"


def _model2vec_embed(texts: list[str]) -> np.ndarray:
    """What Model2VecEmbedder.embed returned when it always went through model2vec."""
    from model2vec import StaticModel

    model = StaticModel.from_pretrained(str(bundled_model_path()))
    vectors = np.asarray(
        model.encode(texts, use_multiprocessing=False, show_progress_bar=False), dtype=np.float32
    )
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(vectors / norms, dtype=np.float32)


EDGE_TEXTS = [
    "",
    " ",
    "\n\t",
    "how to center a div with flexbox",
    "Straße über Äpfel: Kündigungsfrist nach § 622 Abs. 2 BGB",
    "日本語のテキストと中文 и кириллица",
    "emoji 🙂🚀 and ZWJ 👩‍💻",
    "def f(x: int) -> int:\n    return x ** 2  # code {}[]()",
    "[UNK] [CLS] [SEP] [PAD] [MASK]",
    "\x00\x01\x7f control characters",
    "word " * 700,  # > 512 tokens: token truncation
    "supercalifragilisticexpialidocious" * 60,  # > 512 characters, few words: char truncation
    "x" * 5000,
    # The piece cache (embedding/piece_cache.py) splits at whitespace and ASCII punctuation:
    # every way a boundary could differ from BERT's.
    "a\x1cb c\x1dd e\x1ef g\x1fh i\x0bj k\x0cl m\x85n",  # str.split whitespace, BERT controls
    "cafe\u0301 \u0301accent .\u0301dot e\u0301.\u0301",  # combining marks at boundaries
    "nbsp\xa0here\u2003em\u3000ideographic\x0bvt\x0cff\x85nel",
    "ΟΔΟΣ σοφός ΣΟΦΟΣ; ς",  # final sigma, Greek question mark (NFD: ';')
    "x[CLS]y [SEP]z a[MASK] [UNK]b [pad] [ CLS ]",  # added tokens inside pieces
    "日本語の文章です。中文句子，English mixed汉字.",
    "k\u212a \ufb01ligature ＡＢＣ！ fullwidth",  # Kelvin sign, ligature, fullwidth punctuation
    "a" * 99 + " " + "b" * 100 + " " + "c" * 101 + "." + "d" * 150,  # around WordPiece's 100
    "https://example.org/a_b-c?x=1&y=[2]#frag{x}|~`^ " * 40,  # punctuation runs past 512 tokens
    "-" * 900 + " tail",
]


def test_fast_encoder_is_used_for_the_bundled_model() -> None:
    from noteseek.embedding.static_model import StaticModel

    model = default_embedder()
    model.embed(["load"])
    assert isinstance(model._model, StaticModel)


def test_fast_encoder_gives_model2vecs_vectors_bit_for_bit() -> None:
    rng = np.random.default_rng(3)
    words = [*" ".join(EDGE_TEXTS).split(), "token", "rotation", "rebase", "Vault", "ß"]
    random_texts = [
        " ".join(rng.choice(words, size=int(rng.integers(0, 900))).tolist()) for _ in range(1100)
    ]
    texts = EDGE_TEXTS + random_texts  # > 1024 texts: model2vec's batching is mirrored too
    ours = default_embedder().embed(texts)
    reference = _model2vec_embed(texts)
    assert ours.dtype == np.float32 and ours.shape == reference.shape
    assert ours.tobytes() == reference.tobytes()
    for text in EDGE_TEXTS:  # one at a time, as queries are embedded
        assert default_embedder().embed([text]).tobytes() == _model2vec_embed([text]).tobytes()


def test_the_piece_cache_gives_the_same_vectors_warm_cold_and_when_it_fills() -> None:
    from noteseek.embedding.piece_cache import PieceTokenizer

    rng = np.random.default_rng(5)
    words = " ".join(EDGE_TEXTS).split()
    texts = [
        " ".join(rng.choice(words, size=int(rng.integers(0, 60))).tolist()) for _ in range(300)
    ]
    reference = _model2vec_embed(texts)
    embedder = default_embedder()
    cold = embedder.embed(texts)
    warm = embedder.embed(texts)  # every piece is cached now
    model = embedder._model
    assert model.pieces is not None
    # A cache of 50 entries is emptied again and again within one call and across calls.
    small = PieceTokenizer(
        model.tokenizer,
        vocab_size=model.embedding.shape[0],
        max_length=model.max_length,
        unk_token_id=model.unk_token_id,
        added_tokens=("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"),
        max_pieces=50,
    )
    object.__setattr__(model, "pieces", small)
    refilled = np.concatenate([embedder.embed(texts[i : i + 7]) for i in range(0, len(texts), 7)])
    assert len(small._cache) <= 50 + 7 * 60 * 3
    for vectors in (cold, warm, refilled):
        assert vectors.tobytes() == reference.tobytes()


def test_tokenizers_the_piece_cache_cannot_mirror_get_none(tmp_path: Path) -> None:
    from tokenizers import Tokenizer

    from noteseek.embedding.piece_cache import piece_tokenizer

    spec = json.loads((bundled_model_path() / "tokenizer.json").read_text("utf-8"))
    assert piece_tokenizer(
        Tokenizer.from_str(json.dumps(spec)), vocab_size=30522, max_length=512, unk_token_id=100
    )
    spec["pre_tokenizer"] = {"type": "Whitespace"}
    assert (
        piece_tokenizer(
            Tokenizer.from_str(json.dumps(spec)), vocab_size=30522, max_length=512, unk_token_id=100
        )
        is None
    )


def test_models_the_fast_encoder_does_not_support_fall_back_to_model2vec(tmp_path: Path) -> None:
    from noteseek.embedding.static_model import load_static_model

    folder = tmp_path / "quantised"
    shutil.copytree(bundled_model_path(), folder)
    header, start = read_safetensors_header(folder / "model.safetensors")
    # Add a `weights` tensor (as vocabulary-quantised models have): a layout we leave to model2vec.
    rows = header["embeddings"]["shape"][0]
    data = (folder / "model.safetensors").read_bytes()[start:]
    header["weights"] = {
        "dtype": "F32",
        "shape": [rows],
        "data_offsets": [len(data), len(data) + 4 * rows],
    }
    blob = json.dumps(header).encode()
    weights = np.ones(rows, dtype=np.float32).tobytes()
    (folder / "model.safetensors").write_bytes(struct.pack("<Q", len(blob)) + blob + data + weights)
    assert load_static_model(folder) is None
    embedder = Model2VecEmbedder(folder)
    vector = embedder.embed(["fallback works"])
    assert type(embedder._model).__module__.startswith("model2vec")
    assert vector.shape == (1, 256)


def test_safetensors_header_is_parsed_by_hand() -> None:
    header, start = read_safetensors_header(bundled_model_path() / "model.safetensors")
    assert header["embeddings"]["dtype"] == "F32"
    assert header["embeddings"]["shape"] == [29528, 256]
    assert start > 8


def test_query_path_imports_stay_lean() -> None:
    """A search-only process (the per-prompt hook) loads neither the indexer stack nor model2vec."""
    code = (
        "import sys\n"
        "import noteseek, noteseek.engine.index, noteseek.engine.search.searcher, noteseek.storage.sqlite.store\n"
        "noteseek.default_embedder().embed(['a query'])\n"
        "heavy = ['yaml', 'model2vec', 'noteseek.engine.update.run', 'noteseek.core.chunker',\n"
        "         'noteseek.secrets.scrubber', 'noteseek.core.frontmatter', 'noteseek.engine.vault_walk']\n"
        "print([m for m in heavy if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_public_names_resolve_lazily() -> None:
    import noteseek

    for name in noteseek.__all__:
        assert getattr(noteseek, name) is not None, name
    assert set(noteseek.__all__) <= set(dir(noteseek))


QUERY_TEXTS = [
    "how do I rotate the OAuth access token?",
    "Zwillingsprimzahlen und Turbinen",
    "grid-template-areas: 'header header' \"main aside\";",
    "[MASK] special [CLS] tokens",
    "x" * 5000,
    " ".join(["token"] * 2000),  # past max_length: only the first 512 tokens count
]


def test_query_vectors_are_the_same_with_either_tokenizer() -> None:
    from noteseek.embedding.query_encoder import load_query_encoder

    pure = load_query_encoder(bundled_model_path(), bert_uncased=True)
    library = load_query_encoder(bundled_model_path(), bert_uncased=False)
    assert pure is not None and library is not None
    for text in QUERY_TEXTS:
        assert pure.encode(text) == library.encode(text), text[:40]
    assert len(pure.token_ids(" ".join(["token"] * 2000))) == 512


def test_query_vector_points_where_the_document_vector_does() -> None:
    from noteseek.embedding.quantize import quantize

    model = default_embedder()
    for text in QUERY_TEXTS[:4]:
        query = model.query_vector(text)
        assert query is not None
        q = np.frombuffer(query, dtype=np.int8).astype(np.float64)
        doc = model.embed([text])[0].astype(np.float64)
        assert q @ doc / np.linalg.norm(q) > 0.999, text
        # the same quantisation as a stored row, up to float rounding of the mean
        stored = quantize(model.embed([text]))[0].astype(np.int64)
        assert np.abs(stored - q.astype(np.int64)).max() <= 1


def test_text_without_known_tokens_has_no_query_vector() -> None:
    model = default_embedder()
    for text in ("", "   ", "\x00\x01", "[UNK]"):
        assert model.query_vector(text) is None, repr(text)
