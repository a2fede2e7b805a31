"""Spend over time: cost and GPU-hours per day or week by team, project or pricing tier, the running total
with a run-rate forecast band to the end of the period when the data stop before it, and the calendar quarter
the data belongs to.

Time rule (used by every function here): a row's cost and GPU-hours are spread over the UTC days its
[period_start, period_end) interval covers, in proportion to the time it spends in each day. A monthly
storage line of $300 over 30 days is $10 a day; a job from 22:00 to 02:00 puts half on each day. A row
with no duration (period_end missing or not after period_start) lands whole on the day of period_start.
Weeks run Monday to Sunday (UTC) and are the sums of their days. The sums are queries
(``dashboard.query.spend``); the forecast runs on the daily totals they return. A bill spanning several calendar
quarters has a running total, budget and forecast per quarter (``data_quarters``): only the last can be open.
"""

from __future__ import annotations

from datetime import date

import ibis.expr.types as ir
import numpy as np
import pandas as pd

from dashboard.query import spend as spend_query
from dashboard.query import tables, view
from dashboard.retro.filters import utc_day

FREQS: tuple[str, ...] = ("D", "W")
GROUPS: tuple[str, ...] = ("team", "project", "pricing")
METRICS: tuple[str, ...] = ("cost", "gpu_hours")
FORECAST_COLUMNS: tuple[str, ...] = ("forecast", "forecast_low", "forecast_high")
BAND_Z = 1.2816  # two-sided 80 % interval of a normal distribution


def spend_over_time(usage: pd.DataFrame | ir.Table, freq: str = "D", by: str = "team") -> pd.DataFrame:
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
    frame = spend_query.spend_over_time(tables.table_of(usage), freq, by)
    frame.attrs["freq"] = freq
    return frame


def daily_total(usage: pd.DataFrame | ir.Table, metric: str = "cost") -> pd.Series:
    """``metric`` ("cost" or "gpu_hours") per UTC day, spread by time, every day from first to last (0 where
    nothing ran); indexed by midnight-UTC timestamps. The input of ``cumulative_with_forecast``."""
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, not {metric!r}")
    return spend_query.daily_total(tables.table_of(usage), metric)


def daily_from_days(days: pd.DataFrame, metric: str = "cost") -> pd.Series:
    """``daily_total`` from ``spend_over_time(freq="D")``'s rows (their days' sums over the groups, 0 on days in
    the span with none), so the Spend tab's daily view needs one query, not two."""
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, not {metric!r}")
    if days.attrs.get("freq") != "D":
        raise ValueError("daily_from_days needs spend_over_time's daily rows (freq 'D')")
    if days.empty:
        return pd.Series(dtype="float64", index=pd.DatetimeIndex([], tz="UTC", name="day"), name=metric)
    sums = days.groupby("period")[metric].sum(skipna=False)
    span = pd.date_range(sums.index.min(), sums.index.max(), freq="D", name="day")
    return sums.reindex(span, fill_value=0.0).astype(float).rename(metric)


def cumulative_with_forecast(
    daily_cost: pd.Series, period_end: date, data_end: date | None = None, window_days: int = 14
) -> pd.DataFrame:
    """Running total of a daily series and, when the data end before the period does, a forecast band to
    ``period_end`` (inclusive).

    Method: days missing between the first day of ``daily_cost`` and ``data_end`` (the last day the export
    covers; by default the series' last day) count as 0, so a filtered view whose spend stops early is still
    known to the end of the export. No forecast when ``data_end`` is on or after ``period_end``: the period is
    closed. Otherwise the run rate r is the mean daily value over the last ``window_days`` days up to
    ``data_end`` and s their standard deviation; k days ahead the forecast is the actual total plus r * k, with
    an 80 % band of +/- 1.2816 * s * sqrt(k) (independent days at the recent mean and spread; AWS Cost
    Explorer draws its forecast as such a band).

    Returns columns ``day`` (midnight UTC), ``daily`` and ``cumulative`` (actuals; NaN on forecast days),
    ``forecast``, ``forecast_low`` and ``forecast_high`` (NaN before the last actual day, equal to
    ``cumulative`` on it so the band starts at the line; all NaN for a closed period). Units are those of
    ``daily_cost`` (works for GPU-hours too).
    """
    if window_days < 1:
        raise ValueError(f"window_days must be at least 1, not {window_days}")
    columns = ("day", "daily", "cumulative", *FORECAST_COLUMNS)
    if daily_cost.empty:
        return pd.DataFrame({name: pd.Series(dtype="datetime64[ns, UTC]" if name == "day" else "float64")
                             for name in columns})
    days = pd.DatetimeIndex([utc_day(value) for value in daily_cost.index])
    daily = daily_cost.groupby(days).sum()
    last = max(days.max(), utc_day(data_end)) if data_end is not None else days.max()
    daily = daily.reindex(pd.date_range(days.min(), last, freq="D"), fill_value=0.0).astype(float)
    cumulative = daily.cumsum()
    actual = pd.DataFrame({"day": daily.index, "daily": daily.to_numpy(), "cumulative": cumulative.to_numpy(),
                           **dict.fromkeys(FORECAST_COLUMNS, np.nan)})
    forecast_days = pd.date_range(daily.index[-1] + pd.Timedelta(days=1), utc_day(period_end), freq="D")
    if len(forecast_days) == 0:
        return actual
    recent = daily.iloc[-window_days:]
    rate_per_day = float(recent.mean())
    spread = float(recent.std(ddof=1)) if len(recent) > 1 else 0.0
    steps = np.arange(1, len(forecast_days) + 1)
    centre = cumulative.iloc[-1] + rate_per_day * steps
    half_width = BAND_Z * spread * np.sqrt(steps)
    actual.loc[actual.index[-1], list(FORECAST_COLUMNS)] = cumulative.iloc[-1]
    ahead = pd.DataFrame({"day": forecast_days, "daily": np.nan, "cumulative": np.nan, "forecast": centre,
                          "forecast_low": centre - half_width, "forecast_high": centre + half_width})
    return pd.concat([actual, ahead], ignore_index=True)


def data_end(usage: pd.DataFrame | ir.Table) -> date | None:
    """The last UTC day the data cover (the last day a row's [period_start, period_end) touches); None when
    empty. Computed on the whole export, it says whether the period is closed for every filtered view."""
    latest = spend_query.latest_instant(tables.table_of(usage))
    return None if latest is None else latest.date()


def quarter_of(day: date) -> tuple[date, date]:
    """First and last day of the calendar quarter holding ``day``."""
    quarter = pd.Period(pd.Timestamp(day), freq="Q")
    return quarter.start_time.date(), quarter.end_time.date()


def quarter_label(quarter: tuple[date, date]) -> str:
    """A quarter as "2025 Q2"."""
    return f"{quarter[0].year} Q{(quarter[0].month - 1) // 3 + 1}"


def quarters_between(first: date, last: date) -> list[tuple[date, date]]:
    """The calendar quarters from the one holding ``first`` to the one holding ``last``, in order."""
    quarters = [quarter_of(first)]
    while quarters[-1][1] < last:
        quarters.append(quarter_of(quarters[-1][1] + pd.Timedelta(days=1)))
    return quarters


def data_quarters(usage: pd.DataFrame | ir.Table) -> list[tuple[date, date]]:
    """The calendar quarters the data cover, from the day of the first period_start to the latest day a row's
    [period_start, period_end) touches; each has its own running total, budget and forecast. Empty for an empty
    table."""
    table = tables.table_of(usage)
    first, last = view.filter_options(table)["start"], data_end(table)
    return [] if first is None or last is None else quarters_between(first, last)
