"""Tests for the credential scrubber.

Every secret here is FAKE and assembled at runtime from split prefixes and seeded
pseudo-random bodies, so this file holds no literal a secret scanner would flag.
"""

from __future__ import annotations

import base64
import json
import random
import re
import signal
import string
import subprocess
import sys
from dataclasses import FrozenInstanceError, dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from noteseek.errors import NoteseekError
from noteseek.secrets.scrubber import (
    PATTERN_NAMES,
    RULES_FINGERPRINT,
    Allowlist,
    AllowlistError,
    Finding,
    ScrubResult,
    find_secrets,
    scrub,
    secret_fingerprint,
)

ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "-_"
B64 = ALNUM + "+/"
HEX = "0123456789abcdef"
BASE32 = string.ascii_uppercase + "234567"  # AWS key ids


def fake(alphabet: str, n: int, seed: int) -> str:
    """Deterministic random-looking string: the shape of a secret, never a real one."""
    rng = random.Random(seed)
    return "".join(rng.choice(alphabet) for _ in range(n))


def b64url(obj: object) -> str:
    """Unpadded base64url of JSON, as in a JWT segment."""
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()


def marker(rule: str) -> str:
    """The replacement text for ``rule``."""
    return f"[REDACTED:{rule}]"


@dataclass(frozen=True)
class Fake:
    """A fake secret and the rule that must catch it."""

    rule: str
    secret: str


JWT = ".".join(
    [
        b64url({"alg": "HS256", "typ": "JWT"}),
        b64url({"sub": "4711", "name": "Ops Bot", "iat": 1716200000}),
        fake(URLSAFE, 43, 90),
    ]
)
PASSWORD = fake(string.ascii_letters, 7, 50) + fake(string.digits, 3, 51) + "!" + fake(ALNUM, 4, 52)

DIGITS = string.digits
SLACK_BOT = (
    "xo" + "xb-" + "-".join([fake(DIGITS, 12, 30), fake(DIGITS, 13, 31), fake(ALNUM, 24, 32)])
)
SLACK_USER = (
    "xo" + "xp-" + "-".join([*(fake(DIGITS, 12, 33 + i) for i in range(3)), fake(HEX, 32, 36)])
)
SLACK_APP = (
    "xa" + "pp-1-" + "-".join(["A" + fake(BASE32, 10, 37), fake(DIGITS, 13, 38), fake(HEX, 64, 39)])
)

# Vendor tokens: self-identifying, caught anywhere in a note.
TOKENS = [
    Fake("openai-api-key", "sk" + "-" + fake(ALNUM, 20, 1) + "T3Blbk" + "FJ" + fake(ALNUM, 20, 2)),
    Fake("openai-api-key", "sk" + "-proj-" + fake(URLSAFE, 156, 3)),
    Fake("anthropic-api-key", "sk" + "-ant-" + "api03-" + fake(URLSAFE, 93, 4) + "AA"),
    *(
        Fake("github-token", "gh" + kind + "_" + fake(ALNUM, 36, 10 + i))
        for i, kind in enumerate("pousr")
    ),
    Fake(
        "github-fine-grained-pat",
        "github" + "_pat_11" + fake(ALNUM, 20, 20) + "_" + fake(ALNUM, 59, 21),
    ),
    Fake("gitlab-token", "gl" + "pat-" + fake(URLSAFE, 20, 22)),
    Fake("gitlab-token", "gl" + "dt-" + fake(ALNUM, 20, 23)),
    Fake("gitlab-token", "gl" + "ptt-" + fake(HEX, 40, 24)),
    Fake("aws-access-key-id", "AK" + "IA" + fake(BASE32, 14, 25) + "Q7"),
    Fake("aws-access-key-id", "AS" + "IA" + fake(BASE32, 14, 26) + "3Z"),
    Fake("stripe-api-key", "sk" + "_live_" + fake(ALNUM, 24, 27)),
    Fake("stripe-api-key", "rk" + "_live_" + fake(ALNUM, 24, 28)),
    Fake("stripe-api-key", "sk" + "_test_" + fake(ALNUM, 24, 29)),
    Fake("slack-token", SLACK_BOT),
    Fake("slack-token", SLACK_USER),
    Fake("slack-token", SLACK_APP),
    Fake("google-api-key", "AI" + "za" + "Sy" + fake(URLSAFE, 33, 40)),
    Fake("google-oauth-client-secret", "GOC" + "SPX-" + fake(URLSAFE, 28, 41)),
    Fake("jwt", JWT),
    # issue 3: more vendors
    Fake("twilio-api-key", "S" + "K" + fake(HEX, 32, 41)),
    Fake("sendgrid-api-key", "S" + "G." + fake(URLSAFE, 22, 42) + "." + fake(URLSAFE, 43, 43)),
    Fake("npm-token", "n" + "pm_" + fake(ALNUM, 36, 44)),
    Fake("pypi-token", "py" + "pi-" + "AgEIcHlwaS5vcmc" + fake(URLSAFE, 160, 45)),
    Fake("huggingface-token", "h" + "f_" + fake(string.ascii_letters, 34, 46)),
    *(
        Fake("digitalocean-token", "d" + kind + "_v1_" + fake(HEX, 64, 47 + i))
        for i, kind in enumerate(("op", "oo", "or"))
    ),
    *(
        Fake("shopify-token", "sh" + kind + "_" + fake(HEX, 32, 50 + i))
        for i, kind in enumerate(("pat", "pca", "ppa", "pss"))
    ),
]

