"""What the adapters print on the sample vault: CLI, hooks (one-shot and through the daemon) and MCP.

    python -m tests.adapter_goldens --write     # record tests/goldens/ from the current code
    python -m tests.adapter_goldens             # compare the current code with tests/goldens/

Every adapter runs as a user runs it, in a child process (`python -m noteseek ...`, the MCP server
over stdio), so the check holds whatever the package's inside looks like: it was recorded before
the package was split into subpackages (issue 12) and must give the same bytes after.

The vault copy's files all get one fixed mtime and the children TZ=UTC, so notes dated by their
mtime show the same date on every run. Only what cannot repeat is replaced, each by a fixed
marker, nothing else is touched:
- the temporary folder (index, vault, home, runtime folder) -> `<TMP>`, the interpreter -> `<PYTHON>`,
  the checkout's folder -> `<REPO>`;
- wall-clock times: `done in 1.2 s`, status's last-run date and seconds, `finished_at`,
  `seconds` in `last_run`, MCP status's `Last update: <date> (<n> s ago)`;
- the index file's size (`db_bytes`, `0.5 MB`): the WAL's share of it depends on checkpoint timing;
- intake's run id (a timestamp and 4 random hex digits).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from hashlib import sha256
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SAMPLE_VAULT = REPO / "examples" / "sample-vault"
GOLDEN_QUERIES = REPO / "examples" / "golden"
GOLDENS = Path(__file__).resolve().parent / "goldens"
TIMEOUT = 300
FIXED_MTIME = 1_719_835_200  # 2024-07-01 12:00 UTC

SEARCHES: dict[str, list[str]] = {
    "search-plain": ["how do I undo a rebase"],
    "search-json": ["--json", "how do I undo a rebase"],
    "search-explain": ["--explain", "container can't reach the database on the host"],
    "search-json-explain": ["--json", "--explain", "-n", "5", "security"],
    "search-folder": ["--folder", "howto", "certificate expiry"],
    "search-folder-json": ["--json", "--folder", "reference", "--folder", "de", "index"],
    "search-tag": ["--tag", "security", "token"],
    "search-tag-folder-json": ["--json", "--tag", "#Security", "--folder", "projects", "rotation"],
    "search-file": [
        "--file",
        "meetings/2024-03-14 postmortem gateway cert expiry",
        "--file",
        "./journal/2024-03-14.md",
        "--file",
        "howto/renew-internal-tls-certs.md",
        "certificate expiry",
    ],
    "search-bm25": ["--mode", "bm25", "VACUUM FULL"],
    "search-vector-json": ["--mode", "vector", "--json", "-n", "3", "moving flats"],
    "search-german": ["Welche Unterlagen brauche ich für die Steuererklärung?"],
    "search-clause": ["--json", "§3 Absatz 2"],
    "search-identifier": ["ERR_CERT_DATE_INVALID"],
    "search-budget": ["-n", "8", "--max-tokens", "120", "--json", "postgres"],
    "search-nothing": ["zzqxj vvkpw"],
    "search-dash": ["--", "-Math.floor"],
    "search-operators": ["--json", 'NEAR(a b) OR "x* title:y ^z'],
}
CONTEXTS: dict[str, list[str]] = {
    "context-plain": ["how do I undo a rebase that went wrong"],
    "context-json": ["--json", "how should I combine keyword and embedding results"],
    "context-small": ["--max-tokens", "120", "how do I renew the internal TLS certificates"],
    "context-gated": ["thanks"],
    "context-gated-json": ["--json", "what is the weather like on mars today"],
    "context-no-gate": ["--no-gate", "--json", "what is the weather like on mars today"],
}
COMMANDS = (
    "index",
    "search",
    "context",
    "hook",
    "status",
    "scan",
    "eval",
    "mcp",
    "serve",
    "intake",
    "install-hooks",
    "uninstall-hooks",
    "watch",
    "links",
    "related",
)


def _long_bash_output() -> str:
    lines = ["$ pytest -q tests/"]
    for i in range(220):
        lines.append(f"tests/test_api.py::test_case_{i} PASSED [{i * 100 // 220:3d}%]")
        if i % 40 == 17:
            lines += [
                "",
                f"ERROR tests/test_db.py::test_conn_{i} - psycopg.OperationalError: "
                "connection refused (is postgres running on 5432?)",
                "",
            ]
    lines += ["", "=== 3 failed, 217 passed in 12.34s ==="]
    return "\n".join(lines) + "\n"


def _hook_events(cwd: str) -> dict[str, tuple[str, dict[str, Any]]]:
    base = {
        "session_id": "golden",
        "transcript_path": "/dev/null",
        "cwd": cwd,
        "permission_mode": "default",
    }
    long_text = _long_bash_output()
    return {
        "hook-prompt": (
            "prompt",
            {
                **base,
                "hook_event_name": "UserPromptSubmit",
                "prompt": "how do we rotate the refresh tokens in the auth service?",
            },
        ),
        "hook-prompt-german": (
            "prompt",
            {
                **base,
                "hook_event_name": "UserPromptSubmit",
                "prompt": "Welche Unterlagen brauche ich für die Steuererklärung?",
            },
        ),
        "hook-prompt-noise": (
            "prompt",
            {**base, "hook_event_name": "UserPromptSubmit", "prompt": "thanks, that works"},
        ),
        "hook-pre-agent": (
            "pre-tool",
            {
                **base,
                "hook_event_name": "PreToolUse",
                "tool_name": "Agent",
                "tool_use_id": "t1",
                "tool_input": {
                    "description": "Fix the docker networking",
                    "prompt": "The app container can't reach the database "
                    "on the host. Find out why and fix it.",
                    "subagent_type": "general-purpose",
                },
            },
        ),
        "hook-pre-websearch": (
            "pre-tool",
            {
                **base,
                "hook_event_name": "PreToolUse",
                "tool_name": "WebSearch",
                "tool_use_id": "t2",
                "tool_input": {"query": "postgres vacuum full vs vacuum"},
            },
        ),
        "hook-pre-other": (
            "pre-tool",
            {
                **base,
                "hook_event_name": "PreToolUse",
                "tool_name": "Read",
                "tool_use_id": "t3",
                "tool_input": {"file_path": "/x"},
            },
        ),
        "hook-post-bash": (
            "post-tool",
            {
                **base,
                "hook_event_name": "PostToolUse",
                "tool_name": "Bash",
                "tool_use_id": "t4",
                "tool_input": {
                    "command": "pytest -q tests/",
                    "description": "Run the database tests",
                },
                "tool_response": {"stdout": long_text, "stderr": "", "interrupted": False},
            },
        ),
        "hook-post-mcp": (
            "post-tool",
            {
                **base,
                "hook_event_name": "PostToolUse",
                "tool_name": "mcp__logs__fetch",
                "tool_use_id": "t5",
                "tool_input": {"service": "gateway", "query": "cert expiry"},
                "tool_response": [{"type": "text", "text": long_text}],
            },
        ),
        "hook-post-short": (
            "post-tool",
            {
                **base,
                "hook_event_name": "PostToolUse",
                "tool_name": "Bash",
                "tool_use_id": "t6",
                "tool_input": {"command": "ls"},
                "tool_response": {"stdout": "a\nb\n", "stderr": ""},
            },
        ),
    }


class Run:
    """One temporary world: a copy of the sample vault, its index, private home and runtime folders."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.vault = root / "vault"
        self.db = root / "sample.db"
        self.runtime = root / "run"
        self.runtime.mkdir(mode=0o700)
        (root / "home").mkdir()
        (root / "claude").mkdir()
        (root / "project").mkdir()
        shutil.copytree(SAMPLE_VAULT, self.vault, symlinks=True)
        # A note without a dated name or frontmatter is dated by its mtime, which a checkout sets:
        # one fixed instant (and TZ=UTC below) makes those dates the same on every run.
        for path in [self.vault, *self.vault.rglob("*")]:
            os.utime(path, (FIXED_MTIME, FIXED_MTIME), follow_symlinks=False)
        env = {k: v for k, v in os.environ.items() if not k.startswith("NOTESEEK_")}
        env.update(
            TZ="UTC",
            NOTESEEK_HOME=str(root / "home"),
            NOTESEEK_RUNTIME_DIR=str(self.runtime),
            CLAUDE_CONFIG_DIR=str(root / "claude"),
            HF_HUB_OFFLINE="1",
            COLUMNS="100",
            LINES="40",
            LC_ALL="C.UTF-8",
            PYTHONIOENCODING="utf-8",
            # The MCP server's and the daemon's watchers would begin a deep lane on the sample
            # vault unasked, and a status line would depend on how far the thread got.
            NOTESEEK_DEEP_AUTO="0",
        )
        env.pop("XDG_RUNTIME_DIR", None)
        self.env = env
        self.cold = dict(env, NOTESEEK_NO_DAEMON="1")
        self.out: dict[str, str] = {}

    # -- normalising ------------------------------------------------------------------------

    def clean(self, text: str) -> str:
        for path in sorted({str(self.root.resolve()), str(self.root)}, key=len, reverse=True):
            text = text.replace(path, "<TMP>")
        text = text.replace(sys.executable, "<PYTHON>")
        # The checkout's own folder differs between machines (CI clones elsewhere).
        text = text.replace(str(REPO), "<REPO>")
        text = re.sub(r"done in \d+\.\d s", "done in <S> s", text)
        text = re.sub(
            r"stopped early \(Ctrl-C\) in \d+\.\d s", "stopped early (Ctrl-C) in <S> s", text
        )
        text = re.sub(r'"(db_bytes|finished_at|seconds)": [0-9.e+-]+', r'"\1": "<volatile>"', text)
        text = re.sub(r"\(\d+\.\d MB", "(<SIZE> MB", text)
        text = re.sub(
            r"\d{4}-\d\d-\d\d \d\d:\d\d(: \d+ (?:notes|files \(\d+ documents?\)), )\d+\.\d s",
            r"<DATE>\1<S> s",
            text,
        )
        text = re.sub(
            r"Last update: \d{4}-\d\d-\d\d \d\d:\d\d \([^)]*\)", "Last update: <DATE>", text
        )
        text = re.sub(
            r"by OCR in the update at \d{4}-\d\d-\d\d \d\d:\d\d",
            "by OCR in the update at <DATE>",
            text,
        )
        text = re.sub(
            r"\b\d{8}-\d{6}-[0-9a-f]{4}\b", "<RUN-ID>", text
        )  # intake's run id: time + random
        # Full-precision floats in JSON (cosines, scores) differ in their last digits between CPUs
        # (the SIMD kernels a machine has sum in other orders): five significant digits are the
        # output's meaning, the rest is the machine.
        return re.sub(
            r"(?<![\w.])(-?\d+\.\d{6,}(?:e-?\d+)?)\b",
            lambda m: f"{float(m.group(1)):.5g}",
            text,
        )

    def record(
        self, name: str, argv: Sequence[str], proc: subprocess.CompletedProcess[bytes]
    ) -> None:
        shown = " ".join(argv)
        body = (
            f"$ {shown}\nexit: {proc.returncode}\n--- stdout\n"
            f"{proc.stdout.decode('utf-8', 'replace')}\n--- stderr\n"
            f"{proc.stderr.decode('utf-8', 'replace')}"
        )
        self.out[name] = self.clean(body)

    # -- running ----------------------------------------------------------------------------

    def noteseek(
        self, name: str, *args: str, stdin: bytes | None = None, env: dict[str, str] | None = None
    ) -> None:
        argv = [sys.executable, "-m", "noteseek", *args]
        proc = subprocess.run(
            argv,
            input=stdin or b"",
            capture_output=True,
            env=env or self.cold,
            cwd=self.root,
            timeout=TIMEOUT,
        )
        self.record(name, ["noteseek", *args], proc)

    def cli(self) -> None:
        self.noteseek("help", "--help")
        self.noteseek("version", "--version")
        for command in COMMANDS:
            self.noteseek(f"help-{command}", command, "--help")
        self.noteseek("index-first", "index", str(self.vault), "--db", str(self.db), "-q")
        self.noteseek("index-again", "index", str(self.vault), "--db", str(self.db), "-q")
        self.noteseek("search-no-index", "search", "--db", str(self.root / "missing.db"), "x")
        for name, args in SEARCHES.items():
            self.noteseek(name, "search", "--db", str(self.db), *args)
        for name, args in CONTEXTS.items():
            self.noteseek(name, "context", "--db", str(self.db), *args)
        self.noteseek("status-json", "status", "--db", str(self.db), "--json")
        self.noteseek("status-plain", "status", "--db", str(self.db))
        self.noteseek("scan-plain", "scan", str(self.vault))
        self.noteseek("scan-json", "scan", str(self.vault), "--json")
        self.noteseek(
            "eval-json",
            "eval",
            "--db",
            str(self.db),
            "--json",
            "--queries",
            str(GOLDEN_QUERIES / "queries.jsonl"),
            "--qrels",
            str(GOLDEN_QUERIES / "qrels.tsv"),
        )
        project = str(self.root / "project")
        self.noteseek(
            "install-hooks-dry",
            "install-hooks",
            "--project",
            project,
            "--db",
            str(self.db),
            "--dry-run",
        )
        self.noteseek("install-hooks", "install-hooks", "--project", project, "--db", str(self.db))
        settings = (self.root / "project" / ".claude" / "settings.local.json").read_text("utf-8")
        self.out["install-hooks-settings"] = self.clean(settings)
        self.noteseek("uninstall-hooks-dry", "uninstall-hooks", "--project", project, "--dry-run")
        self.noteseek("uninstall-hooks", "uninstall-hooks", "--project", project)

    def hooks(self, *, warm: bool) -> None:
        events = _hook_events(str(self.root))
        env = self.env if warm else self.cold
        suffix = "" if not warm else "@warm"
        for name, (event, payload) in events.items():
            self.noteseek(
                name + suffix,
                "hook",
                event,
                "--db",
                str(self.db),
                stdin=json.dumps(payload).encode(),
                env=env,
            )
        _, prompt = events["hook-prompt"]
        raw = json.dumps(prompt).encode()
        self.noteseek(
            "hook-prompt-tokens" + suffix,
            "hook",
            "prompt",
            "--db",
            str(self.db),
            "--max-tokens",
            "150",
            stdin=raw,
            env=env,
        )
        self.noteseek(
            "hook-prompt-env-db" + suffix,
            "hook",
            "prompt",
            stdin=raw,
            env=dict(env, NOTESEEK_DB=str(self.db)),
        )
        self.noteseek(
            "hook-broken-json" + suffix,
            "hook",
            "prompt",
            "--db",
            str(self.db),
            stdin=b"{not json",
            env=env,
        )
        self.noteseek(
            "hook-unknown-event" + suffix, "hook", "stop", "--db", str(self.db), stdin=raw, env=env
        )

    def daemon(self) -> None:
        """The same hook calls answered by a running `noteseek serve`, plus its JSON ops."""
        log = (self.root / "serve.log").open("wb")
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "noteseek",
                "serve",
                "--db",
                str(self.db),
                "--idle-minutes",
                "5",
            ],
            env=self.env,
            stdout=log,
            stderr=log,
            stdin=subprocess.DEVNULL,
            cwd=self.root,
        )
        try:
            real = os.path.realpath(self.db)
            sock = self.runtime / (sha256(real.encode()).hexdigest()[:20] + ".sock")
            deadline = time.monotonic() + TIMEOUT
            while self._ask(sock, {"op": "ping", "db": real, "v": 1}) is None:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise RuntimeError(
                        "noteseek serve did not answer: " + (self.root / "serve.log").read_text()
                    )
                time.sleep(0.2)
            # The daemon watches by default (the index knows its vault) and starts with a catch-up
            # pass; wait until it is done, so `serve --stop` never cuts it short and the later
            # status goldens never read an interrupted last run (seen once in a full suite run).
            while (self._ask(sock, {"op": "ping", "db": real, "v": 1}) or {}).get("watch", {}).get(
                "state"
            ) not in ("watching", "off", "failed"):
                if time.monotonic() > deadline or server.poll() is not None:
                    raise RuntimeError(
                        "noteseek serve did not finish its catch-up: "
                        + (self.root / "serve.log").read_text()
                    )
                time.sleep(0.2)
            self.hooks(warm=True)
            for name, op in (
                ("daemon-search", {"op": "search", "query": "how do I undo a rebase"}),
                (
                    "daemon-search-options",
                    {
                        "op": "search",
                        "query": "token",
                        "limit": 3,
                        "mode": "bm25",
                        "tags": ["security"],
                        "explain": True,
                    },
                ),
                (
                    "daemon-search-folders",
                    {"op": "search", "query": "index", "folders": ["reference"], "max_tokens": 80},
                ),
                (
                    "daemon-search-files",
                    {
                        "op": "search",
                        "query": "token",
                        "files": [
                            "projects/auth-service-token-rotation",
                            "howto/deploy-credentials.md",
                        ],
                    },
                ),
                (
                    "daemon-context",
                    {"op": "context", "prompt": "how do I undo a rebase that went wrong"},
                ),
                (
                    "daemon-context-small",
                    {"op": "context", "prompt": "renew internal TLS certs", "max_tokens": 100},
                ),
                ("daemon-bad-op", {"op": "frobnicate"}),
                ("daemon-bad-query", {"op": "search", "query": 7}),
            ):
                answer = self._ask(sock, {**op, "db": real, "v": 1})
                self.out[name] = self.clean(
                    json.dumps(answer, ensure_ascii=False, indent=2, sort_keys=True)
                )
            self.out["daemon-ping-keys"] = " ".join(
                sorted(self._ask(sock, {"op": "ping", "db": real}) or {})
            )
            self.noteseek("serve-stop", "serve", "--db", str(self.db), "--stop", env=self.env)
            server.wait(60)
        finally:
            if server.poll() is None:
                server.kill()
            log.close()

    @staticmethod
    def _ask(path: Path, message: dict[str, Any]) -> dict[str, Any] | None:
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(60)
                sock.connect(str(path))
                sock.sendall(json.dumps(message).encode() + b"\n")
                data = b""
                while not data.endswith(b"\n"):
                    chunk = sock.recv(65536)
                    if not chunk:
                        break
                    data += chunk
            answer = json.loads(data)
        except (OSError, ValueError):
            return None
        return answer if isinstance(answer, dict) else None

    def intake(self) -> None:
        vault = self.root / "intake-vault"
        shutil.copytree(SAMPLE_VAULT, vault, symlinks=True)
        inbox = self.root / "inbox"
        inbox.mkdir()
        (inbox / "rebase tip.md").write_text(
            "# Undo a bad rebase\n\nAfter a rebase went wrong, `git reset --hard ORIG_HEAD` puts the "
            "branch back. The reflog (`git reflog`) lists every earlier position of HEAD, so an older "
            "state can be restored with `git reset --hard HEAD@{2}`.\n",
            "utf-8",
        )
        (inbox / "shopping.md").write_text("milk, eggs, bread\n", "utf-8")
        db = self.root / "intake.db"
        args = ["intake", str(inbox), "--vault", str(vault), "--db", str(db), "--dry-run"]
        self.noteseek("intake-dry-json", *args, "--json")
        self.noteseek("intake-dry-table", *args)

    def mcp(self) -> None:
        import anyio
        from mcp import Client, StdioServerParameters

        params = StdioServerParameters(
            command=sys.executable,
            # --no-watch: the status reply would otherwise say how far the watcher's catch-up pass
            # got, which depends on timing (tests/test_watch_surfaces.py covers the watching).
            args=["-m", "noteseek", "mcp", "--db", str(self.db), "--no-watch"],
            cwd=str(self.root),
            env=self.cold,
        )
        calls = (
            ("mcp-search", "search", {"query": "how do I undo a rebase"}),
            (
                "mcp-search-filters",
                "search",
                {"query": "token", "folders": ["projects"], "tags": ["security"]},
            ),
            (
                "mcp-search-files",
                "search",
                {"query": "rebase", "files": ["howto/git-rebase-recipes", "journal/2024-01-08.md"]},
            ),
            ("mcp-search-bm25", "search", {"query": "VACUUM FULL", "mode": "bm25", "limit": 3}),
            ("mcp-search-budget", "search", {"query": "postgres", "limit": 8, "max_tokens": 100}),
            ("mcp-search-nothing", "search", {"query": "zzqxj", "tags": ["nope"]}),
            ("mcp-note", "get_note", {"path": "howto/git-rebase-recipes.md"}),
            (
                "mcp-note-section",
                "get_note",
                {"path": "howto/git-rebase-recipes", "section": "Undo a rebase that went wrong"},
            ),
            ("mcp-note-secrets", "get_note", {"path": "howto/deploy-credentials.md"}),
            (
                "mcp-note-cut",
                "get_note",
                {"path": "reference/postgres-vacuum-and-indexes.md", "max_tokens": 200},
            ),
            (
                "mcp-note-missing-section",
                "get_note",
                {"path": "howto/git-rebase-recipes.md", "section": "Nope"},
            ),
            ("mcp-note-outside", "get_note", {"path": "../etc/passwd"}),
            ("mcp-note-unknown", "get_note", {"path": "git-rebase-recipes.md"}),
            ("mcp-status", "status", {}),
        )

        async def body() -> None:
            async with Client(params, mode="legacy") as client:
                info = {
                    "name": client.server_info.name if client.server_info else None,
                    "instructions": client.instructions,
                }
                tools = [
                    t.model_dump(mode="json", exclude_none=True)
                    for t in (await client.list_tools()).tools
                ]
                self.out["mcp-tools"] = self.clean(
                    json.dumps(
                        {"server": info, "tools": tools},
                        ensure_ascii=False,
                        indent=2,
                        sort_keys=True,
                    )
                )
                for name, tool, args in calls:
                    result = await client.call_tool(tool, args)
                    text = "\n".join(getattr(block, "text", "") for block in result.content)
                    self.out[name] = self.clean(
                        f"is_error: {result.is_error}\n"
                        f"structured: {result.structured_content is not None}\n{text}"
                    )

        anyio.run(body)


