"""No raw control sequence reaches a terminal, and no line can be forged: file names and note
text full of escapes (CSI, OSC title and OSC 52 clipboard, BEL, BS, CR, C1, DEL, bidi overrides)
and a file name with a newline, through every command's human-readable output (the real CLI
in a subprocess, the bundled model). JSON output keeps the exact text."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from noteseek.core.display import bounded, bounded_repr, one_line, printable

from .conftest import user_env

# What must never reach a terminal raw: C0 but tab and newline, DEL, C1, bidi controls, U+2028/9.
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029]")
ESC_NAME = "evil\x1b]0;pwned\x07\x1b[31m\u202eslide.md"
FORGED = "skipped  passwords.md: symlink points outside the vault"
NEWLINE_NAME = f"line\n{FORGED}.md"
HOSTILE_TEXT = (
    "capybara \x1b[2J\x1b[H cleared \x1b]52;c;SGVsbG8=\x07 clipboard \x07 bell \x08\x08 back "
    "\r return \x9b31m c1 \u202e reversed \x7f del \u2028 separator"
)
TOKEN = "ghp_" + "Q7w9E2r4T6y8U1i3O5p7A9s2D4f6G8h1J3k5"


def run(*args: str, env: dict[str, str], check: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "-m", "noteseek", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    if check and result.returncode != 0:
        raise AssertionError(f"exit {result.returncode}\n{result.stdout}\n{result.stderr}")
    return result


def assert_clean(result: subprocess.CompletedProcess[str] | str) -> None:
    for text in [result] if isinstance(result, str) else [result.stdout, result.stderr]:
        raw = RAW.search(text)
        assert raw is None, (repr(raw.group()) if raw else None, text[:2000])


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("terminal")
    vault = root / "vault"
    (vault / "notes").mkdir(parents=True)
    (vault / "Home.md").write_text("# Home\n\nA note about the capybara.\n")
    (vault / ESC_NAME).write_text(
        f"# Title \x1b]0;owned\x07 capybara\n\n{HOSTILE_TEXT}\n\n## Sec\x1b[5m\n\ntoken {TOKEN}\n"
    )
    (vault / "notes" / NEWLINE_NAME).write_text("# Forged\n\ncapybara in a strange name\n")
    outside = root / "outside.md"
    outside.write_text("# Outside\n")
    (vault / f"link\n{FORGED}\x1b[2J.md").symlink_to(outside)
    env = user_env()
    env.update(
        NOTESEEK_HOME=str(root / "home"),
        NOTESEEK_DB=str(root / "index.db"),
        HF_HUB_OFFLINE="1",
        VAULT=str(vault),
        ROOT=str(root),
        # Every hit: these tests are about what reaches the terminal, not the thresholds.
        NOTESEEK_MIN_SCORE="0",
        NOTESEEK_MIN_ANSWER="0",
    )
    assert_clean(run("index", str(vault), env=env))
    return env


def test_the_shared_function_escapes_every_control_and_keeps_layout_where_asked() -> None:
    assert printable("a\x1b[2Jb\tc\nd\re\x9b\u202e\x7f") == "a\\x1b[2Jb\tc\nd\\re\\x9b\\u202e\\x7f"
    assert one_line("a\nb\tc") == "a\\nb\\tc"
    assert RAW.search(printable(HOSTILE_TEXT)) is None and "\n" not in one_line(NEWLINE_NAME)
    assert printable("plain text, ümlauts, 日本語, emoji 🦫") == "plain text, ümlauts, 日本語, emoji 🦫"
    assert bounded("x" * 10, 5) == "xxxxx… (10 characters)" and bounded("abc") == "abc"
    assert bounded_repr("y" * 1000).endswith("… (1,000 characters)")


def test_search_and_context_print_escapes_visibly(env: dict[str, str]) -> None:
    for args in (
        ("search", "capybara"),
        ("search", "capybara", "--explain"),
        ("search", "capybara clipboard reversed", "--mode", "bm25"),
        ("context", "capybara clipboard", "--no-gate"),
    ):
        result = run(*args, env=env)
        assert_clean(result)
        assert "capybara" in result.stdout, args
    out = run("search", "clipboard bell", "--mode", "bm25", env=env).stdout
    assert "\\x1b]52;c;SGVsbG8=\\x07" in out and "\\x1b[2J" in out  # visible, not run


def test_json_output_keeps_the_exact_text(env: dict[str, str]) -> None:
    result = run("search", "clipboard bell", "--mode", "bm25", "--json", env=env)
    assert "\x1b" not in result.stdout and "\\u001b" in result.stdout  # JSON's own escape
    hits = json.loads(result.stdout)["hits"]
    assert hits[0]["path"] == ESC_NAME
    assert "\x1b]52;c;SGVsbG8=\x07" in hits[0]["text"]
    files = json.loads(run("status", "--files", "--json", env=env).stdout)
    assert f"notes/{NEWLINE_NAME}" in {f["path"] for f in files["files"]}


def test_a_file_name_with_a_newline_cannot_forge_a_status_line(env: dict[str, str]) -> None:
    result = run("status", "--files", env=env)
    assert_clean(result)
    lines = result.stdout.splitlines()
    files = json.loads(run("status", "--files", "--json", env=env).stdout)["files"]
    assert len(lines) == len(files) + 1  # one line per file and the summary
    states = ("indexed", "skipped", "failed", "pending")
    assert all(line.startswith(states) for line in lines[:-1]), lines
    forged = [line for line in lines if line.startswith("skipped") and FORGED in line]
    assert len(forged) == 1 and "link\\nskipped" in forged[0]  # the real symlink, escaped
    assert f"notes/line\\n{FORGED}.md" in result.stdout
    for args in (("status",), ("status", "--files", "--problems")):
        problems = run(*args, env=env)
        assert_clean(problems)
        assert not any(line.startswith(FORGED) for line in problems.stdout.splitlines())


def test_index_scan_and_eval_print_escapes_visibly(env: dict[str, str], tmp_path: Path) -> None:
    vault = env["VAULT"]
    full = run("index", vault, "--full", env=env)
    assert_clean(full)
    assert "link\\nskipped" in full.stderr  # the symlink's problem line, one line
    scan = run("scan", vault, env=env)
    assert_clean(scan)
    assert "evil\\x1b]0;pwned\\x07" in scan.stdout and TOKEN not in scan.stdout
    queries = tmp_path / "queries.jsonl"
    queries.write_text(
        json.dumps({"_id": "q1", "text": "capybara \x1b[2J", "metadata": {"category": "a\nb\x1b[5m"}})
        + "\n"
    )
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text(f"query-id\tcorpus-id\tscore\nq1\t{ESC_NAME}\t1\n")
    report = run("eval", "--queries", str(queries), "--qrels", str(qrels), "--mode", "bm25", env=env)
    assert_clean(report)
    assert "| a\\nb\\x1b[5m |" in report.stdout


def test_errors_and_usage_errors_escape_what_they_quote(env: dict[str, str]) -> None:
    missing = run("search", "q", "--db", f"{env['ROOT']}/gone\x1b]0;x\x07\n.db", env=env, check=False)
    assert missing.returncode == 1 and "gone\\x1b]0;x\\x07\\n.db" in missing.stderr
    assert_clean(missing)
    usage = run(
        "eval", "--queries", "no\x1b[2Jsuch\nfile", "--qrels", "x", env=env, check=False
    )
    assert usage.returncode == 2 and "no\\x1b[2Jsuch" in usage.stderr
    assert_clean(usage)


def test_intake_and_install_hooks_print_escapes_visibly(env: dict[str, str]) -> None:
    root = Path(env["ROOT"])
    inbox = root / "inbox"
    inbox.mkdir()
    (inbox / "item\x1b[2J\nmoved to x.md").write_text("# Item\n\nsomething about a capybara\n")
    (root / "vault" / "notes" / "more.md").write_text("# More\n\nanother capybara note\n")
    intake = run("intake", str(inbox), "--vault", env["VAULT"], "--dry-run", env=env)
    assert_clean(intake)
    assert "item\\x1b[2J\\nmoved to x.md" in intake.stdout
    assert not any(line.startswith("moved to x.md") for line in intake.stdout.splitlines())
    project = root / "proj\x1b]0;t\x07"
    project.mkdir()
    hooks = run("install-hooks", "--project", str(project), "--dry-run", env=env)
    assert_clean(hooks)
    assert "proj\\x1b]0;t\\x07" in hooks.stdout


def test_watch_prints_escapes_visibly(env: dict[str, str]) -> None:
    vault = Path(env["VAULT"])
    proc = subprocess.Popen(
        [sys.executable, "-m", "noteseek", "watch", str(vault), "--poll-interval", "0.5"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    lines: list[str] = []
    assert proc.stderr is not None
    reader = threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True)  # type: ignore[arg-type]
    reader.start()
    try:
        deadline = time.monotonic() + 120
        wrote = False
        while time.monotonic() < deadline and proc.poll() is None:
            err = "".join(lines)
            if "caught up" in err and not wrote:
                (vault / f"new\x1b]0;t\x07\n{FORGED}.md").symlink_to(Path(env["ROOT"]) / "outside.md")
                wrote = True
            if wrote and "new\\x1b]0;t\\x07" in err:
                break
            time.sleep(0.2)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
        reader.join(10)
        out = proc.stdout.read() if proc.stdout is not None else ""
    err = "".join(lines)
    assert_clean(err)
    assert_clean(out)
    assert "new\\x1b]0;t\\x07\\n" in err, err
    assert not any(line.startswith(FORGED) for line in err.splitlines())