# Where a token may sit in a note; "{s}" is replaced by the secret.
CONTEXTS = {
    "inline": "Rotated the billing credential today; the new value is {s} and the old one is revoked.\n",
    "fenced": 'Deploy notes:\n\n```python\nclient = BillingClient("{s}")\nclient.ping()\n```\n\nDone.\n',
    "table": "| service | credential | owner |\n|---|---|---|\n| billing | {s} | ops |\n",
    "frontmatter": "---\ntitle: Billing service\napi_key: {s}\ntags: [ops, billing]\n---\n\n# Billing\n",
    "dotenv": "# .env for staging\nSERVICE_TOKEN={s}\nDEBUG=false\n",
    "shell": '```sh\nexport SERVICE_TOKEN="{s}"\n./deploy.sh --env staging\n```\n',
    # glued to other text: an encoded callback URL from a log, then a paste without a space
    "urlencoded": "GET /cb?next=%2Fhome&auth%3D{s}%26v%3D2 HTTP/1.1\nPasted:token{s}\n",
}


@pytest.mark.parametrize("context", sorted(CONTEXTS))
@pytest.mark.parametrize("token", TOKENS, ids=lambda f: f"{f.rule}:{f.secret[:6]}")
def test_vendor_token_redacted_in_every_context(token: Fake, context: str) -> None:
    template = CONTEXTS[context]
    result = scrub(template.replace("{s}", token.secret))
    assert token.secret not in result.text
    # The rest of the note survives byte for byte; the vendor rule wins over api_key:/TOKEN=.
    assert result.text == template.replace("{s}", marker(token.rule))
    assert dict(result.counts) == {token.rule: template.count("{s}")}


def pem(label: str, seed: int, lines: int = 6) -> tuple[str, str]:
    """A fake PEM block and its body (the part that must be replaced)."""
    body = (
        "\n".join(fake(B64, 64, seed + i) for i in range(lines)) + "\n" + fake(B64, 20, seed) + "=="
    )
    return f"-----BEGIN {label}-----\n{body}\n-----END {label}-----", body


SSH2_BODY = 'Comment: "build box"\n' + "\n".join(fake(B64, 64, 160 + i) for i in range(3))
PUTTY = (
    "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: ed25519-key\n"
    "Public-Lines: 2\n" + fake(B64, 64, 170) + "\n" + fake(B64, 4, 171) + "\n"
    "Private-Lines: 1\n{s}\nPrivate-MAC: " + fake(HEX, 64, 172) + "\n"
)
PUTTY_BODY = fake(B64, 44, 173)
TWILIO_SID = "A" + "C" + fake(HEX, 32, 180)
TWILIO_TOKEN = fake(HEX, 32, 181)
AWS_ID = "AK" + "IA" + fake(BASE32, 14, 182) + "W4"
AWS_SECRET = fake(B64, 40, 183)
DISCORD = ".".join(
    [
        base64.b64encode(b"812345678901234567").decode().rstrip("="),
        fake(URLSAFE, 6, 184),
        fake(URLSAFE, 38, 185),
    ]
)
TELEGRAM = fake("123456789", 10, 186) + ":A" + "A" + fake(URLSAFE, 33, 187)
AZURE_KEY = fake(B64, 86, 188) + "=="
MAILGUN = "k" + "ey-" + fake(HEX, 32, 189)

