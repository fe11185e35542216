"""Rule table for the credential scrubber: what each kind of secret looks like.

Matching contract (implemented by ``noteseek.scrubber``):

* ``keywords`` are lowercase literals looked up in a lowercased copy of the text.
  A rule whose keywords are all absent is skipped without running its regex.
* ``anchored`` rules are tried only *at* keyword occurrences (``regex.match``),
  so their regex must begin where a keyword begins.  Other rules use
  ``regex.finditer`` over the whole text once a keyword is present.
* ``ignore_case`` rules are written in lowercase and matched against the
  lowercased copy (same length and offsets as the original); matching a
  literal-prefixed lowercase regex is several times faster than ``re.I``.
* ``secret_groups`` names the group(s) holding the secret; the first one that
  took part in the match is replaced, the rest of the match is kept as context.
* ``validator`` sees the original text and the secret's span and may veto it
  (placeholders, code references, low entropy).

Rules are listed in priority order: when two candidate spans overlap, the rule
listed first wins, so specific vendor formats come before generic detectors.
"""

from __future__ import annotations

import base64
import binascii
import itertools
import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

#: Bump when validator logic changes; regex and keyword edits are fingerprinted anyway.
RULES_REVISION = 5  # 4: a letters-only random password is not an identifier (_wordlike)
# 5: a secret value split by spaces to the end of its line (spaced-secret-assignment)

#: (original text, match on the haystack, secret start, secret end) -> keep?
Validator = Callable[[str, re.Match[str], int, int], bool]


@dataclass(frozen=True)
class SecretPattern:
    """One detection rule; see the module docstring for the matching contract."""

    name: str
    regex: re.Pattern[str]
    keywords: tuple[str, ...]
    secret_groups: tuple[int | str, ...] = (0,)
    anchored: bool = False
    ignore_case: bool = False
    validator: Validator | None = None
    # Strings one of which must occur before the keywords are even looked up: a rule with many
    # keywords (command names) costs one substring search per keyword on every text otherwise.
    gate: tuple[str, ...] = ()


# --------------------------------------------------------------------------- helpers


def shannon_entropy(value: str) -> float:
    """Return the Shannon entropy of ``value`` in bits per character."""
    n = len(value)
    if n == 0:
        return 0.0
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values())


# Whole values that are documentation stand-ins or language literals, never secrets.
_PLACEHOLDER_WORDS = frozenset([
    "password", "passwd", "pass", "pwd", "passphrase", "secret", "token", "key", "apikey",
    "api_key", "value", "string", "str", "none", "null", "nil", "undefined", "true", "false",
    "empty", "required", "optional", "redacted", "hidden", "changeme", "change_me", "foo", "bar",
    "baz", "qux", "test", "xxx", "todo", "tbd", "n/a", "na", "env", "default",
    "passwort", "kennwort", "geheim",  # German vaults' stand-ins
])  # fmt: skip
# Substrings that mark a stand-in ("<your-token>", "sk-xxxx", "EXAMPLEKEY", "********").
_PLACEHOLDER_HINTS = (
    "your", "example", "placeholder", "redacted", "dummy", "xxxx", "****", "....", "\u2026",
    "\u2022\u2022", "replace_me", "insert",
)  # fmt: skip
# Template / variable syntax: ${X}, $X, {{ x }}, <%= x %>, %(x)s, #{x}, {x}, <x>, [x],
# and bind/route parameters such as :password, :pass?, @password.
_TEMPLATE_RE = re.compile(
    r"""^(?:\$\{|\$\(|\{\{|<%|%\(|%[sd]$|\#\{|[$@:][A-Za-z_][A-Za-z0-9_]*\??$
        |<[^<>]*>$|\{[^{}]*\}$|\[[^\[\]]*\]$)""",
    re.VERBOSE,
)
# Unquoted code that reads a secret from elsewhere rather than containing it.
_CODE_REF_RE = re.compile(
    r"""^(?:[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+  # req.body.password
        |(?:os\.)?(?:environ|getenv)\b.*|process\.env\b.*)$""",
    re.VERBOSE,
)
_PATH_RE = re.compile(r"^(?:~|\.{1,2})?/[\w.@%+~/-]*$")  # $PWD, password_file=/run/secrets/db
_IDENT_RE = re.compile(r"^[A-Za-z_$][\w$-]*$")
_CAMEL_RE = re.compile(r"[a-z][A-Z]")
_WORD_RE = re.compile(r"[A-Za-z]+")
_LINE_END_RE = re.compile(r"[ \t]*(?:[\r\n,;|)}\]#]|$)")
_UUID_RE = re.compile(r"^[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}$")
_HEX_RE = re.compile(r"^[0-9a-fA-F]+$")
_B64_RUN_RE = re.compile(r"[A-Za-z0-9+/]{40}")
_SECRET_WORDS = ("password", "passwd", "secret", "token", "apikey", "api_key", "api-key")
_PASSWORD_CORE_RE = re.compile(r"^(?:pass(?:w(?:or)?d|wort|phrase)?|kennwort|pwd|pw)")
# Key suffixes that name metadata about a password rather than the password itself.
_PASSWORD_META_SUFFIXES = (
    "length", "len", "min", "max", "policy", "field", "label", "hint", "regex", "pattern",
    "prompt", "placeholder", "input", "type", "strength", "rule", "reset", "expir", "salt",
    "hash", "file", "path", "manager", "credential",
)  # fmt: skip


