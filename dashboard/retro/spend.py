"""Spend over time: cost and GPU-hours per day or week by team, project or pricing tier, the running total
with a run-rate forecast to the end of the period, and the calendar quarter the data belongs to.

Time rule (used by every function here): a row's cost and GPU-hours are spread over the UTC days its
[period_start, period_end) interval covers, in proportion to the time it spends in each day. A monthly
storage line of $300 over 30 days is $10 a day; a job from 22:00 to 02:00 puts half on each day. A row
with no duration (period_end missing or not after period_start) lands whole on the day of period_start.
Weeks run Monday to Sunday (UTC) and are the sums of their days.
"""

from __future__ import annotations

from datetime import date

import numpy as np
import pandas as pd

from dashboard.ingest.rows import take_strings
from dashboard.retro.filters import group_codes, utc_day
from dashboard.retro.periods import NS_PER_DAY, spread_by_day

FREQS: tuple[str, ...] = ("D", "W")
GROUPS: tuple[str, ...] = ("team", "project", "pricing")
METRICS: tuple[str, ...] = ("cost", "gpu_hours")


def _days_to_timestamps(days: np.ndarray) -> pd.DatetimeIndex:
    """Days since 1970-01-01 as midnight-UTC timestamps."""
    return pd.to_datetime(np.asarray(days, dtype=np.int64) * NS_PER_DAY, unit="ns", utc=True)


def _week_start(days: np.ndarray) -> np.ndarray:
    """The Monday on or before each day (days since 1970-01-01, a Thursday)."""
    return days - (days + 3) % 7


def spend_over_time(usage: pd.DataFrame, freq: str = "D", by: str = "team") -> pd.DataFrame:
    """Cost and GPU-hours per period and group, spread over days by time (module docstring).

    ``freq`` is "D" (UTC days) or "W" (weeks starting Monday); ``by`` is "team", "project" or "pricing".
    Returns columns ``period`` (UTC midnight starting the day or week), ``group`` (NA labelled "(untagged)",
    or "(unknown)" for pricing; never dropped), ``gpu_hours`` and ``cost`` (in the table's currency), one row
    per period and group that any usage row touches, sorted by period then group. Totals equal the
    table's totals. ``attrs["freq"]`` records ``freq`` for the figure.
    """
    if freq not in FREQS:
        raise ValueError(f"freq must be one of {FREQS}, not {freq!r}")
    if by not in GROUPS:
        raise ValueError(f"by must be one of {GROUPS}, not {by!r}")
    if usage.empty:
        frame = pd.DataFrame(
            {
                "period": pd.Series(dtype="datetime64[ns, UTC]"),
                "group": pd.Series(dtype="string"),
                "gpu_hours": pd.Series(dtype="float64"),
                "cost": pd.Series(dtype="float64"),
            }
        )
        frame.attrs["freq"] = freq
        return frame
    codes, labels = group_codes(usage, by)
    rows, day, fraction = spread_by_day(usage)
    period = _week_start(day) if freq == "W" else day
    step = 7 if freq == "W" else 1
    first = period.min()
    n_groups = len(labels)
    cell = (period - first) // step * n_groups + codes[rows]
    size = int(cell.max()) + 1
    touched = np.bincount(cell, minlength=size) > 0
    totals = {
        metric: np.bincount(cell, weights=usage[metric].to_numpy(dtype=float)[rows] * fraction, minlength=size)
        for metric in ("gpu_hours", "cost")
    }
    cells = np.flatnonzero(touched)
    frame = pd.DataFrame(
        {
            "period": _days_to_timestamps(first + cells // n_groups * step),
            "group": take_strings(cells % n_groups, labels, pd.RangeIndex(len(cells))),
            "gpu_hours": totals["gpu_hours"][cells],
            "cost": totals["cost"][cells],
        }
    ).sort_values(["period", "group"], ignore_index=True)
    frame.attrs["freq"] = freq
    return frame


def daily_total(usage: pd.DataFrame, metric: str = "cost") -> pd.Series:
    """``metric`` ("cost" or "gpu_hours") per UTC day, spread by time, every day from first to last (0 where
    nothing ran); indexed by midnight-UTC timestamps. The input of ``cumulative_with_forecast``."""
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, not {metric!r}")
    if usage.empty:
        return pd.Series(dtype="float64", index=pd.DatetimeIndex([], tz="UTC", name="day"), name=metric)
    rows, day, fraction = spread_by_day(usage)
    first = day.min()
    values = np.bincount(day - first, weights=usage[metric].to_numpy(dtype=float)[rows] * fraction)
    index = _days_to_timestamps(np.arange(first, first + len(values)))
    return pd.Series(values, index=index.rename("day"), name=metric)


def cumulative_with_forecast(daily_cost: pd.Series, period_end: date, window_days: int = 14) -> pd.DataFrame:
    """Running total of a daily series and a straight-line forecast of it to ``period_end`` (inclusive).

    Method: days missing between the first and last day of ``daily_cost`` count as 0. The run rate is the
    mean daily value over the last ``window_days`` calendar days up to and including the last day (all
    days if there are fewer). The forecast starts at the actual total on the last day and adds the run
    rate once per day through ``period_end``, so a constant rate r from day 1 reaches r × (days from the
    first day to period_end) on period_end.

    Returns columns ``day`` (midnight UTC), ``daily`` and ``cumulative`` (actuals; NaN on forecast days) and
    ``forecast`` (NaN before the last actual day; equal to ``cumulative`` on it, so the lines join; all NaN
    when period_end is not after the last day). Units are those of ``daily_cost`` (works for GPU-hours too).
    """
    if window_days < 1:
        raise ValueError(f"window_days must be at least 1, not {window_days}")
    columns = ("day", "daily", "cumulative", "forecast")
    if daily_cost.empty:
        return pd.DataFrame({name: pd.Series(dtype="datetime64[ns, UTC]" if name == "day" else "float64")
                             for name in columns})
    days = pd.DatetimeIndex([utc_day(value) for value in daily_cost.index])
    daily = daily_cost.groupby(days).sum()
    daily = daily.reindex(pd.date_range(days.min(), days.max(), freq="D"), fill_value=0.0).astype(float)
    cumulative = daily.cumsum()
    rate_per_day = float(daily.iloc[-window_days:].mean())
    forecast_days = pd.date_range(daily.index[-1] + pd.Timedelta(days=1), utc_day(period_end), freq="D")
    steps = np.arange(1, len(forecast_days) + 1)
    actual = pd.DataFrame(
        {"day": daily.index, "daily": daily.to_numpy(), "cumulative": cumulative.to_numpy(), "forecast": np.nan}
    )
    if len(forecast_days) == 0:
        return actual
    actual.loc[actual.index[-1], "forecast"] = cumulative.iloc[-1]
    ahead = pd.DataFrame(
        {"day": forecast_days, "daily": np.nan, "cumulative": np.nan,
         "forecast": cumulative.iloc[-1] + rate_per_day * steps}
    )
    return pd.concat([actual, ahead], ignore_index=True)


def data_quarter(usage: pd.DataFrame) -> tuple[date, date] | None:
    """First and last day of the calendar quarter holding the latest day the data covers (the last day a
    row's [period_start, period_end) touches); the budget line's period. None for an empty table."""
    if usage.empty:
        return None
    latest = max(usage["period_start"].max(), usage["period_end"].max() - pd.Timedelta(1, "ns"))
    quarter = pd.Period(latest.tz_convert("UTC").tz_localize(None), freq="Q")
    return quarter.start_time.date(), quarter.end_time.date()
