"""Text from pixels: Tesseract through tesserocr, with the language models from PyPI wheels.

Picked against RapidOCR (bench/ocr_engines.py, docs/documents.md "OCR"): on our kind of images
(screenshots, a whiteboard photo, scanned pages, English and German) Tesseract's fast models
recall more words (RapidOCR's PP-OCRv4 model runs English words together) at a tenth of the CPU,
and its wheels need no system library (RapidOCR pulls opencv-python, which needs libGL). One
engine per worker process and language set, made on first use: loading the models is most of
the cost of a small image.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
import sysconfig
from pathlib import Path
from typing import Any

from .errors import UnsupportedDocumentError
from .formats import OCR_MODULES, install_hint, library_version, require
from .model import ExtractionLimits

__all__ = ["ocr_engine_name", "ocr_missing", "recognise", "rejoin_tokens"]

_ENGINES: dict[tuple[str, str], Any] = {}  # (tessdata folder, languages) -> PyTessBaseAPI
_DEFAULT_DPI = 150
_MIN_LETTERS = 2  # a recognised line without a word of two letters is noise (dots, bars)


def ocr_missing() -> str | None:
    """The first OCR package that is not installed, or None (nothing is imported)."""
    for module in OCR_MODULES:
        try:
            if importlib.util.find_spec(module) is None:
                return module
        except (ImportError, ValueError):
            return module
    return None


def ocr_engine_name() -> str:
    """`tesserocr 2.13.0` for the engine field of a result."""
    return library_version("tesserocr")


def _tessdata_dirs() -> list[Path]:
    """Where the traineddata wheels put their files: the environment's `share/tessdata` (a venv
    or system install), the user scheme's (`pip install --user`), or $TESSDATA_PREFIX."""
    dirs = []
    if os.environ.get("TESSDATA_PREFIX"):
        dirs.append(Path(os.environ["TESSDATA_PREFIX"]))
    dirs.append(Path(sys.prefix) / "share" / "tessdata")
    for scheme in sysconfig.get_scheme_names():
        if scheme.endswith("_user"):
            try:
                dirs.append(Path(sysconfig.get_path("data", scheme)) / "share" / "tessdata")
            except KeyError:
                continue
    return dirs


def _engine(languages: str) -> Any:
    # Tesseract may start a thread per core for each image; the pool already runs one worker
    # per core, so more threads only fight over the same cores.
    os.environ.setdefault("OMP_THREAD_LIMIT", "1")
    tesserocr = require("tesserocr", what="text in images (OCR)")
    wanted = [lang for lang in languages.split("+") if lang]
    folder = next(
        (
            d
            for d in _tessdata_dirs()
            if all((d / f"{lang}.traineddata").is_file() for lang in wanted)
        ),
        None,
    )
    if folder is None:
        error = UnsupportedDocumentError(
            f"needs the OCR language models {', '.join(wanted)} (traineddata), which are not "
            f"installed: {install_hint(['tessdata'])}"
        )
        error.missing_package = "tessdata"
        raise error
    key = (str(folder), languages)
    if key not in _ENGINES:
        _ENGINES[key] = tesserocr.PyTessBaseAPI(path=str(folder), lang=languages)
    return _ENGINES[key]


def _prepared(image: Any, limits: ExtractionLimits) -> Any:
    """RGB on white, dark mode turned light, no longer than `ocr_max_side`.

    Not grey: Tesseract thresholds each colour channel and keeps the best, which reads coloured
    marker on a whiteboard photo that a grey conversion washes out (measured on the whiteboard
    image of bench/ocr_engines.py: every word in RGB, none in grey)."""
    pil = require("PIL.Image", what="images")
    ops = require("PIL.ImageOps", what="images")
    if image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info):
        # Exports (Excalidraw, canvas, screenshots of windows) are often black text on a
        # transparent background: dropping the alpha would leave black on black.
        rgba = image.convert("RGBA")
        white = pil.new("RGBA", rgba.size, (255, 255, 255, 255))
        image = pil.alpha_composite(white, rgba)
    rgb = image.convert("RGB")
    longest = max(rgb.size)
    if longest > limits.ocr_max_side:
        scale = limits.ocr_max_side / longest
        size = (max(1, round(rgb.width * scale)), max(1, round(rgb.height * scale)))
        rgb = rgb.resize(size, pil.Resampling.LANCZOS)
    histogram = rgb.convert("L").histogram()
    mean = sum(i * n for i, n in enumerate(histogram)) / max(1, sum(histogram))
    if mean < 110:  # light text on a dark background (a dark-mode screenshot)
        rgb = ops.invert(rgb)
    return rgb


_TOKEN = re.compile(r"[A-Za-z0-9+/=_.:-]{4,}")
_MIXED = re.compile(r"[a-z][A-Z]|[A-Z]{2}[a-z]")


def _token_like(piece: str) -> bool:
    """Looks like part of a key or token, not a word: letters and digits mixed, or the case
    changing inside it (`cHGgMXGWV`, `5eKMDyI`); `iPhone` qualifies, `Planning` and `4471` not."""
    if not _TOKEN.fullmatch(piece):
        return False
    letters = any(c.isalpha() for c in piece)
    digits = any(c.isdigit() for c in piece)
    return (letters and digits) or bool(_MIXED.search(piece))


def rejoin_tokens(line: str) -> str:
    """Glue back a key that OCR cut into pieces: adjacent token-like pieces become one.

    Tesseract puts spaces inside long random strings (measured: a 40-character key in a
    monospace screenshot came back in three pieces), and a scrubber rule needs the whole value
    to see it. Two neighbouring token-like pieces are rare in prose, and gluing them costs a
    search little; letting a key through in pieces would put it in the index.
    """
    pieces = line.split(" ")
    out: list[str] = []
    for piece in pieces:
        if out and out[-1] and piece and _token_like(out[-1]) and _token_like(piece):
            out[-1] += piece
        else:
            out.append(piece)
    return " ".join(out)


def _keep(line: str) -> bool:
    return any(sum(c.isalnum() for c in word) >= _MIN_LETTERS for word in line.split())


def _resolution(image: Any) -> int:
    dpi = image.info.get("dpi")
    try:
        value = round(float(dpi[0])) if dpi else 0
    except (TypeError, ValueError, IndexError):
        value = 0
    return value if 70 <= value <= 1200 else _DEFAULT_DPI


def recognise(image: Any, limits: ExtractionLimits, *, dpi: int | None = None) -> str:
    """The text Tesseract reads in a Pillow image, line by line; '' when it reads no word.

    `dpi`: the resolution the pixels were made at (a rendered PDF page); else the image's own,
    else 150. It must be set: tesserocr hands an image without a file format over as a BMP,
    whose missing resolution made Tesseract read nothing on the whiteboard photo."""
    api = _engine(limits.ocr_languages)
    api.SetImage(_prepared(image, limits))
    api.SetSourceResolution(dpi or _resolution(image))
    try:
        text = str(api.GetUTF8Text() or "")
    finally:
        api.Clear()
    lines = [line.rstrip() for line in text.replace("\x0c", "").splitlines()]
    kept = (rejoin_tokens(line) for line in lines if not line.strip() or _keep(line))
    return "\n".join(kept).strip()
