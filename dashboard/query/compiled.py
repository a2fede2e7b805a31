"""Queries built and compiled once per shape: a figure function decorated with ``query`` builds its expressions
over a stand-in table of the usage table's schema (a builder decorated with ``built`` once per arguments),
``execute`` compiles each one to SQL once (kept by expression, so the next upload, filter or rerun with the same
arguments reuses it) and runs it with the stand-in replaced by the actual table or filtered view (its own SQL,
compiled once per view). A small result over a pandas frame's view (whose
rows never change) is kept while the view lives, so a figure asked for twice (the purchase mix's tiers by its chart
and by the cost at another mix, the unit sums by the tiles and the Unit costs tab) runs once; inside ``one_view``
small results are kept on any table (a workspace dataset's too) until the block ends, so the figures of one view
of a tab that share a query (the waste checks' aggregates) read the rows once.

Compiling an Ibis expression costs 5–30 ms, about half of each tab's time on a few hundred rows; the SQL text of a
query over the stand-in names no data, so the cache is bounded by count alone. Results come back as Arrow and are
converted to pandas (they are the small aggregates the charts need). An expression built outside a ``query``
function runs as it is (``engine.execute``).
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
import uuid
import weakref
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, lru_cache, wraps
from typing import Concatenate, ParamSpec, TypeVar

import ibis
import ibis.expr.operations as ops
import ibis.expr.types as ir
import pandas as pd
import pyarrow as pa
from ibis.backends import BaseBackend

from dashboard.query import engine, tables

STAND_IN = f"planner_usage_{uuid.uuid4().hex[:8]}"
COMPILED_QUERIES = 512  # distinct (engine, expression) shapes kept
KEPT_RESULT_ROWS = 10_000  # results up to this many rows are kept per frame view
KEPT_RESULTS = 64  # results kept per frame view
_P = ParamSpec("_P")
_R = TypeVar("_R")


@dataclass(frozen=True)
class _Source:
    backend: BaseBackend
    sql: str  # the usage table's own SELECT
    results: OrderedDict | None  # kept results by SQL, when the rows behind the table never change


_SOURCE: contextvars.ContextVar[_Source | None] = contextvars.ContextVar("planner_query_source", default=None)
_VIEW: contextvars.ContextVar[OrderedDict | None] = contextvars.ContextVar("planner_query_view", default=None)
_SOURCE_SQL: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_RESULTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_COMPILED: OrderedDict[tuple, str] = OrderedDict()
_GUARD = threading.Lock()


@cache
def _stand_in(schema: ibis.Schema) -> ir.Table:
    return ibis.table(schema, name=STAND_IN)


def _source(usage: ir.Table) -> _Source:
    """``usage``'s backend, SELECT (compiled once per table or view expression, kept while it lives) and kept
    results (for tables over pandas frames only: another table's rows may change between queries)."""
    backend = ibis.get_backend(usage)
    op = usage.op()
    with _GUARD:
        sql = _SOURCE_SQL.get(op)
        results = _RESULTS.get(op)
    if sql is None:
        with engine.lock(backend):
            sql = str(backend.compile(usage))
        fixed = all(table.name in tables.FRAME_VIEWS for table in op.find(ops.DatabaseTable))
        with _GUARD:
            _SOURCE_SQL[op] = sql
            if fixed:
                results = _RESULTS.setdefault(op, OrderedDict())
    return _Source(backend, sql, results)


def query(function: Callable[Concatenate[ir.Table, _P], _R]) -> Callable[Concatenate[ir.Table, _P], _R]:
    """``function(usage, ...)`` run over the stand-in of ``usage``'s schema, its ``execute`` calls on ``usage``.
    Nested calls (a query function calling another) keep the outer call's table."""
    @wraps(function)
    def over_source(usage: ir.Table, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        if _SOURCE.get() is not None:
            return function(usage, *args, **kwargs)
        token = _SOURCE.set(_source(usage))
        try:
            return function(_stand_in(usage.schema()), *args, **kwargs)
        finally:
            _SOURCE.reset(token)

    return over_source


def _sql(backend: BaseBackend, expr: ir.Expr) -> str:
    """``expr``'s SQL on ``backend``'s dialect, the stand-in's name left in it (compiled once per shape)."""
    key = (backend.name, expr.op())
    with _GUARD:
        sql = _COMPILED.get(key)
        if sql is not None:
            _COMPILED.move_to_end(key)
            return sql
    with engine.lock(backend):
        sql = str(backend.compile(expr))
    with _GUARD:
        _COMPILED[key] = sql
        while len(_COMPILED) > COMPILED_QUERIES:
            _COMPILED.popitem(last=False)
    return sql


@cache
def _quoted_stand_in(backend: BaseBackend) -> str:
    """The stand-in's name as the engine's SQL quotes it."""
    sql = str(backend.compile(ibis.table({"x": "int64"}, name=STAND_IN)))
    at = sql.index(STAND_IN)
    return sql[at - 1: at + len(STAND_IN) + 1]


def execute(expr: ir.Table) -> pd.DataFrame:
    """Run the table expression ``expr`` (every query's result is a table): inside a ``query`` function, its cached
    SQL on the call's table, the Arrow result as ``backend.execute`` gives it; otherwise as it is."""
    source = _SOURCE.get()
    if source is None:
        return engine.execute(expr)
    backend = source.backend
    text = _sql(backend, expr).replace(_quoted_stand_in(backend), f"({source.sql})")
    return _fetch(source, text).to_pandas()


def table_result(expr: ir.Expr) -> pd.DataFrame:
    """The result of the table expression ``expr`` as the frame it is (`execute`: inside a ``query`` function, its
    cached SQL), refused when the expression gives anything else."""
    result = execute(expr)
    if not isinstance(result, pd.DataFrame):
        raise TypeError(f"a table expression gave {type(result).__name__}, not a frame")
    return result


@contextlib.contextmanager
def one_view():
    """Keep the small results of the queries run inside (on this thread) until the block ends, whatever their
    table: the figures of one view of a tab are drawn from one reading of the rows. Nested blocks share the outer."""
    if _VIEW.get() is not None:
        yield
        return
    token = _VIEW.set(OrderedDict())
    try:
        yield
    finally:
        _VIEW.reset(token)


def _fetch(source: _Source, text: str) -> pa.Table:
    """The Arrow result of ``text``, kept by the source when small and its rows never change (or inside
    ``one_view``)."""
    results = source.results if source.results is not None else _VIEW.get()
    if results is None:
        return engine.fetch_sql(source.backend, text)
    with _GUARD:
        table = results.get(text)
    if table is None:
        table = engine.fetch_sql(source.backend, text)
        if table.num_rows <= KEPT_RESULT_ROWS:
            with _GUARD:
                results[text] = table
                while len(results) > KEPT_RESULTS:
                    results.popitem(last=False)
    return table


def built(builder: Callable[_P, _R]) -> Callable[_P, _R]:
    """``builder`` (a function of the stand-in and hashable arguments that returns an expression) built once per
    arguments: an Ibis expression takes as long to build as to compile."""
    # typeshed's `_lru_cache_wrapper` keeps the return type only (its arguments are `Hashable`), not the parameters
    return lru_cache(maxsize=COMPILED_QUERIES)(builder)  # type: ignore[return-value]
