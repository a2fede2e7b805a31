"""AppTest: the Retrospective with a Spark master selected (PLANNER_ENGINE_URL=local[2]) but PySpark not installed
(simulated: ``sys.modules["pyspark"] = None``) stops with one error line saying how to add it, not a traceback."""

import sys

from shown_text import shown

from dashboard.query import engine


def test_the_retrospective_says_how_to_add_pyspark(app, monkeypatch):
    for name in [name for name in sys.modules if name == "pyspark" or name.startswith("pyspark.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "pyspark", None)
    monkeypatch.setenv("PLANNER_ENGINE_URL", "local[2]")
    at = app.run()
    at.switch_page("app_pages/retro.py")
    at.run()
    assert not at.exception
    assert [shown(error.value) for error in at.error] == [engine.SPARK_MISSING]
    assert engine.SPARK_MISSING.startswith("PySpark is not installed: run .venv/bin/pip install -r "
                                           "requirements-spark.txt (needs Java 17)")
