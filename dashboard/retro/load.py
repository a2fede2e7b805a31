"""How many GPUs ran at once: hourly concurrency from usage rows, its peak / mean / p95 and the hour-of-week
pattern (all UTC). The hourly series is a query (``dashboard.query.load``); the figures are computed here on it."""

from __future__ import annotations

import ibis.expr.types as ir
import numpy as np
import pandas as pd

from dashboard.query import load as load_query
from dashboard.query import tables

WEEKDAYS: tuple[str, ...] = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


def hourly_concurrency(usage: pd.DataFrame | ir.Table) -> pd.Series:
    """Mean number of GPUs in use in each UTC hour, from the first to the last hour any row touches.

    Each row's gpu_hours are spread evenly over its [period_start, period_end): a daily line of 192
    GPU-hours is 8 GPUs in each of its 24 hours; a job covering 15 minutes of an hour adds a quarter of its
    GPU count to that hour. A row with no duration adds its gpu_hours to the hour of period_start. Hours
    inside the span with no usage are 0, so the mean is over the whole span the data covers (including
    rows with no GPU-hours, such as monthly storage lines). Returned as float GPUs indexed by the hour's
    start (UTC), named "gpus"; empty for an empty table.

    A difference array over hour indices: each row adds its rate (GPUs) from its first full hour to the hour
    containing its end, plus the partial first and last hours directly; the query sums those steps per hour.
    """
    return load_query.hourly_concurrency(tables.table_of(usage))


def load_summary(series: pd.Series) -> dict:
    """Peak, mean and 95th-percentile concurrent GPUs of an hourly series, and when the peak was.

    Returns ``{"peak_gpus", "mean_gpus", "p95_gpus", "peak_to_mean", "peak_hour", "hours"}``; the ratio is
    NaN when the mean is 0, and the figures are NaN (peak_hour None) for an empty series.
    """
    if series.empty:
        return {"peak_gpus": np.nan, "mean_gpus": np.nan, "p95_gpus": np.nan, "peak_to_mean": np.nan,
                "peak_hour": None, "hours": 0}
    peak, mean = float(series.max()), float(series.mean())
    return {
        "peak_gpus": peak,
        "mean_gpus": mean,
        "p95_gpus": float(np.percentile(series.to_numpy(dtype=float), 95)),
        "peak_to_mean": peak / mean if mean > 0 else np.nan,
        "peak_hour": series.idxmax(),
        "hours": len(series),
    }


def hour_of_week(series: pd.Series) -> pd.DataFrame:
    """Mean concurrent GPUs by weekday and hour: a 7 × 24 frame, rows "Mon".."Sun", columns 0..23 (UTC
    hour); NaN where the series has no such hour."""
    index = pd.DatetimeIndex(series.index).tz_convert("UTC")
    means = series.groupby([index.day_of_week, index.hour]).mean().unstack()
    frame = means.reindex(index=range(7), columns=range(24))
    frame.index = pd.Index(WEEKDAYS, name="weekday")
    frame.columns = pd.Index(range(24), name="hour_utc")
    return frame


def reserved_capacity(usage: pd.DataFrame | ir.Table) -> tuple[float, pd.Series] | None:
    """The reserved capacity in whole GPUs and the reserved tier's hourly GPUs in use over the commitment's hours.

    The export does not state a reservation's size, so the capacity is the most reserved GPUs in use in any
    hour, rounded to a whole GPU (a lower bound of what was reserved). The commitment's hours run from the first
    to the last hour touched by a reserved GPU row or a commitment line (``columns.commitment``), so days when
    the commitment ran idle show as idle. None without reserved GPU rows.
    """
    usage = tables.table_of(usage)
    span = load_query.commitment_span(usage)
    if span is None:
        return None
    in_use = load_query.reserved_concurrency(usage)
    hours = pd.date_range(span[0].floor("h"), (span[1] - pd.Timedelta(1, "ns")).floor("h"), freq="h", name="hour")
    in_use = in_use.reindex(hours, fill_value=0.0)
    return float(np.round(in_use.max())), in_use
