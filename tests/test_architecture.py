"""The package's shape (docs/architecture.md): layer contracts, module sizes, light hook-path packages."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import REPO

PACKAGE = REPO / "src" / "noteseek"
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"
# Modules are split by concept, never to meet a number; past ~800 lines a module is looked at
# again (two ideas may share it), so the check fires there.
MAX_MODULE_LINES = 800
# Data tables, not logic: the secret rules (one entry per vendor format).
LONG_MODULES_ALLOWED = {"secrets/rules.py"}
# Packages off the per-prompt hook path, whose __init__ re-exports their public names (documents:
# the indexer only; web: checks its extra once, for every entry point).
REEXPORTING_PACKAGES = {"evaluation", "intake", "documents", "web"}
# Packages on the hook path whose __init__ re-exports lazily (PEP 562): it imports only
# importlib, and the names' modules on first use.
LAZY_PACKAGES = {"engine/search": "noteseek.engine.search.searcher"}

needs_lint_imports = pytest.mark.skipif(
    not LINT_IMPORTS.exists(), reason="import-linter is not installed (pip install -e '.[test]')"
)


def lint_imports(cwd: Path, src: Path) -> subprocess.CompletedProcess[str]:
    env = {"PYTHONPATH": str(src), "PATH": str(LINT_IMPORTS.parent), "HOME": str(cwd)}
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@needs_lint_imports
def test_every_import_contract_is_kept() -> None:
    result = lint_imports(REPO, REPO / "src")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "5 kept, 0 broken" in result.stdout


@needs_lint_imports
@pytest.mark.parametrize(
    ("module", "line", "contract"),
    [
        # The pure core reaching up to the CLI.
        ("core/query.py", "from ..cli import main as _up", "Layers"),
        # Two independent siblings: storage and embedding.
        ("storage/meta.py", "from ..embedding import quantize as _side", "Layers"),
        # An adapter around the facade, straight into the storage.
        ("cli/status.py", "from ..storage import meta as _inside", "Adapters use the public"),
        # The web adapter reaching past the facade into the engine.
        ("web/app.py", "from ..engine import search as _inside", "Adapters use the public"),
        # The engine naming the SQLite backend instead of the protocol.
        (
            "engine/search/searcher.py",
            "from ...storage.sqlite import store as _backend",
            "The engine knows",
        ),
        # ... or the PostgreSQL backend.
        ("engine/index.py", "from ..storage.postgres import store as _pg", "The engine knows"),
        # One backend borrowing the other's code (the tokenizer once was).
        ("storage/postgres/terms.py", "from ..sqlite import schema as _other", "The two storage"),
    ],
)
def test_an_import_against_the_layers_breaks_a_contract(
    tmp_path: Path, module: str, line: str, contract: str
) -> None:
    src = tmp_path / "src"
    shutil.copytree(
        PACKAGE, src / "noteseek", ignore=shutil.ignore_patterns("models", "__pycache__")
    )
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    target = src / "noteseek" / module
    target.write_text(target.read_text("utf-8") + f"\n{line}  # noqa\n", "utf-8")
    result = lint_imports(tmp_path, src)
    assert result.returncode != 0
    broken = result.stdout.split("Broken contracts", 1)[-1]
    assert contract in broken, result.stdout


def test_no_module_is_over_800_lines_but_the_rule_table() -> None:
    long = {
        path.relative_to(PACKAGE).as_posix(): length
        for path in PACKAGE.rglob("*.py")
        if (length := len(path.read_text("utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert set(long) <= LONG_MODULES_ALLOWED, long


def test_subpackage_inits_import_nothing() -> None:
    """A hook process imports several of these packages; each import of theirs it would pay for."""
    heavy = {}
    for init in PACKAGE.glob("*/**/__init__.py"):
        package = init.parent.relative_to(PACKAGE).as_posix()
        if package in REEXPORTING_PACKAGES:
            continue
        tree = ast.parse(init.read_text("utf-8"))
        if package in LAZY_PACKAGES:
            tree.body = [n for n in tree.body if not _type_checking_block(n)]
        imports = [
            n
            for n in ast.walk(tree)
            if isinstance(n, (ast.Import, ast.ImportFrom))
            and not (package in LAZY_PACKAGES and _imports_only_importlib(n))
        ]
        if imports:
            heavy[package] = len(imports)
    assert not heavy, heavy


def _type_checking_block(node: ast.stmt) -> bool:
    return isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"


def _imports_only_importlib(node: ast.Import | ast.ImportFrom) -> bool:
    if isinstance(node, ast.ImportFrom):
        return node.module == "__future__"
    return [alias.name for alias in node.names] == ["importlib"]


@pytest.mark.parametrize(("package", "heavy"), sorted(LAZY_PACKAGES.items()))
def test_a_lazy_package_imports_its_names_on_first_use(package: str, heavy: str) -> None:
    name = "noteseek." + package.replace("/", ".")
    code = (
        "import sys, importlib\n"
        f"package = importlib.import_module({name!r})\n"
        f"before = {heavy!r} in sys.modules\n"
        "names = [getattr(package, n) for n in package.__all__]\n"
        f"print(before, {heavy!r} in sys.modules, all(names))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True", "True"]


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    # The test command; after it the benchmarks' smoke runs (bench/smoke.py), not in the README.
    lines = (REPO / ".ci" / "run").read_text("utf-8").strip().splitlines()
    (ci,) = [line for line in lines if "lint-imports" in line]
    assert lines[-1] == ".venv/bin/python bench/smoke.py"
    assert f"\n{ci}\n" in (REPO / "README.md").read_text("utf-8")


def test_the_bundled_model_ships_as_package_data_of_its_package() -> None:
    """A non-editable install (`pip install .`) must carry every model file with `embedding/`."""
    import fnmatch

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - tomli is a dependency below 3.11
        import tomli as tomllib

    from noteseek.embedding.embedder import bundled_model_path

    config = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["noteseek.embedding"]
    model = bundled_model_path()
    assert model.parent.parent == PACKAGE / "embedding"
    files = [p.relative_to(PACKAGE / "embedding").as_posix() for p in model.iterdir()]
    assert "model.safetensors" in {Path(f).name for f in files}
    assert all(any(fnmatch.fnmatch(f, pat) for pat in patterns) for f in files), files


def test_the_search_models_ship_as_package_data_of_their_package() -> None:
    """The rerank and calibration models are read beside their modules; a wheel must carry them."""
    import tomllib

    from noteseek.engine.search import calibration, rerank

    config = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))
    package_data = config["tool"]["setuptools"]["package-data"]
    for module in (rerank, calibration):
        package = module.__name__.rsplit(".", 1)[0]
        assert module.MODEL_FILE.is_file(), module.MODEL_FILE
        assert module.MODEL_FILE.name in package_data[package], (package, module.MODEL_FILE)


def test_both_backends_use_one_module_name_per_job() -> None:
    """The same job has the same module name on both backends; a module on one side only is
    named, with the reason, in docs/architecture.md."""
    storage = PACKAGE / "storage"
    sqlite = {p.name for p in (storage / "sqlite").glob("*.py")}
    postgres = {p.name for p in (storage / "postgres").glob("*.py")}
    doc = (REPO / "docs" / "architecture.md").read_text("utf-8")
    section = doc.split("## The two storage backends, module by module", 1)[1].split("\n## ", 1)[0]
    for name in sqlite & postgres - {"__init__.py"}:
        assert f"| `{name}` |" in section, name
    for name in sqlite - postgres:
        assert f"`sqlite/{name}`" in section, name
    for name in postgres - sqlite:
        assert f"`postgres/{name}`" in section, name


def _backend_stores() -> list[type]:
    """Both backends' store classes (PostgreSQL's needs the postgres extra)."""
    pytest.importorskip("psycopg")
    from noteseek.storage.postgres.store import PostgresStore
    from noteseek.storage.sqlite.store import SqliteStore

    return [SqliteStore, PostgresStore]


def test_backend_parts_are_composed_not_mixed_in() -> None:
    """Each backend's store holds one part object per job (`storage.store.Store`); no class of a
    backend inherits from its connection class or from another of its classes, so a job reaches
    another only through the objects its constructor took."""
    import importlib
    import inspect
    import typing

    from noteseek.storage.store import Store

    parts_of: dict[str, dict[str, str]] = {}
    for store in _backend_stores():
        assert store.__bases__ == (Store,), store
        parts = typing.get_type_hints(store)
        assert set(parts) == set(inspect.signature(Store).parameters), store
        package = store.__module__.rsplit(".", 1)[0]
        for cls in parts.values():
            assert cls.__module__.startswith(package + "."), (store, cls)
        # Every class of the backend's modules, the parts' own helpers included.
        folder = PACKAGE / "storage" / package.rsplit(".", 1)[1]
        for path in sorted(folder.glob("*.py")):
            module = importlib.import_module(f"{package}.{path.stem}")
            for cls in vars(module).values():
                if not inspect.isclass(cls) or cls.__module__ != module.__name__:
                    continue
                inside = [b for b in cls.__mro__[1:] if b.__module__.startswith(package + ".")]
                assert not inside, f"{cls.__qualname__} inherits from {inside[0].__qualname__}"
        parts_of[package] = {name: cls.__name__ for name, cls in parts.items() if name != "conn"}
    sqlite, postgres = parts_of.values()
    assert sqlite == postgres  # the same job has the same class name on both backends


def test_the_store_binds_every_protocol_call_to_its_part(tmp_path: Path) -> None:
    """`Storage` is the sum of its parts: every call of a part's protocol is, on an open store,
    that part's own method (or, for a value, the part's value); what is no part's
    (`update_lock`, `checkpoint`) is the store's."""
    import typing

    from noteseek.storage import protocol
    from noteseek.storage.sqlite.store import SqliteStore

    attribute = {
        protocol.ConnectionPart: "conn",
        protocol.FilePart: "files",
        protocol.LinkPart: "links",
        protocol.TextIndexPart: "text",
        protocol.NoteTermsPart: "terms",
        protocol.VectorPart: "vectors",
        protocol.MultilingualPart: "deep",
        protocol.IntegrityPart: "integrity",
    }
    assert set(protocol.Storage.__bases__) - {typing.Protocol} == set(attribute)
    own = {n for n in vars(protocol.Storage) if not n.startswith("_")}
    assert own == {"update_lock", "checkpoint"}
    store = SqliteStore(tmp_path / "i.db")
    try:
        seen: set[str] = set()
        for part_protocol, name in attribute.items():
            part = getattr(store, name)
            calls = {n for n in vars(part_protocol) if not n.startswith("_")}
            calls |= set(part_protocol.__annotations__)
            assert not calls & seen, part_protocol  # each call belongs to one part
            seen |= calls
            for call in calls:
                bound = getattr(store, call)
                if callable(bound):
                    assert bound.__self__ is part, (call, name)
                else:
                    assert bound == getattr(part, call), (call, name)
        assert all(n in vars(type(store)) for n in own - {"update_lock"})
    finally:
        store.close()


def _imports_of(module: Path) -> set[str]:
    """Every noteseek module `module` imports: at the top, inside functions and for type
    checking alike (each makes the two modules depend on each other)."""
    rel = module.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    package = parts if parts[-1] == "__init__" else parts[:-1]
    package = [p for p in package if p != "__init__"]
    found: set[str] = set()
    for node in ast.walk(ast.parse(module.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_no_two_modules_import_each_other_in_a_cycle() -> None:
    names = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph = {m: (_imports_of(p) & names.keys()) - {m} for m, p in names.items()}
    # Depth-first search for a back edge; report the first cycle found.
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        path.append(module)
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state and (cycle := visit(target)):
                return cycle
        state[module] = 2
        path.pop()
        return None

    for module in sorted(graph):
        if module not in state:
            cycle = visit(module)
            assert cycle is None, " -> ".join(cycle)
