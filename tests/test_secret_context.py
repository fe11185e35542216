"""The scrubber's context and normalisation layers, in process: a found value goes from the whole
text, context (a key, a header, a sentence, a command's flag) is enough whatever the value's
length, and disguises (fullwidth, invisible characters, a line break) do not hide a token.
The same cases through the CLI, MCP and the web API: tests/test_secret_context_end_to_end.py."""

from __future__ import annotations

import random
import string
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import noteseek
from noteseek.secrets.normalise import text_view
from noteseek.secrets.scrubber import KnownSecrets, find_secrets, scrub
from tests.conftest import FakeEmbedder

ALNUM = string.ascii_letters + string.digits
RNG = random.Random(7)


def rand(n: int) -> str:
    while True:
        value = "".join(RNG.choice(ALNUM) for _ in range(n))
        if any(c.isdigit() for c in value) and any(c.isalpha() for c in value):
            return value


def gone(text: str, *values: str) -> str:
    result = scrub(text).text
    for value in values:
        assert value.lower() not in result.lower(), (text, result)
    assert scrub(result).text == result  # idempotent
    assert len(find_secrets(text)) == sum(scrub(text).counts.values())
    return result


# ---------------------------------------------------------------- a value goes from everywhere


def test_a_value_found_once_is_removed_at_every_occurrence() -> None:
    value = rand(15)
    text = (
        f"---\ntitle: Login {value}\naliases: [{value}]\n---\n# Wifi\n\nsecret_pw: {value}\n\n"
        f"## Typed {value} again\n\nLater I typed {value} into the router; {value.upper()} too.\n"
    )
    result = gone(text, value)
    assert result.count("[REDACTED:password-assignment]") == 6
    assert "Later I typed [REDACTED:password-assignment] into the router" in result


def test_a_value_in_a_spreadsheet_row_goes_from_every_cell() -> None:
    value = rand(16)
    gone(f"password | {value} | password={value}\nnote | reused {value} here", value)


def test_a_short_value_goes_only_as_a_whole_word() -> None:
    result = gone("password: admin7\nthe admin7 account; admin75 is another", "admin7 ")
    assert "admin75" in result


def test_known_values_from_other_fields_are_removed() -> None:
    value = rand(12)
    title = scrub(f"password: {value}")
    assert repr(title.found) == "KnownSecrets(1 value(s))"  # never the value
    assert value not in repr(title)
    body = scrub(f"I wrote {value} on a sticky note.", known=title.found)
    assert value not in body.text and dict(body.counts) == {"password-assignment": 1}
    assert len(body.found | KnownSecrets()) == 1


def test_a_yaml_escape_does_not_hide_a_value_from_the_index(tmp_path: object) -> None:
    from pathlib import Path

    root = Path(str(tmp_path)) / "vault"
    root.mkdir()
    value = rand(11)
    (root / "n.md").write_text(
        f'---\ntitle: "pass\\x77ord: {value}"\n---\n\nI wrote {value} on the sticky note.\n',
        encoding="utf-8",
    )
    db = root.parent / "i.db"
    with noteseek.Index(db, embedder=FakeEmbedder()) as idx:
        idx.update(root)
        assert idx.search("sticky note", limit=3, mode="bm25")
        note = idx.read_note("n.md")
        assert value not in note.text
    assert value.encode() not in db.read_bytes()


@pytest.mark.parametrize(
    "frontmatter",
    [
        "{t}: gh\ntitle: Deploy keys\ntags: [ops, aws]\ndate: 2024-03-05\n",  # a token as a key
        'title: "Deploy keys ghp_\\x41{t5}"\ntags: [ops, aws]\ndate: 2024-03-05\n',  # escaped
    ],
)
def test_a_scrubbed_frontmatter_keeps_its_fields(tmp_path: object, frontmatter: str) -> None:
    """A marker where YAML reads structure made valid frontmatter invalid: the note lost its
    title, tags and date, with a warning that its YAML was broken."""
    from pathlib import Path

    root = Path(str(tmp_path)) / "vault"
    root.mkdir()
    token = "ghp_" + rand(36)
    fields = frontmatter.format(t=token, t5=token[5:])
    text = f"---\n{fields}---\n\nThe deploy keys live in the vault.\n"
    (root / "n.md").write_text(text, encoding="utf-8")
    db = root.parent / "i.db"
    with noteseek.Index(db, embedder=FakeEmbedder()) as idx:
        stats = idx.update(root)
        assert not stats.problems
        (hit,) = idx.search("deploy keys vault", limit=3, mode="bm25")
        assert hit.title.startswith("Deploy keys") and hit.tags == ("ops", "aws")
        assert hit.date is not None and hit.date.startswith("2024-03-05")
    assert token[4:].encode() not in db.read_bytes() and token[5:].encode() not in db.read_bytes()


