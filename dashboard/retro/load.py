"""How many GPUs ran at once: hourly concurrency from usage rows, its peak / mean / p95 and the hour-of-week
pattern (all UTC)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dashboard.retro.filters import epoch_ns
from dashboard.retro.gap import commitment_mask, gpu_mask

NS_PER_HOUR = 3_600 * 10**9
WEEKDAYS: tuple[str, ...] = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


def hourly_concurrency(usage: pd.DataFrame) -> pd.Series:
    """Mean number of GPUs in use in each UTC hour, from the first to the last hour any row touches.

    Each row's gpu_hours are spread evenly over its [period_start, period_end): a daily line of 192
    GPU-hours is 8 GPUs in each of its 24 hours; a job covering 15 minutes of an hour adds a quarter of its
    GPU count to that hour. A row with no duration adds its gpu_hours to the hour of period_start. Hours
    inside the span with no usage are 0, so the mean is over the whole span the data covers (including
    rows with no GPU-hours, such as monthly storage lines). Returned as float GPUs indexed by the hour's
    start (UTC), named "gpus"; empty for an empty table.

    Vectorised with a difference array over hour indices: each row adds its rate (GPUs) from its first full
    hour to the hour containing its end, plus the partial first and last hours directly.
    """
    if usage.empty:
        return pd.Series(dtype="float64", index=pd.DatetimeIndex([], tz="UTC", name="hour"), name="gpus")
    start = epoch_ns(usage["period_start"])
    end = np.maximum(epoch_ns(usage["period_end"]), start)  # NaT (minimum int64) or end < start: no duration
    gpu_hours = usage["gpu_hours"].to_numpy(dtype=float)
    origin = start.min() // NS_PER_HOUR
    first_hour = start // NS_PER_HOUR - origin
    end_hour = end // NS_PER_HOUR - origin  # hour holding the end instant; gets only the part before it
    n_hours = int(max(first_hour.max(), np.where(end % NS_PER_HOUR == 0, end_hour - 1, end_hour).max())) + 1
    duration_h = (end - start) / NS_PER_HOUR
    single = first_hour == end_hour  # starts and ends within one hour (or has no duration)
    rate = np.where(single, 0.0, gpu_hours / np.where(single, 1.0, duration_h))
    head_h = np.where(single, 0.0, ((first_hour + origin + 1) * NS_PER_HOUR - start) / NS_PER_HOUR)
    tail_h = np.where(single, 0.0, (end - (end_hour + origin) * NS_PER_HOUR) / NS_PER_HOUR)
    size = n_hours + 1  # end_hour may be n_hours when a row ends on the hour
    steps = np.bincount(first_hour + 1, weights=rate, minlength=size) - np.bincount(
        end_hour, weights=rate, minlength=size
    )
    direct = (
        np.bincount(first_hour, weights=np.where(single, gpu_hours, rate * head_h), minlength=size)
        + np.bincount(end_hour, weights=rate * tail_h, minlength=size)
    )
    gpus = (np.cumsum(steps) + direct)[:n_hours]
    index = pd.to_datetime((origin + np.arange(n_hours)) * NS_PER_HOUR, unit="ns", utc=True).rename("hour")
    return pd.Series(gpus, index=index, name="gpus")


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


def reserved_capacity(usage: pd.DataFrame) -> tuple[float, pd.Series] | None:
    """The reserved capacity in whole GPUs and the reserved tier's hourly GPUs in use over the commitment's hours.

    The export does not state a reservation's size, so the capacity is the most reserved GPUs in use in any
    hour, rounded to a whole GPU (a lower bound of what was reserved). The commitment's hours run from the first
    to the last hour touched by a reserved GPU row or a commitment line (``gap.commitment_mask``), so days when
    the commitment ran idle show as idle. None without reserved GPU rows.
    """
    reserved = gpu_mask(usage) & usage["pricing"].eq("reserved").fillna(False).to_numpy(dtype=bool)
    if not reserved.any():
        return None
    periods = ["period_start", "period_end"]
    window = usage.loc[reserved | commitment_mask(usage), periods]
    in_use = hourly_concurrency(usage.loc[reserved, [*periods, "gpu_hours"]])
    first = window["period_start"].min().floor("h")
    last = (window["period_end"].max() - pd.Timedelta(1, "ns")).floor("h")
    hours = pd.date_range(first, last, freq="h", name="hour")
    in_use = in_use.reindex(hours, fill_value=0.0)
    return float(np.round(in_use.max())), in_use