PGP_BODY = (
    "Version: GnuPG v2\n\n"
    + "\n".join(fake(B64, 64, 70 + i) for i in range(5))
    + "\n="
    + fake(B64, 4, 79)
)
# (text, exact secret substring, rule): rules that keep part of the match as context.
CONTEXTUAL: list[tuple[str, str, str]] = [
    *(
        (f"Key for the build box:\n\n```\n{block}\n```\n", body, "private-key")
        for block, body in (
            pem("RSA PRIVATE KEY", 100),
            pem("OPENSSH PRIVATE KEY", 110),
            pem("EC PRIVATE KEY", 120, lines=2),
            pem("PRIVATE KEY", 130),
            pem("ENCRYPTED PRIVATE KEY", 140),
        )
    ),
    (
        f"-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{PGP_BODY}\n-----END PGP PRIVATE KEY BLOCK-----\n",
        PGP_BODY,
        "private-key",
    ),
    (  # service-account JSON: newlines are escaped inside the string
        '{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\n'
        + fake(B64, 64, 150)
        + "\\n"
        + fake(B64, 40, 151)
        + '==\\n-----END PRIVATE KEY-----\\n"}',
        "\\n" + fake(B64, 64, 150) + "\\n" + fake(B64, 40, 151) + "==\\n",
        "gcp-service-account-key",
    ),
    (  # the same in a pretty-printed key file, truncated by the paste
        '{\n  "private_key": "-----BEGIN PRIVATE KEY-----\\n' + fake(B64, 64, 152) + '\\n"\n}',
        "\\n" + fake(B64, 64, 152) + "\\n",
        "gcp-service-account-key",
    ),
    (
        "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\n"
        + SSH2_BODY
        + "\n---- END SSH2 ENCRYPTED PRIVATE KEY ----\n",
        SSH2_BODY,
        "ssh2-private-key",
    ),
    (PUTTY.replace("{s}", PUTTY_BODY), PUTTY_BODY, "putty-private-key"),
    (
        "Alerts: https://hooks.slack.com/services/T"
        + fake(BASE32, 8, 200)
        + "/B"
        + fake(BASE32, 10, 201)
        + "/"
        + fake(ALNUM, 24, 202)
        + " (ops channel)",
        "T" + fake(BASE32, 8, 200) + "/B" + fake(BASE32, 10, 201) + "/" + fake(ALNUM, 24, 202),
        "slack-webhook-url",
    ),
    (
        f"DATABASE_URL=postgres://app_user:{PASSWORD}@db.internal:5432/app\n",
        PASSWORD,
        "url-password",
    ),
    (f"`mysql://root:{PASSWORD}@127.0.0.1:3306/shop`", PASSWORD, "url-password"),
    (
        f"uri: mongodb+srv://admin:{PASSWORD}@cluster0.ab12c.mongodb.net/test",
        PASSWORD,
        "url-password",
    ),
    (f"cache at redis://:{PASSWORD}@cache:6379/0 for sessions", PASSWORD, "url-password"),
    (f"git clone https://deploy:{PASSWORD}@git.internal/repo.git", PASSWORD, "url-password"),
    (
        "[default]\nregion = eu-west-1\naws_secret_access_key = " + fake(B64, 40, 211) + "\n",
        fake(B64, 40, 211),
        "aws-secret-access-key",
    ),
    (
        "curl -H 'Authorization: Bearer "
        + fake(URLSAFE + ".~", 40, 212)
        + "' https://api.internal/v1/me",
        fake(URLSAFE + ".~", 40, 212),
        "bearer-token",
    ),
    (
        "Authorization: Basic " + base64.b64encode(f"deploy:{PASSWORD}".encode()).decode(),
        base64.b64encode(f"deploy:{PASSWORD}".encode()).decode(),
        "basic-auth-credentials",
    ),
    (f"GET /v1/me\nAuthorization: Bearer {JWT}\n", JWT, "jwt"),
    # password / passwd / passphrase in env, YAML, JSON, shell, Python, Go, PHP, Markdown
    (f"DB_PASSWORD={PASSWORD}\nDB_HOST=db.internal\n", PASSWORD, "password-assignment"),
    (f"database:\n  user: app\n  password: {PASSWORD}\n", PASSWORD, "password-assignment"),
    (f'smtp:\n  passwd: "{PASSWORD}"\n', PASSWORD, "password-assignment"),
    (f'{{"user": "app", "password": "{PASSWORD}"}}', PASSWORD, "password-assignment"),
    (f"export PGPASSWORD='{PASSWORD}'\npsql -h db.internal", PASSWORD, "password-assignment"),
    (f'conn = connect(user="app", password="{PASSWORD}")', PASSWORD, "password-assignment"),
    (f'password := "{PASSWORD}"', PASSWORD, "password-assignment"),
    (f"'password' => '{PASSWORD}',", PASSWORD, "password-assignment"),
    (f"Wi-Fi for guests\n\n**Password:** {PASSWORD}\n", PASSWORD, "password-assignment"),
    (f"wifi password: {PASSWORD} (guest network)", PASSWORD, "password-assignment"),
    (f"mysqldump --password={PASSWORD} shop > shop.sql", PASSWORD, "password-assignment"),
    (
        "passphrase: 'correct horse battery staple'",
        "correct horse battery staple",
        "password-assignment",
    ),
    ("DB_PASS=Tr0ub4dor&3x\n", "Tr0ub4dor&3x", "password-assignment"),
    (f"pass: {PASSWORD}\n", PASSWORD, "password-assignment"),
    (f"Passwort: {PASSWORD}\n", PASSWORD, "password-assignment"),
    (f"Kennwort = {PASSWORD}\n", PASSWORD, "password-assignment"),
    # the context is the key, a header, a sentence or a command's flag, whatever the value's length
    (f"The root password is {PASSWORD} for now.", PASSWORD, "password-prose"),
    (f"Password - {PASSWORD}\n", PASSWORD, "password-prose"),
    (f"the password for the NAS: {PASSWORD}\n", PASSWORD, "password-prose"),
    (f"Das Passwort für das WLAN lautet {PASSWORD}.", PASSWORD, "password-prose"),
    ("Kennwort ist Sommer2024", "Sommer2024", "password-prose"),
    ('my password is "swordfish"', "swordfish", "password-prose"),
    # Six and eight digits: the database tests grep the bytes, where four digits occur in hashes.
    ("Die PIN ist 471193.", "471193", "pin-code"),
    ("SIM PIN 88320417\n", "88320417", "pin-code"),
    ("PUK: 12345678", "12345678", "pin-code"),
    (f"mysql -u root -p{PASSWORD} shop", PASSWORD, "command-line-password"),
    (f"curl -u admin:{PASSWORD} https://nas.local/api", PASSWORD, "command-line-password"),
    (f"sshpass -p '{PASSWORD}' ssh pi@10.0.0.2", PASSWORD, "command-line-password"),
    (f"redis-cli -h cache -a {PASSWORD} ping", PASSWORD, "command-line-password"),
    (f"ldapsearch -x -D cn=admin -w {PASSWORD} -b dc=x", PASSWORD, "command-line-password"),
    (f"smbclient //nas/share -U backup%{PASSWORD}", PASSWORD, "command-line-password"),
    (f"docker login -u me --password {PASSWORD} ghcr.io", PASSWORD, "command-line-password"),
    (f"tool --password {PASSWORD}", PASSWORD, "command-line-password"),
    (
        f"| Service | User | Password |\n|---|---|---|\n| router | admin | {PASSWORD} |\n",
        PASSWORD,
        "table-password",
    ),
    (f"| password | `{PASSWORD}` |\n", PASSWORD, "table-password"),
    (
        f"[Sheet: Logins]\nsite | login | Passwort\nbank | me | {PASSWORD}",
        PASSWORD,
        "table-password",
    ),
    # secret / api_key / token / client_secret
    ("secret: " + fake(ALNUM, 32, 300) + "\n", fake(ALNUM, 32, 300), "secret-assignment"),
    ("API_KEY=" + fake(ALNUM, 32, 301) + "\n", fake(ALNUM, 32, 301), "secret-assignment"),
    ("token: " + fake(URLSAFE, 40, 302), fake(URLSAFE, 40, 302), "secret-assignment"),
    (
        '{"client_id": "ops", "client_secret": "' + fake(ALNUM, 40, 303) + '"}',
        fake(ALNUM, 40, 303),
        "secret-assignment",
    ),
    (
        "const config = { apiKey: '" + fake(ALNUM, 39, 304) + "' };",
        fake(ALNUM, 39, 304),
        "secret-assignment",
    ),
    (
        'export ACCESS_TOKEN="' + fake(ALNUM, 36, 305) + '"',
        fake(ALNUM, 36, 305),
        "secret-assignment",
    ),
    (
        "SECRET_KEY = '" + fake(ALNUM + "!@#%^*-_", 50, 306) + "'",
        fake(ALNUM + "!@#%^*-_", 50, 306),
        "secret-assignment",
    ),
    # issue 3: vendors whose tokens need context
    (f"TWILIO_AUTH_TOKEN={TWILIO_TOKEN}\n", TWILIO_TOKEN, "twilio-auth-token"),
    (f"twilio auth token for {TWILIO_SID}", TWILIO_SID, "twilio-account-sid"),
    (
        f"```\ncurl -X POST https://api.twilio.com/x -u {TWILIO_SID}:[REDACTED:twilio-auth-token]\n```",
        TWILIO_SID,
        "twilio-account-sid",
    ),
    (f"mailgun: {MAILGUN} (sending domain mg.example.org)", MAILGUN, "mailgun-api-key"),
    (
        "DefaultEndpointsProtocol=https;AccountName=notes;AccountKey="
        + AZURE_KEY
        + ";EndpointSuffix=core.windows.net",
        AZURE_KEY,
        "azure-connection-string-key",
    ),
    (
        "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey="
        + fake(B64, 43, 190)
        + "=",
        fake(B64, 43, 190) + "=",
        "azure-connection-string-key",
    ),
    (f"Discord bot for the guild: {DISCORD}", DISCORD, "discord-bot-token"),
    (f"curl https://api.telegram.org/bot{TELEGRAM}/getMe", TELEGRAM, "telegram-bot-token"),
    (f"| bot | {TELEGRAM} |", TELEGRAM, "telegram-bot-token"),
    (
        f"aws configure\nAWS Access Key ID [None]: [REDACTED:aws-access-key-id]\n"
        f"AWS Secret Access Key [None]: {AWS_SECRET}\n",
        AWS_SECRET,
        "aws-secret-access-key",
    ),
    # ADO.NET / ODBC connection strings: spaces and braces inside the password
    (
        'var cs = "Server=db.internal;Database=shop;User Id=app;Password=' + PASSWORD + ' two;";',
        PASSWORD + " two",
        "connection-string-password",
    ),
    (
        "Driver={ODBC Driver 18 for SQL Server};Server=db;Uid=app;Pwd={" + PASSWORD + ";x}}y};",
        "{" + PASSWORD + ";x}}y}",
        "connection-string-password",
    ),
    # generic assignment syntaxes: YAML, JSON, .env, shell
    (f"db:\n  passwd: {PASSWORD}\n", PASSWORD, "password-assignment"),
    ('{"api_key": "' + fake(ALNUM, 32, 191) + '"}', fake(ALNUM, 32, 191), "secret-assignment"),
    ("STRIPE_SECRET=" + fake(ALNUM, 30, 192) + "\n", fake(ALNUM, 30, 192), "secret-assignment"),
    ("export GH_TOKEN=" + fake(ALNUM, 30, 193), fake(ALNUM, 30, 193), "secret-assignment"),
    ("webhook_secret: '" + fake(ALNUM, 24, 194) + "'", fake(ALNUM, 24, 194), "secret-assignment"),
    # generic: long dense base64/hex under a key-like name
    (
        "SIGNING_KEY=" + fake(B64, 43, 400) + "=\n",
        fake(B64, 43, 400) + "=",
        "high-entropy-assignment",
    ),
    ("encryption_key: " + fake(HEX, 64, 401), fake(HEX, 64, 401), "high-entropy-assignment"),
    ('{"auth": "' + fake(B64, 32, 402) + '"}', fake(B64, 32, 402), "high-entropy-assignment"),
    # A screenshot's key read by OCR with a space inside and a letter as a symbol.
    (
        "Staging credentials\nAWS_SECRET_ACCESS_KEY="
        + fake(ALNUM, 10, 403)
        + " "
        + fake(ALNUM, 15, 404)
        + "®"
        + fake(ALNUM, 14, 405)
        + "\nRotate monthly.",
        fake(ALNUM, 10, 403) + " " + fake(ALNUM, 15, 404) + "®" + fake(ALNUM, 14, 405),
        "spaced-secret-assignment",
    ),
    (
        "GITHUB_TOKEN=" + fake(ALNUM, 37, 408) + " " + fake(ALNUM, 2, 409) + "\n",
        fake(ALNUM, 37, 408) + " " + fake(ALNUM, 2, 409),
        "spaced-secret-assignment",
    ),
    (
        "client_secret: " + fake(ALNUM, 12, 406) + " " + fake(ALNUM, 12, 407) + "==",
        fake(ALNUM, 12, 406) + " " + fake(ALNUM, 12, 407) + "==",
        "spaced-secret-assignment",
    ),
]


