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


def _within_one_day(usage: ir.Table) -> ir.BooleanColumn:
    """Whether a row's first and last day (``_days``) are the same, in few operations: it has no duration, or the
    second before its end falls on its start day."""
    start = usage.period_start.epoch_seconds()
    end = ibis.coalesce(usage.period_end.epoch_seconds(), start)
    return (end <= start) | ((end - 1) // SECONDS_PER_DAY == start // SECONDS_PER_DAY)


def day_pieces(usage: ir.Table, **values: ir.Value) -> ir.Table:
    """One row per (usage row, UTC day it touches): ``day`` (days since 1970-01-01), ``fraction`` of the row's
    duration in that day (the fractions of a row sum to 1), and ``values`` (expressions over ``usage``) carried along.

    The rows within one day (most of a quarter of daily and hourly lines) are one piece each; only the others
    build a list of their days to unnest. The two kinds are filtered from ``usage`` separately, each with a cheap
    test on the stored times: a subquery used twice would be materialised whole by DuckDB."""
    within = usage.filter(_within_one_day(usage))
    within = within.select(day=within.period_start.epoch_seconds() // SECONDS_PER_DAY, **values,
                           fraction=ibis.literal(1.0))
    across = usage.filter(~_within_one_day(usage))
    start, end = start_end(across)
    first, last = _days(across)
    pieces = across.select(start_s=start, end_s=end, day=ibis.range(first, last + 1).unnest(), **values)
    overlap = (ibis.least(pieces.end_s, (pieces.day + 1) * SECONDS_PER_DAY)
               - ibis.greatest(pieces.start_s, pieces.day * SECONDS_PER_DAY))
    return ibis.union(within, pieces.select("day", *values, fraction=overlap / (pieces.end_s - pieces.start_s)),
                      distinct=False)


def week_start(day: ir.IntegerValue) -> ir.IntegerValue:
    """The Monday on or before ``day`` (days since 1970-01-01, a Thursday)."""
    return day - (day + 3) % 7
