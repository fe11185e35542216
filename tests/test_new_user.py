"""What a new user hit in the first minutes, each through the real `noteseek` process.

A typo in a vault path, a mistyped command, `hook --help`, hooks that would find no index,
JSON that must stay JSON on an error, filters that match nothing, the progress line, intake's
summary and undo line, and `serve --stop` returning while the daemon still lived.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from noteseek.engine.update.workers import POOL_MIN_NOTES

from .conftest import SAMPLE_VAULT, user_env


def run(
    *args: str, env: dict[str, str], cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "noteseek", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )


def _env(home: Path) -> dict[str, str]:
    env = user_env(("NOTESEEK_", "PG"))
    env.update(
        NOTESEEK_HOME=str(home / "data"),
        NOTESEEK_RUNTIME_DIR=str(home / "run"),
        CLAUDE_CONFIG_DIR=str(home / "claude"),
        HF_HUB_OFFLINE="1",
    )
    return env


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return _env(tmp_path)


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, str], Path]:
    """An environment whose only index is the sample vault's."""
    home = tmp_path_factory.mktemp("home")
    vault = home / "sample-vault"
    shutil.copytree(SAMPLE_VAULT, vault, symlinks=True)
    env = _env(home)
    done = run("index", str(vault), "-q", env=env)
    assert done.returncode == 0, done.stderr
    return env, vault


def test_indexing_a_typo_leaves_no_index_and_searching_says_no_index_yet(
    env: dict[str, str], tmp_path: Path
) -> None:
    typo = tmp_path / "vualt"
    done = run("index", str(typo), env=env)
    assert done.returncode == 1
    assert f"no such vault folder: '{typo}' does not exist" in done.stderr
    indexes = Path(env["NOTESEEK_HOME"]) / "indexes"
    assert not indexes.exists() or not list(indexes.iterdir())

    # An empty index left behind by an older noteseek: a search says so, not "no matches".
    from noteseek import Index

    indexes.mkdir(parents=True, exist_ok=True)
    Index(indexes / "vualt-0123456789.db").close()
    search = run("search", "anything", env=env)
    assert search.returncode == 1, search.stdout
    assert "no index yet: nothing was ever indexed into" in search.stderr
    assert "no matches" not in search.stdout


def test_search_of_a_vault_that_does_not_exist_says_no_such_folder(
    sample: tuple[dict[str, str], Path], tmp_path: Path
) -> None:
    env, _ = sample
    done = run("search", "docker", "--vault", str(tmp_path / "typo"), env=env)
    assert done.returncode == 1
    assert f"no such vault folder: '{tmp_path / 'typo'}' does not exist" in done.stderr
    assert "no index at" not in done.stderr


def test_a_file_that_is_not_an_index_is_named_and_left_alone(
    env: dict[str, str], tmp_path: Path
) -> None:
    text = tmp_path / "notes.txt"
    text.write_bytes(b"root:x:0:0:root:/root:/bin/bash\n")
    other = tmp_path / "other.db"
    subprocess.run(
        [sys.executable, "-c", "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
         "c.execute('create table t(x)'); c.commit()", str(other)],
        check=True,
    )
    other_bytes = other.read_bytes()
    for path, why in ((text, "not an SQLite database"), (other, "an SQLite database of another program")):
        for args in (("search", "tomato"), ("index", str(SAMPLE_VAULT)), ("status",)):
            done = run(*args, "--db", str(path), env=env)
            assert done.returncode == 1, (args, done.stderr)
            assert f"{path} is not a noteseek index ({why})" in done.stderr
            assert "Traceback" not in done.stderr
        done = run("status", "--json", "--db", str(path), env=env)
        assert json.loads(done.stdout)["kind"] == "NotAnIndexError"
    assert text.read_bytes() == b"root:x:0:0:root:/root:/bin/bash\n"
    assert other.read_bytes() == other_bytes


