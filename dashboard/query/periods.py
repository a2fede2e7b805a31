"""Usage periods over UTC days and hours as Ibis expressions: how much of each row's [period_start, period_end)
falls in each day, and the hour boundaries of its GPU load.

Times are whole seconds since 1970-01-01 (``epoch_seconds``): the engines agree to the second, and billing
exports are hourly or daily. A row with no duration (period_end missing or not after period_start) is one piece
on its start day or hour.
"""

from __future__ import annotations

import ibis
import ibis.expr.types as ir
import pandas as pd

from dashboard.query.columns import rows_where

SECONDS_PER_DAY = 86_400
SECONDS_PER_HOUR = 3_600


def as_utc(value: object) -> pd.Timestamp:
    """A timestamp as UTC; a naive one (Spark returns its session's time, which the engine sets to UTC) is UTC."""
    stamp = pd.Timestamp(value)
    return stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")


def start_end(usage: ir.Table) -> tuple[ir.IntegerValue, ir.IntegerValue]:
    """A row's start and end in seconds (the end is the start when missing or earlier)."""
    start = usage.period_start.epoch_seconds()
    return start, ibis.greatest(ibis.coalesce(usage.period_end.epoch_seconds(), start), start)


def _days(usage: ir.Table) -> tuple[ir.IntegerValue, ir.IntegerValue]:
    """The first and last UTC day (days since 1970-01-01) a row touches."""
    start, end = start_end(usage)
    first = start // SECONDS_PER_DAY
    return first, ibis.ifelse(end > start, (end - 1) // SECONDS_PER_DAY, first)


def _across_days(usage: ir.Table, first: ir.IntegerValue) -> ir.BooleanColumn:
    """Whether a row touches a day after its ``first``: the second before its end (the start when missing or
    earlier) falls after that day, in few operations."""
    start = usage.period_start.epoch_seconds()
    return ibis.coalesce(usage.period_end.epoch_seconds(), start) >= (first + 1) * SECONDS_PER_DAY + 1


def day_pieces(usage: ir.Table, **values: ir.Value) -> ir.Table:
    """One row per (usage row, UTC day it touches): ``day`` (days since 1970-01-01), ``fraction`` of the row's
    duration in that day (the fractions of a row sum to 1), and ``values`` (expressions over ``usage``) carried along.

    Every row gives the piece of its first day, in one pass without a filter; only the rows across days (few in a
    quarter of daily and hourly lines) are read again, with a cheap test on the stored times, to build the list of
    their later days to unnest. No subquery is used twice (DuckDB would materialise it whole)."""
    start, end = start_end(usage)
    first = start // SECONDS_PER_DAY
    firsts = usage.select(day=first, **values, fraction=ibis.ifelse(
        _across_days(usage, first), ((first + 1) * SECONDS_PER_DAY - start) / (end - start), 1.0))
    across = rows_where(usage, _across_days(usage, first))
    start, end = start_end(across)
    first, last = _days(across)
    later = across.select(start_s=start, end_s=end, day=ibis.range(first + 1, last + 1).unnest(), **values)
    overlap = (ibis.least(later.end_s, (later.day + 1) * SECONDS_PER_DAY)
               - ibis.greatest(later.start_s, later.day * SECONDS_PER_DAY))
    return ibis.union(firsts, later.select("day", *values, fraction=overlap / (later.end_s - later.start_s)),
                      distinct=False)


def week_start(day: ir.IntegerValue) -> ir.IntegerValue:
    """The Monday on or before ``day`` (days since 1970-01-01, a Thursday)."""
    return day - (day + 3) % 7
