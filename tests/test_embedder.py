"""The bundled model loads from the package, offline, and behaves like Model2Vec potion-base-8M."""

from __future__ import annotations

import subprocess
import sys

import numpy as np

from noteseek.embedder import (
    BUNDLED_MODEL_NAME,
    Model2VecEmbedder,
    bundled_model_path,
    default_embedder,
)


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