def generate(root: Path) -> dict[str, str]:
    """Every golden output, by name, produced by the code importable as `noteseek` now."""
    run = Run(root)
    run.cli()
    run.hooks(warm=False)
    run.daemon()
    run.mcp()
    run.intake()
    return run.out


_FLOAT = re.compile(r"(?<![\w.])(-?\d+\.\d+(?:e-?\d+)?)\b")


def same_output(recorded: str, now: str) -> bool:
    """Byte for byte, except that a float rounded to five significant digits (`clean`) may differ
    by one in its last digit: a value on a rounding boundary (0.364885) rounds either way with the
    machine's last bits."""
    if recorded == now:
        return True
    a, b = _FLOAT.split(recorded), _FLOAT.split(now)
    if len(a) != len(b):
        return False
    for i, (x, y) in enumerate(zip(a, b)):
        if i % 2 == 0 or x == y:  # text between floats must be identical
            if x != y:
                return False
            continue
        fx, fy = float(x), float(y)
        digits = len(x.split("e")[0].replace("-", "").replace(".", "").lstrip("0")) or 1
        unit = 10.0 ** (math.floor(math.log10(abs(fx))) - digits + 1) if fx else 10.0 ** -digits
        if abs(fx - fy) > 1.01 * unit:
            return False
    return True