@pytest.mark.parametrize(("text", "secret", "rule"), CONTEXTUAL, ids=lambda v: str(v)[:24])
def test_contextual_secret_redacted_and_context_kept(text: str, secret: str, rule: str) -> None:
    assert text.count(secret) == 1
    result = scrub(text)
    assert secret not in result.text
    assert result.text == text.replace(secret, marker(rule))
    assert dict(result.counts) == {rule: 1}


NOT_SECRETS = [
    "token: see the settings page for details",
    "api_key = your api key here",
    "Set-Cookie: sessionToken=abc; Path=/; Secure; SameSite=Strict",
    "secret: correct horse battery staple",
    "password: ********",
    'password: "<your-password>"',
    "DB_PASSWORD=${PASSWORD}",
    "DB_PASSWORD=$PASSWORD",
    'password = os.environ["DB_PASSWORD"]',
    "password = os.getenv('DB_PASSWORD')",
    "password = process.env.DB_PASSWORD;",
    "password = getpass.getpass()",
    'password: ""',
    "password=",
    "password:",
    '"password": null',
    "The password is stored in the keychain, and the token expires after an hour.",
    "Password: the user's password, as typed into the form.",
    "Low Pass: Allows frequencies below the cutoff to pass through.",
    "api_key: YOUR_API_KEY",
    "token: <token>",
    "secret: {{ vault_secret }}",
    "password_min_length: 12",
    "const passwordInput = document.querySelector('#password');",
    '<input type="password" name="password" autocomplete="current-password">',
    "password: credInit,",
    "https://user:password@example.com/",
    "postgres://app:${DB_PASSWORD}@db:5432/app",
    "Authorization: Bearer <token>",
    "Authorization: Basic <credentials>",
    "Authorization: Bearer $API_TOKEN",
    "sk" + "-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "gh" + "p_" + "X" * 36,
    "AK" + "IA" + "IOSFODNN7" + "EXAMPLE",
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
    "PWD=/home/me/project",
    "-----BEGIN PRIVATE KEY-----\n${exportedAsBase64}\n-----END PRIVATE KEY-----",
    # issue 3: identifiers and look-alikes that are not secrets
    f"Twilio account {TWILIO_SID} sends the SMS alerts.",  # SID without its token
    "Server=db;Database=shop;Password=${DB_PASSWORD};",
    "Server=db;Database=shop;Password=<your password>;",
    "SELECT * FROM users WHERE name = 'a' AND Password = 'x'",
    "AccountKey=<storage-account-key>;",
    "the hf_hub_download helper and npm_config_registry",
]


