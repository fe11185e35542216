"""Keyword-free secret detection: bare vendor shapes and long random base64 / hex runs.

The rules of ``noteseek.secrets.rules`` wait for a keyword (a vendor prefix, ``password``, ``api_key``).
A token pasted bare into a sentence, a list item or a table cell has none, so this module looks
at every long run of base64 / base64url / hex characters in a text and decides from the run
alone (and a few characters before it) whether it is a credential.  Pure: text in, spans out;
``noteseek.secrets.scrubber`` runs it after the keyword rules, so a vendor rule names a token first.

What is caught:

* Discord bot tokens (``<base64 user id>.<6>.<27+>``): the first part must decode to digits.
* Mailgun ``key-`` + 32 random hex.
* 40-character base64 runs (an AWS secret access key's shape) and any other base64 / base64url
  run of 20+ characters that looks machine-made: all of lower, upper and digits (or one case and
  digits for base32/base36), Shannon entropy near what a random string of that length and
  alphabet reaches (thresholds at about the 1st percentile of random strings, by simulation),
  character classes that change often (camelCase identifiers change rarely) and no alphabet
  runs ("abcdefgh…").
* Hex runs of 32+ characters with entropy, except the shapes of identifiers and hashes below.

What stays searchable, by design (docs/secrets.md has the measurements behind each):

* git SHAs (hex of up to 40 characters; a 40-hex value under a key name such as
  ``token: …`` is the ``high-entropy-assignment`` rule's), UUIDs (dashed, and compact version-4 ones), hex and base64 that the text names
  as a hash (``sha256:``, ``sha384-`` SRI, checksum, digest, commit, ``sha256sum`` output);
* ``data:`` URIs of images, fonts, audio and video; base64 that decodes to readable text
  (a ``btoa("Hello")`` example, a WebSocket nonce); multi-line and very long blobs (files,
  images, certificates: a credential is one short line); PEM blocks that are not private keys
  (certificates, public keys), and ``ssh-rsa AAAA…`` public keys.  Private keys are the
  ``private-key`` rule's, which runs first.

The value tests (entropy floors, class and word tests) are in ``noteseek.secrets.randomness``.

Measured against detect-secrets' Base64/Hex high-entropy plugins and gitleaks' generic rule
(bench/secrets_compare.py, docs/secrets.md): those need a keyword or flag git SHAs and hashes;
this detector is kept because it catches bare tokens at a lower false-positive rate there.
"""

from __future__ import annotations

import base64
import binascii
import re

from .randomness import (
    MIN_RUN,
    class_of,
    decodes_to_text,
    hex_secret,
    is_word,
    looks_random,
    shannon_entropy,
)

__all__ = ["BARE_DETECTORS", "BARE_REVISION", "find_bare_secrets", "looks_random"]

#: Bump when a threshold or an exclusion changes: part of the scrubber's fingerprint.
BARE_REVISION = 1

#: Names the detectors put in ``[REDACTED:<name>]`` markers.
BARE_DETECTORS: tuple[str, ...] = (
    "discord-bot-token",
    "mailgun-api-key",
    "aws-secret-access-key",
    "high-entropy-base64",
    "high-entropy-hex",
)

_Span = tuple[int, int, str]

MAX_RUN = 400  # longer single runs are data (images, wasm, key material is a PEM block)