def test_reading_commands_leave_an_empty_or_missing_index_file_as_it_was(
    env: dict[str, str], tmp_path: Path
) -> None:
    empty = tmp_path / "empty0byte.db"
    empty.write_bytes(b"")
    missing = tmp_path / "missing.db"
    for args in (("status",), ("status", "--json"), ("search", "tomato"), ("links", "x")):
        done = run(*args, "--db", str(empty), env=env)
        assert done.returncode == 1, (args, done.stdout)
        assert "no index yet: nothing was ever indexed into" in done.stdout + done.stderr
        gone = run(*args, "--db", str(missing), env=env)
        assert gone.returncode == 1 and f"no index at {missing}" in gone.stdout + gone.stderr
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(("empty", "miss"))) == [
        "empty0byte.db"
    ]
    assert empty.read_bytes() == b""
    # `index` may make an index there: that is what the file was given for.
    done = run("index", str(SAMPLE_VAULT), "--db", str(empty), "-q", env=env)
    assert done.returncode == 0, done.stderr
    assert run("status", "--db", str(empty), env=env).returncode == 0


def test_a_mistyped_command_names_the_close_ones(env: dict[str, str]) -> None:
    done = run("hooks", env=env)
    assert done.returncode == 2
    assert "No such command 'hooks'." in done.stderr
    for meant in ("'noteseek hook'", "'noteseek install-hooks'"):
        assert meant in done.stderr
    assert "Did you mean 'noteseek search'?" in run("serach", "x", env=env).stderr
    # Nothing close: click's own message, nothing invented.
    assert "Did you mean" not in run("zzzzzz", env=env).stderr


def test_hook_help_lists_its_options(env: dict[str, str]) -> None:
    done = run("hook", "--help", env=env)
    assert done.returncode == 0
    assert "--db PATH|URL" in done.stdout and "--max-tokens N" in done.stdout


def test_install_hooks_warns_when_the_hooks_would_find_no_index(
    env: dict[str, str], tmp_path: Path
) -> None:
    none_yet = run("install-hooks", "--dry-run", env=env)
    assert none_yet.returncode == 0, none_yet.stderr
    assert "warning: no index yet" in none_yet.stderr
    assert "$NOTESEEK_HOME is set in this shell" in none_yet.stderr

    for name in ("one", "two"):
        vault = tmp_path / name
        vault.mkdir()
        (vault / "n.md").write_text(f"# {name}\n\nA note.\n")
        assert run("index", str(vault), "-q", env=env).returncode == 0
    several = run("install-hooks", "--dry-run", env=env, cwd=tmp_path)
    assert several.returncode == 0, several.stderr
    assert "warning: the hooks pin no index: several indexes exist" in several.stderr
    assert "pass --db to pin one" in several.stderr

    pinned = run("install-hooks", "--dry-run", "--db", str(tmp_path / "x.db"), env=env)
    assert "warning" not in pinned.stderr.replace("note: no index at", "")
    # What the warning offers works: --vault pins that vault's index.
    for hint in ("--vault PATH", "--db FILE"):
        assert hint in several.stderr
    by_vault = run("install-hooks", "--dry-run", "--vault", str(tmp_path / "two"), env=env)
    assert by_vault.returncode == 0 and "warning" not in by_vault.stderr, by_vault.stderr
    shown = run("search", "note", "--vault", str(tmp_path / "two"), "--json", env=env)
    assert shown.returncode == 0
    assert "the hooks search " in by_vault.stdout and "two-" in by_vault.stdout


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_status_json_of_an_unreachable_database_is_json(env: dict[str, str]) -> None:
    url = f"postgresql://someone@127.0.0.1:{_closed_port()}/notes"
    done = run("status", "--json", "--db", url, env=env)
    assert done.returncode == 1
    error = json.loads(done.stdout)
    assert set(error) >= {"error", "kind"}
    try:
        import psycopg  # noqa: F401
    except ImportError:
        assert error["kind"] == "MissingExtraError"
    else:
        assert error["kind"] == "DatabaseConnectionError" and error["reason"] == "refused"
    # Without --json the same error stays one line for a person.
    assert run("status", "--db", url, env=env).stderr.startswith("error: ")


def test_a_filter_no_note_matches_is_named(sample: tuple[dict[str, str], Path]) -> None:
    env, vault = sample
    args = ("search", "docker", "--vault", str(vault))
    done = run(*args, "--tag", "nosuchtag", "--folder", "nofolder", env=env)
    assert done.returncode == 0  # still an answer: no matches, and why
    assert done.stdout.strip() == (
        "no matches: no indexed note has the tag 'nosuchtag' or the folder 'nofolder'"
    )
    doc = json.loads(run(*args, "--tag", "nosuchtag", "--json", env=env).stdout)
    assert doc["hits"] == [] and doc["unknown_filters"] == ["tag 'nosuchtag'"]
    # A folder that exists: its hits, and no unknown filter in the JSON.
    found = json.loads(run(*args, "--folder", "howto", "--json", env=env).stdout)
    assert found["hits"] and "unknown_filters" not in found


