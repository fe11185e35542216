"""A hostile vault through the real processes: no value the scrubber flags, by a rule or by its
context, survives anywhere — the database file and its WAL, `search --json`, the MCP `get_note`
and `search` tools, the web API.

The cases are the classes of the hardening report with values and wordings of our own: a value
that comes back later in a sentence, a heading, an alias, a tag, a title hidden by a YAML escape;
passwords of every length in tables (a `Password` column, a `| Kennwort | x |` row), after short
keys (`PW:`, `pass =`), in English and German sentences, on command lines (mariadb, curl --user,
sshpass, redis-cli, smbclient, ldapwhoami), PINs; tokens in fullwidth characters, with a zero-width
space or a soft hyphen inside, wrapped over a line end; a CSV and an XLSX with a password column.
Values are drawn from a seeded generator, so they are not the report's.
"""

from __future__ import annotations

import io
import json
import random
import string
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

import noteseek

ALNUM = string.ascii_letters + string.digits
SEARCH = [sys.executable, "-m", "noteseek", "search"]


def _fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


@dataclass(frozen=True)
class Hostile:
    """The vault's files, every value that must not survive, and words that must."""

    files: dict[str, str | bytes]
    values: tuple[str, ...]
    kept: tuple[str, ...]
    # Values not in the files' bytes as such: fullwidth, split by an invisible character or a
    # line break, inside the XLSX's zip.
    disguised: tuple[str, ...]


def hostile_vault(seed: int = 20261201) -> Hostile:
    """The files of the hostile vault, built from seeded random values."""
    rng = random.Random(seed)

    def rand(n: int, alphabet: str = ALNUM) -> str:
        while True:
            value = "".join(rng.choice(alphabet) for _ in range(n))
            if any(c.isdigit() for c in value) and any(c.isalpha() for c in value):
                return value

    v = {k: rand(n) for k, n in (
        ("reuse", 14), ("col8", 8), ("col16", 16), ("kennwort", 11), ("pw", 9), ("pass", 16),
        ("de", 12), ("en", 10), ("dash", 16), ("now", 13), ("maria", 16), ("curl", 16),
        ("sshpass", 16), ("redis", 16), ("smb", 12), ("ldap", 16), ("soft", 12), ("yaml", 10),
        ("csv1", 16), ("csv2", 9), ("xlsx1", 16), ("xlsx2", 7),
    )}  # fmt: skip
    v["phrase"] = "blue canoe river " + str(rng.randint(10, 99))
    v["weak"] = "Kiwi" + str(rng.randint(1000, 9999))
    # Six digits (the rule takes 4-8): the test greps the database bytes, where any four digits
    # turn up by chance in the hex of content hashes.
    pins = [str(rng.randint(100000, 999999)) for _ in range(3)]
    gh = "gh" + "p_" + rand(36)
    ant = "sk-" + "ant-" + rand(40, ALNUM + "-_")
    wrapped = "gh" + "o_" + rand(36)
    files: dict[str, str | bytes] = {
        "accounts/router.md": (
            f"---\ntitle: Router {v['reuse']}\naliases: [{v['reuse']}, home router]\n"
            f"tags: [network, {v['reuse']}]\n---\n"
            f"# Router\n\ndb_password: {v['reuse']}\n\n## Notes on {v['reuse']}\n\n"
            f'Later I pasted {v["reuse"]} into the admin page ("{v["reuse"]}").\n'
            "The password is incorrect on the first try, a sticky note helped.\n"
        ),
        "accounts/logins.md": (
            "# Logins\n\n| Host | Login | Passwort |\n|:---|---|---:|\n"
            f"| nas | admin | {v['col8']} |\n| printer | root | `{v['col16']}` |\n"
            f"| kiosk | guest | {v['phrase']} |\n\n"
            f"| Kennwort | {v['kennwort']} |\n|---|---|\n| PIN | {pins[0]} |\n"
        ),
        "accounts/short-keys.md": (
            f"# Short keys\n\nPW: {v['pw']}\npass = {v['pass']}\nWLAN-Passwort: {v['weak']}\n"
        ),
        "accounts/sentences.md": (
            "# Sentences\n\n"
            f"Das Kennwort für den Router lautet {v['de']}.\n\n"
            f"the admin password was {v['en']} until March.\n\n"
            f"Password \u2013 {v['dash']}\n\n"
            f"My wifi password is now {v['now']}, tell nobody.\n\n"
            f"Die SIM-PIN ist {pins[1]}. Bank PIN {pins[2]}\n"
        ),
        "accounts/commands.md": (
            "# Commands\n\n```sh\n"
            f"mariadb -uroot -p{v['maria']} shop\n"
            f"curl --user deploy:{v['curl']} https://ci.internal/api\n"
            f'sshpass -p"{v["sshpass"]}" scp backup.tar pi@10.0.0.7:\n'
            f"redis-cli -h cache -a {v['redis']} info\n"
            f"smbclient //nas/media -U kodi%{v['smb']}\n"
            f"ldapwhoami -x -D cn=me,dc=home -w {v['ldap']}\n```\n"
        ),
        "accounts/unicode.md": (
            "# Unicode\n\n"
            f"The CI token is {_fullwidth(gh)} (copied from a PDF).\n\n"
            f"Key with a hidden space: {ant[:12]}\u200b{ant[12:]}\n\n"
            f"pass\u00adword: {v['soft']}\n\n"
            f"Wrapped in a mail: {wrapped[:20]}\n{wrapped[20:]} end of the mail.\n"
        ),
        # The title's value is hidden from the raw-text pass by a YAML escape; the body has it bare.
        "accounts/escaped.md": (
            f'---\ntitle: "pass\\x77ord: {v["yaml"]}"\n---\n\n'
            f"I wrote {v['yaml']} on the sticky note.\n"
        ),
        "exports/logins.csv": (
            "site,user,password,note\n"
            f"bank,me,{v['csv1']},\n"
            f"nas,admin,{v['csv2']},password={v['csv1']} reused\n"
        ),
    }
    openpyxl = pytest.importorskip("openpyxl")
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Zugänge"
    for row in (
        ("Dienst", "Benutzer", "Hinweis", "Kennwort"),
        ("mail", "ich", None, v["xlsx1"]),  # an empty cell before the column
        ("cloud", "ich", "alt", v["xlsx2"]),
    ):
        sheet.append(row)
    buffer = io.BytesIO()
    book.save(buffer)
    files["exports/zugaenge.xlsx"] = buffer.getvalue()
    values = (*v.values(), *pins, gh, ant, wrapped, wrapped[:20], wrapped[20:])
    disguised = (gh, ant, wrapped, v["xlsx1"], v["xlsx2"])
    return Hostile(files, values, ("incorrect", "sticky", "router"), disguised)


