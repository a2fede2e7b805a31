"""A workspace dataset the Retrospective queries where it lies, for the page code (which loads no engine itself):
telling such a table from rows in memory, opening it with its small results kept, and its first rows in batches.

``bound_memory`` is engine-specific (DuckDB's memory limit and spill folder) and belongs in ``engine`` once that
module has a setting for it.
"""

from __future__ import annotations

import os
import tempfile
import threading
import weakref
from collections.abc import Iterator

import ibis
import ibis.expr.operations as ops
import ibis.expr.types as ir
import pandas as pd
from ibis.backends import BaseBackend

from dashboard.query import engine, tables

Table = ir.Table  # the type of a queried usage table, for the page code's signatures
# DuckDB's own bound is 80 % of the machine's memory: the 100,000,000-row dataset's Spend query grew the server past
# 7 GB with it, and stays near 3.3 GB with this one (it spills to a temporary folder, never the working directory).
DUCKDB_MEMORY_LIMIT = "3GB"
DUCKDB_MEMORY_SETTING = "PLANNER_DUCKDB_MEMORY_LIMIT"  # when an operator sets it, the engine's bound is left alone
_SPILL_FOLDERS: list[tempfile.TemporaryDirectory] = []
# The backends bounded, by id: backends of equal connection strings compare equal, so they are told apart by id, and
# an entry goes with its backend (so a later backend at the same address is bounded in its turn).
_BOUNDED: weakref.WeakValueDictionary[int, BaseBackend] = weakref.WeakValueDictionary()
_BOUNDED_GUARD = threading.Lock()


def is_table(usage: object) -> bool:
    """Whether ``usage`` is a table of an engine (queried where it lies), not rows in memory."""
    return isinstance(usage, ir.Table)


def bound_memory(backend: BaseBackend) -> BaseBackend:
    """``backend``, on DuckDB with its memory bounded by ``DUCKDB_MEMORY_LIMIT`` and spilling to a temporary folder
    (set once per process), unless ``PLANNER_DUCKDB_MEMORY_LIMIT`` is set (the engine's own setting then rules)."""
    if backend.name != "duckdb" or os.environ.get(DUCKDB_MEMORY_SETTING, "").strip():
        return backend
    with _BOUNDED_GUARD:
        if _BOUNDED.get(id(backend)) is backend:
            return backend
        _BOUNDED[id(backend)] = backend
        spill = tempfile.TemporaryDirectory(prefix="planner-duckdb-")  # removed when the process exits
        _SPILL_FOLDERS.append(spill)
        with engine.lock(backend):
            backend.con.execute(f"SET memory_limit = '{DUCKDB_MEMORY_LIMIT}'")
            backend.con.execute(f"SET temp_directory = '{spill.name}'")
    return backend


def fixed(table: ir.Table) -> ir.Table:
    """``table``, whose rows do not change while it is open (a new import is opened as a new table): the query layer
    keeps its small results as it does a pandas frame's (``tables.FRAME_VIEWS``)."""
    tables.FRAME_VIEWS.update(source.name for source in table.op().find(ops.DatabaseTable))
    return table


def first_rows(table: ir.Table, rows: int, batch_rows: int) -> Iterator[pd.DataFrame]:
    """The first ``rows`` rows of ``table`` as frames of at most ``batch_rows`` rows, streamed from the engine."""
    backend = ibis.get_backend(table)
    with engine.lock(backend):
        for batch in backend.to_pyarrow_batches(table.limit(rows), chunk_size=batch_rows):
            yield batch.to_pandas()