def test_the_progress_line_counts_files(env: dict[str, str], tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "note.md").write_text("# Note\n\nOne note.\n")
    for i in range(3):
        (vault / f"table-{i}.csv").write_text("name,value\nalpha,1\nbeta,2\n")
    done = run("index", str(vault), env=env)  # stderr is a pipe: the plain progress lines
    assert done.returncode == 0, done.stderr
    progress = [line for line in done.stderr.splitlines() if line.startswith("indexed ")]
    assert progress and progress[-1] == "indexed 4/4 files"
    assert not any(line.endswith(" notes") for line in progress)


def test_intake_summary_reasons_and_an_undo_line_that_works(tmp_path: Path) -> None:
    env = _env(tmp_path)
    vault = tmp_path / "my vault"  # a space: the undo line must quote it
    shutil.copytree(SAMPLE_VAULT, vault)
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    held_out = sorted((vault / "howto").glob("*.md"))[0]
    shutil.move(held_out, inbox / held_out.name)
    (inbox / "stub.md").write_text("# Later\n\nTODO\n", encoding="utf-8")
    # Given relative to the folder it runs in; the undo line is pasted in another one.
    done = run("intake", "inbox", "--vault", vault.name, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert sum(line.startswith("    why: ") for line in lines) == 2  # one reason per item
    # An item not filed says what held it back: its two weakest scores, each with its why.
    stub = lines[next(i for i, line in enumerate(lines) if line.endswith(" stub.md")) + 2]
    assert re.fullmatch(r"    weakest: \w+ \d\.\d\d: [^;]+; \w+ \d\.\d\d: .+", stub), stub
    assert "depth 0.00: 2 words (a stub)" in stub, stub
    summary = lines[-1]
    filed = int(summary.split(" ", 1)[0])
    assert summary.startswith(f"{filed} {'was' if filed == 1 else 'were'} filed, ")
    assert "VAULT" not in summary
    undo = summary.split("undo: ", 1)[1].rstrip(")")
    argv = shlex.split(undo)
    assert argv[:2] == ["noteseek", "intake"] and str(vault) in argv
    back = run(*argv[1:], env=env, cwd=inbox)
    assert back.returncode == 0, back.stderr
    assert sorted(p.name for p in inbox.iterdir()) == sorted([held_out.name, "stub.md"])


def _lock_held(env: dict[str, str], vault: Path) -> bool:
    """Whether a daemon holds the lock of the vault's index (asked in this process, at once)."""
    import fcntl

    from noteseek.daemon.client import daemon_paths

    index = next((Path(env["NOTESEEK_HOME"]) / "indexes").glob(f"{vault.name}-*.db"))
    before = os.environ.get("NOTESEEK_RUNTIME_DIR")
    os.environ["NOTESEEK_RUNTIME_DIR"] = env["NOTESEEK_RUNTIME_DIR"]
    try:
        paths = daemon_paths(index)
    finally:
        if before is None:
            del os.environ["NOTESEEK_RUNTIME_DIR"]
        else:
            os.environ["NOTESEEK_RUNTIME_DIR"] = before
    fd = os.open(paths.lock, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


@pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="the daemon needs Unix sockets")
def test_serve_stop_returns_once_the_daemon_is_gone(sample: tuple[dict[str, str], Path]) -> None:
    env, vault = sample
    daemon = subprocess.Popen(
        [sys.executable, "-m", "noteseek", "serve", "--vault", str(vault), "--no-watch"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        for _ in range(300):
            if run("serve", "--status", "--vault", str(vault), env=env).returncode == 0:
                break
            assert daemon.poll() is None, daemon.stderr.read() if daemon.stderr else ""
        stop = run("serve", "--stop", "--vault", str(vault), env=env)
        assert stop.returncode == 0 and stop.stdout.startswith("stopped the daemon"), stop.stderr
        # --stop returned after the daemon let go of its lock (it used to return first and the
        # daemon held the lock on for a second): a hook now starts a fresh daemon, never one
        # beside a stopping one.
        assert not _lock_held(env, vault)
        status = run("serve", "--status", "--vault", str(vault), env=env)
        assert status.returncode == 1 and status.stdout.startswith("no daemon serves")
        assert daemon.wait(timeout=60) == 0
    finally:
        if daemon.poll() is None:
            daemon.send_signal(signal.SIGTERM)
            daemon.wait(timeout=60)


def test_watch_stops_on_sigint_with_the_last_line_said(
    sample: tuple[dict[str, str], Path],
) -> None:
    env, vault = sample
    watch = subprocess.Popen(
        [sys.executable, "-m", "noteseek", "watch", str(vault)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    assert watch.stdout is not None
    seen = []
    for line in watch.stdout:
        seen.append(line)
        if "watching for changes" in line:
            watch.send_signal(signal.SIGINT)
    assert watch.wait(timeout=60) == 0
    # Ended at once by os._exit: the output must still be complete (flushed first).
    assert re.search(r"stopped; the index is consistent$", seen[-1].rstrip()), seen


def test_an_empty_query_is_a_usage_error(sample: tuple[dict[str, str], Path]) -> None:
    env, _ = sample
    for query in ("", "   "):
        done = run("search", query, env=env)
        assert done.returncode == 2
        assert "the query is empty" in done.stderr


def test_ctrl_c_during_a_large_index_leaves_an_index_that_works_and_resumes(
    env: dict[str, str], tmp_path: Path
) -> None:
    vault = tmp_path / "big"
    for i in range(POOL_MIN_NOTES * 3):  # enough for the worker pool, as a real vault
        folder = vault / f"f{i % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"note {i}.md").write_text(
            f"# Topic {i}\n\n" + f"Paragraph about subject {i} and its details. " * 80,
            encoding="utf-8",
        )
    index = subprocess.Popen(
        [sys.executable, "-m", "noteseek", "index", str(vault), "--workers", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,  # its own process group, as a terminal's job is
    )
    assert index.stderr is not None
    first = index.stderr.readline()  # the first progress line comes with the first file
    assert first.startswith("indexed 1/"), first
    os.killpg(index.pid, signal.SIGINT)  # Ctrl-C reaches the indexer and its workers
    out, err = index.communicate(timeout=120)
    assert index.returncode == 0, err
    assert out.startswith("stopped early (Ctrl-C)"), out
    assert "the index is consistent" in err
    added = int(re.search(r"(\d+) added", out).group(1))  # type: ignore[union-attr]
    assert 0 < added < POOL_MIN_NOTES * 3
    # Usable as it is, and the next run does only the rest.
    found = json.loads(run("search", "subject details", "--all", "--json", env=env).stdout)
    assert found["hits"]
    again = run("index", str(vault), "-q", env=env)
    assert again.returncode == 0, again.stderr
    assert f"{POOL_MIN_NOTES * 3 - added} added" in again.stdout, again.stdout
    assert f"{added} unchanged" in again.stdout


def test_a_terminal_that_is_not_utf8_gets_its_own_encoding_not_a_traceback(
    sample: tuple[dict[str, str], Path],
) -> None:
    env, _ = sample
    latin1 = {**env, "PYTHONIOENCODING": "latin-1"}  # a Latin-1 terminal (no C.UTF-8 coercion)

    def raw(*args: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            [sys.executable, "-m", "noteseek", *args], capture_output=True, env=latin1, timeout=300
        )

    # Every hit line has "›" (not in Latin-1); the note's name has "ü" (in it).
    plain = raw("search", "Kündigung Mietvertrag", "-n", "1")
    assert plain.returncode == 0 and b"Traceback" not in plain.stderr, plain.stderr
    assert "de/Mietvertrag Kündigung.md ? ".encode("latin-1") in plain.stdout, plain.stdout
    # JSON stays JSON and reads back as the same text, whatever the query holds.
    query = "Kündigung › ☃ 😀"
    doc = raw("search", query, "-n", "1", "--json")
    assert doc.returncode == 0, doc.stderr
    parsed = json.loads(doc.stdout.decode("latin-1"))
    assert parsed["query"] == query and parsed["hits"][0]["path"] == "de/Mietvertrag Kündigung.md"
    error = raw("search", "x", "--vault", "/nö/☃")
    assert error.returncode == 1 and b"no such vault folder: '/n\xf6/?'" in error.stderr


def test_a_database_url_without_a_host_names_the_socket_once(
    env: dict[str, str], tmp_path: Path
) -> None:
    pytest.importorskip("psycopg")
    # A socket folder with no server in it: libpq fails at once, whatever runs on this machine.
    url = f"postgresql:///notes?host={tmp_path}&port=5999"
    done = run("status", "--db", url, env=env)
    assert done.returncode == 1
    assert f"at the local Unix socket in {tmp_path} (port 5999) as user" in done.stderr, done.stderr
    done = run("status", "--db", "postgresql:///notes?port=5999", env=env)
    assert "at the local Unix socket (port 5999) as user" in done.stderr, done.stderr


def test_a_vault_not_indexed_yet_is_named_with_the_command_that_indexes_it(
    env: dict[str, str], tmp_path: Path
) -> None:
    vault = tmp_path / "new vault"
    vault.mkdir()
    (vault / "a.md").write_text("# Saffron\n\nThe saffron delivery comes on Tuesday.\n")
    for args in (("search", "saffron"), ("status",)):
        done = run(*args, "--vault", str(vault), env=env)
        assert done.returncode == 1
        said = re.search(r"index it first: (noteseek index .+)$", done.stderr.strip())
        assert said and f"{vault} is not indexed yet" in done.stderr, done.stderr
    # The command it names, pasted into a shell, is the one that makes the index.
    assert run(*shlex.split(said.group(1))[1:], "-q", env=env).returncode == 0
    assert run("search", "saffron", "--vault", str(vault), env=env).returncode == 0


def test_dates_the_wrong_way_round_are_a_usage_error_not_no_matches(
    sample: tuple[dict[str, str], Path],
) -> None:
    env, _ = sample
    done = run("search", "rebase", "--since", "2025-01-01", "--until", "2020-01-01", env=env)
    assert done.returncode == 2 and "no matches" not in done.stdout
    assert "since (2025-01-01) is after until (2020-01-01)" in done.stderr, done.stderr
    one_day = run("search", "rebase", "--since", "2024-01-08", "--until", "2024-01-08", env=env)
    assert one_day.returncode == 0 and "journal/2024-01-08.md" in one_day.stdout


def test_a_query_of_several_words_needs_no_quotes(sample: tuple[dict[str, str], Path]) -> None:
    env, _ = sample
    done = run("search", "how", "do", "I", "undo", "a", "rebase", "-n", "1", "--json", env=env)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["query"] == "how do I undo a rebase"
    assert doc["hits"][0]["path"] == "howto/git-rebase-recipes.md"
    context = run("context", "how", "do", "we", "rotate", "tokens", "--json", env=env)
    assert context.returncode == 0 and json.loads(context.stdout)["hits"], context.stderr
    assert run("search", env=env).returncode == 2  # still a usage error without any word


def test_web_mcp_and_serve_name_a_mistyped_or_unindexed_vault(
    env: dict[str, str], tmp_path: Path
) -> None:
    pytest.importorskip("uvicorn")
    pytest.importorskip("mcp")
    typo = tmp_path / "typo"
    for command in ("web", "mcp", "serve"):
        done = run(command, "--vault", str(typo), env=env)
        assert done.returncode == 2 and f"Directory '{typo}' does not exist" in done.stderr, (
            command,
            done.stderr,
        )
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    for args in (("web", "--port", "1"), ("serve",)):
        done = run(*args, "--vault", str(fresh), env=env)
        assert done.returncode == 1
        assert f"index it first: noteseek index {fresh}" in done.stderr, done.stderr
    assert not (Path(env["NOTESEEK_HOME"]) / "indexes").exists()  # and nothing was made


def test_an_include_that_matches_no_folder_is_named(env: dict[str, str], tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    shutil.copytree(SAMPLE_VAULT, vault)
    done = run("index", str(vault), "--include", "hwoto", env=env)
    assert done.returncode == 0 and "0 notes seen" in done.stdout, done.stdout
    assert f"warning: --include 'hwoto' matched no folder of {vault}: nothing is indexed" in (
        done.stderr
    )
    right = run("index", str(vault), "--include", "howto", env=env)
    assert right.returncode == 0 and "warning" not in right.stderr, right.stderr
