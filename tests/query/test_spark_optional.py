"""PySpark is optional (requirements-spark.txt; `make run` does not install it): selecting a Spark master without it
is refused in one line saying how to add it, the default engine never imports it, and the warm-up says so in one
line. The missing package is simulated with ``sys.modules["pyspark"] = None``, which makes its import fail."""

import logging
import subprocess
import sys
from pathlib import Path

import pytest

from dashboard import settings
from dashboard.query import engine
from dashboard.retro import warm

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def no_pyspark(monkeypatch):
    for name in [name for name in sys.modules if name == "pyspark" or name.startswith("pyspark.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "pyspark", None)


@pytest.mark.parametrize("url", ["local[2]", "local[*]", "spark://spark-master.example.com:7077"])
def test_a_spark_master_without_pyspark_is_one_line_saying_how_to_add_it(no_pyspark, url):
    with pytest.raises(engine.SparkMissing) as refused:
        engine.connect(url)
    message = str(refused.value)
    assert message == engine.SPARK_MISSING
    assert "\n" not in message
    assert message.startswith("PySpark is not installed: run .venv/bin/pip install -r requirements-spark.txt")
    assert "Java 17" in message
    assert isinstance(refused.value, settings.SettingError)  # the pages and the CLI show a setting's message as is


def test_the_setting_reaches_the_same_message(no_pyspark, monkeypatch):
    monkeypatch.setenv(settings.ENGINE_URL, "local[2]")
    with pytest.raises(engine.SparkMissing, match="requirements-spark.txt"):
        engine.connect()


def test_duckdb_needs_no_pyspark(no_pyspark):
    backend = engine.connect("duckdb")
    assert backend.name == "duckdb"
    assert engine.fetch_sql(backend, "SELECT 1 AS one").to_pydict() == {"one": [1]}


def test_the_warm_up_says_it_in_one_line(no_pyspark, monkeypatch, caplog):
    monkeypatch.setenv(settings.ENGINE_URL, "local[2]")
    with caplog.at_level(logging.WARNING):
        warm.warm_up()
    assert [record.getMessage() for record in caplog.records] == [
        f"the query layer's warm-up was skipped: {engine.SPARK_MISSING}"]
    assert not any(record.exc_info for record in caplog.records)


def test_the_default_path_never_imports_pyspark():
    """The app's modules, the default engine, a query and the warm-up, in a fresh interpreter: no pyspark."""
    script = ("import sys; from dashboard.query import engine; from dashboard.retro import warm; "
              "import dashboard.ui.retro_cache, dashboard.ui.warm, dashboard.ui.workspace_view; "
              "engine.fetch_sql(engine.default(), 'SELECT 1'); warm.warm_up(); "
              "loaded = sorted(n for n in sys.modules if n.split('.')[0] in ('pyspark', 'py4j')); "
              "assert not loaded, loaded")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "PLANNER_WARM_UP": "0"})
    assert done.returncode == 0, done.stderr


def test_the_cli_needs_no_pyspark_with_spark_selected(no_pyspark, monkeypatch, capsys):
    """No subcommand opens the query engine (they read files with pandas and Arrow); were one to, ``SparkMissing``
    is a ValueError, which every subcommand prints as one line."""
    from dashboard.cli import main

    monkeypatch.setenv(settings.ENGINE_URL, "local[2]")
    assert main(["ingest", str(warm.SAMPLE), "--json"]) == 0
    assert '"rows_read"' in capsys.readouterr().out
    assert issubclass(engine.SparkMissing, ValueError)
