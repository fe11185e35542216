"""Every environment variable noteseek reads, and the defaults more than one package shares.

One place to look them up, and the bottom of the layering: this module imports nothing (the
per-prompt hook imports it before anything else), and every package may import it.
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_CONTEXT_TOKENS",
    "DEFAULT_DEEP_AUTO_CHUNKS",
    "DEFAULT_EXCLUDE",
    "DEFAULT_IDLE_MINUTES",
    "ENV_CLAUDE_CONFIG_DIR",
    "ENV_COLLECTION",
    "ENV_DB",
    "ENV_DEEP",
    "ENV_DEEP_AUTO",
    "ENV_HOME",
    "ENV_HOOK_LOG",
    "ENV_NO_DAEMON",
    "ENV_OCR",
    "ENV_RUNTIME_DIR",
    "ENV_WRITE_DB",
    "FALSE_VALUES",
    "RAW_OUTPUT_MARKER",
    "SHOWN_FINGERPRINT_CHARS",
    "TRUE_VALUES",
]

# -- environment variables ------------------------------------------------------------------------

ENV_DB = "NOTESEEK_DB"  # the index file every command and hook uses when none is given
# With a database URL (postgresql://…): the server commands that write use (index, watch,
# refreshes), where searches use NOTESEEK_DB (a read replica, say); and the collection(s) meant.
ENV_WRITE_DB = "NOTESEEK_WRITE_DB"
ENV_COLLECTION = "NOTESEEK_COLLECTION"  # one name, several (a,b) or * for all
ENV_HOME = "NOTESEEK_HOME"  # noteseek's data folder (default: the platform's user data dir)
ENV_RUNTIME_DIR = "NOTESEEK_RUNTIME_DIR"  # the daemons' private socket folder
ENV_NO_DAEMON = "NOTESEEK_NO_DAEMON"  # 1/true/yes: hooks never use or start the warm daemon
# 0/false/no/off: searches never use a deep lane, and watchers do not build one (docs/deep-lane.md)
ENV_DEEP = "NOTESEEK_DEEP"
# The most distinct chunk contents a watcher begins a deep lane for by itself (0: never; a lane
# already begun is filled whatever the size). Default DEFAULT_DEEP_AUTO_CHUNKS.
ENV_DEEP_AUTO = "NOTESEEK_DEEP_AUTO"
ENV_OCR = "NOTESEEK_OCR"  # 0/false/no/off: images and scanned PDF pages are not read by OCR
ENV_HOOK_LOG = "NOTESEEK_HOOK_LOG"  # "all": the hook log records every call, not only failures
# A number in [0, 1]: the relevance threshold searches use by default instead of
# DEFAULT_MIN_SCORE (0 shows every hit, as --all does); the prompt hook keeps its own.
ENV_MIN_SCORE = "NOTESEEK_MIN_SCORE"
# Likewise for the query-level threshold (DEFAULT_MIN_ANSWER): 0 never hides a whole list.
ENV_MIN_ANSWER = "NOTESEEK_MIN_ANSWER"
ENV_CLAUDE_CONFIG_DIR = "CLAUDE_CONFIG_DIR"  # Claude Code's own: where its settings.json lives
# Written into a Bash command by the user (`NOTESEEK_RAW=1 make test`): keep that output whole.
RAW_OUTPUT_MARKER = "NOTESEEK_RAW=1"
TRUE_VALUES = ("1", "true", "yes")  # how an on/off variable such as NOTESEEK_NO_DAEMON says on
FALSE_VALUES = ("0", "false", "no", "off")  # ... and how one that is on by default says off

# -- shared defaults ------------------------------------------------------------------------------

# A vault this small gets a deep lane from its first watcher without being asked: at 0.26-0.5
# CPU-s per chunk on one idle core (bench/results/deep_lane_cost.md) that is 20-40 CPU-minutes,
# about a 1,500-note vault; a larger one waits for `index --deep` or `watch --deep`.
DEFAULT_DEEP_AUTO_CHUNKS = 5_000
# Token budget of the agent context block (`noteseek context`, the prompt hook, the daemon).
DEFAULT_CONTEXT_TOKENS = 500
# Folders never indexed unless named otherwise (every dot-folder is skipped on top of these).
DEFAULT_EXCLUDE: tuple[str, ...] = (".obsidian", ".trash", ".git")
# Hex digits of a secret's SHA-256 shown by `noteseek scan`: enough to allow-list (>= 12).
SHOWN_FINGERPRINT_CHARS = 16
# A daemon exits after this long without requests (`noteseek serve --idle-minutes`).
DEFAULT_IDLE_MINUTES = 30.0
