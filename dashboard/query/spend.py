"""Spend over time as queries: cost and GPU-hours per UTC day or week and group, the daily total, and the last
instant the data cover (the time rule is ``dashboard.retro.spend``'s: each row spread over its days by time)."""

from __future__ import annotations

import ibis.expr.types as ir
import numpy as np
import pandas as pd

from dashboard.query.columns import label, number
from dashboard.query.compiled import built, execute, query
from dashboard.query.periods import SECONDS_PER_DAY, as_utc, day_pieces, week_start

METRICS: tuple[str, ...] = ("gpu_hours", "cost")


def days_to_timestamps(days) -> pd.DatetimeIndex:
    """Days since 1970-01-01 as midnight-UTC timestamps."""
    return pd.to_datetime(np.asarray(days, dtype=np.int64) * SECONDS_PER_DAY, unit="s", utc=True).as_unit("ns")


def _sums(pieces: ir.Table) -> dict[str, ir.Scalar]:
    """Each metric's time-weighted sum and whether any of its rows is NULL (pandas' sum is then NaN)."""
    sums = {metric: (pieces[metric] * pieces.fraction).sum() for metric in METRICS}
    return sums | {f"{metric}_null": pieces[metric].isnull().any() for metric in METRICS}


def _with_nan(frame: pd.DataFrame) -> pd.DataFrame:
    for metric in METRICS:
        frame[metric] = frame[metric].astype(float).where(~frame.pop(f"{metric}_null").astype(bool))
    return frame


@built
def _spend_expr(usage: ir.Table, freq: str, by: str) -> ir.Table:
    pieces = day_pieces(usage, group=label(usage, by), gpu_hours=usage.gpu_hours, cost=usage.cost)
    period = week_start(pieces.day) if freq == "W" else pieces.day
    return pieces.group_by(period=period, group=pieces.group).agg(**_sums(pieces))


@query
def spend_over_time(usage: ir.Table, freq: str, by: str) -> pd.DataFrame:
    """Columns ``period`` (UTC midnight of the day or Monday), ``group`` (labelled), ``gpu_hours`` and ``cost``, one
    row per period and group any row touches, sorted by period then group."""
    frame = _with_nan(execute(_spend_expr(usage, freq, by)))
    frame = pd.DataFrame({"period": days_to_timestamps(frame["period"]),
                          "group": frame["group"].astype("string"),
                          "gpu_hours": frame["gpu_hours"].to_numpy(dtype=float),
                          "cost": frame["cost"].to_numpy(dtype=float)})
    return frame.sort_values(["period", "group"], ignore_index=True)


@built
def _daily_expr(usage: ir.Table, metric: str) -> ir.Table:
    pieces = day_pieces(usage, value=usage[metric])
    return pieces.group_by("day").agg(total=(pieces.value * pieces.fraction).sum(), missing=pieces.value.isnull().any())


@query
def daily_total(usage: ir.Table, metric: str) -> pd.Series:
    """``metric`` per UTC day from the first to the last day any row touches (0 where nothing ran), indexed by
    midnight-UTC timestamps named "day"."""
    frame = execute(_daily_expr(usage, metric))
    if frame.empty:
        return pd.Series(dtype="float64", index=pd.DatetimeIndex([], tz="UTC", name="day"), name=metric)
    days = frame["day"].to_numpy(dtype=np.int64)
    first = int(days.min())
    values = np.zeros(int(days.max()) - first + 1)
    values[days - first] = frame["total"].astype(float).where(~frame["missing"].astype(bool)).to_numpy(dtype=float)
    return pd.Series(values, index=days_to_timestamps(np.arange(first, first + len(values))).rename("day"), name=metric)


@built
def _latest_expr(usage: ir.Table) -> ir.Table:
    return usage.aggregate(start=usage.period_start.max(), end=usage.period_end.max())


@query
def latest_instant(usage: ir.Table) -> pd.Timestamp | None:
    """The last instant the data cover: the latest period_start, or the latest period_end less 1 ns if later;
    None for an empty table."""
    row = execute(_latest_expr(usage)).iloc[0]
    if pd.isna(row["start"]):
        return None
    start = as_utc(row["start"])
    if pd.isna(row["end"]):
        return start
    return max(start, as_utc(row["end"]) - pd.Timedelta(1, "ns"))


@built
def _totals_expr(usage: ir.Table) -> ir.Table:
    return usage.aggregate(rows=usage.count(), gpu_hours=usage.gpu_hours.sum(), cost=usage.cost.sum())


@query
def totals(usage: ir.Table) -> dict[str, float]:
    """Rows, GPU-hours and cost of the whole table (NULLs skipped)."""
    row = execute(_totals_expr(usage)).iloc[0]
    return {"rows": int(row["rows"]), "gpu_hours": number(row["gpu_hours"]), "cost": number(row["cost"])}
