"""How many GPUs ran at once: hourly concurrency from usage rows, its peak / mean / p95 and the hour-of-week
pattern (all UTC). The hourly series is a query (the queries in this module); the figures are computed here on it."""

from __future__ import annotations

from dataclasses import dataclass

import ibis
import ibis.expr.types as ir
import numpy as np
import pandas as pd

from dashboard.query import tables
from dashboard.query.columns import commitment, flag, reserved_gpu
from dashboard.query.compiled import built, query, table_result
from dashboard.query.periods import SECONDS_PER_HOUR, as_utc, start_end

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
    return _hourly_concurrency_query(tables.table_of(usage))


@dataclass(frozen=True)
class LoadSummary:
    """Peak, mean and 95th-percentile concurrent GPUs of an hourly series (NaN when empty), peak over mean (NaN when
    the mean is 0 or the series empty), the hour of the peak (None when empty) and the series' length in hours; the
    reserved capacity in whole GPUs and its idle GPU-hours when the Load figure adds them (None: no reserved rows)."""

    peak_gpus: float
    mean_gpus: float
    p95_gpus: float
    peak_to_mean: float
    peak_hour: pd.Timestamp | None
    hours: int
    reserved_capacity_gpus: float | None = None
    idle_reserved_gpu_hours: float | None = None


def load_summary(series: pd.Series) -> LoadSummary:
    """Peak, mean and 95th-percentile concurrent GPUs of an hourly series, and when the peak was (a `LoadSummary`
    without the reserved capacity)."""
    if series.empty:
        return LoadSummary(np.nan, np.nan, np.nan, np.nan, None, 0)
    peak, mean = float(series.max()), float(series.mean())
    return LoadSummary(peak_gpus=peak, mean_gpus=mean,
                       p95_gpus=float(np.percentile(series.to_numpy(dtype=float), 95)),
                       peak_to_mean=peak / mean if mean > 0 else np.nan,
                       peak_hour=pd.Timestamp(series.idxmax()), hours=len(series))


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
    span = commitment_span(usage)
    if span is None:
        return None
    in_use = reserved_concurrency(usage)
    hours = pd.date_range(span[0].floor("h"), (span[1] - pd.Timedelta(1, "ns")).floor("h"), freq="h", name="hour")
    in_use = in_use.reindex(hours, fill_value=0.0)
    return float(np.round(in_use.max())), in_use


ONE_SECOND = ibis.interval(seconds=1)


def _events(usage: ir.Table) -> ir.Table:
    """The rows' events: ``hour``, the ``step`` in GPUs starting there, the ``direct`` GPUs of that hour,
    ``covered``, the last hour the row covers, and whether the row is a ``reserved`` GPU row. A row covering one
    hour (most hourly lines) is one event; a longer one is three: its rate from the hour after its first, that
    rate stopping at the hour holding its end, and its partial first and last hours directly.

    The two kinds of row are filtered from ``usage`` separately (an engine may materialise a whole subquery used
    twice), and a longer row's three events are one unnested list."""
    hours, is_reserved = usage.gpu_hours.fill_null(0.0), reserved_gpu(usage)
    start = usage.period_start.epoch_seconds()
    first = start // SECONDS_PER_HOUR
    # one hour ⇔ the end (the start when missing or earlier) is at most the end of the first hour
    one_hour = ibis.coalesce(usage.period_end.epoch_seconds(), start) <= (first + 1) * SECONDS_PER_HOUR
    one = usage.filter(one_hour)
    one = one.select(hour=first, step=ibis.literal(0.0), direct=hours, covered=first, reserved=is_reserved)
    many = usage.filter(~one_hour)
    start, end = start_end(many)
    first = start // SECONDS_PER_HOUR
    last = end // SECONDS_PER_HOUR  # the hour holding the end instant gets only the part before it
    covered = ibis.ifelse(end % SECONDS_PER_HOUR == 0, last - 1, last)  # after the first hour, as the row is longer
    many = many.select(start_s=start, end_s=end, first=first, last=last, hours=hours, covered=covered,
                       reserved=is_reserved)
    many = many.mutate(event=ibis.literal([0, 1, 2]).unnest())
    rate = many.hours / ((many.end_s - many.start_s) / SECONDS_PER_HOUR)
    head_h = ((many["first"] + 1) * SECONDS_PER_HOUR - many.start_s) / SECONDS_PER_HOUR
    tail_h = (many.end_s - many["last"] * SECONDS_PER_HOUR) / SECONDS_PER_HOUR
    zero = ibis.literal(0.0)
    return ibis.union(one, many.select(
        hour=ibis.cases((many.event == 0, many["first"]), (many.event == 1, many["first"] + 1), else_=many["last"]),
        step=ibis.cases((many.event == 1, rate), (many.event == 2, -rate), else_=zero),
        direct=ibis.cases((many.event == 0, rate * head_h), (many.event == 2, rate * tail_h), else_=zero),
        covered=many.covered, reserved=many.reserved), distinct=False)


