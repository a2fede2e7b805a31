"""Layer rules from the table in docs/architecture.md: what each folder may import, and that the pure layers never
import streamlit (neither in their source nor when loaded)."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PURE_PACKAGES = [
    "dashboard/core", "dashboard/ingest", "dashboard/cli", "dashboard/query", "dashboard/retro", "dashboard/figures",
    "dashboard/store", "dashboard/report", "dashboard/workspace", "dashboard/validation",
]
PURE_MODULES = ["dashboard/format.py", "dashboard/safe_text.py", "dashboard/file_names.py", "dashboard/settings.py",
                "dashboard/identity.py"]

# The layer table of docs/architecture.md: folder -> (project layers it may import, third-party packages).
# format.py, safe_text.py, file_names.py, settings.py and identity.py import nothing of the project, and every layer may
# import them.
SHARED_LEAVES = {"format", "safe_text", "file_names", "settings", "identity"}
LAYERS: dict[str, tuple[set[str], set[str]]] = {
    "dashboard/core": ({"core"}, {"numpy", "pandas", "pydantic"}),
    "dashboard/validation": ({"validation", "core"}, {"numpy"}),
    "dashboard/ingest": ({"ingest"}, {"charset_normalizer", "numpy", "pandas", "pyarrow"}),
    "dashboard/query": ({"query", "ingest"}, {"ibis", "numpy", "pandas", "pyarrow", "pyspark"}),
    "dashboard/retro": ({"retro", "core", "ingest", "query"}, {"ibis", "numpy", "pandas"}),
    "dashboard/workspace": ({"workspace", "ingest", "query"}, {"ibis", "numpy", "pandas", "pyarrow", "sqlglot"}),
    "dashboard/figures": ({"figures", "core", "retro"}, {"numpy", "pandas", "plotly"}),
    "dashboard/store": ({"store", "core"}, {"sqlalchemy", "psycopg"}),
    "dashboard/report": ({"report", "core", "figures"}, {"markdown", "pandas", "plotly"}),
    "dashboard/format.py": (set(), set()),
    "dashboard/safe_text.py": (set(), set()),
    "dashboard/file_names.py": (set(), set()),
    "dashboard/settings.py": (set(), set()),
    "dashboard/identity.py": (set(), set()),
    "dashboard/cli": ({"cli", "core", "ingest", "query", "retro", "report", "workspace"}, {"pyarrow"}),
    "dashboard/ui": ({"ui", "core", "ingest", "query", "retro", "figures", "store", "report", "workspace",
                      "validation"},
                     {"numpy", "pandas", "plotly", "pyarrow", "streamlit", "starlette"}),
    "dashboard/app_pages": ({"ui", "core", "ingest", "store"}, {"pandas", "streamlit"}),
    "dashboard/app.py": ({"ui"}, {"streamlit"}),
}


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module.split(".")[0])
    return names


def _modules(path: Path) -> set[str]:
    """Absolute imports of a file as dotted names (``from dashboard import ingest`` gives dashboard.ingest)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "dashboard":
                names.update(f"dashboard.{alias.name}" for alias in node.names)
            else:
                names.add(node.module)
    return names


def _files(folder: str) -> list[Path]:
    path = ROOT / folder
    return sorted(path.rglob("*.py")) if path.is_dir() else [path]


def _offences(path: Path, layers: set[str], packages: set[str]) -> list[str]:
    """The imports of ``path`` that its folder's row of the table does not allow."""
    found = []
    for name in sorted(_modules(path)):
        top = name.split(".")[0]
        if top == "dashboard":
            layer = name.split(".")[1] if "." in name else "dashboard"
            if layer not in layers | SHARED_LEAVES:
                found.append(name)
        elif top not in sys.stdlib_module_names and top != "__future__" and top not in packages:
            found.append(name)
    return found


@pytest.mark.parametrize("folder", list(LAYERS))
def test_each_folder_imports_only_what_the_layer_table_allows(folder):
    layers, packages = LAYERS[folder]
    files = _files(folder)
    assert files, f"{folder} has no modules"
    offenders = {str(f.relative_to(ROOT)): bad for f in files if (bad := _offences(f, layers, packages))}
    assert offenders == {}


def test_the_table_covers_every_module():
    covered = {f for folder in LAYERS for f in _files(folder)}
    entry_points = {ROOT / "dashboard" / "__init__.py", ROOT / "dashboard" / "__main__.py"}
    assert set((ROOT / "dashboard").rglob("*.py")) - covered - entry_points == set()


def test_the_rule_sees_a_forbidden_import(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("import streamlit\nfrom dashboard.ui import cache\nfrom dashboard import format\nimport json\n")
    assert _offences(module, {"core"}, {"numpy"}) == ["dashboard.ui", "streamlit"]


@pytest.mark.parametrize("package", PURE_PACKAGES + PURE_MODULES)
def test_pure_packages_do_not_import_streamlit(package):
    files = _files(package)
    assert files, f"{package} has no modules"
    offenders = [str(f.relative_to(ROOT)) for f in files if "streamlit" in _imports(f)]
    assert offenders == []


def test_importing_the_pure_layers_loads_no_streamlit():
    code = ("import sys, dashboard.cli, dashboard.core.engine, dashboard.figures.plan_charts, dashboard.retro.gap,"
            " dashboard.figures.retro_gap, dashboard.figures.retro_usage; print('streamlit' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.stdout.strip() == "False", done.stderr


def _core_imports(path: Path) -> set[str]:
    """The core modules a core file imports, at module level or inside a function (a lazy import is still an edge);
    imports under ``if TYPE_CHECKING:`` load nothing and are left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {id(inner) for node in ast.walk(tree)
                   if isinstance(node, ast.If) and ast.unparse(node.test).endswith("TYPE_CHECKING")
                   for inner in ast.walk(node)}
    names = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    prefix = "dashboard.core."
    return {name.removeprefix(prefix).split(".")[0] for name in names if name.startswith(prefix)}


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import circle of ``graph`` (module → modules it imports), as a path back to its start; [] when acyclic."""
    state: dict[str, str] = {}
    path: list[str] = []

    def visit(name: str) -> list[str]:
        state[name] = "open"
        path.append(name)
        for imported in sorted(graph.get(name, set())):
            if state.get(imported) == "open":
                return path[path.index(imported):] + [imported]
            if imported not in state and (found := visit(imported)):
                return found
        state[name] = "done"
        path.pop()
        return []

    for name in sorted(graph):
        if name not in state and (found := visit(name)):
            return found
    return []


def test_core_has_no_import_circle():
    modules = {path.stem: path for path in (ROOT / "dashboard" / "core").glob("*.py")}
    graph = {name: _core_imports(path) & set(modules) - {name} for name, path in modules.items()}
    assert len(graph) > 30 and graph["engine"] >= {"feasibility", "memory_fixes"}  # the graph is really read
    assert _cycle(graph) == []


@pytest.mark.parametrize(("graph", "circle"), [
    ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
    ({"a": {"b"}, "b": {"a"}}, ["a", "b", "a"]),
    ({"a": {"b"}, "b": {"c"}, "c": {"b"}, "d": {"a"}}, ["b", "c", "b"]),
])
def test_the_circle_finder_sees_a_circle(graph, circle):
    assert _cycle(graph) == circle


def test_a_lazy_import_is_an_edge_and_a_typing_one_is_not(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from dashboard.core.scenario import S\n"
                      "def f():\n    from dashboard.core import engine\n    import dashboard.core.shape\n")
    assert _core_imports(module) == {"engine", "shape"}