# A maximal run of base64 / base64url characters.  No lookbehind: finditer scans left to
# right, so a match starts where a run starts, and a plain class repeat is the fastest scan
# sre has (MDN's 50 MB: 1.6 s with a lookbehind guard, 1.2 s without, on a loaded machine).
_RUN = re.compile(r"[A-Za-z0-9+/_\-]{20,}")
# Tried only at a run that is followed by "." (Discord's first part is 24-28 characters).
_DISCORD = re.compile(
    r"[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6,7}\.[A-Za-z0-9_\-]{27,40}(?![A-Za-z0-9_\-])"
)
_HEX = re.compile(r"[0-9a-fA-F]+")
_DIGIT = re.compile(r"[0-9]")
_UUID = re.compile(r"[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}")
_SPLIT = re.compile(r"[/_\-]+")
_SPLIT_KEEP = re.compile(r"([/_\-]+)")
_PEM_BLOCK = re.compile(r"-----BEGIN ([A-Z0-9 ]{1,40})-----.*?(?:-----END \1-----|\Z)", re.DOTALL)
_URL_TAIL = re.compile(r"(?:://|www\.)[^\s\"'<>()\[\]]*$")  # the run continues a URL
_QUERY_PARAM = re.compile(r"[?&;#]([a-z0-9_.%\[\]-]{0,40})=$")  # the run is a URL parameter's value
_SECRET_PARAMS = (
    "token", "key", "secret", "sig", "pass", "pwd", "auth", "code", "session", "sid", "sk",
    "credential", "jwt", "ticket", "hash",
)  # fmt: skip
# A key named "id" or ending in one as a word: "id", "deviceId", "X-Amz-Cf-Id", "client_id".
_ID_KEY = re.compile(
    r"""(?:\b(?:id|ID|uuid|UUID|guid|GUID)|[a-z](?:Id|ID)|[_.-](?:id|Id|ID))["']?[ \t]*[:=][ \t]*"""
    r"""["'{(\[]{0,2}\Z"""
)
_JWK_PUBLIC = re.compile(r"""(?<![a-z])["']?(?:x|y|n|e)["']?[ \t]*:[ \t]*["']$""")
_PUBLIC_ID_URL = re.compile(
    r"(?:youtube\.com/(?:channel/|watch\?v=|embed/)|youtu\.be/|docs\.google\.com/forms/d/(?:e/)?)$"
)
_MAILGUN = re.compile(r"(?:^|(?<=[/_-]))key-([0-9a-f]{32})\Z")
_FILE_NAME_NEXT = re.compile(r"(?:\.[A-Za-z0-9]{1,8}(?![A-Za-z0-9])|/)")  # ".md", ".png", "/"
_SHASUM_LINE = re.compile(r"(?:  | \*)[\w./-]+[ \t]*(?:\n|$)")  # "<hex>  file.tar.gz" (sha256sum)
_PREFIXED_HEX = re.compile(r"(?P<prefix>[A-Za-z]{2,8}?[_-]?)?(?P<hex>[0-9a-fA-F]{20,})")

# Words just before a run that say it is a hash or an identifier, not a credential.
_HASH_WORDS = (
    "sha1", "sha-1", "sha224", "sha256", "sha-256", "sha384", "sha-384", "sha512", "sha-512",
    "sha3", "md5", "blake",
    "hash", "checksum", "digest", "integrity", "commit", "revision", "rev ", "etag", "fingerprint",
    "git ", "merge", "cherry-pick", "tree ", "blob ", "object id", "oid ", "build id",
    "public key", "publickey", "public_key", "pubkey", "applicationserverkey", "certificate",
    "public-lines:", "mac:", "nonce", "websocket-accept", "websocket-key", "none-match",
)  # fmt: skip
_SRI_PREFIXES = ("sha256-", "sha384-", "sha512-")
_SSH_PUBLIC = ("ssh-rsa ", "ssh-ed25519 ", "ssh-dss ", "ecdsa-sha2-", "sk-ssh-ed25519")
_DATA_URI = re.compile(r"data:(?:image|font|audio|video|application/(?:font|x-font))[\w/+.-]*;")
_CONTEXT = 240  # characters before a run searched for a URL start (long URLs) and hash words
_MARKER = re.compile(r"\[redacted:[a-z0-9-]+\]")  # an earlier redaction names no credential


def _public_blocks(text: str) -> list[tuple[int, int]]:
    """Spans of PEM blocks that are not private keys (certificates, public keys, CSRs)."""
    if "-----BEGIN " not in text:
        return []
    return [m.span() for m in _PEM_BLOCK.finditer(text) if "PRIVATE" not in m.group(1)]


def _named_as_hash(before: str) -> bool:
    return any(word in before for word in _HASH_WORDS)


def _is_blob_line(text: str, start: int, end: int) -> bool:
    """The run is a whole line of a multi-line base64 block (a file or certificate body)."""
    if end - start < 60:
        return False
    # Only whitespace may stand between the run and its line's ends. Looked for from the run
    # outwards, not from the line's ends: searching back to the last newline made every run of a
    # long line cost its length (bench/results/scrub_many_values.md).
    line_start, line_end = start, end
    while line_start > 0 and text[line_start - 1] != "\n":
        if not text[line_start - 1].isspace():
            return False
        line_start -= 1
    while line_end < len(text) and text[line_end] != "\n":
        if not text[line_end].isspace():
            return False
        line_end += 1
    for neighbour in (
        text[text.rfind("\n", 0, max(line_start - 1, 0)) + 1 : max(line_start - 1, 0)],
        text[line_end + 1 : (lambda i: len(text) if i < 0 else i)(text.find("\n", line_end + 1))],
    ):
        candidate = neighbour.strip()
        if len(candidate) >= 16 and _RUN.fullmatch(candidate):
            return True
    return False


