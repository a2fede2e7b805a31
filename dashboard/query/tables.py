"""The canonical usage table as an Ibis table: ``usage_table`` binds a pandas frame (what an import gives) to a
backend once, right after the import; from there on the Retrospective works on the table only (its filtered view,
join and amortisation are expressions over it, ``materialised`` when a derived table is read many times).

On DuckDB a frame is copied once into a temporary table, its rows sorted by team and start (``SORTED_BY``): a
filter on a team or a date range then skips whole row groups by their minimum and maximum, which a view over the
frame's Arrow copy cannot (DuckDB would push such a filter into the Arrow scan, where pyarrow evaluates it three
times slower than DuckDB's own). The copy takes about 0.65 s and 180 MB a million rows, about the frame's own size;
a filter change on a 1M-row upload then runs 1.5 times faster (docs/engines.md). Other engines read a view
over an Ibis in-memory table (an Arrow table made from the frame). Either is dropped once no expression over it
is left: Ibis itself keeps in-memory tables until the process exits, which a server that imports all day cannot
afford. Times are handed over as naive UTC timestamps (``naive_utc``); the queries read any timestamp as UTC.
"""

from __future__ import annotations

import contextlib
import uuid
import weakref

import ibis
import ibis.expr.operations as ops
import ibis.expr.types as ir
import pandas as pd
import pyarrow as pa
from ibis.backends import BaseBackend

from dashboard.ingest.schema import CANONICAL_COLUMNS
from dashboard.query import engine

TIME_COLUMNS: tuple[str, ...] = ("period_start", "period_end")
SORTED_BY: tuple[str, ...] = ("team", "period_start")  # the order of a frame's rows in its DuckDB table
FRAME_VIEWS: set[str] = set()  # names of the live tables and views of pandas frames, whose rows never change


def naive_utc(times: pd.Series) -> pd.Series:
    """UTC timestamps without their time zone: engines read them as plain timestamps (Spark's own kind), which
    DuckDB turns into seconds some 50 times faster than a time-zone-aware one (that goes through a calendar)."""
    return times.dt.tz_convert("UTC").dt.tz_localize(None) if times.dt.tz is not None else times


def _drop(backend: BaseBackend, name: str, memtable: ir.Table) -> None:
    """Drop the view ``name`` and ``memtable``'s registration (which Ibis otherwise keeps until exit)."""
    FRAME_VIEWS.discard(name)
    with engine.lock(backend), contextlib.suppress(Exception):
        backend.drop_view(name, force=True)
        backend._memtables.discard(memtable.op())
        backend.drop_view(memtable.op().name, force=True)


def _drop_table(backend: BaseBackend, name: str) -> None:
    """Drop the temporary table ``name`` of a frame."""
    FRAME_VIEWS.discard(name)
    with engine.lock(backend), contextlib.suppress(Exception):
        backend.con.execute(f'DROP TABLE IF EXISTS "{name}"')


def _temp_table(backend: BaseBackend, name: str, schema: ibis.Schema) -> ir.Table:
    """The Ibis table of the DuckDB temporary table ``name`` just made, of the known ``schema`` (no DESCRIBE
    query), dropped when no expression over it is left."""
    table = ops.DatabaseTable(name, schema=schema, source=backend, namespace=ops.Namespace()).to_expr()
    weakref.finalize(table.op(), _drop_table, backend, name)
    return table


def _duckdb_table(backend: BaseBackend, name: str, rows: pa.Table) -> ir.Table:
    """``rows`` copied into the DuckDB temporary table ``name``, sorted by the ``SORTED_BY`` columns it has
    (staged as an Arrow scan for the copy only)."""
    staged = f"{name}_arrow"
    order = ", ".join(f'"{column}"' for column in SORTED_BY if column in rows.column_names)
    with engine.lock(backend):
        backend.con.register(staged, rows)
        try:
            backend.con.execute(f'CREATE TEMP TABLE "{name}" AS SELECT * FROM "{staged}"'
                                + (f" ORDER BY {order}" if order else ""))
        finally:
            backend.con.unregister(staged)
    return _temp_table(backend, name, ibis.Schema.from_pyarrow(rows.schema))


def usage_table(backend: BaseBackend, frame_or_source: pd.DataFrame | ir.Table) -> ir.Table:
    """``frame_or_source`` as a table bound to ``backend``: a pandas canonical usage frame becomes a DuckDB
    temporary table sorted by team and start, or on other engines a view over its Arrow copy (either dropped when
    no expression over it is left); an Ibis table is returned as it is."""
    if isinstance(frame_or_source, ir.Table):
        return frame_or_source
    frame = frame_or_source[[column for column in CANONICAL_COLUMNS if column in frame_or_source]].assign(**{
        column: naive_utc(frame_or_source[column]) for column in TIME_COLUMNS if column in frame_or_source})
    name = f"usage_{uuid.uuid4().hex}"
    # Arrow straight from pandas: its Arrow-backed text columns are shared, not copied (Ibis' own conversion of
    # a frame took 46 ms for 900k rows, this 15 ms)
    arrow = pa.Table.from_pandas(frame, preserve_index=False)
    if backend.name == "duckdb":
        table = _duckdb_table(backend, name, arrow)
    else:
        memtable = ibis.memtable(arrow)
        with engine.lock(backend):
            table = backend.create_view(name, memtable, overwrite=True)
        weakref.finalize(table.op(), _drop, backend, name, memtable)
    FRAME_VIEWS.add(name)
    return table


def materialised(table: ir.Table) -> ir.Table:
    """``table`` (an expression over tables whose rows never change, such as the join of two imports) computed once
    into a temporary table of its engine (Ibis's ``cache``), dropped when no expression over it is left; its small
    results are kept like a frame's. Made and dropped under the engine's lock: its connection is every session's,
    and Ibis's own cache drops its table from whichever thread collects it, cutting across another's query."""
    backend = ibis.get_backend(table)
    if backend.name != "duckdb":
        with engine.lock(backend):
            stored = table.cache()
        FRAME_VIEWS.update(source.name for source in stored.op().find(ops.DatabaseTable))
        return stored
    name = f"usage_{uuid.uuid4().hex}"
    with engine.lock(backend):
        backend.create_table(name, table, temp=True)
    FRAME_VIEWS.add(name)
    return _temp_table(backend, name, table.schema())


def table_of(usage: pd.DataFrame | ir.Table, backend: BaseBackend | None = None) -> ir.Table:
    """``usage`` itself when it is a table; a frame (the CLI's, a test's) bound anew with ``usage_table`` on
    ``backend`` (the process's default engine when None)."""
    if isinstance(usage, ir.Table):
        return usage
    return usage_table(backend or engine.default(), usage)