@pytest.mark.parametrize("text", NOT_SECRETS)
def test_placeholders_and_prose_are_left_alone(text: str) -> None:
    result = scrub(text)
    assert result.text == text
    assert dict(result.counts) == {}


# Look-alikes of a vendor shape that are not that vendor's token.  Their random parts are
# still random, so the keyword-free detector (issue 13) may take them as generic secrets;
# what matters here is that the vendor rule does not claim them.
NOT_THAT_VENDOR = [
    ("1234567890:" + fake(URLSAFE, 35, 196).replace("A", "b"), "telegram-bot-token"),  # no AA tag
    (
        "discord: "
        + fake(URLSAFE, 24, 197).replace("M", "m")
        + ".abcdef.ghijklmnopqrstuvwxyz0123456789",
        "discord-bot-token",
    ),
]


@pytest.mark.parametrize(("text", "rule"), NOT_THAT_VENDOR)
def test_vendor_look_alikes_are_not_named_after_the_vendor(text: str, rule: str) -> None:
    assert rule not in scrub(text).counts


CLEAN_PROSE = """\
# Release notes

The indexer walks the vault, splits each note at its headings and stores the
chunks in SQLite. Request `3f2504e0-4f89-11d3-9a0c-0305e82c3301` was traced to
commit a94a8fe5ccb19ba61c4c0873d391e987982fbbd3, which fixed the BM25 weights;
see also 9c1185a and the tag v2.3.1 from 2024-05-01.

Theme colours are #1e90ff, #fff and `rgb(30 144 255 / 50%)`; the key idea is
that tokens in a heading count twice. Press the Enter key to search.

```sh
$ sha256sum notes.tar.gz
e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  notes.tar.gz
```

```js
const digest = "b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9";
const keyRange = IDBKeyRange.bound("A", "F");
const key = await crypto.subtle.generateKey({ name: "AES-GCM", length: 256 }, true, ["encrypt"]);
```

<script src="https://cdn.example.net/lib.js" integrity="sha384-oqVuAfXRKap7fdgcCY5uykM6+R9GqQ8K/uxy9rx7HNQlGYl1kPzQho1wx4JwY8wC"></script>

A tiny inline icon: ![dot](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==)

| setting | value |
|---|---|
| token budget | 512 |
| secret rotation | every 90 days |
"""


def test_clean_technical_prose_is_unchanged() -> None:
    # Judgment call: base64 inside a data: URI is image data, not a credential, and
    # nothing flags it (no secret-like key in front of it), so it is kept.
    result = scrub(CLEAN_PROSE)
    assert result.text == CLEAN_PROSE
    assert dict(result.counts) == {}


