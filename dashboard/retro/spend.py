"""Spend over time: cost and GPU-hours per day or week by team, project or pricing tier, the running total
with a run-rate forecast band to the end of the period when the data stop before it, and the calendar quarter
the data belongs to.

Time rule (used by every function here): a row's cost and GPU-hours are spread over the UTC days its
[period_start, period_end) interval covers, in proportion to the time it spends in each day. A monthly
storage line of $300 over 30 days is $10 a day; a job from 22:00 to 02:00 puts half on each day. A row
with no duration (period_end missing or not after period_start) lands whole on the day of period_start.
Weeks run Monday to Sunday (UTC) and are the sums of their days. The sums are queries
(the queries in this module); the forecast runs on the daily totals they return. A bill spanning several calendar
quarters has a running total, budget and forecast per quarter (``data_quarters``): only the last can be open.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

import ibis.expr.types as ir
import numpy as np
import pandas as pd

from dashboard.query import tables
from dashboard.query.columns import label, number
from dashboard.query.compiled import built, query, table_result
from dashboard.query.periods import SECONDS_PER_DAY, as_utc, day_pieces, week_start
from dashboard.retro import filters
from dashboard.retro.filters import utc_day

FREQS: tuple[str, ...] = ("D", "W")
GROUPS: tuple[str, ...] = ("team", "project", "pricing")
METRICS: tuple[str, ...] = ("cost", "gpu_hours")
FORECAST_COLUMNS: tuple[str, ...] = ("forecast", "forecast_low", "forecast_high")
BAND_Z = 1.2816  # two-sided 80 % interval of a normal distribution
FORECAST_WINDOW_DAYS = 14  # the run rate is the mean of this many days up to the data's end (docs/method.md)
MIN_FORECAST_DAYS = 7  # fewer days of data forecast nothing: a few hours' run rate is no quarter's


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
    frame = _spend_over_time_query(tables.table_of(usage), freq, by)
    frame.attrs["freq"] = freq
    return frame


def daily_total(usage: pd.DataFrame | ir.Table, metric: str = "cost") -> pd.Series:
    """``metric`` ("cost" or "gpu_hours") per UTC day, spread by time, every day from first to last (0 where
    nothing ran); indexed by midnight-UTC timestamps. The input of ``cumulative_with_forecast``."""
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, not {metric!r}")
    return _daily_total_query(tables.table_of(usage), metric)


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


def data_days(daily_cost: pd.Series, data_end: date | None = None) -> int:
    """The days a daily series covers, from its first day to ``data_end`` (by default its last day), both
    included; 0 for an empty series. Fewer than ``MIN_FORECAST_DAYS`` draw no forecast (`forecast_end`)."""
    if daily_cost.empty:
        return 0
    first = min(utc_day(value) for value in daily_cost.index)
    last = max(utc_day(value) for value in daily_cost.index)
    if data_end is not None:
        last = max(last, utc_day(data_end))
    return (last - first).days + 1


def forecast_end(period_end: date | None, data_end: date | None, days: int) -> date | None:
    """The day the running total is drawn to: ``period_end`` (a forecast from ``data_end`` on), or ``data_end``
    (no forecast) when the data cover fewer than ``MIN_FORECAST_DAYS`` ``days``."""
    if days < MIN_FORECAST_DAYS and data_end is not None:
        return data_end
    return period_end or data_end


def cumulative_with_forecast(
    daily_cost: pd.Series, period_end: date | None, data_end: date | None = None,
    window_days: int = FORECAST_WINDOW_DAYS,
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
    if period_end is None:  # no period to forecast to
        return actual
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
    latest = latest_instant(tables.table_of(usage))
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
    first, last = filters.day_options(table).start, data_end(table)
    return [] if first is None or last is None else quarters_between(first, last)


def chosen_quarter(quarters: list[tuple[date, date]], chosen: str | None) -> tuple[date, date] | None:
    """The quarter named ``chosen`` ("2025 Q2"), else the latest; None without dates."""
    named = {quarter_label(quarter): quarter for quarter in quarters}
    return named.get(chosen or "", quarters[-1] if quarters else None)


def running_period(quarter: tuple[date, date] | None, data_end: date | None,
                   dates: tuple[date, date] | None) -> tuple[tuple[date, date] | None, date | None]:
    """The days of the running total (``quarter``, narrowed to the chosen ``dates``) and the last day the data
    cover within them (so an earlier quarter, or a date range ending before the data do, draws no forecast)."""
    if quarter is None:
        return None, data_end
    start, end = quarter
    if dates is not None:
        start, end = max(start, dates[0]), min(end, dates[1])
    return (start, end), (None if data_end is None else min(data_end, end))


SUMMED: tuple[str, ...] = ("gpu_hours", "cost")  # the sums' columns, in this order


def days_to_timestamps(days) -> pd.DatetimeIndex:
    """Days since 1970-01-01 as midnight-UTC timestamps."""
    return pd.to_datetime(np.asarray(days, dtype=np.int64) * SECONDS_PER_DAY, unit="s", utc=True).as_unit("ns")


def _sums(pieces: ir.Table) -> dict[str, ir.Scalar]:
    """Each metric's time-weighted sum and whether any of its rows is NULL (pandas' sum is then NaN)."""
    sums = {metric: (pieces[metric] * pieces.fraction).sum() for metric in SUMMED}
    return sums | {f"{metric}_null": pieces[metric].isnull().any() for metric in SUMMED}


def _with_nan(frame: pd.DataFrame) -> pd.DataFrame:
    for metric in SUMMED:
        frame[metric] = frame[metric].astype(float).where(~frame.pop(f"{metric}_null").astype(bool))
    return frame


@built
def _spend_expr(usage: ir.Table, freq: str, by: str) -> ir.Table:
    pieces = day_pieces(usage, group=label(usage, by), gpu_hours=usage.gpu_hours, cost=usage.cost)
    period = week_start(pieces.day) if freq == "W" else pieces.day
    return pieces.group_by(period=period, group=pieces.group).agg(**_sums(pieces))


@query
def _spend_over_time_query(usage: ir.Table, freq: str, by: str) -> pd.DataFrame:
    """Columns ``period`` (UTC midnight of the day or Monday), ``group`` (labelled), ``gpu_hours`` and ``cost``, one
    row per period and group any row touches, sorted by period then group."""
    frame = _with_nan(table_result(_spend_expr(usage, freq, by)))
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
def _daily_total_query(usage: ir.Table, metric: str) -> pd.Series:
    """``metric`` per UTC day from the first to the last day any row touches (0 where nothing ran), indexed by
    midnight-UTC timestamps named "day"."""
    frame = table_result(_daily_expr(usage, metric))
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
    row = table_result(_latest_expr(usage)).iloc[0]
    if pd.isna(row["start"]):
        return None
    start = as_utc(row["start"])
    if pd.isna(row["end"]):
        return start
    return max(start, as_utc(row["end"]) - pd.Timedelta(1, "ns"))


@built
def _totals_expr(usage: ir.Table) -> ir.Table:
    return usage.aggregate(rows=usage.count(), gpu_hours=usage.gpu_hours.sum(), cost=usage.cost.sum())


@dataclass(frozen=True)
class Totals:
    """A table's ``rows``, ``gpu_hours`` and ``cost`` (in its currency; NULLs skipped)."""

    rows: int
    gpu_hours: float
    cost: float


@query
def totals(usage: ir.Table) -> Totals:
    """The `Totals` of the whole table, in one query."""
    row = table_result(_totals_expr(usage)).iloc[0]
    return Totals(rows=int(row["rows"]), gpu_hours=number(row["gpu_hours"]), cost=number(row["cost"]))