# ------------------------------------------------------------------ context, whatever the length


@pytest.mark.parametrize(
    "template",
    [
        "| Service | User | Password |\n|---|---|---|\n| nas | admin | {v} |\n",
        "| Dienst | Kennwort | Notiz |\n| --- | --- | --- |\n| mail | {v} | alt |\n",
        "| password | {v} |",
        "| **Passwort:** | `{v}` |",
        "[Sheet: S]\nsite | login | root password\nbank | me | {v}",
        "site;user;passwort\nbank;me;{v}\n",
        "pass: {v}",
        "PW = {v}",
        "Passwort: {v}",
        "Kennwort={v}",
        "The root password is {v}.",
        "the password for the backup NAS is now {v}",
        "Password - {v}",
        "Password \u2014 {v}",
        "Das Passwort lautet {v}",
        "Das Kennwort für den Router ist {v}.",
        "Passwort für das WLAN: {v}",
        "mysql -h db -u root -p{v} shop",
        "mysqldump -uroot -p'{v}' shop > x.sql",
        "curl -s -u admin:{v} https://x.local",
        "curl --user 'deploy:{v}' https://x.local",
        'sshpass -p "{v}" ssh pi@host',
        "sqlcmd -S db -U sa -P {v}",
        "plink -ssh root@host -pw {v}",
        "mongosh --host db -u root -p {v}",
        "docker login -u me -p {v} registry",
        "7z x backup.7z -p{v}",
        "zip -P {v} out.zip file",
        "keytool -list -keystore k.jks -storepass {v}",
        "openssl enc -aes-256-cbc -pass pass:{v} -in x",
        "xfreerdp /u:admin /p:{v} /v:host",
    ],
)
@pytest.mark.parametrize("length", [6, 9, 16])
def test_context_is_enough_whatever_the_length(template: str, length: int) -> None:
    value = rand(length)
    gone(template.replace("{v}", value), value)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Die PIN ist 4711.", "4711"),
        ("PIN 9031", "9031"),
        ("PIN-Code: 552019", "552019"),
        ("| PIN | 8142 |", "8142"),
        ('my password is "swordfish"', "swordfish"),
        ('| password | "correct horse" |', "correct horse"),
        ("| User | Passphrase |\n|---|---|\n| me | blue canoe river 7 |", "blue canoe river 7"),
    ],
)
def test_pins_quoted_words_and_passphrases_by_context(text: str, value: str) -> None:
    gone(text, value)


@pytest.mark.parametrize(
    "text",
    [
        "The password is incorrect. The password is required.",
        "Password - the one you chose at signup.",
        "The password is stored as a bcrypt hash.",
        "Das Passwort muss 12 Zeichen haben.",
        "Passwort vergessen? Dann hilft der Link.",
        "password \u2014 v2.3.1 adds a strength meter",
        "Use the --password option to set it.",
        "pin 13 drives the LED; Pin 2 is ground; the PIN pad",
        "| Key | Action |\n|---|---|\n| Ctrl+K | open |\n",
        "<code>type=text|password|search|time</code> and then time passes",
        "| Password | Hash |\n|---|---|\n| ******** | 5e88 |",
        "| `STENCIL_PASS_DEPTH_PASS` | 0x0B96 |",
        "mysql -u root -p mydb",
        "curl -u $USER:$TOKEN https://x",
        "sshpass -p {{password}} ssh host",
        "Hello, world, key\nfoo, bar, baz\n",
        # A row's first cell names a field; unquoted words after it describe it (MDN's tables).
        "| `password` | A single-line text field whose value is obscured |",
    ],
)
def test_near_misses_stay(text: str) -> None:
    assert scrub(text).text == text