def test_counts_aggregate_and_markers_name_rules() -> None:
    gh1, gh2, aws = TOKENS[3].secret, TOKENS[4].secret, TOKENS[13].secret
    result = scrub(f"old {gh1}\nnew {gh2}\naws {aws}\n")
    assert dict(result.counts) == {"github-token": 2, "aws-access-key-id": 1}
    assert (
        result.text
        == f"old {marker('github-token')}\nnew {marker('github-token')}\naws {marker('aws-access-key-id')}\n"
    )


def test_offsets_survive_characters_that_lowercase_to_two() -> None:
    # "İ".lower() is two code points; spans must still index the original text.
    text = f"İİİ office wifi — password: {PASSWORD} — ask İlkay"
    assert scrub(text).text == text.replace(PASSWORD, marker("password-assignment"))


def test_result_is_immutable_and_never_holds_the_secret() -> None:
    secret = TOKENS[0].secret
    result = scrub(f"key {secret}")
    with pytest.raises(FrozenInstanceError):
        result.text = "x"  # type: ignore[misc]
    with pytest.raises(TypeError):
        result.counts["x"] = 1  # type: ignore[index]
    assert secret not in repr(result)
    assert isinstance(hash(result), int)


def test_clean_text_returns_same_object_and_empty_counts() -> None:
    text = "Nothing to see here."
    result = scrub(text)
    assert result == ScrubResult(text, {})
    assert result.text is text
    assert scrub("") == ScrubResult("", {})


def test_existing_markers_are_kept() -> None:
    text = "password: [REDACTED:password-assignment] and url://u:[REDACTED:url-password]@h"
    assert scrub(text) == ScrubResult(text, {})


VENDOR_RULES = (
    "gcp-service-account-key", "anthropic-api-key", "openai-api-key", "github-token",
    "github-fine-grained-pat", "gitlab-token", "aws-access-key-id", "aws-secret-access-key",
    "aws-secret-key-pair", "stripe-api-key", "slack-token", "slack-webhook-url", "google-api-key",
    "google-oauth-client-secret", "twilio-api-key", "twilio-auth-token", "twilio-account-sid",
    "sendgrid-api-key", "npm-token", "pypi-token", "huggingface-token", "digitalocean-token",
    "shopify-token", "mailgun-api-key", "azure-connection-string-key", "discord-bot-token",
    "telegram-bot-token",
)  # fmt: skip
GENERIC_RULES = (
    "private-key", "ssh2-private-key", "putty-private-key", "jwt", "url-password",
    "basic-auth-credentials", "bearer-token", "connection-string-password",
    "password-assignment", "spaced-secret-assignment", "secret-assignment",
    "high-entropy-assignment",
    "command-line-password", "password-prose", "pin-code", "table-password",
)  # fmt: skip
# Keyword-free detectors (noteseek.secrets.entropy) that have no rule of their own.
BARE_ONLY = ("high-entropy-base64", "high-entropy-hex")


def test_public_names_and_fingerprint() -> None:
    assert set(PATTERN_NAMES) == set(VENDOR_RULES) | set(GENERIC_RULES) | set(BARE_ONLY)
    assert len(VENDOR_RULES) >= 21 and len(GENERIC_RULES) >= 11
    # Priority: the vendor-named PEM form before the generic one, vendors before generics.
    assert PATTERN_NAMES.index("gcp-service-account-key") < PATTERN_NAMES.index("private-key")
    assert PATTERN_NAMES.index("telegram-bot-token") < PATTERN_NAMES.index("url-password")
    assert PATTERN_NAMES[-7:] == (
        "password-prose",
        "pin-code",
        "secret-assignment",
        "high-entropy-assignment",
        "table-password",
        *BARE_ONLY,
    )
    assert all(re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", name) for name in PATTERN_NAMES)
    assert re.fullmatch(r"[0-9a-f]{16}", RULES_FINGERPRINT)


def test_the_pinned_rules_fingerprint_is_the_rules_own() -> None:
    """The pipeline reads the pinned constant (no rule compiled on a no-op run); it must be what
    the compiled rules give, or an index would keep notes scrubbed by older rules."""
    from noteseek.secrets import rules_fingerprint

    assert rules_fingerprint.RULES_FINGERPRINT == RULES_FINGERPRINT, (
        "the scrubber's rules changed: set RULES_FINGERPRINT in "
        f"src/noteseek/secrets/rules_fingerprint.py to {RULES_FINGERPRINT!r}"
    )


def test_every_rule_has_a_fake_in_this_file() -> None:
    covered = {t.rule for t in TOKENS} | {rule for _, _, rule in CONTEXTUAL}
    covered.add("aws-secret-key-pair")  # needs its key id too: test_key_id_and_secret_pairs_both_go
    covered |= set(BARE_ONLY)  # tests/test_bare_secrets.py
    assert covered == set(PATTERN_NAMES)


# ------------------------------------------------------------------ allow-list, findings


def test_allowlist_by_regex_keeps_the_value_and_counts_nothing() -> None:
    token = TOKENS[3].secret  # a ghp_ token
    text = f"ci token {token}\nother {TOKENS[4].secret}\n"
    allow = Allowlist(regexes=("gh" + "p_[A-Za-z0-9]{36}",))
    result = scrub(text, allow=allow)
    assert token in result.text
    assert TOKENS[4].secret not in result.text
    assert dict(result.counts) == {"github-token": 1}


def test_allowlist_regex_must_match_the_whole_value() -> None:
    token = TOKENS[3].secret
    assert scrub(token, allow=Allowlist(regexes=("gh",))).text == marker("github-token")
    assert scrub(token, allow=Allowlist(regexes=("gh.*",))).text == token


def test_allowlist_by_fingerprint_prefix() -> None:
    text = f"DB_PASSWORD={PASSWORD}\n"
    (finding,) = find_secrets(text)
    assert finding == Finding("password-assignment", 1, secret_fingerprint(PASSWORD))
    allow = Allowlist(fingerprints=(finding.fingerprint[:12],))
    assert scrub(text, allow=allow) == ScrubResult(text, {})
    assert find_secrets(text, allow=allow) == ()


def test_allowlist_does_not_hide_a_different_value_nearby() -> None:
    # Allowing the JWT leaves it; the bearer rule sees the same value and keeps it too,
    # but a second, different token on the next line still goes.
    other = fake(URLSAFE, 40, 600)
    text = f"Authorization: Bearer {JWT}\nAuthorization: Bearer {other}\n"
    allow = Allowlist(fingerprints=(secret_fingerprint(JWT)[:16],))
    result = scrub(text, allow=allow)
    assert JWT in result.text and other not in result.text
    assert dict(result.counts) == {"bearer-token": 1}


def test_allowlist_parse_file_format() -> None:
    allow = Allowlist.parse(
        "# known false positives\n\nregex:AKIA[0-9A-Z]{16}\nSHA256: ABCDEF0123456789\n"
        "regex: leading space kept\n"
    )
    assert allow.regexes == ("AKIA[0-9A-Z]{16}", " leading space kept")
    assert allow.fingerprints == ("abcdef0123456789",)
    assert allow and not Allowlist()
    assert (
        allow.fingerprint
        == Allowlist.parse(
            "sha256:abcdef0123456789\nregex: leading space kept\nregex:AKIA[0-9A-Z]{16}"
        ).fingerprint
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("sha256:abc123", "12-64"),
        ("sha256:" + "g" * 16, "12-64"),
        ("regex:([", "does not compile"),
        ("just a line", "line 1"),
        ("# c\nmd5:abcdef0123456789", "line 2"),
    ],
)
def test_allowlist_parse_errors_name_the_problem(text: str, message: str) -> None:
    with pytest.raises(AllowlistError, match=re.escape(message)) as info:
        Allowlist.parse(text, source="allow.txt")
    assert isinstance(info.value, NoteseekError)
    assert "allow.txt" in str(info.value)


