"""Planted secrets for tests and bench/secrets_compare.py: many formats x the places a note holds them.

Every value is FAKE: drawn from ``random.Random(seed)`` at run time (a fresh seed gives fresh values),
assembled from split prefixes so this file holds no literal a secret scanner would flag.  Formats
follow each vendor's published shape (the gitleaks rule set's examples informed the less common
ones); contexts are the places issue 13 names: a sentence, a list item, a table cell, a fenced
block, a frontmatter value, a file name, plus the keyword assignment every scrubber handles.

``NEAR_MISSES`` are values that must stay searchable (git SHAs, UUIDs, named hashes, data: URIs,
certificates, base64 of text, identifiers), in the same contexts.
"""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable
from dataclasses import dataclass

ALNUM = string.ascii_letters + string.digits
LOWER_ALNUM = string.ascii_lowercase + string.digits
UPPER_ALNUM = string.ascii_uppercase + string.digits
URLSAFE = ALNUM + "-_"
B64 = ALNUM + "+/"
HEX = "0123456789abcdef"
BASE32 = string.ascii_uppercase + "234567"


@dataclass(frozen=True)
class Planted:
    """One planted value: its format, the context it sits in, the note text, and the value."""

    format: str
    context: str
    text: str
    value: str
    path: str = "note.md"  # the note's path; for the file-name context it holds the value


