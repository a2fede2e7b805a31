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


def seconds(usage: ir.Table) -> ir.Table:
    """``usage`` with ``start_s`` and ``end_s`` (whole seconds; end_s is start_s when missing or earlier)."""
    start = usage.period_start.epoch_seconds()
    return usage.mutate(start_s=start, end_s=ibis.greatest(ibis.coalesce(usage.period_end.epoch_seconds(), start),
                                                           start))


def day_pieces(usage: ir.Table, **values: ir.Value) -> ir.Table:
    """One row per (usage row, UTC day it touches): ``day`` (days since 1970-01-01), ``fraction`` of the row's
    duration in that day (the fractions of a row sum to 1), and ``values`` (expressions over ``usage``) carried along.
    Rows are repeated once per day they touch, so a quarter of daily and hourly lines costs about one piece a row."""
    timed = seconds(usage.select("period_start", "period_end", **values))  # only what the pieces need
    timed = timed.mutate(first=timed.start_s // SECONDS_PER_DAY, last=ibis.ifelse(
        timed.end_s > timed.start_s, (timed.end_s - 1) // SECONDS_PER_DAY, timed.start_s // SECONDS_PER_DAY))
    within = timed.filter(timed["first"] == timed["last"])  # most rows: no list to build and unnest
    across = timed.filter(timed["first"] != timed["last"])
    pieces = across.mutate(day=ibis.range(across["first"], across["last"] + 1).unnest())
    overlap = (ibis.least(pieces.end_s, (pieces.day + 1) * SECONDS_PER_DAY)
               - ibis.greatest(pieces.start_s, pieces.day * SECONDS_PER_DAY))
    return ibis.union(
        within.select(within["first"].name("day"), *values, fraction=ibis.literal(1.0)),
        pieces.select("day", *values, fraction=overlap / (pieces.end_s - pieces.start_s)),
        distinct=False,
    )


def week_start(day: ir.IntegerValue) -> ir.IntegerValue:
    """The Monday on or before ``day`` (days since 1970-01-01, a Thursday)."""
    return day - (day + 3) % 7