def test_findings_report_lines_and_never_values() -> None:
    gh = TOKENS[3].secret
    block, body = pem("RSA PRIVATE KEY", 700)
    text = f"# Note\n\n{block}\n\ntoken {gh}\nDB_PASSWORD={PASSWORD}\n"
    findings = find_secrets(text)
    assert [(f.pattern, f.line) for f in findings] == [
        ("private-key", 4),  # the body, below the BEGIN line
        ("github-token", 13),
        ("password-assignment", 14),
    ]
    assert findings[1].fingerprint == secret_fingerprint(gh)
    for value in (gh, body, PASSWORD):
        assert value not in repr(findings)
    # find_secrets agrees with scrub's counts
    counts: dict[str, int] = {}
    for f in findings:
        counts[f.pattern] = counts.get(f.pattern, 0) + 1
    assert counts == dict(scrub(text).counts)


def test_key_id_and_secret_pairs_both_go() -> None:
    csv = f"Access key ID,Secret access key\n{AWS_ID},{AWS_SECRET}\n"
    assert scrub(csv).text == (
        "Access key ID,Secret access key\n"
        f"{marker('aws-access-key-id')},{marker('aws-secret-key-pair')}\n"
    )
    transcript = f"AWS Access Key ID [None]: {AWS_ID}\nAWS Secret Access Key [None]: {AWS_SECRET}\n"
    assert dict(scrub(transcript).counts) == {"aws-access-key-id": 1, "aws-secret-access-key": 1}
    # a git SHA-1 after a key id is not its secret
    sha = fake(HEX, 40, 198)
    assert sha in scrub(f"{AWS_ID} rotated in {sha}").text


def test_twilio_sid_goes_only_with_its_auth_token() -> None:
    both = f"TWILIO_ACCOUNT_SID={TWILIO_SID}\nTWILIO_AUTH_TOKEN={TWILIO_TOKEN}\n"
    assert scrub(both).text == (
        f"TWILIO_ACCOUNT_SID={marker('twilio-account-sid')}\n"
        f"TWILIO_AUTH_TOKEN={marker('twilio-auth-token')}\n"
    )
    assert scrub(f"twilio account {TWILIO_SID}").text == f"twilio account {TWILIO_SID}"


def test_findings_of_a_second_pass_map_to_original_lines() -> None:
    # A value only found once an earlier redaction changed its surroundings still gets
    # a line number in the original text, not in the partly redacted one.
    text = "x\n" + "\n".join(f"{t.secret}" for t in TOKENS[:3]) + "\nend"
    lines = [f.line for f in find_secrets(text)]
    assert lines == [2, 3, 4]