@built
def _hourly_expr(usage: ir.Table) -> ir.Table:
    events = _events(usage)
    return events.group_by("hour").agg(step=events.step.sum(), direct=events.direct.sum(),
                                       covered=events.covered.max(),
                                       reserved_step=events.step.sum(where=events.reserved),
                                       reserved_direct=events.direct.sum(where=events.reserved))


@query
def _hourly_concurrency_query(usage: ir.Table) -> pd.Series:
    """Mean GPUs in use in each UTC hour from the first to the last hour any row touches (0 where none ran),
    indexed by the hour's start and named "gpus"; empty for an empty table."""
    return _series(table_result(_hourly_expr(usage)), "step", "direct")


@query
def reserved_concurrency(usage: ir.Table) -> pd.Series:
    """``hourly_concurrency`` of the reserved tier's GPU rows, over the hours of all rows: the
    same query as ``hourly_concurrency``'s, so the Load profile's two series cost one pass over the table."""
    return _series(table_result(_hourly_expr(usage)), "reserved_step", "reserved_direct")


def _series(sums: pd.DataFrame, step: str, direct: str) -> pd.Series:
    """The hourly GPUs from the per-hour ``step`` and ``direct`` sums (NULL: none)."""
    if sums.empty:
        return pd.Series(dtype="float64", index=pd.DatetimeIndex([], tz="UTC", name="hour"), name="gpus")
    position = sums["hour"].to_numpy(dtype=np.int64)
    origin = int(position.min())  # every row's first hour is an event, and its other events come later
    n_hours = int(sums["covered"].max()) - origin + 1
    position = position - origin
    size = n_hours + 1  # a row ending on the hour steps down just past the span
    steps = np.bincount(position, weights=sums[step].fillna(0.0).to_numpy(dtype=float), minlength=size)
    directs = np.bincount(position, weights=sums[direct].fillna(0.0).to_numpy(dtype=float), minlength=size)
    gpus = (np.cumsum(steps) + directs)[:n_hours]
    index = pd.to_datetime((origin + np.arange(n_hours)) * SECONDS_PER_HOUR, unit="s", utc=True).as_unit("ns")
    return pd.Series(gpus, index=index.rename("hour"), name="gpus")


@built
def _span_expr(usage: ir.Table) -> ir.Table:
    is_reserved = reserved_gpu(usage)
    window = is_reserved | commitment(usage)
    ends = ibis.greatest(ibis.coalesce(usage.period_end, usage.period_start), usage.period_start + ONE_SECOND)
    return usage.aggregate(any_reserved=is_reserved.any(), first=usage.period_start.min(where=window),
                           last=ends.max(where=window))


@query
def commitment_span(usage: ir.Table) -> tuple[pd.Timestamp, pd.Timestamp] | None:
    """The first period_start and last period_end of the reserved GPU rows and commitment lines (a row with no
    duration, its period_end missing or not after its start, ends a second after it starts: it covers its start
    hour); None without reserved GPU rows."""
    row = table_result(_span_expr(usage)).iloc[0]
    if not flag(row["any_reserved"]):
        return None
    return as_utc(row["first"]), as_utc(row["last"])