def is_placeholder(value: str) -> bool:
    """Return True for values that are obviously stand-ins (masks, templates, hints)."""
    v = value.strip()
    if not v or len(set(v)) <= 2:  # "", "********", "xxxxxx", "0000", "abab"
        return True
    low = v.lower()
    if low in _PLACEHOLDER_WORDS or _TEMPLATE_RE.match(v):
        return True
    # A stand-in is typed in one case ("your-token", "YOUR_KEY", "Example"); "yoURyua" inside
    # a random token is chance (found by a property test: a Telegram token was kept).
    return any(
        hint in low and (hint in v or hint.upper() in v or hint.capitalize() in v)
        for hint in _PLACEHOLDER_HINTS
    )


def _is_bare(m: re.Match[str]) -> bool:
    # The value alternative is the last group to close, so lastgroup names it.
    return m.lastgroup == "bare"


def _identifier_before(text: str, pos: int) -> str:
    # Walk back over the rest of a key name (e.g. "Sec-WebSocket-" before "Key").
    i = pos
    while i > 0 and pos - i < 64 and (text[i - 1].isalnum() or text[i - 1] in "_.-$"):
        i -= 1
    return text[i:pos].lower()


def _looks_random(value: str, min_entropy: float) -> bool:
    # Machine-made tokens mix character classes and have high entropy; placeholder
    # runs ("XXXX", "abcdef...") and words fail one of the two checks.
    classes = sum(any(test(c) for c in value) for test in (str.islower, str.isupper, str.isdigit))
    return classes >= 2 and shannon_entropy(value) >= min_entropy and not is_placeholder(value)


# ------------------------------------------------------------------------ validators


def _token_ok(text: str, m: re.Match[str], s: int, e: int) -> bool:
    """Vendor-prefixed token: reject fakes like ``ghp_xxxx…`` or ``sk-your-key-here``."""
    return _looks_random(text[s:e], 3.0)


def _aws_key_id_ok(text: str, m: re.Match[str], s: int, e: int) -> bool:
    """AWS key ids are base32-ish: real ones always carry digits among the letters."""
    body = text[s + 4 : e]
    return any(c.isdigit() for c in body) and not is_placeholder(text[s:e])


def _private_key_ok(text: str, m: re.Match[str], s: int, e: int) -> bool:
    """A PEM body must contain real base64, not ``${exported}`` or the next line of code."""
    return _B64_RUN_RE.search(text, s, e) is not None