# A hang guard, not a speed test (the team's rule: no timed assertions; speed is
# bench/scrub_throughput.py's). Each input is scrubbed in a child process that the kernel stops
# once it has used 60 s of CPU time (RLIMIT_CPU). CPU time is the child's own work, so other jobs
# loading the machine do not count towards it: they only stretch the wall time, and the wall-clock
# timeout below (10 minutes) is a last resort against a machine that stalls. The slowest of these
# inputs takes 0.8 s of CPU today ("token=" * 30_000 + "(", measured on the shared 2-core machine),
# so a pass means "no worse than 75 times today". Catastrophic backtracking cannot hide inside that
# margin: each input is 100,000-560,000 characters of the prefixes, separators and repeats a rule
# would retry at every position, so a rule that backtracks there does at least n^2 = 10^10-3*10^11
# steps (minutes to hours of CPU at 10^7-10^8 regex steps a second), and an exponential one never
# ends.
_CPU_SECONDS = 60
_SCRUB_IN_A_CHILD = f"""
import resource, sys
resource.setrlimit(resource.RLIMIT_CPU, ({_CPU_SECONDS}, {_CPU_SECONDS + 10}))
from noteseek.secrets.scrubber import scrub
scrub(sys.stdin.read())
"""


@pytest.mark.parametrize(
    "text",
    [
        "-----BEGIN PRIVATE KEY-----\n" * 20_000,
        "-----BEGIN PRIVATE KEY-----\n" + "A" * 300_000,
        "password=" + "a." * 100_000 + "(",
        "password: " + "x" * 200_000,
        "eyJ" * 60_000,
        "://" + ":" * 200_000 + "@",
        "key: " + "A1" * 100_000 + "(",
        ("token = " + "Z9" * 30 + " ") * 5_000,
        "pass" * 50_000,
        "password=" * 20_000 + "(",
        "token=" * 30_000 + "(",
        "aws_secret_access_key=" * 10_000 + "(",
        "sk-" * 60_000,
        "xoxb-123456-" * 20_000,
        "glpat-" * 40_000,
        'password="' * 20_000,
        "a://b:" * 30_000,
        "S" + "K" + "0" * 200_000,
        "discord " + "M" * 200_000,
        "1234567890:A" + "A" * 100_000,
        "private PuTTY-User-Key-File-2: x\n" + "Private-Lines: 9\n" * 20_000,
        '"private_key": "-----BEGIN PRIVATE KEY-----' + "\\n" * 100_000,
        "Server=x;" + "Password=;" * 30_000,
        "Server=x;Password=" + "a " * 100_000,
        ("AK" + "IA" + "A2" * 8 + "\n" + "x" * 90 + "\n") * 5_000,
        "twilio " + ("A" + "C" + "0" * 32 + ":") * 10_000,
        "mailgun " + "key-" * 50_000,
    ],
    ids=lambda t: repr(t[:12]),
)
def test_no_catastrophic_backtracking(text: str) -> None:
    child = subprocess.run(
        [sys.executable, "-c", _SCRUB_IN_A_CHILD],
        input=text,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=600,
    )
    # SIGXCPU at the soft limit; SIGKILL at the hard one, should the first be caught.
    assert child.returncode not in (-signal.SIGXCPU, -signal.SIGKILL), (
        f"scrub() used {_CPU_SECONDS} s of CPU on {len(text)} characters: catastrophic backtracking"
    )
    assert child.returncode == 0, child.stderr


# Secret-like soup: keys, separators, quotes, prefixes and markers glued at random.
FRAGMENTS = [
    "password", "PASSWORD", "_pass", "pwd", "secret", "token", "api_key", "key", "auth",
    "Bearer ", "Authorization: Basic ", "://", "user", ":", "@", "=", ": ", "=>", ":=", '"',
    "'", "`", " ", "\n", ".", "(", "[", "$", "{", "}", "*", "-", "_", "İ",
    "-----BEGIN PRIVATE KEY-----", "-----END PRIVATE KEY-----", "eyJ", "sk-", "gh" + "p_",
    "[REDACTED:jwt]", "[REDACTED:", "]", "hunter22", "Sunflower77", fake(ALNUM, 40, 500),
    fake(B64, 64, 501), TOKENS[0].secret, JWT, PASSWORD,
]  # fmt: skip
PROSE_WORDS = [
    "the", "index", "stores", "notes", "in", "SQLite", "and", "a", "search", "returns",
    "chunks", "ranked", "by", "BM25", "with", "Markdown", "headings", "#1e90ff", "v2.3.1",
    "3f2504e0-4f89-11d3-9a0c-0305e82c3301", "a94a8fe5ccb19ba61c4c0873d391e987982fbbd3",
    "https://developer.mozilla.org/en-US/docs/Web", "(see", "below)", "—", "café", ",", ".",
    "password", "token", "key", "secret", "pass", "\n",
]  # fmt: skip
prose = st.lists(st.sampled_from(PROSE_WORDS), max_size=60).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_arbitrary_text_never_raises_and_is_idempotent(text: str) -> None:
    once = scrub(text)
    assert scrub(once.text).text == once.text


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=40).map("".join))
def test_secret_like_soup_is_idempotent(text: str) -> None:
    once = scrub(text)
    twice = scrub(once.text)
    assert twice.text == once.text
    assert dict(twice.counts) == {}


@settings(max_examples=300, deadline=None)
@given(prose)
def test_prose_without_secrets_is_unchanged(text: str) -> None:
    result = scrub(text)
    assert result.text == text
    assert dict(result.counts) == {}


@settings(max_examples=300, deadline=None)
@given(prose, prose, st.sampled_from(TOKENS))
def test_token_inside_prose_is_always_redacted(before: str, after: str, token: Fake) -> None:
    result = scrub(f"{before} {token.secret} {after}")
    assert result.text == f"{before} {marker(token.rule)} {after}"
    assert dict(result.counts) == {token.rule: 1}
