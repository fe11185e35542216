"""Bytes to text for the text formats (CSV, TSV, .txt, HTML, canvases): BOM, then UTF-8, then a guess.

Most files are UTF-8, which a strict decode proves; only the rest pay for detection. The detector is
chardet 7 (0BSD, 4.6 MB installed), measured against charset-normalizer (MIT, 1.0 MB) on real
text (bench/documents_libraries.py): of 184 German XQuAD paragraphs in cp1252 chardet decoded all
184 exactly, charset-normalizer 174 (it guessed cp1250, cp775, mac_latin2: "ü" became "³"); of the
same sentences as rows of a semicolon CSV, the file a German Excel exports, 184 against 137.
chardet is slower (5.0 against 2.3 ms per sample), which only files that are not UTF-8 pay.
"""

from __future__ import annotations

import codecs
import re
from pathlib import Path

from .errors import CorruptDocumentError
from .formats import require

__all__ = ["decode_text", "file_encoding"]

_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)
_DETECT_BYTES = 256 * 1024  # enough for a confident guess, bounded for huge files
_BLOCK = 1 << 20


def _declared_html_charset(data: bytes) -> str | None:
    match = _META_CHARSET.search(data[:4096])
    if not match:
        return None
    name = match.group(1).decode("ascii", "replace")
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


def decode_text(data: bytes, *, html: bool = False) -> tuple[str, str]:
    """Decode `data`; return the text and the encoding used. Raises if it is not text at all."""
    for bom, name in _BOMS:
        if data.startswith(bom):
            return data.decode(name, errors="replace"), name
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    if html:
        declared = _declared_html_charset(data)
        if declared:
            return data.decode(declared, errors="replace"), declared
    name = _guess(data)
    return data.decode(name, errors="replace"), name


def file_encoding(path: Path) -> str:
    """The encoding `decode_text` would pick for the file's bytes, found without holding them:
    the BOM, else UTF-8 when a strict decode of the whole file in blocks passes, else a guess
    from the first bytes. For files read as a stream (CSV), whose size only the limits bound."""
    with path.open("rb") as handle:
        head = handle.read(_DETECT_BYTES)
        for bom, name in _BOMS:
            if head.startswith(bom):
                return name
        decoder = codecs.getincrementaldecoder("utf-8")()
        try:
            decoder.decode(head)
            while block := handle.read(_BLOCK):
                decoder.decode(block)
            decoder.decode(b"", final=True)
            return "utf-8"
        except UnicodeDecodeError:
            pass
    return _guess(head)


def _guess(head: bytes) -> str:
    chardet = require("chardet", what="text that is not UTF-8")
    guess = chardet.detect(head[:_DETECT_BYTES]).get("encoding")
    try:
        name = codecs.lookup(guess).name if guess else ""
    except LookupError:
        name = ""
    if not name:
        raise CorruptDocumentError("is not text in any encoding that could be detected")
    return name
