"""The engines every query test runs on: DuckDB in memory and PySpark in local mode (one session for the run).

Spark needs a JVM: without `java` on the path the Spark cases are skipped with a banner saying so (`make test`
installs Debian's OpenJDK first, see the Makefile's `openjdk` prerequisite). PySpark itself is optional
(requirements-spark.txt, which `make test` installs with requirements-dev.txt): without it they are skipped too.
"""

import importlib.util
import shutil
import warnings

import ibis
import pytest

from dashboard.query import engine

ENGINES = ("duckdb", "spark")
JAVA_MISSING = ("!!! java is not on the path: the query layer's Spark cases are SKIPPED. Install a JVM "
                "(apt-get install openjdk-17-jre-headless) or run `make test` as root.")
PYSPARK_MISSING = ("!!! PySpark is not installed: the query layer's Spark cases are SKIPPED. Install it with "
                   ".venv/bin/pip install -r requirements-spark.txt (`make test` does).")


@pytest.fixture(scope="session")
def spark_backend(tmp_path_factory):
    if importlib.util.find_spec("pyspark") is None:
        warnings.warn(PYSPARK_MISSING, stacklevel=1)
        pytest.skip(PYSPARK_MISSING)
    if shutil.which("java") is None:
        warnings.warn(JAVA_MISSING, stacklevel=1)
        pytest.skip(JAVA_MISSING)
    session = engine.spark_session("local[1]", str(tmp_path_factory.mktemp("spark")))
    session.conf.set("spark.sql.shuffle.partitions", "1")
    session.sparkContext.setLogLevel("ERROR")
    yield ibis.pyspark.connect(session)
    session.stop()


@pytest.fixture(scope="session")
def duckdb_backend():
    return engine.connect("duckdb")


@pytest.fixture(params=ENGINES)
def backend(request):
    """Each engine in turn."""
    return request.getfixturevalue(f"{request.param}_backend")