def _classify(text: str, start: int, end: int, *, in_url: bool = False) -> _Span | None:
    """The secret in the run ``text[start:end]`` and the detector that fired, or None."""
    value = text[start:end]
    core = value.rstrip("=")
    low_before = text[max(0, start - _CONTEXT) : start].lower()
    if "[redacted:" in low_before:
        low_before = _MARKER.sub(" ", low_before)
    mailgun = _MAILGUN.search(core)
    if mailgun is not None:  # "key-<32 hex>", alone or at the end of a path ("inbox/key-….md")
        if not hex_secret(mailgun.group(1), vendor_shape=True):
            return None
        return (start + mailgun.start(), start + mailgun.end(), "mailgun-api-key")
    id_key = _ID_KEY.search(text, max(0, start - 48), start)
    if id_key is not None and "sess" not in text[max(0, id_key.start() - 8) : id_key.end()].lower():
        return None  # the value of an id: deviceId, groupId, X-Amz-Cf-Id, client_id (not a session)
    url = in_url or _URL_TAIL.search(low_before) is not None
    if url and low_before.endswith("#"):
        return None  # a fragment names a place in the page
    prefixed_hex = _PREFIXED_HEX.fullmatch(core)
    if prefixed_hex is not None:
        pure = _HEX.fullmatch(core) is not None
        if pure and (url or _FILE_NAME_NEXT.match(text, start + len(core))):
            # Hex in a URL path or a file name names a file, a gist, a page (Notion exports name
            # every page "Title <32 hex>.md"; such a note would otherwise not be indexed at all).
            return None
        digits = core if pure else prefixed_hex["hex"]
        return _classify_hex(text, start, start + len(core), digits, pure, low_before)
    if len(value) > MAX_RUN or _UUID.fullmatch(core):
        return None
    if core.lower().startswith(_SRI_PREFIXES) or _named_as_hash(low_before[-40:]):
        return None
    if low_before.endswith("base64,") and _DATA_URI.search(low_before[-60:]):
        return None
    if any(p in low_before[-24:] for p in _SSH_PUBLIC):
        return None
    if _PUBLIC_ID_URL.search(low_before[-40:]):
        return None  # YouTube channel and video ids, Google Forms: public by design
    if "kty" in low_before and _JWK_PUBLIC.search(low_before[-16:]):
        return None  # a JSON Web Key's public members (x, y, n, e); "d" is private and goes
    if url and not in_url:
        param = _QUERY_PARAM.search(low_before)
        if param is not None and not any(w in param.group(1) for w in _SECRET_PARAMS):
            return None  # ?list=…, &t=…: ids and tracking values; ?token=…, &sig=… are checked
        if "/" in core:
            # A URL path: its parts are names; only a part that is random by itself is a key.
            return _random_part(text, start, core, "/", in_url=True)
        in_url = True
    if "/" in core or "_" in core or "-" in core:
        return _classify_joined(text, start, core, in_url=in_url)
    return _classify_random(text, start, end, core)


def _classify_random(text: str, start: int, end: int, core: str) -> _Span | None:
    if not looks_random(core) or decodes_to_text(core) or _is_blob_line(text, start, end):
        return None
    aws = len(core) == 40 and "-" not in core and "_" not in core
    return (start, end, "aws-secret-access-key" if aws else "high-entropy-base64")


