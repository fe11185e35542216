"""CLI, hook (one-shot and warm), daemon and MCP output on the sample vault, byte for byte.

The recorded files in tests/goldens/ were made by `python -m tests.adapter_goldens --write` from
the code before the package was split into subpackages (issue 12); see that module for what is
replaced as volatile. A change that means to alter an adapter's output re-records them and says so.
"""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

from . import adapter_goldens

pytest.importorskip("mcp")


def test_adapter_output_is_byte_identical_to_the_recorded_goldens(tmp_path: Path) -> None:
    outputs = adapter_goldens.generate(tmp_path)
    problems = adapter_goldens.compare(outputs)
    diffs = []
    for name in problems[:5]:
        stem = name.removesuffix("@warm")
        path = adapter_goldens.GOLDENS / f"{stem}.txt"
        if name in outputs and path.exists():
            diffs.append(
                "".join(
                    difflib.unified_diff(
                        path.read_text("utf-8").splitlines(keepends=True),
                        outputs[name].splitlines(keepends=True),
                        f"recorded/{stem}",
                        f"now/{name}",
                    )
                )
            )
    assert not problems, "\n".join(problems) + "\n" + "\n".join(diffs)
    assert len(outputs) > 80  # every adapter ran: CLI, hooks cold and warm, daemon, MCP, intake
