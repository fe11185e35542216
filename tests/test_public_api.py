"""The public API is one table: `noteseek._EXPORTS`. `__all__` is made from it, and the imports
type checkers read (the `TYPE_CHECKING` block) must name exactly the same names and modules."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import noteseek

INIT = Path(noteseek.__file__)


def _type_checking_imports() -> dict[str, str]:
    tree = ast.parse(INIT.read_text(encoding="utf-8"))
    block = next(
        node
        for node in tree.body
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name)
        and node.test.id == "TYPE_CHECKING"
    )  # fmt: skip
    found: dict[str, str] = {}
    for node in block.body:
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            for alias in node.names:
                # `import X as X`: the explicit re-export a strict type checker asks for.
                assert alias.asname == alias.name, f"{alias.name} is not re-exported as itself"
                found[alias.name] = str(node.module)
    return found


def test_all_is_the_table() -> None:
    assert noteseek.__all__ == ["__version__", *noteseek._EXPORTS]
    assert len(set(noteseek.__all__)) == len(noteseek.__all__)


def test_the_type_checking_imports_are_the_table() -> None:
    assert _type_checking_imports() == noteseek._EXPORTS


def test_every_public_name_resolves_where_the_table_says() -> None:
    code = (
        "import importlib, noteseek\n"
        "for name, module in noteseek._EXPORTS.items():\n"
        "    value = getattr(noteseek, name)\n"
        "    assert value is getattr(importlib.import_module('noteseek.' + module), name), name\n"
        "print(len(noteseek._EXPORTS))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) == len(noteseek._EXPORTS)
