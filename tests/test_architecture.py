"""The package's shape (docs/architecture.md): layer contracts, module sizes, light hook-path
packages, and imports inside functions that say why they wait."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from collections.abc import Collection
from dataclasses import dataclass
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


def _constructed_parts(store: type) -> dict[str, type]:
    """Which class each part of `Store` is on a backend: read from its constructor's
    `super().__init__(…)` call (positional, in `Store`'s order), each argument a class called
    there or a name bound to one (`text, vectors = TextIndex(conn), VectorTable(conn)`)."""
    import ast
    import inspect
    import sys
    import textwrap

    from noteseek.storage.store import Store

    tree = ast.parse(textwrap.dedent(inspect.getsource(store.__init__)))
    made: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.NamedExpr):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names = target.elts if isinstance(target, ast.Tuple) else [target]
                values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
                for name, value in zip(names, values):
                    if isinstance(name, ast.Name) and isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
                        made[name.id] = value.func.id
    calls = [
        n for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "__init__"
    ]
    assert len(calls) == 1 and not calls[0].keywords, store
    module = sys.modules[store.__module__]
    parts: dict[str, type] = {}
    for param, arg in zip(inspect.signature(Store).parameters, calls[0].args):
        if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Name):
            parts[param] = getattr(module, arg.func.id)
        else:
            assert isinstance(arg, ast.Name) and arg.id in made, (store, param)
            parts[param] = getattr(module, made[arg.id])
    return parts


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
        assert typing.get_origin(store.__orig_bases__[0]) is Store and store.__bases__ == (Store,), store
        parts = _constructed_parts(store)
        assert list(parts) == list(inspect.signature(Store).parameters), store
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


# -- imports inside functions ---------------------------------------------------------------------
#
# A function-level import moves a cost, it does not remove it: it pays only where a path that must
# stay fast (the per-prompt hook, a one-shot search, one CLI command) would otherwise load what it
# never uses, or where the module may be missing (an optional extra, a POSIX-only module). So each
# says why: its module is one of DEFERRED_LIBRARIES, or a `# deferred: <why>` comment is on its
# line or in the comment block right above it (one comment covers a run of imports), or its module
# states the rule for all of them in a `# Deferred imports: <why>` line. And none may import what
# the module's own top-level imports have loaded already: that defers nothing.

DEFERRED_MARK = "# deferred:"
MODULE_RULE_MARK = "# Deferred imports:"
MIN_REASON_WORDS = 3
# Libraries a function imports without a comment: heavy core dependencies the hook and one-shot
# searches run without (tests/test_daemon.py and tests/test_embedder.py check those processes'
# modules), and the optional extras, which are imported only when used.
HEAVY_LIBRARIES = {
    "numpy": "~65 ms to import; the hook and one-shot searches run without it",
    "model2vec": "only for a model that is not a plain local Model2Vec folder",
    "tokenizers": "the Hugging Face tokenizer, only where the pure-Python encoder cannot serve",
    "dateparser": "~190 ms to import; only for a query with a time phrase",
    "watchfiles": "its native watcher, only in a process that watches a vault",
    "tqdm": "~20-40 ms to import; only for a progress bar on a terminal",
}
# Libraries of an extra that `extras.EXTRAS` does not list (it checks the extra by another).
MORE_EXTRA_LIBRARIES = {"pydantic": "mcp", "markdown_it": "web", "nh3": "web"}
# Folders whose function-level imports are not checked yet (none).
UNREVIEWED: tuple[str, ...] = ()


def deferred_libraries() -> dict[str, str]:
    """Library (top-level import name) -> why a function may import it without a comment."""
    from noteseek.extras import EXTRAS

    extras = {name: extra for extra, names in EXTRAS.items() for name in names}
    extras |= MORE_EXTRA_LIBRARIES
    return HEAVY_LIBRARIES | {name: f"optional extra [{extra}]" for name, extra in extras.items()}


@dataclass(frozen=True)
class FunctionImport:
    """An import statement inside a function, and the statements whose comment block above
    stands for it: the first import of its run, and the compound statements (if, try, ...) that
    the run opens the body of."""

    node: ast.Import | ast.ImportFrom
    anchors: tuple[ast.stmt, ...]


def function_imports(tree: ast.Module) -> list[FunctionImport]:
    """Every import inside a function body, but those of a `TYPE_CHECKING` block."""
    found: list[FunctionImport] = []

    def visit(block: list[ast.stmt], in_function: bool, owners: tuple[ast.stmt, ...]) -> None:
        run: tuple[ast.stmt, ...] | None = None
        for position, statement in enumerate(block):
            anchors = (statement, *owners) if position == 0 else (statement,)
            if isinstance(statement, (ast.Import, ast.ImportFrom)):
                run = run or anchors
                if in_function:
                    found.append(FunctionImport(statement, run))
                continue
            run = None
            if _type_checking_block(statement):
                visit(statement.orelse, in_function, ())  # type: ignore[attr-defined]
                continue
            function = isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef))
            for child in _blocks(statement):
                # A comment above a `def` is not one above the imports its body starts with.
                visit(child, in_function or function, () if function else anchors)

    visit(tree.body, False, ())
    return found


def _blocks(statement: ast.stmt) -> list[list[ast.stmt]]:
    blocks = [
        value
        for name in ("body", "orelse", "finalbody")
        if isinstance(value := getattr(statement, name, None), list)
        and value
        and isinstance(value[0], ast.stmt)
    ]
    blocks += [handler.body for handler in getattr(statement, "handlers", ())]
    blocks += [case.body for case in getattr(statement, "cases", ())]
    return blocks


def _gives_reason(line: str, mark: str) -> bool:
    _, found, reason = line.partition(mark)
    return bool(found) and len(reason.split()) >= MIN_REASON_WORDS


def _has_reason(imp: FunctionImport, lines: list[str]) -> bool:
    own = lines[imp.node.lineno - 1 : imp.node.end_lineno]
    if any(_gives_reason(line, DEFERRED_MARK) for line in own):
        return True
    for anchor in imp.anchors:
        row = anchor.lineno - 2  # the line above it, 0-based
        while row >= 0 and lines[row].lstrip().startswith("#"):
            if _gives_reason(lines[row], DEFERRED_MARK):
                return True
            row -= 1
    return False


def _library(node: ast.Import | ast.ImportFrom) -> set[str]:
    """The top-level names an absolute import reaches (empty for a relative one)."""
    if isinstance(node, ast.Import):
        return {alias.name.split(".")[0] for alias in node.names}
    return set() if node.level else {(node.module or "").split(".")[0]}


def unexplained_imports(source: str, libraries: Collection[str]) -> list[str]:
    """`line: statement` for every function-level import of `source` that gives no reason."""
    lines = source.splitlines()
    rules = [line for line in lines if line.startswith(MODULE_RULE_MARK)]
    if any(_gives_reason(line, MODULE_RULE_MARK) for line in rules):
        return []
    return [
        f"{imp.node.lineno}: {ast.unparse(imp.node)}"
        for imp in function_imports(ast.parse(source))
        if not (_library(imp.node) and _library(imp.node) <= set(libraries))
        and not _has_reason(imp, lines)
    ]


class TopImports:
    """What importing each module of a package loads through module-level imports alone: the
    package's modules (through lazy `_EXPORTS` tables too) and the names they import directly."""

    def __init__(self, package_dir: Path) -> None:
        self.root = package_dir
        self.paths = {self.name_of(p): p for p in package_dir.rglob("*.py")}
        self.trees = {name: ast.parse(p.read_text("utf-8")) for name, p in self.paths.items()}
        self.lazy = {name: _lazy_exports(tree) for name, tree in self.trees.items()}
        self._loaded: dict[str, frozenset[str]] = {}

    def name_of(self, path: Path) -> str:
        parts = list(path.relative_to(self.root.parent).with_suffix("").parts)
        return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)

    def targets(self, module: str, node: ast.Import | ast.ImportFrom) -> set[str]:
        """The modules an import statement in `module` makes sure are loaded."""
        if isinstance(node, ast.Import):
            return {alias.name for alias in node.names}
        if node.level:
            package = module.split(".")
            if self.paths[module].name != "__init__.py":
                package = package[:-1]
            base = package[: len(package) - (node.level - 1)]
            source = ".".join(base + ([node.module] if node.module else []))
        else:
            source = node.module or ""
        found = set()
        for alias in node.names:
            lazy = self.lazy.get(source, {})
            if f"{source}.{alias.name}" in self.paths:
                found.add(f"{source}.{alias.name}")
            elif alias.name in lazy:
                found.add(f"{source}.{lazy[alias.name]}")
            else:
                found.add(source)
        return found

    def _own(self, module: str) -> set[str]:
        found: set[str] = set()

        def visit(block: list[ast.stmt]) -> None:
            for statement in block:
                if isinstance(statement, (ast.Import, ast.ImportFrom)):
                    found.update(self.targets(module, statement))
                elif _type_checking_block(statement):
                    visit(statement.orelse)  # type: ignore[attr-defined]
                elif not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    for child in _blocks(statement):
                        visit(child)

        visit(self.trees[module].body)
        return {parent for name in found for parent in _with_parents(name)}

    def loaded(self, module: str) -> frozenset[str]:
        """Every name in sys.modules after `import module`, as far as the sources show."""
        if module not in self._loaded:
            seen = _with_parents(module)
            todo = sorted(seen)
            while todo:
                for name in self._own(todo.pop()) - seen:
                    seen.add(name)
                    if name in self.paths:
                        todo.append(name)
            self._loaded[module] = frozenset(seen)
        return self._loaded[module]