def compare(outputs: dict[str, str], folder: Path = GOLDENS) -> list[str]:
    """Names whose output differs from the recorded file (warm hooks against the one-shot file)."""
    problems = []
    recorded = {p.stem for p in folder.glob("*.txt")}
    for name, text in outputs.items():
        stem = name.removesuffix("@warm")
        path = folder / f"{stem}.txt"
        if not path.exists():
            problems.append(f"{name}: no recorded file {path.name}")
        elif not same_output(path.read_text("utf-8"), text):
            problems.append(name)
    missing = recorded - {n.removesuffix("@warm") for n in outputs}
    problems += [f"{name}: recorded but not produced" for name in sorted(missing)]
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--write", action="store_true", help="record the outputs into tests/goldens/"
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="noteseek-goldens-") as tmp:
        outputs = generate(Path(tmp))
    if args.write:
        GOLDENS.mkdir(exist_ok=True)
        for old in GOLDENS.glob("*.txt"):
            old.unlink()
        for name, text in outputs.items():
            if name.endswith("@warm"):
                continue
            (GOLDENS / f"{name}.txt").write_text(text, "utf-8")
        print(f"wrote {sum(not n.endswith('@warm') for n in outputs)} files to {GOLDENS}")
    problems = compare(outputs)
    for problem in problems:
        print(f"differs: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
