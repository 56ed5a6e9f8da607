"""The seams the code relies on: no import cycles hidden in functions, a sweep spec free of its adapters,
thin pages, and no streamlit in the engine.

The cycle rule. Every ``import`` of an engine module, at module level or inside
a function, is an edge of the import graph; importing ``a.b.c`` also runs the
``__init__`` of ``a`` and ``a.b`` unless the importing module lives inside them
(then they are already being initialised). An import inside a function is
allowed when its target does not lead back to the importing module: then it
only defers loading (e.g. a sweep worker imports just the tool it runs, an
optional dependency such as dask is loaded on use). When the target does lead
back, the function-level import is hiding a cycle, and the test fails.
Imports of modules outside ``engine`` are never edges.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ENGINE = ROOT / "engine"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in ENGINE.rglob("*.py")}


def is_package(name: str) -> bool:
    return MODULES.get(name, Path()).name == "__init__.py"


def imported_modules(node: ast.AST, importer: str) -> list[str]:
    """Engine modules an import statement names (``from a import b`` is ``a.b`` when that is a module)."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        package = importer if is_package(importer) else importer.rpartition(".")[0]
        base = node.module or ""
        if node.level:
            anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
            base = ".".join(anchor + ([node.module] if node.module else []))
        names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base for alias in node.names]
    return [name for name in names if name in MODULES]


def edges_of(target: str, importer: str) -> set[str]:
    """The modules an import of ``target`` runs: itself and the packages above it that are not the importer's."""
    parts = target.split(".")
    out = {target}
    for i in range(1, len(parts)):
        package = ".".join(parts[:i])
        if package in MODULES and not importer.startswith(package + "."):
            out.add(package)
    return out


def import_graph() -> tuple[dict[str, set[str]], list[tuple[str, int, str]]]:
    """All edges, and every function-level import as (importer, line, target)."""
    graph: dict[str, set[str]] = {name: set() for name in MODULES}
    deferred: list[tuple[str, int, str]] = []
    for name, path in MODULES.items():

        def walk(node: ast.AST, in_function: bool, name=name) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.Import, ast.ImportFrom)):
                    for target in imported_modules(child, name):
                        graph[name] |= edges_of(target, name) - {name}
                        if in_function and target != name:
                            deferred.append((name, child.lineno, target))
                else:
                    walk(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                   ast.Lambda)))

        walk(ast.parse(path.read_text(), filename=str(path)), False)
    return graph, deferred


def reaches(graph: dict[str, set[str]], start: str, goal: str) -> bool:
    seen, stack = set(), [start]
    while stack:
        current = stack.pop()
        if current == goal:
            return True
        if current not in seen:
            seen.add(current)
            stack.extend(graph.get(current, ()))
    return False


def test_no_function_level_import_hides_an_import_cycle():
    graph, deferred = import_graph()
    assert deferred, "the walk found no function-level import at all: it is not reading the modules"
    hiding = [f"{importer}:{line} imports {target}, which imports {importer} back"
              for importer, line, target in deferred
              if any(reaches(graph, edge, importer) for edge in edges_of(target, importer))]
    assert not hiding, "\n".join(hiding)


def test_the_cycle_check_catches_a_cycle_hidden_in_a_function():
    # The rule itself, on the case the issue names: spec and adapters importing each other inside functions.
    graph = {"engine.sweep.spec": {"engine.sweep.adapters"}, "engine.sweep.adapters": {"engine.sweep.spec"}}
    assert reaches(graph, "engine.sweep.adapters", "engine.sweep.spec")
    graph, _ = import_graph()
    assert not reaches(graph, "engine.sweep.spec", "engine.sweep.adapters")


def test_sweep_spec_imports_with_the_adapters_blocked():
    script = (
        "import importlib.abc, sys\n"
        "class Block(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path, target=None):\n"
        "        if name == 'engine.sweep.adapters':\n"
        "            raise ImportError('engine.sweep.adapters is blocked')\n"
        "sys.meta_path.insert(0, Block())\n"
        "import engine.sweep.spec as spec\n"
        "s = spec.SweepSpec('toy', axes=(('x', (1.0, 2.0)),))\n"
        "assert 'engine.sweep.adapters' not in sys.modules\n"
        "try:\n"
        "    import engine.sweep.adapters\n"
        "except ImportError:\n"
        "    print('blocked', s.varied)\n")
    proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "blocked ['x']"


def test_engine_never_imports_streamlit():
    def roots(path: Path) -> set[str]:
        out = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                out |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and not node.level:
                out.add((node.module or "").split(".")[0])
        return out

    assert not [name for name, path in MODULES.items() if "streamlit" in roots(path)]


@pytest.mark.parametrize("page", sorted((ROOT / "pages").glob("*.py")), ids=lambda p: p.name)
def test_pages_are_thin(page):
    lines = len(page.read_text().splitlines())
    limit = 250 if page.name == "1_Federated_BO.py" else 300
    assert lines < limit, f"{page.name} has {lines} lines (limit {limit})"



def test_every_engine_and_ui_module_holds_one_job_in_at_most_400_lines():
    files = sorted([*ROOT.joinpath("engine").rglob("*.py"), *ROOT.joinpath("ui").rglob("*.py")])
    assert len(files) > 100
    long = {str(f.relative_to(ROOT)): n for f in files if (n := len(f.read_text().splitlines())) > 400}
    assert not long, f"split these by job: {long}"