def _with_parents(name: str) -> set[str]:
    """`a.b.c` and the packages importing it imports first: `a`, `a.b`."""
    parts = name.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts) + 1)}


def _lazy_exports(tree: ast.Module) -> dict[str, str]:
    """A package's PEP 562 table (`_EXPORTS = {name: submodule}`), or nothing."""
    for statement in tree.body:
        if isinstance(statement, ast.AnnAssign):
            target, value = statement.target, statement.value
        elif isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target, value = statement.targets[0], statement.value
        else:
            continue
        if isinstance(target, ast.Name) and target.id == "_EXPORTS" and value is not None:
            exports: dict[str, str] = ast.literal_eval(value)
            return exports
    return {}


def imports_deferring_nothing(graph: TopImports, module: str) -> list[str]:
    """`line: statement` for each function-level import in `module` whose every module its own
    top-level imports have loaded already."""
    loaded = graph.loaded(module) | {module}
    return [
        f"{imp.node.lineno}: {ast.unparse(imp.node)}"
        for imp in function_imports(graph.trees[module])
        if graph.targets(module, imp.node) <= loaded
    ]


def _reviewed(path: Path) -> bool:
    return not path.relative_to(PACKAGE).as_posix().startswith(UNREVIEWED)


def test_every_import_inside_a_function_says_why() -> None:
    libraries = deferred_libraries()
    unexplained = {
        path.relative_to(PACKAGE).as_posix(): found
        for path in sorted(PACKAGE.rglob("*.py"))
        if _reviewed(path) and (found := unexplained_imports(path.read_text("utf-8"), libraries))
    }
    assert not unexplained, (
        "move these imports to the top, or say why they wait (a `# deferred: <why>` comment, "
        f"or the library in HEAVY_LIBRARIES): {unexplained}"
    )


