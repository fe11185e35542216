"""Is a string machine-made? Value tests behind the keyword-free detector (`entropy.py`).

Pure functions of one string, no context: Shannon entropy against a floor set at about the 0.5th
percentile of random strings of the same length and alphabet, character-class changes, lower-lower
and upper-upper neighbours (camelCase words have many), vowels (pronounceable words), alphabet runs,
hex shape, base64 that decodes to readable text, and whether a part of a run is a plain word.
docs/secrets.md has the simulation behind the floors and the real-corpus false positives.
"""

from __future__ import annotations

import base64
import binascii
import itertools
import math
import re
from collections import Counter

__all__ = [
    "MIN_HEX",
    "MIN_RUN",
    "decodes_to_text",
    "hex_secret",
    "is_word",
    "looks_random",
    "shannon_entropy",
]

MIN_RUN = 20  # shorter random strings are ids, short hashes, colours
MIN_HEX = 32

_HEX = re.compile(r"[0-9a-fA-F]+")
_DIGIT = re.compile(r"[0-9]")
_DIGITS = re.compile(r"[0-9]+")
_UUID_COMPACT_V4 = re.compile(r"[0-9a-f]{12}4[0-9a-f]{3}[89ab][0-9a-f]{15}", re.IGNORECASE)


def shannon_entropy(value: str) -> float:
    """Shannon entropy of ``value`` in bits per character."""
    n = len(value)
    if n == 0:
        return 0.0
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values())


def _entropy_floor(n: int, alphabet: int) -> float:
    # About the 0.5th percentile of the entropy of random strings of length n drawn from an
    # alphabet of that size (10,000-sample simulation per length, docs/secrets.md).
    if alphabet >= 60:
        return min(0.83 * math.log2(n), 4.8)
    if alphabet >= 32:
        return min(0.77 * math.log2(n), 4.4)
    return 3.2 if n >= 40 else 3.0


def class_of(ch: str) -> int:
    if "a" <= ch <= "z":
        return 0
    if "A" <= ch <= "Z":
        return 1
    if "0" <= ch <= "9":
        return 2
    return 3


def looks_random(value: str) -> bool:
    """True for a run that looks machine-made (a key, a token), False for words and identifiers."""
    n = len(value)
    if n < MIN_RUN:
        return False
    # Separators (+ / _ -) are transparent: they are 1/16 of a random base64url run but
    # would count as class changes between the words of a slug.
    classes = [k for k in map(class_of, value) if k != 3]
    if len(classes) < MIN_RUN:
        return False
    has_lower, has_upper, has_digit = 0 in classes, 1 in classes, 2 in classes
    if not has_digit:
        return False  # P(no digit) of a random 20-char base64 run is 3 %; of 40 chars 0.1 %
    pairs = list(itertools.pairwise(classes))
    m = len(pairs)
    changes = sum(a != b for a, b in pairs) / m
    if has_lower and has_upper:
        alphabet = 64
        # In random base64 a quarter of the neighbours are lower-lower (upper-upper): 0.165
        # each; words in camelCase are mostly lower-lower ("compressedTexSubImage2D": 0.64).
        same_lower = sum(a == b == 0 for a, b in pairs) / m
        same_upper = sum(a == b == 1 for a, b in pairs) / m
        if changes < 0.33 or same_lower > 0.4 or same_upper > 0.4:
            return False  # identifiers: "getElementsByTagName2", "WebGL2RenderingContext"
    elif has_lower or has_upper:
        alphabet = 36  # base36 / base32: one case and digits
        digits = classes.count(2) / len(classes)
        if not 0.12 <= digits <= 0.7 or changes < 0.2:
            return False  # "nistspecialpublication800": letters, then a number
        letters = [c for c in value.lower() if c.isalpha()]
        if sum(c in "aeiou" for c in letters) > 0.4 * len(letters):
            return False  # pronounceable: words with numbers ("depth32float"); random is 0.19
    else:
        return False  # digits only: numbers, phone numbers, dates
    steps = sum(1 for a, b in itertools.pairwise(value) if abs(ord(a) - ord(b)) == 1)
    if steps > 0.2 * n:
        return False  # "abcdefghijklmnopqrstuvwxyz0123456789": an alphabet, not a key
    return shannon_entropy(value) >= _entropy_floor(n, alphabet)


def hex_secret(value: str, *, vendor_shape: bool = False) -> bool:
    """Random-looking hex of 32+ characters; ``vendor_shape``: a prefix already names it a key."""
    n = len(value)
    if n < MIN_HEX or _DIGIT.search(value) is None or value.isdigit():
        return False
    if n == 32 and not vendor_shape and _UUID_COMPACT_V4.fullmatch(value):
        return False
    if value.upper() != value and value.lower() != value:
        return False  # mixed-case hex is base64 that happens to use few letters
    letters = sum(not c.isdigit() for c in value)
    if not 0.15 * n <= letters <= 0.85 * n:
        return False  # a long number with an exponent ("…361816E"); random hex is 3/8 letters
    steps = sum(1 for a, b in itertools.pairwise(value) if abs(ord(a) - ord(b)) == 1)
    if steps > 0.3 * n and not vendor_shape:
        return False  # "0123456789abcdef0123…" (random hex: 0.12 of the neighbours)
    return shannon_entropy(value.lower()) >= _entropy_floor(n, 16)


def decodes_to_text(value: str) -> bool:
    # A secret is random bytes; base64 of readable text (a btoa example, "the sample nonce")
    # is not one.  ``user:password`` (no space) does count as a credential.
    raw = value.rstrip("=").replace("-", "+").replace("_", "/")
    raw += "=" * (-len(raw) % 4)
    try:
        data = base64.b64decode(raw, validate=True)
    except (binascii.Error, ValueError):
        return False
    if len(data) < 8:
        return False
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    printable = sum(ch.isprintable() or ch in "\t\n\r" for ch in text)
    if printable < 0.95 * len(text):
        return False
    return " " in text or "\n" in text or text.lstrip().startswith(("{", "<", "["))


def is_word(part: str, *, camel: bool = True) -> bool:
    """A plain word, or words with a number: "inbox", "UNSIGNED", "depth32float", "stencil8".

    One case style throughout (lower, upper, Title or camelCase); random parts mix them.
    """
    if _HEX.fullmatch(part) and not part.isalpha():
        return False  # "8a0cae3f": hex digits, not a word
    chunks = [c for c in _DIGITS.split(part) if c]
    if not chunks or max(map(len, chunks)) < 3 or len(chunks) > 3:
        return False  # random hex / base36 alternates letters and digits many times
    letters = "".join(chunks)
    if not letters.isalpha() or len(letters) < 0.6 * len(part):
        return False
    if letters.islower() or letters.isupper() or all(c.istitle() for c in chunks):
        return True
    if not camel:
        return False
    # camelCase ("SVGLineElement": 0.54 of the neighbours lower-lower; random base64: 0.17)
    pairs = len(letters) - 1
    lower_pairs = sum(a.islower() and b.islower() for a, b in itertools.pairwise(letters))
    return len(letters) >= 8 and lower_pairs > 0.5 * pairs