def test_a_letters_only_generated_password_is_not_taken_for_an_identifier() -> None:
    """A random mix of cases has camel humps too (`PSSlWXWGVKPxts`): it was kept as code, so
    every letters-only password under `password:` reached the index. One with long lower-case
    runs (`rGpctaegMIcmAs`) still reads as an identifier: about 7 % of 14-letter ones."""
    rng = random.Random(3)
    values = ["".join(rng.choice(string.ascii_letters) for _ in range(14)) for _ in range(200)]
    for template in ("password: {v}", "wifi:\n  password = {v}\n"):
        kept = [v for v in values if v.lower() in scrub(template.format(v=v)).text.lower()]
        assert len(kept) <= 20, kept  # before: all 200
    gone("password: PSSlWXWGVKPxts", "PSSlWXWGVKPxts")
    for code in ("passwordInput", "user_password", "XMLHttpRequest", "newPasswordValue"):
        assert scrub(f"password: {code}").text == f"password: {code}"


# ------------------------------------------------------------------------ disguises


def _fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def test_fullwidth_zero_width_soft_hyphen_and_wrapped_tokens() -> None:
    token = "gh" + "p_" + rand(36)
    gone(f"CI token {_fullwidth(token)} from a PDF", _fullwidth(token))
    split = token[:9] + "\u200b" + token[9:]
    gone(f"token {split} here", split, token[9:])
    joiner = token[:5] + "\u2060" + token[5:20] + "\ufeff" + token[20:]
    gone(joiner, token[20:])
    value = rand(12)
    gone(f"pass\u00adword: {value}", value)
    wrapped = f"Wrapped: {token[:20]}\n{token[20:]} end"
    result = gone(wrapped, token[:20], token[20:])
    assert result == "Wrapped: [REDACTED:github-token] end"
    indented = f"- key {token[:18]}\n  {token[18:]}\n- next item"
    gone(indented, token[:18], token[18:])


def test_the_stored_text_keeps_its_own_characters() -> None:
    value = rand(14)
    text = f"Grüße — café ﬁle …\npassword: {value}\nnoch einmal: {value} ✓"
    result = gone(text, value)
    assert result.startswith("Grüße — café ﬁle …\npassword: [REDACTED:")
    assert result.endswith("✓")


def test_two_lines_that_are_words_are_not_joined() -> None:
    text = "dependencies\nversion2 of the build\nAKIA is a prefix\nsee_also\nnext_steps"
    assert scrub(text).text == text


_INVISIBLE = st.sampled_from(["\u200b", "\u00ad", "\ufeff", "\u2060", "\u200d"])
_PIECE = st.one_of(st.text(alphabet=ALNUM + " \n:=|-", max_size=12), _INVISIBLE,
                   st.sampled_from(["ﬁ", "Ａ", "１", "…", "ü", "—", "\u00a0"]))  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECE, max_size=30).map("".join), st.data())
def test_view_spans_map_back_to_what_produced_them(text: str, data: st.DataObject) -> None:
    view = text_view(text)
    if not view.text:
        return
    start = data.draw(st.integers(0, len(view.text) - 1))
    end = data.draw(st.integers(start + 1, len(view.text)))
    a, b = view.original_span(start, end)
    assert 0 <= a < b <= len(text)
    # The original characters, normalised and without invisibles, hold the view's span.
    again = text_view(text[a:b]).text
    assert view.text[start:end] in again
    assert unicodedata.normalize("NFKC", again) == again or not again.isascii()


def test_the_one_scan_for_many_values_finds_what_a_find_per_value_finds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Past `_FIND_EACH_UP_TO` every other occurrence is looked for in one scan of the text (one
    `find` per value grew with the square of a note full of secrets)."""
    from noteseek.secrets import scrubber

    rng = random.Random(7)
    values = ["".join(rng.choice(string.ascii_letters + string.digits) for _ in range(n))
              for n in (6, 9, 14, 20, 31)]  # fmt: skip
    lines = [f"password: {v}" for v in values]
    lines += [f"later I typed {v} and {v.upper()}, not x{values[0]}y" for v in values]
    text = "\n".join(lines * 3)
    expected = scrub(text)
    monkeypatch.setattr(scrubber, "_FIND_EACH_UP_TO", 0)
    scanned = scrub(text)
    assert scanned.text == expected.text and scanned.counts == expected.counts
    assert not any(v in scanned.text or v.upper() in scanned.text for v in values[1:])
    assert f"x{values[0]}y" in scanned.text  # a short value only as a whole word