def _basic_auth_ok(text: str, m: re.Match[str], s: int, e: int) -> bool:
    """Basic credentials must decode to ``user:password``."""
    raw = text[s:e]
    try:
        decoded = base64.b64decode(raw + "=" * (-len(raw) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    return b":" in decoded and not is_placeholder(raw)


def _url_password_ok(text: str, m: re.Match[str], s: int, e: int) -> bool:
    """``user:password@`` with a real-looking password, not ``user:password`` or ``${PASS}``."""
    pw = text[s:e]
    return not is_placeholder(pw) and not any(w in pw.lower() for w in _SECRET_WORDS)


def _wordlike(value: str) -> bool:
    """Letters in words, as in an identifier: at least half of the neighbouring letters are both
    lower case (`passwordInput` 0.83, `getElementById` and `XMLHttpRequest` 0.54), where a random
    mix of cases has about a quarter (`PSSlWXWGVKPxts` 0.15); so a generated letters-only password
    is not taken for code. A random one with long lower-case runs still is."""
    letters = [c for c in value if c.isalpha()]
    pairs = len(letters) - 1
    lower = sum(a.islower() and b.islower() for a, b in itertools.pairwise(letters))
    return pairs > 0 and lower >= 0.5 * pairs


def _password_ok(text: str, m: re.Match[str], s: int, e: int) -> bool:
    """Assigned password: weak passwords count, code and prose do not."""
    v = text[s:e]
    if len(v) < 4 or is_placeholder(v):
        return False
    suffix = _PASSWORD_CORE_RE.sub("", m.group("key"), count=1)
    if any(word in suffix for word in _PASSWORD_META_SUFFIXES):
        return False  # password_length, password_policy, passwordField, ...
    has_digit = any(c.isdigit() for c in v)
    if not has_digit and any(w in v.lower() for w in (*_SECRET_WORDS, "pass")):
        return False  # "Enter password", "some_password", "bypass": words, not secrets
    if v.isdigit() and len(v) < 6:
        return False  # lengths, counts, ports
    if _is_bare(m):
        if _CODE_REF_RE.match(v) or _PATH_RE.match(v):
            return False  # req.body.password, process.env.PASSWORD, PWD=/home/me
        if (
            not has_digit
            and _IDENT_RE.match(v)
            and (_CAMEL_RE.search(v) or "_" in v)
            and _wordlike(v)
        ):
            return False  # passwordInput, user_password: code identifiers
        if m["colon"] and _WORD_RE.fullmatch(v) and not _LINE_END_RE.match(text, e):
            return False  # prose label "Low Pass: Allows frequencies ..."; YAML ends the line
    return True


# What makes a value in a sentence a password rather than the next word: a digit, a symbol that
# prose does not use, or a capital inside a word ("The password is incorrect" / "is Tr0ub4dor").
_STRONG_RE = re.compile(r"[0-9!#$%&*+/=?@^_~\\]|[a-z][A-Z]")
# "8-characters", "12 Zeichen": a length, not a password.
_COUNT_RE = re.compile(
    r"[0-9]+[ -]?(?:chars?|characters?|digits?|letters?|bytes?|bits?|zeichen|ziffern|stellen)",
    re.IGNORECASE,
)
_VERSION_RE = re.compile(r"^v?[0-9]+(?:\.[0-9]+)+(?:[-+.][0-9A-Za-z.]*)?$")
_EOL_RE = re.compile(r"[ \t]*(?:\r?\n|$|\|)")
_COLOUR_RE = re.compile(r"^#(?:[0-9a-fA-F]{3,4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$")
_ENV_REF_RE = re.compile(r"^(?:%[A-Za-z_][\w]*%|\$[A-Za-z_{(].*|\$)$")  # %PASS%, $PASS, ${X}


def password_value_ok(value: str, *, strict: bool = False) -> bool:
    """A value in a password's place (a table cell, a command's flag, a sentence): weak passwords
    count, stand-ins and references do not; ``strict`` (prose, short keys such as ``pass``) also
    asks for a digit, a symbol or an inner capital, so an ordinary word is left alone."""
    v = value.strip()
    if not 4 <= len(v) <= 256 or is_placeholder(v) or _TEMPLATE_RE.match(v):
        return False
    if v.startswith("-") or _ENV_REF_RE.match(v) or _CODE_REF_RE.match(v):
        return False  # another flag, an environment variable, req.body.password
    if "://" in v or _PATH_RE.match(v) or _COLOUR_RE.match(v):
        return False  # a URL, a path, a colour ("password — #1e90ff" in a style guide)
    if not any(c.isdigit() for c in v) and any(
        w in v.lower() for w in (*_SECRET_WORDS, "pass", "kennwort")
    ):
        return False  # "Enter password", "your_passwort": words about a password
    if v.isdigit() and len(v) < 6:
        return False  # lengths, counts, ports (a PIN has its own rule)
    if strict:
        if _UUID_RE.match(v) or _VERSION_RE.match(v) or _COUNT_RE.fullmatch(v):
            return False  # an id, a version, a length
        if len(v) == 40 and _HEX_RE.match(v):
            return False  # a git commit, as the keyword-free layer keeps it
        return _STRONG_RE.search(v) is not None
    return True


def token_value_ok(value: str) -> bool:
    """A value in a token's or key's place: machine-made, as for a ``token:`` assignment."""
    v = value.strip()
    if len(v) < 8 or any(c.isspace() for c in v) or "://" in v or _CODE_REF_RE.match(v):
        return False
    if not any(c.isdigit() for c in v) and not (len(v) >= 20 and _CAMEL_RE.search(v)):
        return False
    return _looks_random(v, 3.0)


def pin_value_ok(value: str) -> bool:
    """Four to eight digits, not a stand-in such as ``0000``."""
    v = value.strip()
    return v.isdigit() and 4 <= len(v) <= 8 and not is_placeholder(v)


def _prose_password_ok(text: str, m: re.Match[str], s: int, e: int) -> bool:
    """A password named in a sentence: quoted, any value; bare, one that is not a word.  After
    a dash ("Password - x") the value must end the line: "password — v2.3.1 adds" is prose."""
    if m.group("dash") and not _EOL_RE.match(text, e):
        return False
    return password_value_ok(text[s:e], strict=_is_bare(m))


def _flag_password_ok(text: str, m: re.Match[str], s: int, e: int) -> bool:
    """The value of a password flag: a generic ``--password X`` must not be a word."""
    return password_value_ok(text[s:e], strict=(m.lastgroup or "").startswith("generic"))


def _pin_ok(text: str, m: re.Match[str], s: int, e: int) -> bool:
    return pin_value_ok(text[s:e])


def _secret_value_ok(text: str, m: re.Match[str], s: int, e: int) -> bool:
    """Explicitly named secret/token/API key: value must look machine-made."""
    v = text[s:e]
    if len(v) < 8 or any(c.isspace() for c in v) or "://" in v:
        return False
    if _is_bare(m) and _CODE_REF_RE.match(v):
        return False
    if not any(c.isdigit() for c in v) and not (len(v) >= 20 and _CAMEL_RE.search(v)):
        return False  # identifiers and words ("identifier", "bearer", "csrf_token")
    return _looks_random(v, 3.0)


def _spaced_value_ok(text: str, m: re.Match[str], s: int, e: int) -> bool:
    """A secret's value in pieces: OCR reads a long random string of a screenshot with a space
    or two inside it (and a letter as a symbol: R as ®), which ends the plain rules' value at
    the first piece, too short to look random alone. Joined, the pieces must look machine-made
    and long, as a secret-assignment value does."""
    joined = "".join(text[s:e].split())
    if len(joined) < 20 or "://" in joined or not any(c.isdigit() for c in joined):
        return False
    return _looks_random(joined, 3.5)


def _high_entropy_ok(text: str, m: re.Match[str], s: int, e: int) -> bool:
    """Generic detector: only long, dense base64/hex under a key-like name."""
    v = text[s:e]
    if _UUID_RE.match(v) or not any(c.isdigit() for c in v):
        return False
    ident = _identifier_before(text, m.start()) + m.group("key")
    if any(w in ident for w in ("public", "websocket", "nonce", "integrity", "hash")):
        return False  # public keys, handshake nonces, SRI digests are not secrets
    if _HEX_RE.match(v):
        return len(v) >= 32 and shannon_entropy(v) >= 3.0
    return _looks_random(v, 4.0)


_TWILIO_CONTEXT = ("auth_token", "authtoken", "auth token", "auth-token")
_HEX32_AFTER_COLON_RE = re.compile(r":[0-9a-f]{32}(?![0-9A-Za-z])")
_CONN_KEYS = ("server=", "data source=", "uid=", "user id=", "database=", "initial catalog=",
              "driver=", "host=", "dsn=", "username=", "user=")  # fmt: skip


def _twilio_sid_ok(text: str, m: re.Match[str], s: int, e: int) -> bool:
    """An account SID is an identifier; only redact it next to its auth token."""
    if not _token_ok(text, m, s, e):
        return False
    if _HEX32_AFTER_COLON_RE.match(text, e):
        return True  # curl -u AC…:<auth token>
    window = text[max(0, s - 400) : e + 400].lower()
    return any(word in window for word in _TWILIO_CONTEXT)


def _discord_token_ok(text: str, m: re.Match[str], s: int, e: int) -> bool:
    """The first segment of a bot token is the base64 of the bot's numeric user id."""
    head = text[s:e].split(".", 1)[0]
    try:
        decoded = base64.urlsafe_b64decode(head + "=" * (-len(head) % 4))
    except (binascii.Error, ValueError):
        return False
    return decoded.isdigit() and _looks_random(text[s:e], 3.0)


def _telegram_token_ok(text: str, m: re.Match[str], s: int, e: int) -> bool:
    """Bot tokens are <bot id>:<35 chars>, and the 35 start with "AA" (a version tag)."""
    secret = text[s:e].split(":", 1)[1]
    return secret.startswith("AA") and _looks_random(secret, 3.0)


def _pair_secret_ok(text: str, m: re.Match[str], s: int, e: int) -> bool:
    """The 40-character secret next to an AWS key id: always, unless it is a git SHA-1 (hex),
    a placeholder, or a single-case word run (a key id marks its neighbour)."""
    v = text[s:e]
    classes = sum(any(test(c) for c in v) for test in (str.islower, str.isupper, str.isdigit))
    return not _HEX_RE.match(v) and classes >= 2 and not is_placeholder(v)


def _conn_password_ok(text: str, m: re.Match[str], s: int, e: int) -> bool:
    """``Password=`` inside an ADO.NET / ODBC / JDBC-style ``key=value;`` string."""
    v = text[s:e].strip("{}\"'")
    if not v or is_placeholder(v) or _TEMPLATE_RE.match(v):
        return False
    line_start = text.rfind("\n", 0, m.start()) + 1
    line_end = text.find("\n", e)
    line = text[line_start : len(text) if line_end < 0 else line_end].lower()
    return ";" in line and any(key in line for key in _CONN_KEYS)


# --------------------------------------------------------------------------- regexes

# Value grammar shared by the assignment rules (used on the lowercased haystack):
# key, closing quote/bracket, separator, then a value that is quoted (any quote)
# or bare.  After ":" a Markdown emphasis closer is skipped ("**Password:** x").
_SEP = r"""["'\]]{0,2}[ \t]*(?:(?P<assign>:=|=>|=(?![=~>]))|(?P<colon>:(?![:/=])[*_]{0,3}))[ \t]*"""
_BARE_STOP = r"""\s"'`,;()\[\]{}|<>&"""
# "&" ends a bare value only where the next query parameter starts ("&next=..."):
# "Tr0ub4dor&3x" must not leak its tail.
_AMP = r"&(?![\w.%-]{1,64}=)"
_VCHAR = rf"(?:[^{_BARE_STOP}.]|{_AMP})"  # value character other than "."
_VCHAR_DOT = rf"(?:[^{_BARE_STOP}]|{_AMP})"
# Dot-separated runs, trailing dots excluded ("hunter2." at the end of a sentence).
# The leading lookahead caps a bare value at 256 characters, so a rejected attempt
# costs O(256) and retrying at every keyword of "password=password=..." stays linear;
# the trailing one makes the run maximal, so backtracking cannot shorten
# "os.environ[" into "os.enviro" (an atomic group would do, but needs Python 3.11).
_BARE = rf"""(?={_VCHAR_DOT}{{1,256}}(?!{_VCHAR_DOT}))
    {_VCHAR}+(?:\.+{_VCHAR}+)*(?!\.*{_VCHAR})"""
_BARE_END = r"""(?![(\[])"""  # a call or index: getpass(), os.environ["X"]


def _quoted_or_bare(inner: str, bare: str) -> str:
    # ``inner`` is a class template; {q} becomes the quote so values may hold the others.
    quoted = "|".join(
        f"{q}(?P<{g}>{inner.replace('{q}', q)}){q}"
        for q, g in (('"', "dq"), ("'", "sq"), ("`", "bq"))
    )
    return rf"""(?:{quoted}|(?P<bare>{bare}){_BARE_END})"""


_VALUE_GROUPS: tuple[int | str, ...] = ("dq", "sq", "bq", "bare")
# A word between a password key and its verb ("password for the router is"), not the verb.
_PROSE_GAP = r"(?:[ \t]+(?!(?:is|was|ist|war|lautet|are|sind)(?![a-z]))[^\s:=]{1,24})"
# A command's arguments up to the flag: same line, same command (not past a pipe or ";").
_CMD = r"(?![\w-])[^\n|;&]{0,300}?"
# The commands of the "command-line-password" rule (its keywords), and "--password" itself.
_COMMANDS = (
    "mysql", "mariadb", "sshpass", "curl", "redis-cli", "ldap", "sqlcmd", "plink", "pscp",
    "psftp", "mongo", "docker", "smbclient", "freerdp", "rdesktop", "zip", "7z", "keytool",
    "ssh-keygen", "gpg", "htpasswd", "--pass", "--pw",
)  # fmt: skip
_FLAG_NAMES = (
    "mysql", "sshpass", "redis", "ldap", "sqlcmd", "putty", "mongo", "docker", "rdp", "rdesktop",
    "zip", "sevenzip", "keytool", "keygen", "gpg", "htpasswd", "generic",
)  # fmt: skip


def _flag_value(name: str) -> str:
    # Quoted (the group inside the quotes) or bare; the value group closes last, so a match's
    # ``lastgroup`` names the flag (``_flag_password_ok`` asks whether it is the generic one).
    quoted = rf"'(?P<{name}_sq>[^'\n]{{1,128}})'|" + rf'"(?P<{name}_dq>[^"\n]{{1,128}})"'
    return rf"""(?:{quoted}|(?P<{name}>[^\s'"`|;&<>]{{1,128}}))"""


_FLAG_GROUPS: tuple[int | str, ...] = (
    *(g for n in _FLAG_NAMES for g in (f"{n}_sq", f"{n}_dq", n)),
    "curl",
    "smb",
)
_B64 = r"[a-z0-9+/=_-]{20,512}"
# Passwords may be short and contain spaces when quoted; tokens and keys may not.
_PASSWORD_VALUE = _quoted_or_bare(r"[^{q}\n]{1,256}", _BARE)
# One piece of a value split by spaces (spaced-secret-assignment): base64 padding at its end only.
_PIECE = r"""[^\s"'`;,=]{4,}={0,2}"""
_TAIL_PIECE = r"""[^\s"'`;,=]+={0,2}"""  # after the first: OCR splits anywhere, "...Gw Pq"
_SECRET_VALUE = _quoted_or_bare(r"[^{q}\s]{8,512}", _BARE)
_B64_VALUE = _quoted_or_bare(_B64, _B64 + r"(?![a-z0-9+/=_.-])")


def _rule(
    name: str,
    pattern: str,
    keywords: tuple[str, ...],
    *,
    groups: tuple[int | str, ...] = (0,),
    anchored: bool = True,
    ignore_case: bool = False,
    validator: Validator = _token_ok,
    gate: tuple[str, ...] = (),
) -> SecretPattern:
    """Compile one rule; most rules are anchored vendor tokens, hence the defaults."""
    return SecretPattern(
        name=name,
        regex=re.compile(pattern, re.VERBOSE),
        keywords=keywords,
        secret_groups=groups,
        anchored=anchored,
        ignore_case=ignore_case,
        validator=validator,
        gate=gate,
    )


# Vendor prefixes carry no left word boundary: a token glued to text ("token%3Dghp_…"
# in an encoded URL, a paste without a space) must still go; the body validators
# keep ordinary words such as "task-queue-…" from matching.  AWS ids keep one against
# capitals and digits only (AKIA + 16 capitals also occurs inside long uppercase
# runs), with an exception for a URL-encoded "=" or ":" in front.
PATTERNS: tuple[SecretPattern, ...] = (
    # The four private-key rules share one keyword, "private" (in 2% of MDN pages): one
    # substring search for the family, then a literal-prefixed finditer each.
    # PEM/PGP private key: keep the BEGIN/END lines (searchable), replace the body.
    # The body cannot run past another "-----BEGIN"/"-----END", which keeps the scan
    # linear however many unterminated headers a text holds.  Without an END (a
    # truncated paste) the base64 lines that follow the header are replaced instead.
    # Google service-account JSON: "private_key": "-----BEGIN PRIVATE KEY-----\n…\n-----END…".
    # Listed before the generic PEM rule so the marker names the vendor; the BEGIN/END
    # lines stay, as for any PEM block.
    _rule(
        "gcp-service-account-key",
        r""""private_key"[ \t]*:[ \t]*"-----BEGIN[ A-Z]{0,20}PRIVATE[ ]KEY-----
            (?P<body>(?:\\[nr]|[A-Za-z0-9+/=\s]){40,8192}?)(?=-----END|")""",
        ("private",),
        groups=("body",),
        anchored=False,
        validator=_private_key_ok,
    ),
    _rule(
        "private-key",
        r"""-----BEGIN[ A-Z0-9]{0,40}PRIVATE[ ]KEY(?:[ ]BLOCK)?-----\s*
            (?:(?P<body>(?:[^-]|-(?!----(?:END|BEGIN)))*\S)\s*
               (?=-----END[ A-Z0-9]{0,40}PRIVATE[ ]KEY)
              |(?P<tail>[A-Za-z0-9+/=]{16,}(?:[ \t]*(?:\r?\n|\\n)[ \t]*[A-Za-z0-9+/=]{16,})*))""",
        ("private",),
        groups=("body", "tail"),
        anchored=False,
        validator=_private_key_ok,
    ),
    # SSH Communications (RFC 4716 style) and PuTTY private keys: the headers stay.
    _rule(
        "ssh2-private-key",
        r"""----[ ]BEGIN[ ]SSH2[ ]ENCRYPTED[ ]PRIVATE[ ]KEY[ ]----\s*
            (?P<body>(?:[^-]|-(?!---[ ](?:END|BEGIN)))*\S)\s*(?=----[ ]END)""",
        ("private",),
        groups=("body",),
        anchored=False,
        validator=_private_key_ok,
    ),
    _rule(
        "putty-private-key",
        r"""PuTTY-User-Key-File-[0-9]:[^\n]{0,200}\n(?:[^\n]{0,2000}\n){0,40}?
            Private-Lines:[ \t]*[0-9]{1,4}[ \t]*\r?\n
            (?P<body>[A-Za-z0-9+/=]{4,128}(?![^\r\n])(?:\r?\n[A-Za-z0-9+/=]{4,128}(?![^\r\n])){0,200})""",
        ("private",),
        groups=("body",),
        anchored=False,
        validator=_private_key_ok,
    ),
    # JSON Web Token: base64url header starting {" (eyJ), payload, signature (and the
    # two extra parts of a JWE).  Segment lengths are bounded so that retrying at
    # every "eyJ" of a long base64url run costs O(bound) per try, not O(run).
    _rule(
        "jwt",
        r"""eyJ[A-Za-z0-9_-]{10,1024}\.[A-Za-z0-9_-]{10,8192}\.[A-Za-z0-9_-]{10,2048}
            (?:\.[A-Za-z0-9_-]{1,8192}){0,2}""",
        ("eyj",),
    ),
    # Anthropic shares the OpenAI keyword: one substring search serves both rules.
    _rule("anthropic-api-key", r"sk-ant-[A-Za-z0-9_-]{32,400}", ("sk-",)),
    # Legacy sk-<48>, project/service/admin keys sk-proj-…; not sk-ant- (above).
    _rule(
        "openai-api-key", r"sk-(?!ant-)(?:(?:proj|svcacct|admin)-)?[A-Za-z0-9_-]{32,400}", ("sk-",)
    ),
    # ghp_ (PAT), gho_ (OAuth), ghu_/ghs_ (app), ghr_ (refresh).  One stem keyword
    # instead of five: the regex starts with the literal "gh", which re's C search
    # loop finds as fast as str.find, so finditer costs a single pass.
    _rule(
        "github-token", r"gh[pousr]_[A-Za-z0-9]{36,251}(?![A-Za-z0-9_])", ("gh",), anchored=False
    ),
    _rule(
        "github-fine-grained-pat",
        r"github_pat_[A-Za-z0-9_]{50,245}(?![A-Za-z0-9_])",
        ("github_pat_",),
    ),
    # PAT, deploy, runner, trigger, CI job, feed, mail, agent, OAuth, SCIM, flag tokens.
    _rule(
        "gitlab-token",
        r"""gl(?:pat|dt|rt|ptt|cbt|ft|imt|agent|oas|soat|ffct)-
            [A-Za-z0-9_.-]{20,300}(?![A-Za-z0-9_-])""",
        ("gl",),  # stem, as for GitHub: eleven prefixes, one literal
        anchored=False,
    ),
    # AKIA (long-term) and ASIA (STS session) ids; the rarer ABIA/ACCA are left out
    # because each extra keyword is one more full-text search.
    _rule(
        "aws-access-key-id",
        r"(?:(?<![A-Z0-9])|(?<=%3[AD]))A(?:KIA|SIA)[A-Z0-9]{16}(?![A-Z0-9])",
        ("akia", "asia"),
        validator=_aws_key_id_ok,
    ),
    _rule(
        "aws-secret-access-key",
        rf"""secret[_ -]?access[_ -]?key(?:[ \t]*\[[a-z]{{0,12}}\])?{_SEP}["']?(?P<secret>[a-z0-9/+]{{40}})(?![a-z0-9/+=])""",
        ("secret",),
        groups=("secret",),
        ignore_case=True,
    ),
    # A key id with its secret beside it (CSV export, "aws configure" transcript, a
    # table row): the first 40-character base64 run within three lines after the id.
    _rule(
        "aws-secret-key-pair",
        r"""A(?:KIA|SIA)[A-Z0-9]{16}(?![A-Z0-9])[^\n]{0,100}?(?:\n[^\n]{0,100}?){0,3}?
            (?<![A-Za-z0-9+/])(?P<secret>[A-Za-z0-9+/]{40})(?![A-Za-z0-9+/=])""",
        ("akia", "asia"),
        groups=("secret",),
        validator=_pair_secret_ok,
    ),
    _rule(
        "stripe-api-key",
        r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,247}(?![A-Za-z0-9_])",
        ("_live_", "_test_"),
        anchored=False,
    ),
    _rule(
        "slack-token",
        r"""(?:xox[abposre]-[0-9]{6,20}-[A-Za-z0-9-]{8,256}
              |xoxe\.xox[bp]-[0-9]-[A-Za-z0-9]{64,400}
              |xapp-[0-9]-[A-Za-z0-9]{6,40}-[0-9]{6,20}-[A-Za-z0-9]{16,256})""",
        ("xox", "xapp-"),
        anchored=False,
    ),
    # Keep the host so a search for "slack webhook" still finds the note.
    _rule(
        "slack-webhook-url",
        r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<secret>[A-Za-z0-9_/+-]{16,256})",
        ("hooks.slack.com",),
        groups=("secret",),
    ),
    _rule("google-api-key", r"AIza[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])", ("aiza",)),
    _rule(
        "google-oauth-client-secret", r"GOCSPX-[A-Za-z0-9_-]{24,40}(?![A-Za-z0-9_-])", ("gocspx-",)
    ),
    # Twilio: API key SIDs (SK + 32 hex) stand alone; an account SID (AC + 32 hex) is
    # only an identifier, redacted when its auth token is beside it.  The literal
    # "SK" prefix keeps the finditer pass as cheap as the "gh" one above.
    _rule("twilio-api-key", r"SK[0-9a-f]{32}(?![0-9A-Za-z])", ("sk",), anchored=False),
    _rule(
        "twilio-auth-token",
        r"""(?:ac[0-9a-f]{32}:|twilio[a-z0-9_]{0,20}auth[_-]?token["']?[ \t]*[:=][ \t]*["']?)
            (?P<secret>[0-9a-f]{32})(?![0-9a-z])""",
        ("twilio",),
        groups=("secret",),
        anchored=False,
        ignore_case=True,
    ),
    _rule(
        "twilio-account-sid",
        r"AC[0-9a-f]{32}(?![0-9A-Za-z])",
        ("twilio",),
        anchored=False,
        validator=_twilio_sid_ok,
    ),
    _rule(
        "sendgrid-api-key",
        r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])",
        ("sg.",),
    ),
    _rule("npm-token", r"npm_[A-Za-z0-9]{36}(?![A-Za-z0-9_])", ("npm_",)),
    # PyPI / TestPyPI API tokens are macaroons whose first bytes encode the host name.
    _rule(
        "pypi-token",
        r"pypi-(?:AgEIcHlwaS5vcmc|AgENdGVzdC5weXBpLm9yZw)[A-Za-z0-9_-]{50,1000}",
        ("pypi-age",),
    ),
    _rule("huggingface-token", r"hf_[A-Za-z0-9]{34,40}(?![A-Za-z0-9_])", ("hf_",)),
    # Personal access (dop), OAuth (doo) and refresh (dor) tokens share the "_v1_" stem.
    _rule(
        "digitalocean-token",
        r"do[por]_v1_[a-f0-9]{64}(?![A-Za-z0-9])",
        ("_v1_",),
        anchored=False,
    ),
    # Admin API access (shpat), custom app (shpca), private app (shppa), shared secret (shpss).
    _rule("shopify-token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}(?![A-Za-z0-9])", ("shp",)),
    # "key-" + 32 hex is too common a shape to trust without the vendor's name nearby.
    _rule(
        "mailgun-api-key",
        r"""(?<![A-Za-z0-9_-])(?:key-[0-9a-f]{32}|[0-9a-f]{32}-[0-9a-f]{8}-[0-9a-f]{8})
            (?![A-Za-z0-9])""",
        ("mailgun",),
        anchored=False,
    ),
    # Storage / Service Bus / Event Hubs connection strings: AccountKey=…; SharedAccessKey=…;
    _rule(
        "azure-connection-string-key",
        r"(?:(?<=account)|(?<=sharedaccess))key[ \t]*=[ \t]*(?P<secret>[a-z0-9+/]{20,200}={0,2})",
        ("key",),  # anchored at every "key", whose positions the later rules need anyway
        groups=("secret",),
        ignore_case=True,
    ),
    # Bot token: base64(user id) . base64(timestamp) . HMAC.  No literal prefix, so the
    # rule runs only in notes that say "discord", and the first segment must decode
    # to digits.
    _rule(
        "discord-bot-token",
        r"""(?<![A-Za-z0-9_.-])[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6,7}\.[A-Za-z0-9_-]{27,40}
            (?![A-Za-z0-9_.-])""",
        ("discord",),
        anchored=False,
        validator=_discord_token_ok,
    ),
    _rule(
        "telegram-bot-token",
        r"(?<![0-9])[0-9]{8,10}:[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])",
        (":aa",),
        anchored=False,
        validator=_telegram_token_ok,
    ),
    # scheme://user:password@host -- the lookbehind sits after the literal "://" so
    # the anchor search stays a plain substring scan; only the password is replaced.
    _rule(
        "url-password",
        r"""://(?<=[A-Za-z0-9+.-]://)[^\s:/?#@\[\]"'<>`]{0,64}:
            (?P<secret>[^\s/?#"'<>`]{1,128})@""",
        ("://",),
        groups=("secret",),
        validator=_url_password_ok,
        anchored=False,
    ),
    _rule(
        "basic-auth-credentials",
        r"""authorization["']?[ \t]*[:=][ \t]*["']?basic[ \t]+
            (?P<secret>[a-z0-9+/]{8,1024}={0,2})""",
        ("authorization",),
        groups=("secret",),
        ignore_case=True,
        validator=_basic_auth_ok,
    ),
    _rule(
        "bearer-token",
        r"""(?<![a-z0-9_-])bearer[ \t]+(?P<secret>[a-z0-9._~+/-]{16,4096}=*)""",
        ("bearer",),
        groups=("secret",),
        ignore_case=True,
    ),
    # ADO.NET / ODBC / JDBC: "Server=db;User Id=app;Password=p a s s;" -- the key follows
    # a ";", the value runs to the next ";" and may hold spaces, or is {braced} /
    # quoted; the line must name another connection-string key (validator).
    _rule(
        "connection-string-password",
        r"""(?:(?<=;)|(?<=;[ \t]))(?:password|pwd)[ \t]*=[ \t]*
            (?P<secret>\{(?:[^}\n]|\}\}){1,256}\}|"[^"\n]{1,256}"|'[^'\n]{1,256}'
              |[^;\r\n"'{][^;\r\n"']{0,255}?)[ \t]*(?=;|\r?\n|$|["'])""",
        ("pass", "pwd"),
        groups=("secret",),
        ignore_case=True,
        validator=_conn_password_ok,
    ),
    # A password on a command line: the flags of the clients people paste into notes, and a
    # generic "--password X" (whose value must not be a word: "use --password option").
    _rule(
        "command-line-password",
        rf"""(?:(?:mysql(?:dump|admin|import|check|sh|slap)?|mariadb(?:-dump|-admin)?){_CMD}
                [ \t]-p(?=[^\s-]){_flag_value("mysql")}
              |sshpass{_CMD}[ \t]-p[ \t]*{_flag_value("sshpass")}
              |curl{_CMD}[ \t](?:-u|--user)(?:[ \t]+|=)?['"]?[^\s:'"@]{{1,64}}:
                (?P<curl>[^\s'"]{{1,128}})
              |redis-cli{_CMD}[ \t](?:-a|--pass)[ \t]+{_flag_value("redis")}
              |ldap(?:search|modify|add|delete|whoami|passwd|compare|modrdn|exop){_CMD}
                [ \t]-w[ \t]+{_flag_value("ldap")}
              |sqlcmd{_CMD}[ \t]-P[ \t]*{_flag_value("sqlcmd")}
              |p(?:link|scp|sftp){_CMD}[ \t]-pw[ \t]+{_flag_value("putty")}
              |mongo(?:sh|dump|restore|export|import|stat|top)?{_CMD}
                [ \t](?:-p|--password)[ \t]+{_flag_value("mongo")}
              |docker[ \t]+login{_CMD}[ \t](?:-p|--password)[ \t]+{_flag_value("docker")}
              |smbclient{_CMD}[ \t](?:-U|--user)(?:[ \t]+|=)['"]?[^\s%'"]{{1,64}}%
                (?P<smb>[^\s'"]{{1,128}})
              |freerdp[0-9]?{_CMD}[ \t]/p:{_flag_value("rdp")}
              |rdesktop{_CMD}[ \t]-p[ \t]+{_flag_value("rdesktop")}
              |zip{_CMD}[ \t]-P[ \t]*{_flag_value("zip")}
              |7za?{_CMD}[ \t]-p(?=[^\s-]){_flag_value("sevenzip")}
              |keytool{_CMD}[ \t]-(?:store|key|srcstore|deststore|srckey|destkey)pass[ \t]+
                {_flag_value("keytool")}
              |ssh-keygen{_CMD}[ \t]-[NP][ \t]+{_flag_value("keygen")}
              |gpg2?{_CMD}[ \t]--passphrase[ \t]+{_flag_value("gpg")}
              |htpasswd(?![\w-])[ \t]+-[a-zA-Z]*b[a-zA-Z]*[ \t]+(?:[^\s-]\S*[ \t]+){{1,2}}
                {_flag_value("htpasswd")}
              |--(?:pass(?:word|wd|phrase)?|pw|pwd)[ \t]+(?!-){_flag_value("generic")})""",
        _COMMANDS,
        groups=_FLAG_GROUPS,
        validator=_flag_password_ok,
        gate=(" -", "\t-", "/p:"),  # every form has a flag
    ),
    # password / passwd / passphrase / pwd / pw / pass / *_pass / Passwort / Kennwort, in env,
    # YAML, JSON, shell, code, a "Password: x" line.
    _rule(
        "password-assignment",
        rf"""(?P<key>(?:pass(?:w(?:or)?d|wort|phrase)|kennwort|(?<![a-z])pass(?![a-z])
                       |(?<![a-z])pwd|(?<![a-z])pw(?![a-z]))
                     [a-z0-9_.-]{{0,24}}){_SEP}
            {_PASSWORD_VALUE}""",
        ("pass", "pwd", "pw", "kennwort"),
        groups=_VALUE_GROUPS,
        ignore_case=True,
        validator=_password_ok,
    ),
    # A secret, token or key value split by single spaces up to the end of its line (OCR of a
    # screenshot: "AWS_SECRET_ACCESS_KEY=DoGoG9wnAI tWiaEPEYLCX..."); the first piece at least
    # four characters, none with what separates fields ("; Path=/; Secure" after a cookie's
    # value); prose after a key ("token: see the settings page") fails the validator.
    _rule(
        "spaced-secret-assignment",
        rf"""(?P<key>(?:secret|token|(?<=api)key|(?<=api[_-])key|(?<=access)key|(?<=access[_-])key)
                     [a-z0-9_.-]{{0,24}}){_SEP}
            (?P<spaced>{_PIECE}(?:[ ]{_TAIL_PIECE}){{1,3}})[ \t]*(?=\r?\n|$)""",
        ("secret", "token", "key"),
        groups=("spaced",),
        ignore_case=True,
        validator=_spaced_value_ok,
    ),
    # A password named in a sentence: "The root password is X", "Password - X", "Das Passwort
    # für das WLAN lautet X", "Kennwort ist X". Up to four words between the key and the verb.
    _rule(
        "password-prose",
        rf"""(?<![a-z])(?:pass(?:word|wort|phrase|code)|kennwort|passwd|pwd)(?:s|e?n)?
            (?:{_PROSE_GAP}{{1,4}}?[ \t]*[:=](?=[ \t])  # "Password for the router: x"
              |{_PROSE_GAP}{{0,4}}?[ \t](?:(?:is|was|ist|war|lautet)(?![a-z])[ \t]*:?|(?P<dash>[-\u2013\u2014])))
            [ \t]*(?:(?:now|still|jetzt|nun|noch)[ \t]+)?
            {_PASSWORD_VALUE}""",
        ("pass", "pwd", "kennwort"),
        groups=_VALUE_GROUPS,
        ignore_case=True,
        validator=_prose_password_ok,
    ),
    # "PIN: 4711", "Die PIN ist 4711", "PIN-Code 4711", "PUK 12345678"; without a separator only
    # in capitals ("PIN 4711": "pin 13" is a microcontroller's pin).
    _rule(
        "pin-code",
        r"""(?<![A-Za-z])(?:(?P<upper>PIN|PUK)|[Pp]in|[Pp]uk)
            (?:[ -]?(?:[Cc]ode|CODE|[Nn]ummer|NUMMER|[Nn]umber|NUMBER))?
            (?:[ \t]*(?::|=|[ \t](?:is|ist|lautet|war|was)(?![A-Za-z]))[ \t]*:?[ \t]*
              |(?(upper)[ \t]+|(?!)))
            (?P<pin>[0-9]{4,8})(?![0-9A-Za-z,:/-])(?!\.[0-9])""",
        ("pin", "puk"),
        groups=("pin",),
        validator=_pin_ok,
    ),
    # secret / client_secret / token / access_token / api_key / apikey.  The match
    # starts at the keyword (any prefix such as client_ or DB_ stays outside it), and
    # "api key" is anchored at "key" so it shares that search with the rule below.
    _rule(
        "secret-assignment",
        rf"""(?P<key>(?:secret|token|(?<=api)key|(?<=api[_-])key)[a-z0-9_.-]{{0,24}}){_SEP}
            {_SECRET_VALUE}""",
        ("secret", "token", "key"),
        groups=_VALUE_GROUPS,
        ignore_case=True,
        validator=_secret_value_ok,
    ),
    # Last resort: long dense base64/hex assigned to a *key*/*auth*/*credential* name.
    _rule(
        "high-entropy-assignment",
        rf"""(?P<key>(?:key|secret|token|auth(?!or)|credential)[a-z0-9_.-]{{0,24}}){_SEP}
            {_B64_VALUE}""",
        ("key", "secret", "token", "auth", "credential"),
        groups=_VALUE_GROUPS,
        ignore_case=True,
        validator=_high_entropy_ok,
    ),
)
