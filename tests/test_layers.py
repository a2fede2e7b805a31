"""Layer rules from the README: the engine, the import layer and the figure builders never import streamlit."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PURE_PACKAGES = [
    "dashboard/core", "dashboard/ingest", "dashboard/cli", "dashboard/retro", "dashboard/figures", "dashboard/store",
    "dashboard/report",
]
PURE_MODULES = ["dashboard/format.py", "dashboard/safe_text.py", "dashboard/settings.py"]


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("package", PURE_PACKAGES + PURE_MODULES)
def test_pure_packages_do_not_import_streamlit(package):
    files = sorted((ROOT / package).rglob("*.py")) if (ROOT / package).is_dir() else [ROOT / package]
    assert files, f"{package} has no modules"
    offenders = [str(f.relative_to(ROOT)) for f in files if "streamlit" in _imports(f)]
    assert offenders == []


def test_importing_the_pure_layers_loads_no_streamlit():
    code = ("import sys, dashboard.cli, dashboard.core.engine, dashboard.figures.plan_charts, dashboard.retro.gap,"
            " dashboard.figures.retro_gap, dashboard.figures.retro_usage; print('streamlit' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.stdout.strip() == "False", done.stderr