def _classify_joined(text: str, start: int, core: str, *, in_url: bool) -> _Span | None:
    """A run with / _ - in it: a token (random parts), a name and a token, or words (a slug)."""
    parts: list[tuple[int, str]] = []  # (offset in core, part)
    offset = 0
    for part in _SPLIT_KEEP.split(core):
        if part and not _SPLIT.fullmatch(part):
            parts.append((offset, part))
        offset += len(part)
    if not parts:
        return None
    first, last = 0, len(parts)
    while first < last and _is_name(parts[first][1]):
        first += 1  # "inbox/", "pscale_tkn_", "PMAK-": names before the value
    while last > first and _is_name(parts[last - 1][1]):
        last -= 1
    if first == last:
        return None  # words and numbers only: a slug, a constant, a path
    middle = parts[first:last]
    if any(is_word(p, camel=False) for _, p in middle):
        # Words among the parts: a slug or a path; only a part random by itself is a secret.
        for off, part in middle:
            if len(part) >= MIN_RUN:
                found = _classify(text, start + off, start + off + len(part), in_url=in_url)
                if found is not None:
                    return found
        return None
    lo = middle[0][0]
    hi = middle[-1][0] + len(middle[-1][1])
    if hi - lo < MIN_RUN:
        return None
    if first > 0 or last < len(parts):
        return _classify(text, start + lo, start + hi, in_url=in_url)  # the value without names
    if len(middle) <= 4 and all(len(p) >= 8 and _HEX.fullmatch(p) for _, p in middle):
        # Hex groups joined by "-" ("<id>-<secret>"): one hex value, checked as a whole.
        joined = "".join(p for _, p in middle)
        if in_url or not hex_secret(joined):
            return None
        return (start, start + len(core), "high-entropy-hex")
    return _classify_random(text, start, start + len(core), core)


def _is_name(part: str) -> bool:
    """A word, a number or a short word: a part of a name rather than of a random value."""
    if part.isdigit():
        return True
    if len(part) == 2 and part.isalpha():
        return part.islower() or part.isupper() or part.istitle()
    # camelCase by ratio is not enough here: a random part sometimes has long lowercase runs
    # ("wafyqnid3chiXGIz…"), and taking it for a name would leave the rest too short to judge.
    return is_word(part, camel=False)


def _classify_hex(
    text: str, start: int, end: int, digits: str, pure: bool, low_before: str
) -> _Span | None:
    """Hex, alone or after a short vendor prefix ("dapi…"): a secret unless it is a hash or an id."""
    if pure:
        if len(digits) == 34 and digits.startswith("AC"):
            return None  # a Twilio account SID is an identifier
        if len(digits) == 40:
            return None  # a git SHA-1 (a `token: <hex>` assignment is a keyword rule's)
    if _named_as_hash(low_before[-100:]) or _SHASUM_LINE.match(text, end):
        return None
    if not hex_secret(digits):
        return None  # also: shorter than 32 (short hashes, colours, ids)
    return (start, end, "high-entropy-hex")


def _random_part(
    text: str, start: int, value: str, separators: str, *, in_url: bool = False
) -> _Span | None:
    """The first part of a run that is a secret by itself (a key in a URL path, in a slug)."""
    offset = 0
    for part in re.split(f"[{re.escape(separators)}]", value):
        if len(part) >= MIN_RUN and part != value:
            found = _classify(text, start + offset, start + offset + len(part), in_url=in_url)
            if found is not None:
                return found
        offset += len(part) + 1
    return None


def find_bare_secrets(text: str) -> list[_Span]:
    """Spans of bare tokens in ``text`` with the detector that fired, sorted by position."""
    found: list[_Span] = []
    public = _public_blocks(text)
    skip_to = 0  # the end of a Discord token: its other parts are runs too
    for m in _RUN.finditer(text):
        start, end = m.span()
        if start < skip_to:
            continue
        if text.startswith(".", end) and (start == 0 or text[start - 1] != "."):
            at = start + m.group(0).rfind("/") + 1  # "inbox/<token>.md": after the folder
            discord = _DISCORD.match(text, at)
            if discord is not None and _discord_id(discord.group(0)):
                if at > start:
                    span = _classify(text, start, at - 1)
                    if span is not None:
                        found.append(span)
                found.append((at, discord.end(), "discord-bot-token"))
                skip_to = discord.end()
                continue
        if _DIGIT.search(text, start, end) is None:
            continue  # the cheap test first: most runs are words joined by - or _
        if public and any(a <= start < b for a, b in public):
            continue
        while end < len(text) and end - m.end() < 2 and text[end] == "=":
            end += 1  # base64 padding
        span = _classify(text, start, end)
        if span is not None:
            found.append(span)
    return found


def _discord_id(token: str) -> bool:
    head = token.split(".", 1)[0]
    try:
        decoded = base64.urlsafe_b64decode(head + "=" * (-len(head) % 4))
    except (binascii.Error, ValueError):
        return False
    if not (len(decoded) >= 17 and decoded.isdigit()):
        return False
    # The id is a snowflake; the HMAC part is random: reject "…aaaa…" look-alikes.
    hmac = token.rsplit(".", 1)[1]
    classes = {class_of(c) for c in hmac} - {3}
    return len(classes) >= 2 and shannon_entropy(hmac) >= 3.5
