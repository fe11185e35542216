"""docs/cli.md, the command reference, written from the click commands themselves.

    python -m tests.cli_reference --write     # rewrite docs/cli.md from the current commands
    python -m tests.cli_reference             # exit 1 (with a diff) when docs/cli.md is stale

tests/test_cli_reference.py runs the second form, so a changed option or help text that is not
written into docs/cli.md fails the build. The text comes from the real click tree (`noteseek.cli.main.cli`
and every lazily imported command), not from a copy of it: usage line, the command's help, and each
option's help record as `--help` shows it (defaults and ranges included).

It lives beside the tests rather than in the package: it is a build step of the docs, nothing a
user runs, and it needs every extra installed (the `test` extra) so that `mcp` and `web` describe
themselves instead of standing in as "unavailable".
"""

from __future__ import annotations

import difflib
import inspect
import sys
from pathlib import Path

import click

REPO = Path(__file__).resolve().parent.parent
CLI_MD = REPO / "docs" / "cli.md"

HEADER = """\
# Command reference

Generated from the click commands by `python -m tests.cli_reference --write`; do not edit by
hand (tests/test_cli_reference.py fails when this file and the commands disagree). Every
command answers `-h/--help` with the same text. How the commands fit together: the
[README](../README.md); what each subsystem does: the docs linked there.
"""


def _help_markdown(text: str) -> str:
    """A command's docstring as Markdown: click's `\\b` (keep these lines) becomes a code block."""
    paragraphs = inspect.cleandoc(text).split("\n\n")
    out = []
    for paragraph in paragraphs:
        if paragraph.startswith("\b\n"):
            out.append("```text\n" + paragraph[2:] + "\n```")
        else:
            out.append(paragraph)
    return "\n\n".join(out)


def _command_section(name: str, command: click.Command, parent: click.Context | None) -> str:
    ctx = (
        click.Context(command, info_name=name, parent=parent)
        if parent is not None
        else click.Context(command, info_name=name, **command.context_settings)
    )
    if command.callback is not None and command.help and command.help.startswith("(unavailable"):
        raise SystemExit(
            f"'noteseek {name}' is unavailable here ({command.help}); install '.[test]' first"
        )
    usage = " ".join([ctx.command_path, *command.collect_usage_pieces(ctx)])
    lines = [f"## `{ctx.command_path}`", "", "```text", usage, "```", ""]
    if command.help:
        lines += [_help_markdown(command.help), ""]
    arguments = [
        p.human_readable_name for p in command.get_params(ctx) if isinstance(p, click.Argument)
    ]
    if arguments:
        lines += ["Arguments: " + ", ".join(f"`{a}`" for a in arguments), ""]
    # The help option is written from the context's names: click caches a command's help option
    # the first time it is built, so a command once invoked alone (a test's CliRunner) would
    # otherwise lose the group's "-h" here, depending on what ran before.
    records = [
        p.get_help_record(ctx)
        for p in command.get_params(ctx)
        if not isinstance(p, click.Argument) and "--help" not in p.opts
    ]
    options = [r for r in records if r is not None]
    if ctx.help_option_names:
        options.append((", ".join(ctx.help_option_names), "Show this message and exit."))
    if options:
        lines += ["Options:", ""]
        for opts, help_text in options:
            described = " ".join(help_text.split())
            lines.append(f"- `{opts}`" + (f": {described}" if described else ""))
        lines.append("")
    return "\n".join(lines)


def render() -> str:
    """The whole of docs/cli.md for the commands as they are now."""
    from noteseek.cli.main import cli

    root = click.Context(cli, info_name="noteseek", **cli.context_settings)
    sections = [
        HEADER,
        _command_section("noteseek", cli, None).replace(
            "## `noteseek`", "## `noteseek` (the group)", 1
        ),
    ]
    names = cli.list_commands(root)
    index = ["Commands: " + ", ".join(f"[`{n}`](#noteseek-{n})" for n in names) + ".", ""]
    sections.insert(1, "\n".join(index))
    for name in names:
        command = cli.get_command(root, name)
        assert command is not None, name
        sections.append(_command_section(name, command, root))
    return "\n".join(sections).rstrip("\n") + "\n"


def stale_diff(expected: str) -> str:
    current = CLI_MD.read_text("utf-8") if CLI_MD.exists() else ""
    return "".join(
        difflib.unified_diff(
            current.splitlines(keepends=True),
            expected.splitlines(keepends=True),
            "docs/cli.md",
            "from the commands",
        )
    )


def main(argv: list[str]) -> int:
    expected = render()
    if argv == ["--write"]:
        CLI_MD.write_text(expected, "utf-8")
        return 0
    diff = stale_diff(expected)
    if diff:
        sys.stdout.write(diff)
        sys.stdout.write("\ndocs/cli.md is stale: run python -m tests.cli_reference --write\n")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
