"""docs/cli.md is the command reference, generated from the click commands: it must match them."""

from __future__ import annotations

from tests import cli_reference


def test_cli_reference_is_current() -> None:
    """A changed option or help text fails here until `python -m tests.cli_reference --write` runs."""
    expected = cli_reference.render()
    current = cli_reference.CLI_MD.read_text("utf-8")
    assert current == expected, (
        "docs/cli.md is stale: run python -m tests.cli_reference --write\n"
        + cli_reference.stale_diff(expected)
    )


def test_cli_reference_names_every_option() -> None:
    """The generator reads the real tree: every option of every command appears in its section."""
    import click

    from noteseek.cli.main import cli

    text = cli_reference.render()
    root = click.Context(cli, info_name="noteseek", **cli.context_settings)
    for name in cli.list_commands(root):
        command = cli.get_command(root, name)
        assert command is not None
        section = text.split(f"## `noteseek {name}`\n", 1)[1].split("\n## ", 1)[0]
        for param in command.params:
            if isinstance(param, click.Option) and not param.hidden:
                for opt in param.opts:
                    assert opt in section, (name, opt)
