"""End to end: the real CLI, the real bundled model, the sample vault that ships with the repo."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import SAMPLE_VAULT, user_env


def run(*args: str, env: dict[str, str], check: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "-m", "noteseek", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    if check and result.returncode != 0:
        raise AssertionError(
            f"exit {result.returncode}\nstdout:{result.stdout}\nstderr:{result.stderr}"
        )
    return result


@pytest.fixture(scope="module")
def cli_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    home = tmp_path_factory.mktemp("home")
    vault = tmp_path_factory.mktemp("vault") / "sample-vault"
    shutil.copytree(SAMPLE_VAULT, vault, symlinks=True)
    env = user_env()
    # The network is never needed: make any attempt to reach the hub fail loudly.
    # Every hit: these tests are about indexing and output, tests/test_relevance.py about the threshold.
    env.update(NOTESEEK_HOME=str(home), HF_HUB_OFFLINE="1", VAULT=str(vault), NOTESEEK_MIN_SCORE="0",
               NOTESEEK_MIN_ANSWER="0")
    run("index", str(vault), env=env)
    return env


def test_index_summary_names_the_scrubbed_secrets_and_db(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    result = run("index", cli_env["VAULT"], env=cli_env)
    assert "0 added" in result.stdout and "0 changed" in result.stdout


def test_search_human_output(cli_env: dict[str, str]) -> None:
    out = run("search", "how do I undo a rebase", "--vault", cli_env["VAULT"], env=cli_env).stdout
    first = out.splitlines()[0]
    assert "howto/git-rebase-recipes.md" in first and "›" in first


def test_search_json_has_every_hit_field(cli_env: dict[str, str]) -> None:
    out = run(
        "search", "§3 Absatz 2", "--json", "-n", "3", "--vault", cli_env["VAULT"], env=cli_env
    )
    doc = json.loads(out.stdout)
    assert doc["mode"] == "hybrid" and doc["degraded"] is None and doc["hidden"] == 0
    assert len(doc["hits"]) == 3
    top = doc["hits"][0]
    assert top["path"] == "de/Mietvertrag Kündigung.md"
    assert set(top) >= {
        "path",
        "section",
        "title",
        "aliases",
        "tags",
        "text",
        "score",
        "bm25_rank",
        "vec_rank",
    }


@pytest.mark.parametrize("mode", ["bm25", "vector", "hybrid"])
def test_each_mode_finds_the_docker_note(cli_env: dict[str, str], mode: str) -> None:
    out = run(
        "search",
        "container can't reach the database on the host",
        "--mode",
        mode,
        "--json",
        "--vault",
        cli_env["VAULT"],
        env=cli_env,
    ).stdout
    paths = [h["path"] for h in json.loads(out)["hits"][:3]]
    assert "howto/docker-bridge-network-fix.md" in paths


def test_max_tokens_budget_is_respected(cli_env: dict[str, str]) -> None:
    out = run(
        "search",
        "postgres vacuum",
        "--max-tokens",
        "120",
        "--json",
        "--vault",
        cli_env["VAULT"],
        env=cli_env,
    ).stdout
    hits = json.loads(out)["hits"]
    assert hits
    assert sum(len(h["text"]) for h in hits) <= 120 * 4


def test_no_query_crashes_the_cli(cli_env: dict[str, str]) -> None:
    for query in ['"', "NEAR(", "-", "*:*", "🔥", "a" * 10_000, "AND OR NOT"]:
        result = run("search", query, "--json", "--vault", cli_env["VAULT"], env=cli_env)
        assert isinstance(json.loads(result.stdout)["hits"], list)
    # An empty query is a mistake in the command, not a question: a usage error, said plainly.
    empty = run("search", "", "--json", "--vault", cli_env["VAULT"], env=cli_env, check=False)
    assert empty.returncode == 2 and "the query is empty" in empty.stderr
    for dashed in ("-n", "-Math.floor(-x)"):
        out = run("search", "--json", "--vault", cli_env["VAULT"], "--", dashed, env=cli_env).stdout
        assert json.loads(out)["query"] == dashed


def test_status_json_and_human(cli_env: dict[str, str]) -> None:
    doc = json.loads(run("status", "--json", "--vault", cli_env["VAULT"], env=cli_env).stdout)
    assert doc["files"] >= 40
    assert doc["chunks"] == doc["vectors"] > doc["files"]
    assert doc["model"] == "potion-base-8M"
    assert doc["vector_support"] is True
    assert doc["last_run"]["files_seen"] == doc["files"]
    human = run("status", "--vault", cli_env["VAULT"], env=cli_env).stdout
    assert "sqlite-vec loaded" in human and "potion-base-8M" in human


def test_secrets_never_reach_the_database_file(cli_env: dict[str, str]) -> None:
    note = (Path(cli_env["VAULT"]) / "howto" / "deploy-credentials.md").read_text()
    import re

    secrets = re.findall(r"(sk-proj-\w{20,}|ghp_\w{30,}|AKIA[A-Z0-9]{16}|S3cr3tPassw0rd)", note)
    assert len(set(secrets)) == 4
    db_files = list(Path(cli_env["NOTESEEK_HOME"]).rglob("*.db*"))
    assert db_files
    for path in db_files:
        data = path.read_bytes()
        for secret in set(secrets):
            assert secret.encode() not in data, f"{secret[:6]}… found in {path.name}"


def test_db_and_env_override_and_clear_errors(cli_env: dict[str, str], tmp_path: Path) -> None:
    missing = tmp_path / "nope.db"
    result = run("search", "x", "--db", str(missing), env=cli_env, check=False)
    assert result.returncode == 1
    assert result.stderr.startswith("error: no index at") and "noteseek index" in result.stderr
    assert "Traceback" not in result.stderr
    env = dict(cli_env, NOTESEEK_DB=str(tmp_path / "custom.db"))
    run("index", cli_env["VAULT"], "-q", env=env)
    assert (tmp_path / "custom.db").exists()
    doc = json.loads(run("search", "rust lifetimes", "--json", env=env).stdout)
    assert doc["hits"][0]["path"] == "reference/rust-lifetimes.md"
    bad = run("index", str(tmp_path / "no-such-vault"), env=cli_env, check=False)
    assert bad.returncode != 0 and "does not exist" in bad.stderr and "Traceback" not in bad.stderr


COMMANDS = (
    "index",
    "search",
    "context",
    "status",
    "eval",
    "scan",
    "hook",
    "install-hooks",
    "uninstall-hooks",
    "mcp",
    "serve",
    "intake",
    "web",
    "watch",
    "links",
    "related",
)


def test_help_lists_every_command(cli_env: dict[str, str]) -> None:
    out = run("--help", env=cli_env).stdout
    listed = {line.split()[0] for line in out.split("Commands:")[1].splitlines() if line.strip()}
    assert listed == set(COMMANDS)
    repo = Path(__file__).resolve().parent.parent
    assert "(docs/cli.md)" in (repo / "README.md").read_text("utf-8")
    reference = (repo / "docs" / "cli.md").read_text("utf-8")
    for command in COMMANDS:
        assert f"\n## `noteseek {command}`\n" in reference, f"docs/cli.md has no section for {command!r}"
        # Every command answers --help without touching an index.
        assert run(command, "--help", env=cli_env).returncode == 0


def test_index_allow_file_keeps_a_listed_value(cli_env: dict[str, str], tmp_path: Path) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    value = "sk-proj-kVzRCt6HxnCkWSnZpo5Aj5nIZWzMK8gdNeoNutAeKu"
    (vault / "keys.md").write_text(f"# Keys\n\nThe documented example key is {value} here.\n")
    db = tmp_path / "i.db"
    run("index", str(vault), "--db", str(db), "-q", env=cli_env)
    assert value.encode() not in db.read_bytes()
    allow = tmp_path / "allow.txt"
    allow.write_text("regex:sk-proj-kVzRCt6\\w+\n")
    run("index", str(vault), "--db", str(db), "-q", "--allow-file", str(allow), env=cli_env)
    hits = json.loads(run("search", "documented example key", "--db", str(db), "--json", env=cli_env).stdout)
    assert value in hits["hits"][0]["text"]


def test_index_no_documents_leaves_documents_out_and_taking_them_back_adds_them(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "plan.md").write_text("# Plan\n\nThe quarterly plan lives in this note.\n")
    (vault / "budget.csv").write_text("item,cost\nnarwhal food,12\nsnorkel,30\n")
    db = tmp_path / "i.db"

    def indexed() -> tuple[int, dict[str, object], set[str]]:
        status = json.loads(run("status", "--db", str(db), "--json", env=cli_env).stdout)
        hits = json.loads(run("search", "narwhal", "--db", str(db), "--mode", "bm25", "--json", env=cli_env).stdout)
        return status["files"], status["documents"], {h["path"] for h in hits["hits"]}

    run("index", str(vault), "--db", str(db), "-q", "--no-documents", env=cli_env)
    assert indexed() == (1, {}, set())
    run("index", str(vault), "--db", str(db), "-q", env=cli_env)
    assert indexed() == (2, {"csv": {"ok": 1}}, {"budget.csv"})
    run("index", str(vault), "--db", str(db), "-q", "--no-documents", env=cli_env)
    assert indexed() == (1, {}, set())


def test_eval_command_json_and_report(cli_env: dict[str, str], tmp_path: Path) -> None:
    queries = tmp_path / "q.jsonl"
    queries.write_text(
        "\n".join(
            json.dumps({"_id": i, "text": t, "metadata": {"category": c}})
            for i, t, c in [
                ("1", "undo a rebase", "nl"),
                ("2", "§3 Absatz 2", "id"),
                ("3", "VACUUM FULL", "id"),
            ]
        )
    )
    qrels = tmp_path / "r.tsv"
    qrels.write_text(
        "query-id\tcorpus-id\tscore\n1\thowto/git-rebase-recipes.md\t1\n"
        "2\tMietvertrag Kündigung\t1\n3\treference/postgres-vacuum-and-indexes\t1\n"
    )
    out = run(
        "eval",
        "--queries",
        str(queries),
        "--qrels",
        str(qrels),
        "--json",
        "--report",
        str(tmp_path / "rep"),
        "--vault",
        cli_env["VAULT"],
        env=cli_env,
    )
    doc = json.loads(out.stdout)
    assert doc["queries"] == 3 and doc["unmatched_qrels_ids"] == []
    for mode in ("bm25", "vector", "hybrid"):
        assert 0.0 <= doc["modes"][mode]["ndcg@10"] <= 1.0
    assert doc["modes"]["hybrid"]["ndcg@10"] > 0.5
    assert (tmp_path / "rep" / "report.md").exists() and (tmp_path / "rep" / "modes.png").exists()
    human = run(
        "eval",
        "--queries",
        str(queries),
        "--qrels",
        str(qrels),
        "--mode",
        "bm25",
        "--vault",
        cli_env["VAULT"],
        env=cli_env,
    ).stdout
    assert human.startswith("| mode |") and "| bm25 |" in human and "| hybrid |" not in human