def leaks(data: bytes, values: tuple[str, ...]) -> list[str]:
    """Which values (by position, never the value) occur in ``data``."""
    lowered = data.lower()
    return [
        f"value #{i}"
        for i, value in enumerate(values)
        if value.encode() in data or value.lower().encode() in lowered
    ]


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> tuple[Hostile, Path, Path]:
    case = hostile_vault()
    root = tmp_path_factory.mktemp("hostile") / "vault"
    for rel, content in case.files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    db = root.parent / "index.db"
    done = subprocess.run(
        [sys.executable, "-m", "noteseek", "index", str(root), "--db", str(db), "-q"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert leaks((done.stdout + done.stderr).encode(), case.values) == []
    return case, root, db


def test_the_values_are_in_the_vault_and_the_scrubber_sees_them(
    hostile: tuple[Hostile, Path, Path],
) -> None:
    case, root, _db = hostile
    raw = b"".join(p.read_bytes() for p in root.rglob("*") if p.is_file())
    plain = tuple(v for v in case.values if v not in case.disguised)
    assert len(leaks(raw, plain)) == len(plain)  # the test plants what it checks
    assert leaks(raw, case.disguised) == []
    # Every disguised text value is found by the scrubber, through its disguise.
    texts = [p.read_text(encoding="utf-8") for p in root.rglob("*.md")]
    assert "[REDACTED:github-token]" in noteseek.scrub("\n".join(texts)).text


def test_no_value_in_the_database_bytes(hostile: tuple[Hostile, Path, Path]) -> None:
    case, _root, db = hostile
    paths = [db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")]
    data = b"".join(p.read_bytes() for p in paths if p.exists())
    assert data
    assert leaks(data, case.values) == []
    with noteseek.Index(db) as idx:
        status = idx.status()
        # One redaction per value at least (the wrapped token's two parts are one).
        assert status.secrets_scrubbed >= len(case.values) - 2
        # Not everything went: the prose around the values is searchable.
        for word in case.kept:
            assert idx.search(word, limit=5, mode="bm25"), word
        indexed = set(idx.note_paths())
    assert {"exports/logins.csv", "exports/zugaenge.xlsx", "accounts/escaped.md"} <= indexed


def test_no_value_in_search_json(hostile: tuple[Hostile, Path, Path]) -> None:
    case, _root, db = hostile
    for query in ("router password", "Kennwort", "token", "sshpass mariadb curl", "bank nas",
                  "sticky note", "PIN", "mail cloud"):  # fmt: skip
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "noteseek",
                "search",
                query,
                "--db",
                str(db),
                "--json",
                "--limit",
                "20",
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        json.loads(done.stdout)
        assert leaks(done.stdout.encode(), case.values) == [], query


def test_no_value_through_mcp(hostile: tuple[Hostile, Path, Path]) -> None:
    pytest.importorskip("mcp")
    import anyio
    from mcp import Client, StdioServerParameters

    case, root, db = hostile
    notes = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "noteseek", "mcp", "--db", str(db)], cwd=str(root)
    )

    async def main() -> list[str]:
        out: list[str] = []
        async with Client(params, mode="legacy") as client:
            for path in notes:
                result = await client.call_tool("get_note", {"path": path})
                assert not result.is_error, path
                out += [block.text for block in result.content]
            for query in ("router password", "Kennwort PIN", "token mail"):
                result = await client.call_tool("search", {"query": query})
                out += [block.text for block in result.content]
        return out

    replies = anyio.run(main)
    assert any("[REDACTED:" in r for r in replies)
    assert leaks("\n".join(replies).encode(), case.values) == []


def test_no_value_through_the_web_api(hostile: tuple[Hostile, Path, Path]) -> None:
    pytest.importorskip("fastapi")
    import httpx

    from noteseek.web.app import create_app
    from tests.web_support import make_pool, serve

    case, root, db = hostile
    notes = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    pool = make_pool(db, workers=1)
    replies: list[str] = []
    try:
        with serve(create_app(pool)) as url, httpx.Client(base_url=url, timeout=60) as client:
            for path in notes:
                reply = client.get(f"/api/notes/{path}")
                assert reply.status_code == 200, (path, reply.text[:200])
                replies.append(reply.text)
            for query in ("router password", "Kennwort", "sshpass curl"):
                reply = client.get("/api/search", params={"q": query, "limit": 20})
                assert reply.status_code == 200
                replies.append(reply.text)
    finally:
        pool.close()
    assert leaks("\n".join(replies).encode(), case.values) == []
