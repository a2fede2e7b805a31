"""A workspace dataset the Retrospective queries where it lies, for the page code (which loads no engine itself):
telling such a table from rows in memory, opening it with its small results kept, and its first rows in batches.

DuckDB's memory bound and spill folder are the engine's (``engine.duckdb_settings``, ``PLANNER_DUCKDB_MEMORY_LIMIT``).
"""

from __future__ import annotations

from collections.abc import Iterator

import ibis
import ibis.expr.operations as ops
import ibis.expr.types as ir
import pandas as pd

from dashboard.query import engine, tables

Table = ir.Table  # the type of a queried usage table, for the page code's signatures


def is_table(usage: object) -> bool:
    """Whether ``usage`` is a table of an engine (queried where it lies), not rows in memory."""
    return isinstance(usage, ir.Table)


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