def test_no_import_inside_a_function_defers_what_the_module_has_loaded() -> None:
    graph = TopImports(PACKAGE)
    pointless = {
        path.relative_to(PACKAGE).as_posix(): found
        for name, path in sorted(graph.paths.items())
        if _reviewed(path) and (found := imports_deferring_nothing(graph, name))
    }
    assert not pointless, f"already loaded by the module's top-level imports: {pointless}"


def test_every_heavy_library_is_deferred_somewhere() -> None:
    """A library stays in HEAVY_LIBRARIES only while a function imports it."""
    deferred = {
        name
        for path in PACKAGE.rglob("*.py")
        for imp in function_imports(ast.parse(path.read_text("utf-8")))
        for name in _library(imp.node)
    }
    assert set(HEAVY_LIBRARIES) | set(MORE_EXTRA_LIBRARIES) <= deferred


WHY = "# deferred: only the rare path needs it"


@pytest.mark.parametrize(
    ("source", "unexplained"),
    [
        ("def f():\n    import json\n", ["2: import json"]),
        (f"def f():\n    import json  {WHY}\n", []),
        (f"def f():\n    {WHY}\n    import json\n    import re\n", []),  # a run
        (f"def f():\n    # the comment block\n    {WHY}\n    import json\n", []),
        ("def f():\n    import json  # deferred: later\n", ["2: import json"]),  # no reason
        (f"def f():\n    {WHY}\n    x = 1\n    import json\n", ["4: import json"]),
        ("class A:\n    def f(self):\n        from ..x import y\n", ["3: from ..x import y"]),
        (
            "def f():\n    try:\n        import json\n    except ImportError:\n        pass\n",
            ["3: import json"],
        ),
        ("def f():\n    import numpy as np\n    from mcp.types import Tool\n", []),
        ("def f():\n    import numpy, json\n", ["2: import numpy, json"]),
        ("def f():\n    if TYPE_CHECKING:\n        import json\n", []),
        (f"def f():\n    {WHY}\n    if x:\n        import json\n", []),  # the block it opens
        (f"def f():\n    {WHY}\n    if x:\n        y = 1\n        import re\n", ["5: import re"]),
        (f"{WHY}\ndef f():\n    import json\n", ["3: import json"]),  # above the def: not it
        ("import json\nif TYPE_CHECKING:\n    import re\n", []),
        ("# Deferred imports: every one is for the slow path\ndef f():\n    import json\n", []),
    ],
)
def test_the_reason_check_finds_an_import_without_one(source: str, unexplained: list[str]) -> None:
    assert unexplained_imports(source, deferred_libraries()) == unexplained


def test_the_deferral_check_finds_an_import_the_module_has_loaded(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("_EXPORTS = {'Thing': 'sub.thing'}\n")
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "thing.py").write_text("import json\nThing = 1\n")
    (package / "sub" / "other.py").write_text("")
    (package / "user.py").write_text(
        "from . import Thing\n"  # the lazy table: loads pkg.sub.thing, and with it json
        "def f():\n"
        "    import json\n"
        "    from .sub.thing import Thing\n"
        "    from .sub import other\n"
        "    from . import Thing as Again\n"
        "    import re\n"
    )
    graph = TopImports(package)
    assert imports_deferring_nothing(graph, "pkg.user") == [
        "3: import json",
        "4: from .sub.thing import Thing",
        "6: from . import Thing as Again",
    ]
