"""Which engine runs the queries: ``connect`` turns a connection string (``PLANNER_ENGINE_URL``) into an Ibis backend.

"duckdb" (the default) is DuckDB in memory and "duckdb:///path" a DuckDB file; "spark://host:port", "local[N]" and
"local[*]" start (lazily, once per process) a PySpark session with that master; any other URL
("bigquery://project/dataset", "snowflake://…", "trino://…") goes to ``ibis.connect`` unchanged. PySpark is optional
(``requirements-spark.txt`` installs it, ``make run`` does not): without it a Spark master is refused with
``SparkMissing``, one line saying how to add it. Only this module knows engines apart: the queries are the same
Ibis expressions on every backend. ``execute`` runs one expression and ``fetch_sql`` one SQL query under a
per-backend lock, since an embedded DuckDB connection must not be used by two threads at once.

A DuckDB connection holds at most ``PLANNER_DUCKDB_MEMORY_LIMIT`` (2GB by default) and spills larger aggregates to a
folder of its own under the system's temporary folder, without keeping rows in insertion order (every query
that needs an order says so), returns dropped tables' memory to the system from a background thread, and
compiles an instant's epoch seconds from the stored time-zone-aware timestamp itself (``DuckDBCompiler``).
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
import uuid
from functools import cache
from pathlib import Path

import ibis
import pandas as pd
import pyarrow as pa
from ibis.backends import BaseBackend
from ibis.backends.sql.compilers.duckdb import DuckDBCompiler as IbisDuckDBCompiler

from dashboard import settings

SPARK_CONFIG: dict[str, str] = {
    "spark.ui.enabled": "false",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.driver.host": "127.0.0.1",
    "spark.sql.shuffle.partitions": "2",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
}
_LOCKS: dict[int, threading.RLock] = {}
_LOCKS_GUARD = threading.Lock()
SPARK_MISSING = ("PySpark is not installed: run .venv/bin/pip install -r requirements-spark.txt (needs Java 17), "
                 f"or unset {settings.ENGINE_URL} to use DuckDB.")


class SparkMissing(settings.SettingError):
    """A Spark master is selected but PySpark is not installed (``make run`` does not install it)."""


def is_spark(url: str) -> bool:
    """Whether ``url`` names a Spark master (spark://host:port, local[N], local[*])."""
    return url.startswith(("spark://", "local["))


def require_pyspark() -> None:
    """Refuse with ``SparkMissing`` (``SPARK_MISSING``, one line) when PySpark cannot be imported."""
    try:
        import pyspark  # noqa: F401  (imported here only: the default engine never loads it)
    except ImportError:
        raise SparkMissing(SPARK_MISSING) from None


def spark_session(master: str, work_dir: str | None = None):
    """A PySpark session on ``master`` (the process's one session: Spark allows one per JVM), its warehouse and
    Derby metastore under ``work_dir`` (a fresh temporary folder by default, never the working directory), and
    its Python workers on this interpreter."""
    require_pyspark()
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    work_dir = work_dir or tempfile.mkdtemp(prefix="planner-spark-")
    builder = SparkSession.builder.master(master).appName("pretraining-planner")
    places = {"spark.sql.warehouse.dir": f"{work_dir}/warehouse",
              "spark.driver.extraJavaOptions": f"-Dderby.system.home={work_dir}/derby"}
    for key, value in (SPARK_CONFIG | places).items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


class DuckDBCompiler(IbisDuckDBCompiler):
    """Ibis's DuckDB SQL, but epoch seconds of a time-zone-aware timestamp (how a workspace dataset stores its
    times) taken from the instant itself: Ibis casts it to a plain timestamp first, a calendar conversion per row
    that makes the epoch about 12 times slower, for the same seconds (the connection's time zone is UTC)."""

    def visit_ExtractEpochSeconds(self, op, *, arg):
        if op.arg.dtype.timezone is not None:
            return self.f.epoch(arg)
        return super().visit_ExtractEpochSeconds(op, arg=arg)


def duckdb_settings() -> dict[str, str]:
    """What a new DuckDB connection of the planner is set to: its memory limit, a spill folder of its own (DuckDB
    creates it when it first spills and removes it when the connection closes), no insertion order to keep (which
    lets large aggregates and scans spill), and its allocator's background thread, which hands the memory of
    dropped tables back to the system (without it a server kept about 450 MB after ten 270,000-row uploads'
    sessions closed; bench/sessions_bench.py)."""
    spill = Path(tempfile.gettempdir()) / f"planner-duckdb-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    return {"memory_limit": settings.duckdb_memory_limit(), "temp_directory": str(spill),
            "preserve_insertion_order": "false", "allocator_background_threads": "true"}


def configure_duckdb(con) -> None:
    """Apply ``duckdb_settings`` to the DuckDB connection ``con``."""
    for name, value in duckdb_settings().items():
        con.execute(f"SET {name} = '{value}'")


def connect(url: str | None = None) -> BaseBackend:
    """A new Ibis backend for ``url`` (``settings.engine_url`` validates it; None reads ``PLANNER_ENGINE_URL``);
    ``SparkMissing`` for a Spark master without PySpark installed."""
    url = settings.engine_url(url)
    if is_spark(url):
        require_pyspark()
        return ibis.pyspark.connect(spark_session(url))
    backend = ibis.connect("duckdb://" if url == settings.DEFAULT_ENGINE_URL else url)
    if backend.name == "duckdb":
        configure_duckdb(backend.con)
        backend.compiler = DuckDBCompiler()
    return backend


@cache
def _shared(url: str) -> BaseBackend:
    return connect(url)


def default() -> BaseBackend:
    """The process's backend for ``PLANNER_ENGINE_URL``, created on first use and shared by every session."""
    return _shared(settings.engine_url())


def lock(backend: BaseBackend) -> threading.RLock:
    """The lock serialising ``backend``'s queries."""
    with _LOCKS_GUARD:
        return _LOCKS.setdefault(id(backend), threading.RLock())


def execute(expr: ibis.Expr) -> pd.DataFrame | pd.Series | object:
    """Run ``expr`` on the backend its tables are bound to, one query at a time per backend."""
    backend = ibis.get_backend(expr)
    with lock(backend):
        return backend.execute(expr)


def fetch_sql(backend: BaseBackend, sql: str) -> pa.Table:
    """The result of the SELECT ``sql`` (in ``backend``'s dialect) as Arrow; on DuckDB executed straight on its
    connection (a relation from ``con.sql`` is bound, then planned again when fetched: 1.3–1.9 ms more for the
    spend query on the bundled samples), elsewhere through ``backend.sql``."""
    with lock(backend):
        if backend.name == "duckdb":
            return backend.con.execute(sql).to_arrow_table()
        return backend.sql(sql).to_pyarrow()
