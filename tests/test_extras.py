"""Every extra noteseek names exists in pyproject.toml, and a missing one is named by the CLI.

The table in `noteseek.extras` is the one place the package says which extra installs which
library; these tests hold it to pyproject.toml and check that no message in the source suggests
an extra that does not exist (`noteseek[serve]` once did).
"""

from __future__ import annotations

import importlib.metadata
import re
import subprocess
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # the core's own dependency before 3.11
    import tomli as tomllib

from noteseek import extras

from .conftest import user_env

REPO = Path(__file__).resolve().parent.parent
SRC = REPO / "src" / "noteseek"
# Extras for working on noteseek, not features of it: nothing in the package asks for them.
DEVELOPMENT_EXTRAS = {"test", "bench", "ranking-lab"}


def _pyproject_extras() -> dict[str, list[str]]:
    with (REPO / "pyproject.toml").open("rb") as handle:
        extras_table: dict[str, list[str]] = tomllib.load(handle)["project"][
            "optional-dependencies"
        ]
    return extras_table


def _distribution(requirement: str) -> str:
    return re.split(r"[\s\[<>=;!~]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def test_the_table_is_the_feature_extras_of_pyproject() -> None:
    declared = _pyproject_extras()
    assert set(extras.EXTRAS) == set(declared) - DEVELOPMENT_EXTRAS


def test_each_module_is_installed_by_a_package_of_its_extra() -> None:
    declared = _pyproject_extras()
    providers = importlib.metadata.packages_distributions()
    for extra, modules in extras.EXTRAS.items():
        packages = {_distribution(r) for r in declared[extra]}
        for module in modules:
            found = {d.lower().replace("_", "-") for d in providers.get(module, [])}
            assert found & packages, f"{module!r} is not installed by noteseek[{extra}]"


def test_every_extra_the_source_names_exists() -> None:
    declared = set(_pyproject_extras())
    named: dict[str, str] = {}
    for path in SRC.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for match in re.finditer(r"noteseek\[([A-Za-z0-9_-]+)\]", text):
            named[match.group(1)] = str(path.relative_to(REPO))
        for match in re.finditer(r"""require\(\s*["']([A-Za-z0-9_-]+)["']""", text):
            if "extras" in text:  # extras.require(extra, ...), not documents' require(module)
                named.setdefault(match.group(1), str(path.relative_to(REPO)))
    unknown = {
        name: where
        for name, where in named.items()
        if name not in declared and extras.extra_of(name) is None
    }
    assert not unknown, f"extras named in the source that pyproject.toml lacks: {unknown}"


def test_install_hint_refuses_an_extra_that_does_not_exist() -> None:
    assert extras.install_hint("web") == "pip install 'noteseek[web]'"
    with pytest.raises(KeyError):
        extras.install_hint("serve")


def test_require_names_the_package_and_the_extra() -> None:
    with pytest.raises(extras.MissingExtraError) as caught:
        extras.require("postgres", "noteseek_no_such_module", what="a postgresql:// index")
    error = caught.value
    assert isinstance(error, ImportError) and error.extra == "postgres"
    assert str(error) == (
        "a postgresql:// index needs the Python package 'noteseek_no_such_module', which is not "
        "installed: pip install 'noteseek[postgres]'"
    )


@pytest.fixture
def blocked(tmp_path: Path) -> dict[str, str]:
    """An environment in which `mcp`, `fastapi` and `watchfiles` cannot be imported."""
    for module in ("mcp", "fastapi", "watchfiles"):
        (tmp_path / "block" / module).mkdir(parents=True)
        (tmp_path / "block" / module / "__init__.py").write_text(
            f"raise ImportError('blocked by the test', name={module!r})\n"
        )
    env = user_env()
    env.update(
        PYTHONPATH=str(tmp_path / "block"), NOTESEEK_HOME=str(tmp_path / "home"), HF_HUB_OFFLINE="1"
    )
    return env


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["web", "--port", "0"], "needs the Python package 'fastapi', which is not installed: "
         "pip install 'noteseek[web]'"),
        (["mcp"], "needs the Python package 'mcp', which is not installed: "
         "pip install 'noteseek[mcp]'"),
    ],
)  # fmt: skip
def test_the_cli_names_the_real_extra(
    blocked: dict[str, str], args: list[str], expected: str
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "noteseek", *args],
        capture_output=True,
        text=True,
        env=blocked,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert expected in done.stderr
    assert "Traceback" not in done.stderr