def _r(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _jwt(rng: random.Random) -> str:
    def seg(obj: object) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()

    claims = {"sub": str(rng.randrange(10**6)), "iat": 1_700_000_000 + rng.randrange(10**7)}
    return f"{seg({'alg': 'HS256', 'typ': 'JWT'})}.{seg(claims)}.{_r(rng, URLSAFE, 43)}"


def _discord(rng: random.Random) -> str:
    user_id = str(rng.randrange(10**17, 10**19)).encode()
    head = base64.urlsafe_b64encode(user_id).rstrip(b"=").decode()
    return f"{head}.{_r(rng, URLSAFE, 6)}.{_r(rng, URLSAFE, 38)}"


def _aws_secret(rng: random.Random) -> str:
    while True:  # real secrets carry a "/" or "+" about half the time; any 40 base64 will do
        value = _r(rng, B64, 40)
        if any(c.isdigit() for c in value):
            return value


# format name -> value generator.  "vendor": a distinctive prefix; "shape": issue 13's bare classes;
# "other-vendor": vendors this repo has no rule for (gitleaks has), caught only generically.
FORMATS: dict[str, tuple[str, Callable[[random.Random], str]]] = {
    "github-pat": ("vendor", lambda r: "gh" + "p_" + _r(r, ALNUM, 36)),
    "github-fine-grained": (
        "vendor",
        lambda r: "github" + "_pat_11" + _r(r, ALNUM, 20) + "_" + _r(r, ALNUM, 59),
    ),
    "gitlab-pat": ("vendor", lambda r: "gl" + "pat-" + _r(r, URLSAFE, 20)),
    "openai-project": ("vendor", lambda r: "sk" + "-proj-" + _r(r, URLSAFE, 120)),
    "anthropic": ("vendor", lambda r: "sk" + "-ant-api03-" + _r(r, URLSAFE, 93) + "AA"),
    "aws-access-key-id": ("vendor", lambda r: "AK" + "IA" + _r(r, BASE32, 15) + r.choice("234567")),
    "stripe-live": ("vendor", lambda r: "sk" + "_live_" + _r(r, ALNUM, 24)),
    "slack-bot": (
        "vendor",
        lambda r: (
            "xo" + f"xb-{_r(r, string.digits, 12)}-{_r(r, string.digits, 13)}-{_r(r, ALNUM, 24)}"
        ),
    ),
    "google-api-key": ("vendor", lambda r: "AI" + "za" + "Sy" + _r(r, URLSAFE, 33)),
    "sendgrid": ("vendor", lambda r: "S" + "G." + _r(r, URLSAFE, 22) + "." + _r(r, URLSAFE, 43)),
    "npm": ("vendor", lambda r: "n" + "pm_" + _r(r, ALNUM, 36)),
    "huggingface": ("vendor", lambda r: "h" + "f_" + _r(r, string.ascii_letters, 34)),
    "digitalocean": ("vendor", lambda r: "d" + "op_v1_" + _r(r, HEX, 64)),
    "jwt": ("vendor", _jwt),
    "telegram-bot": ("vendor", lambda r: f"{r.randrange(10**8, 10**10)}:AA{_r(r, URLSAFE, 33)}"),
    "discord-bot": ("shape", _discord),
    "mailgun": ("shape", lambda r: "key" + "-" + _r(r, HEX, 32)),
    "aws-secret-alone": ("shape", _aws_secret),
    "base64-32": ("shape", lambda r: _r(r, B64, 32)),
    "base64-64": ("shape", lambda r: _r(r, B64, 64)),
    "base64url-43": ("shape", lambda r: _r(r, URLSAFE, 43)),
    "hex-32": ("shape", lambda r: _r(r, HEX, 32)),
    "hex-64": ("shape", lambda r: _r(r, HEX, 64)),
    "base36-40": ("shape", lambda r: _r(r, LOWER_ALNUM, 40)),
    "databricks": ("other-vendor", lambda r: "da" + "pi" + _r(r, HEX, 32)),
    "postman": ("other-vendor", lambda r: "PM" + "AK-" + _r(r, HEX, 24) + "-" + _r(r, HEX, 34)),
    "doppler": ("other-vendor", lambda r: "dp" + ".pt." + _r(r, ALNUM, 43)),
    "vault-service": ("other-vendor", lambda r: "hv" + "s." + _r(r, URLSAFE, 95)),
    "linear": ("other-vendor", lambda r: "lin" + "_api_" + _r(r, ALNUM, 40)),
    "grafana-sa": ("other-vendor", lambda r: "gl" + "sa_" + _r(r, ALNUM, 32) + "_" + _r(r, HEX, 8)),
    "planetscale": ("other-vendor", lambda r: "pscale" + "_tkn_" + _r(r, URLSAFE, 43)),
    "new-relic": ("other-vendor", lambda r: "NR" + "AK-" + _r(r, UPPER_ALNUM, 27)),
}

# Bare hex in a file name is an id ("Page <32 hex>.md" in every Notion export), kept searchable.
HEX_IDS_IN_FILE_NAMES = frozenset({"hex-32", "hex-64"})

# context name -> template; {v} is the value.  All but "assignment" give no keyword.
CONTEXTS: dict[str, str] = {
    "prose": "# Setup\n\nI pasted the value {v} into the terminal and it worked at once.\n",
    "list": "# Steps\n\n- open the dashboard\n- copy {v}\n- restart the worker\n",
    "table": "# Inventory\n\n| service | value | owner |\n|---|---|---|\n| billing | {v} | ops |\n",
    "fence": "# Script\n\n```\nrun --from-file /tmp/x\n{v}\nrun --check\n```\n",
    "frontmatter": "---\ntitle: Service notes\nref: {v}\n---\n\n# Service\n\nBody text of the note.\n",
    "assignment": "# Env\n\n```sh\nexport SERVICE_TOKEN={v}\n```\n",
    "file-name": "# Pasted\n\nA note whose file name holds the value.\n",
}


def planted(seed: int) -> list[Planted]:
    """Every format in every context (but bare hex in file names), with fresh values for ``seed``."""
    rng = random.Random(seed)
    out: list[Planted] = []
    for name, (_kind, make) in FORMATS.items():
        for context, template in CONTEXTS.items():
            if context == "file-name" and name in HEX_IDS_IN_FILE_NAMES:
                continue  # by design an id there (Notion exports), see docs/secrets.md
            value = make(rng)
            path = f"inbox/{value}.md" if context == "file-name" else f"{name}/{context}.md"
            out.append(Planted(name, context, template.format(v=value), value, path))
    return out


def _pem_certificate(rng: random.Random) -> str:
    body = base64.b64encode(rng.randbytes(600)).decode()
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    return "-----BEGIN CERTIFICATE-----\n" + "\n".join(lines) + "\n-----END CERTIFICATE-----"


def private_key(rng: random.Random) -> tuple[str, str]:
    """A PEM private key block and one line of its body (which must not survive)."""
    body = base64.b64encode(rng.randbytes(900)).decode()
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    block = (
        "-----BEGIN " + "PRIVATE KEY-----\n" + "\n".join(lines) + "\n-----END " + "PRIVATE KEY-----"
    )
    return block, lines[3]


def _png_data_uri(rng: random.Random) -> str:
    png = b"\x89PNG\r\n\x1a\n" + rng.randbytes(120)
    return "data:image/png;base64," + base64.b64encode(png).decode()


# name -> (note text, the value that must stay searchable)
def near_misses(seed: int) -> list[Planted]:
    """Values that look random but are not credentials, in prose, lists, tables and fences."""
    rng = random.Random(seed)
    sha = _r(rng, HEX, 40)
    uuid = "-".join(_r(rng, HEX, n) for n in (8, 4, 4, 4, 12))
    digest = _r(rng, HEX, 64)
    text_b64 = base64.b64encode(
        f"hello {rng.randrange(10**6)} from the example page".encode()
    ).decode()
    cert = _pem_certificate(rng)
    data_uri = _png_data_uri(rng)
    ssh_pub = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + _r(rng, B64, 43) + " me@laptop"
    cases = [
        ("git-sha", f"# Log\n\nFixed in {sha}, see the review.\n", sha),
        ("git-sha-table", f"# Releases\n\n| version | commit |\n|---|---|\n| 2.1 | {sha} |\n", sha),
        ("uuid", f"# Trace\n\n- request {uuid} failed twice\n", uuid),
        ("sha256-named", f"# Image\n\nPinned to sha256:{digest} today.\n", digest),
        ("checksum", f"# Download\n\nThe checksum is {digest} for the tarball.\n", digest),
        (
            "sha256sum",
            f"# Verify\n\n```\n$ sha256sum notes.tar.gz\n{digest}  notes.tar.gz\n```\n",
            digest,
        ),
        ("base64-of-text", f"# Encoding\n\n```js\nbtoa(text) // {text_b64}\n```\n", text_b64),
        ("data-uri", f"# Icon\n\n![dot]({data_uri})\n", data_uri.split(",", 1)[1][:40]),
        ("certificate", f"# TLS\n\n```\n{cert}\n```\n", cert.split("\n")[2]),
        (
            "ssh-public-key",
            f"# Access\n\nAdd `{ssh_pub}` to authorized_keys.\n",
            ssh_pub.split()[1],
        ),
        (
            "identifier",
            "# API\n\nCall `WebGL2RenderingContext.compressedTexSubImage3D` twice.\n",
            "compressedTexSubImage3D",
        ),
        (
            "url-path",
            "# Links\n\nSee https://example.org/docs/2023/release-notes-v2-3-1/index.html today.\n",
            "release-notes-v2-3-1",
        ),
    ]
    return [Planted(name, "near-miss", text, value) for name, text, value in cases]
