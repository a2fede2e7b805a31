"""The pandas implementations the query layer replaced (dashboard/retro at commit 6a29edc, unchanged but for
their imports and the commitment rule, which reads the import's charge_kind): the oracle of the property test,
which asserts the queries give the same figures. The interruption rule (interrupted is not failed: issue 34) is
written here in pandas from its statement in ``dashboard.ingest.run_states``; only the texts that say how an
interruption is costed (``checkpointing``, ``checkpointing_note``) are the product's.

Frozen (issue 49; tests/query/test_oracle_frozen.py pins its digest): a rule changes in ``dashboard/retro/``, shown
against hand-computed cases, never by editing this file."""

import math
from collections.abc import Iterable
from datetime import date
from typing import Any

import numpy as np
import pandas as pd
from pandas_days import NS_PER_DAY, epoch_ns, spread_by_day

from dashboard.core import compute
from dashboard.format import count_sig, counted, number, usd_sig
from dashboard.ingest.rows import take_strings
from dashboard.ingest.run_states import CHECKPOINT_COLUMNS, FAILED_STATES, RESTARTED_STATES, RESUME_WINDOW_HOURS
from dashboard.ingest.schema import PRICING_VALUES
from dashboard.query.labels import NA_LABELS, UNKNOWN_PRICING
from dashboard.retro.filters import ONE_DAY, utc_day
from dashboard.retro.labels import group_codes
from dashboard.retro.units import NEEDS_PRICES, NEEDS_TOKENS, TOKENS_PER_MILLION, _row_peaks
from dashboard.retro.waste import (
    DUPLICATE_DURATION_TOLERANCE,
    DUPLICATE_START_WINDOW,
    KINDS,
    NEEDS_STATES,
    STORAGE_GROWTH_MIN,
    checkpointing,
    checkpointing_note,
)

FREQS = ("D", "W")
GROUPS = ("team", "project", "pricing")
METRICS = ("cost", "gpu_hours")
LEVELS = ("team", "project", "run_id")
NS_PER_HOUR = 3_600 * 10**9


def gpu_mask(usage: pd.DataFrame) -> np.ndarray:
    """Rows with GPU-hours > 0."""
    return (usage["gpu_hours"] > 0).to_numpy(dtype=bool)


def kind_mask(usage: pd.DataFrame, *kinds: str) -> np.ndarray:
    """Rows whose charge_kind is one of ``kinds`` and whose cost is non-zero."""
    return (usage["charge_kind"].isin(kinds).fillna(False).to_numpy(dtype=bool)
            & usage["cost"].fillna(0).ne(0).to_numpy(dtype=bool))


def commitment_mask(usage: pd.DataFrame) -> np.ndarray:
    """Commitment lines: paid commitments and unused-commitment lines with a cost."""
    return kind_mask(usage, "commitment", "unused_commitment")


def failed_mask(usage: pd.DataFrame, failed_states: tuple[str, ...] = FAILED_STATES) -> np.ndarray:
    """Rows whose run_state is one of ``failed_states``."""
    return usage["run_state"].isin(failed_states).fillna(False).to_numpy(dtype=bool)


def interruption_marks(usage: pd.DataFrame, checkpoint: dict[str, Any] | None = None,
                       failed_states: tuple[str, ...] = FAILED_STATES) -> pd.DataFrame:
    """Per row: ``in_failed``, ``interrupted`` (a job row, with GPU-hours, a state, a run id and a duration, in a
    failed state whose next job row of the same run id, by start then source row, starts at or after its end,
    within RESUME_WINDOW_HOURS, on as many GPUs (within half a GPU); or in a restarted state), ``lost_share`` ((τ/2
    + restart) / duration, at most 1, for interrupted rows; τ and restart per row from CHECKPOINT_COLUMNS where the
    table has them, else ``checkpoint``) and ``from_export``."""
    setting = checkpointing() if checkpoint is None else checkpoint
    start_s = epoch_ns(usage["period_start"]) // 10**9
    end = usage["period_end"]
    end_s = np.where(end.isna(), 0, epoch_ns(end) // 10**9)
    duration_h = np.where(end.isna(), np.nan, (end_s - start_s) / 3600.0)
    job = (_states_known(usage) & usage["run_id"].notna().to_numpy(dtype=bool) & (np.nan_to_num(duration_h) > 0))
    hours = usage["gpu_hours"].to_numpy(dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        gpus = np.where(job, hours / np.where(job, duration_h, 1.0), np.nan)
    in_failed = failed_mask(usage, failed_states)
    resumed = np.zeros(len(usage), dtype=bool)
    jobs = pd.DataFrame({"run": usage["run_id"].astype(object), "start": start_s, "row": usage["source_row"],
                         "position": np.arange(len(usage))}).loc[job]
    jobs = jobs.sort_values(["run", "start", "row"], kind="stable")
    position = jobs["position"].to_numpy()
    same_run = np.r_[jobs["run"].to_numpy()[1:] == jobs["run"].to_numpy()[:-1], False]
    next_start = np.r_[jobs["start"].to_numpy()[1:], 0]
    next_gpus = np.r_[gpus[position][1:], np.nan]
    gap_s = next_start - end_s[position]
    resumed[position] = (same_run & (gap_s >= 0) & (gap_s <= RESUME_WINDOW_HOURS * 3600)
                         & (np.abs(next_gpus - gpus[position]) < 0.5))
    restarted = usage["run_state"].isin(RESTARTED_STATES).fillna(False).to_numpy(dtype=bool)
    interrupted = job & ((in_failed & resumed) | restarted)
    given, minutes = {}, {}
    for name, key in zip(CHECKPOINT_COLUMNS, ("interval_min", "restart_min"), strict=True):
        given[key] = (pd.to_numeric(usage[name], errors="coerce").to_numpy(dtype=float) if name in usage.columns
                      else np.full(len(usage), np.nan))
        minutes[key] = np.where(np.isnan(given[key]), setting[key], given[key])
    lost_hours = (minutes["interval_min"] / 2.0 + minutes["restart_min"]) / 60.0
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(interrupted, np.minimum(1.0, lost_hours / np.where(interrupted, duration_h, 1.0)), 0.0)
    from_export = interrupted & (~np.isnan(given["interval_min"]) | ~np.isnan(given["restart_min"]))
    return pd.DataFrame({"in_failed": in_failed, "interrupted": interrupted, "lost_share": share,
                         "from_export": from_export}, index=usage.index)


def cost_is_known(usage: pd.DataFrame) -> bool:
    """False when every cost is 0 or NA: run exports carry no prices and their readers set cost to 0."""
    return bool(usage["cost"].fillna(0).ne(0).any())


def gpu_rows(usage: pd.DataFrame) -> np.ndarray:
    """Boolean mask of GPU rows: gpu_hours present and non-zero."""
    return usage["gpu_hours"].fillna(0.0).to_numpy(dtype=float) != 0


def has_prices(usage: pd.DataFrame) -> bool:
    """Whether the table carries prices: Slurm and W&B exports have no currency and read as cost 0."""
    return bool(usage["currency"].notna().any())


def non_gpu_cost(usage: pd.DataFrame) -> float:
    """Total cost of the rows that carry no GPU-hours (storage, support, tax, credits, commitment fees)."""
    return float(usage["cost"].to_numpy(dtype=float)[~gpu_rows(usage)].sum())


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


def data_end(usage: pd.DataFrame) -> date | None:
    """The last UTC day the data cover (the last day a row's [period_start, period_end) touches); None when
    empty. Computed on the whole export, it says whether the period is closed for every filtered view."""
    if usage.empty:
        return None
    latest = max(usage["period_start"].max(), usage["period_end"].max() - pd.Timedelta(1, "ns"))
    return latest.tz_convert("UTC").date()


def data_quarter(usage: pd.DataFrame) -> tuple[date, date] | None:
    """First and last day of the calendar quarter holding the latest day the data covers (the last day a
    row's [period_start, period_end) touches); the budget line's period. None for an empty table."""
    last_day = data_end(usage)
    if last_day is None:
        return None
    quarter = pd.Period(last_day, freq="Q")
    return quarter.start_time.date(), quarter.end_time.date()


def _ordered(labels: list[str], first: Iterable[str] = ()) -> list[str]:
    """``first`` (in that order, when present), then the other labels sorted, with NA labels last."""
    first = [label for label in first if label in labels]
    rest = sorted(set(labels) - set(first) - set(NA_LABELS.values()))
    missing = sorted(set(labels) & set(NA_LABELS.values()))
    return first + rest + missing


def filter_options(usage: pd.DataFrame) -> dict:
    """What the filter widgets offer: the distinct labels and the first and last day of period_start.

    Returns ``{"teams": [...], "projects": [...], "pricing": [...], "start": date | None, "end": date | None}``;
    teams and projects are sorted with "(untagged)" last, pricing in the order reserved, on_demand, spot,
    "(unknown)" (only values present). ``start``/``end`` are None for an empty table.
    """
    starts = usage["period_start"]
    return {
        "teams": _ordered(group_codes(usage, "team")[1]),
        "projects": _ordered(group_codes(usage, "project")[1]),
        "pricing": _ordered(group_codes(usage, "pricing")[1], first=PRICING_VALUES),
        "start": starts.min().tz_convert("UTC").date() if len(usage) else None,
        "end": starts.max().tz_convert("UTC").date() if len(usage) else None,
    }


def filter_usage(usage: pd.DataFrame, start=None, end=None, teams: Iterable[str] | None = None,
                 projects: Iterable[str] | None = None, pricing: Iterable[str] | None = None) -> pd.DataFrame:
    """The rows whose period_start falls on a UTC day from ``start`` to ``end`` (both inclusive) and whose labelled
    team, project and pricing are among those given (None: no filter; empty: nothing)."""
    keep = np.ones(len(usage), dtype=bool)
    if start is not None:
        keep &= (usage["period_start"] >= utc_day(start)).to_numpy(dtype=bool)
    if end is not None:
        keep &= (usage["period_start"] < utc_day(end) + ONE_DAY).to_numpy(dtype=bool)
    for column, chosen in (("team", teams), ("project", projects), ("pricing", pricing)):
        if chosen is not None:
            codes, labels = group_codes(usage, column)
            chosen = {str(value) for value in chosen}
            keep &= np.isin(codes, [code for code, label in enumerate(labels) if label in chosen])
    return usage.take(np.flatnonzero(keep))


def _label_rank(labels: list[str]) -> np.ndarray:
    """Alphabetical rank of each label, indexed by its code."""
    rank = np.empty(len(labels), dtype=np.int64)
    rank[np.argsort(np.asarray(labels, dtype=object), kind="stable")] = np.arange(len(labels))
    return rank


def attribution_table(usage: pd.DataFrame) -> pd.DataFrame:
    """One row per (team, project, run_id) with its ``gpu_hours``, ``cost`` and shares of the totals.

    NA at any level is the "(untagged)" bucket of that level (an untagged run inside a tagged project, an
    untagged project inside a tagged team, and the fully untagged spend), so every row of ``usage`` is
    counted once and the table's totals equal the usage totals. ``cost_share`` and ``gpu_hours_share`` are
    fractions (0..1) of the table's total cost and GPU-hours (NaN when that total is 0; credits can make a
    share negative). Rows are ordered by team cost, then project cost within the team, then run cost,
    largest first (names break ties).
    """
    level_codes, level_labels = zip(*(group_codes(usage, level) for level in LEVELS), strict=True)
    sizes = [len(labels) for labels in level_labels]
    key = np.ravel_multi_index(level_codes, sizes) if len(usage) else np.zeros(0, dtype=np.int64)
    inverse, cells = pd.factorize(key)
    team, project, run = np.unravel_index(np.asarray(cells, dtype=np.int64), sizes)
    sums = {
        metric: np.bincount(inverse, weights=usage[metric].to_numpy(dtype=float), minlength=len(cells)).astype(float)
        for metric in ("gpu_hours", "cost")
    }
    team_cost = np.bincount(team, weights=sums["cost"], minlength=sizes[0])[team]
    project_of_cell = pd.factorize(team * sizes[1] + project)[0]
    project_cost = np.bincount(project_of_cell, weights=sums["cost"])[project_of_cell]
    team_rank, project_rank, run_rank = (_label_rank(labels) for labels in level_labels)
    order = np.lexsort(
        (run_rank[run], -sums["cost"], project_rank[project], -project_cost, team_rank[team], -team_cost)
    )
    index = pd.RangeIndex(len(order))
    table = pd.DataFrame(
        {level: take_strings(codes[order], list(labels), index)
         for level, labels, codes in zip(LEVELS, level_labels, (team, project, run), strict=True)}
    )
    for metric in ("gpu_hours", "cost"):
        table[metric] = sums[metric][order]
    for metric in ("cost", "gpu_hours"):
        total = table[metric].sum()
        table[f"{metric}_share"] = table[metric] / total if total != 0 else np.nan
    return table


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


def reserved_capacity(usage: pd.DataFrame) -> tuple[float, pd.Series] | None:
    """The reserved capacity in whole GPUs and the reserved tier's hourly GPUs in use over the commitment's hours.

    The export does not state a reservation's size, so the capacity is the most reserved GPUs in use in any
    hour, rounded to a whole GPU (a lower bound of what was reserved). The commitment's hours run from the first
    to the last hour touched by a reserved GPU row or a commitment line (``columns.commitment``), so days when
    the commitment ran idle show as idle. None without reserved GPU rows.
    """
    reserved = gpu_mask(usage) & usage["pricing"].eq("reserved").fillna(False).to_numpy(dtype=bool)
    if not reserved.any():
        return None
    periods = ["period_start", "period_end"]
    window = usage.loc[reserved | commitment_mask(usage), periods]
    in_use = hourly_concurrency(usage.loc[reserved, [*periods, "gpu_hours"]])
    first = window["period_start"].min().floor("h")
    ends = window["period_end"].where(window["period_end"] > window["period_start"])
    ends = ends.fillna(window["period_start"] + pd.Timedelta(1, "s"))  # no duration: it covers its start hour
    last = (ends.max() - pd.Timedelta(1, "ns")).floor("h")
    hours = pd.date_range(first, last, freq="h", name="hour")
    in_use = in_use.reindex(hours, fill_value=0.0)
    return float(np.round(in_use.max())), in_use


def mix_shares(usage: pd.DataFrame) -> pd.DataFrame:
    """GPU-hours and cost of the GPU rows by pricing tier.

    One row per tier: reserved, on_demand and spot always (zeros when unused), then "(unknown)" when some
    GPU rows carry no pricing (or a value outside the canonical three). Columns ``pricing``, ``gpu_hours``,
    ``cost``, ``gpu_hours_share`` and ``cost_share`` (fractions 0..1 of the GPU rows' totals, NaN when that
    total is 0) and
    ``usd_per_gpu_hour`` (realised cost / GPU-hours of the tier, NaN without GPU-hours). Non-GPU rows are
    excluded (module docstring; see ``non_gpu_cost``). A table without prices (``has_prices`` false) has NaN
    costs, cost shares and prices.
    """
    gpu = gpu_rows(usage)
    codes, labels = group_codes(usage, "pricing")
    other = len(PRICING_VALUES)  # position of UNKNOWN_PRICING, which also takes non-canonical values
    tier_of_label = np.array([PRICING_VALUES.index(label) if label in PRICING_VALUES else other for label in labels],
                             dtype=np.int64)
    tier = tier_of_label[codes[gpu]]
    n_tiers = other + 1 if (tier == other).any() else other
    table = pd.DataFrame({"pricing": pd.array([*PRICING_VALUES, UNKNOWN_PRICING][:n_tiers], dtype="string")})
    for metric in ("gpu_hours", "cost"):
        weights = usage[metric].to_numpy(dtype=float)[gpu]
        table[metric] = np.bincount(tier, weights=weights, minlength=other + 1)[:n_tiers].astype(float)
    for metric in ("gpu_hours", "cost"):
        total = table[metric].sum()
        table[f"{metric}_share"] = table[metric] / total if total != 0 else np.nan
    if not has_prices(usage):
        table[["cost", "cost_share"]] = np.nan
    hours = table["gpu_hours"]
    table["usd_per_gpu_hour"] = (table["cost"] / hours.where(hours != 0)).astype(float)
    return table


def unit_costs(usage: pd.DataFrame, active_params: float | None = None, peak_tflops: float | None = None) -> dict:
    """$ per GPU-hour, $ per million tokens and achieved MFU, each NaN with a reason when it cannot be known.

    - ``usd_per_gpu_hour`` = GPU rows' cost / their GPU-hours, over the rows whose cost is known (a joined
      table leaves run-export rows without a billing match at NaN cost).
    - ``usd_per_million_tokens`` = cost of the rows with tokens / their tokens × 1e6, over rows with a known cost.
    - ``mfu`` = 6·N_active·tokens / (GPU-hours · 3600 · peak) over the rows with tokens, computed as
      ``compute.gpu_hours(compute.model_flops(N_active, tokens), peak, 1.0)`` / GPU-hours, i.e. the GPU-hours
      the tokens need at 100 % utilisation over those used. ``peak_tflops`` (dense BF16 TFLOP/s) applies to
      every row; without it each row's peak comes from its gpu_type in the hardware catalogue, and the
      peak used is the GPU-hour-weighted mean (so mixed GPU types give achieved / available FLOPs).

    Returns ``gpu_hours``, ``gpu_cost``, ``non_gpu_cost``, ``usd_per_gpu_hour``, ``tokens``,
    ``token_gpu_hours`` (GPU-hours of rows with tokens), ``token_cost``, ``usd_per_million_tokens``,
    ``peak_tflops`` (used for MFU, NaN if none), ``mfu`` (fraction 0..1) and ``reasons`` (metric name →
    what it needs, in words for the reader, to follow its label in ``LABELS``; empty when all are known). Costs
    are NaN when the table has no currency (Slurm and
    W&B exports carry no prices and read as cost 0).
    """
    reasons: dict[str, str] = {}
    priced = has_prices(usage)
    gpu = gpu_rows(usage)
    hours = usage["gpu_hours"].to_numpy(dtype=float)
    cost = usage["cost"].to_numpy(dtype=float)
    known_cost = np.isfinite(cost)
    gpu_hours = float(hours[gpu].sum())
    priced_hours = float(hours[gpu & known_cost].sum())
    gpu_cost = float(cost[gpu & known_cost].sum()) if priced else np.nan
    usd_per_gpu_hour = gpu_cost / priced_hours if priced_hours and priced else np.nan
    no_prices = NEEDS_PRICES
    if not gpu_hours:
        reasons["usd_per_gpu_hour"] = "needs rows with GPU-hours: this view has none"
    elif not priced:
        reasons["usd_per_gpu_hour"] = no_prices

    row_tokens = usage["tokens"].to_numpy(dtype=float)
    with_tokens = gpu & (np.nan_to_num(row_tokens) > 0)
    tokens = float(row_tokens[with_tokens].sum())
    token_gpu_hours = float(hours[with_tokens].sum())
    priced_tokens = float(row_tokens[with_tokens & known_cost].sum())
    token_cost = float(cost[with_tokens & known_cost].sum()) if priced else np.nan
    no_tokens = NEEDS_TOKENS
    usd_per_million_tokens = token_cost / priced_tokens * TOKENS_PER_MILLION if priced_tokens and priced else np.nan
    if not tokens:
        reasons["usd_per_million_tokens"] = no_tokens
    elif not priced:
        reasons["usd_per_million_tokens"] = no_prices

    peak_used = np.nan
    if peak_tflops is not None:
        peak_used = float(peak_tflops)
    elif tokens:
        gpu_types = usage["gpu_type"].loc[with_tokens]
        peaks = _row_peaks(gpu_types)
        peak_used = float(np.sum(peaks * hours[with_tokens]) / token_gpu_hours)
        if np.isnan(peak_used):
            unknown = sorted({str(name) for name in gpu_types[np.isnan(peaks)].fillna("(missing)")})
            reasons["mfu"] = (f"needs the peak speed of {', '.join(unknown)}, which the hardware catalogue does not "
                              "list")
    mfu = np.nan
    if not tokens:
        reasons["mfu"] = no_tokens
    elif active_params is None:
        reasons["mfu"] = "needs the model's active parameters: choose a plan"
    elif "mfu" not in reasons:
        ideal_gpu_hours = compute.gpu_hours(compute.model_flops(active_params, tokens), peak_used, 1.0)
        mfu = float(ideal_gpu_hours / token_gpu_hours)
    return {
        "rows": len(usage),
        "gpu_hours": gpu_hours,
        "gpu_cost": gpu_cost,
        "non_gpu_cost": non_gpu_cost(usage) if priced else np.nan,
        "usd_per_gpu_hour": usd_per_gpu_hour,
        "tokens": tokens,
        "token_gpu_hours": token_gpu_hours,
        "token_cost": token_cost,
        "usd_per_million_tokens": usd_per_million_tokens,
        "peak_tflops": peak_used,
        "mfu": mfu,
        "reasons": reasons,
    }


def _actual_totals(
    usage: pd.DataFrame, main_run_ids: list[str], failed_states: tuple[str, ...], plan_price: float,
    checkpoint: dict[str, Any] | None = None,
) -> dict[str, Any]:
    setting = checkpointing() if checkpoint is None else checkpoint
    gpu = gpu_mask(usage)
    hours = usage["gpu_hours"].to_numpy(dtype=float)
    has_run = usage["run_id"].notna().to_numpy(dtype=bool)
    failed = failed_mask(usage, failed_states) & has_run
    marks = interruption_marks(usage, setting, failed_states)
    interrupted, share = marks["interrupted"].to_numpy(), marks["lost_share"].to_numpy()
    kept = np.where(interrupted, 1.0 - share, np.where(failed, 0.0, 1.0))  # the share of each row's work kept
    main = usage["run_id"].isin(main_run_ids).fillna(False).to_numpy(dtype=bool)
    main_ok = gpu & main & (kept > 0)
    states_known = bool((gpu & has_run & usage["run_state"].notna().to_numpy(dtype=bool)).any())

    tokens = usage["tokens"].to_numpy(dtype=float)
    with_tokens = main_ok & ~np.isnan(tokens)
    main_ok_h = float((hours * kept)[main_ok].sum())
    token_hours = float((hours * kept)[with_tokens].sum())
    # Tokens of the rows that carry them, scaled up to all main-run hours; unknown if that overflows.
    actual_tokens = (float((tokens * kept)[with_tokens].sum()) * main_ok_h / token_hours if token_hours > 0
                     else math.nan)
    tokens_known = math.isfinite(actual_tokens)

    gpu_h = float(hours[gpu].sum())
    cost_known = cost_is_known(usage)
    cost = usage["cost"].to_numpy(dtype=float)
    if cost_known:
        runs_with_gpu = usage.loc[gpu & has_run, "run_id"].unique()
        host = ~gpu & usage["run_id"].isin(runs_with_gpu).fillna(False).to_numpy(dtype=bool)
        commitment = commitment_mask(usage)
        commitment_usd = float(np.nansum(cost[commitment]))
        unused_usd = float(np.nansum(cost[kind_mask(usage, "unused_commitment")]))
        costless_h = float(hours[gpu & np.isnan(cost)].sum())
        actual_usd = float(np.nansum(cost[gpu]) + np.nansum(cost[host])) + commitment_usd + costless_h * plan_price
    else:
        commitment_usd = unused_usd = 0.0
        costless_h = gpu_h
        actual_usd = gpu_h * plan_price
    return {
        "actual_gpu_hours": gpu_h,
        "actual_usd": actual_usd,
        "actual_price_per_gpu_hour": (actual_usd - unused_usd) / gpu_h if gpu_h > 0 else None,
        "actual_main_ok_gpu_hours": main_ok_h,
        "actual_main_run_gpu_hours": float(hours[gpu & main].sum()),
        "actual_failed_gpu_hours": float(hours[gpu & failed & ~interrupted].sum()),
        "actual_interruptions": int(interrupted.sum()),
        "actual_interruption_gpu_hours": float((hours * share)[interrupted].sum()),
        "interruptions_from_export": int(marks["from_export"].sum()),
        "checkpoint_interval_min": setting["interval_min"],
        "restart_min": setting["restart_min"],
        "checkpoint_source": setting["source"],
        "actual_experiment_gpu_hours": float((hours * kept)[gpu & has_run & ~main].sum()),
        "actual_unattributed_gpu_hours": float(hours[gpu & ~has_run].sum()),
        "actual_tokens": actual_tokens if tokens_known else None,
        "token_coverage": token_hours / main_ok_h if main_ok_h > 0 else None,
        "commitment_usd": commitment_usd,  # commitment lines with no GPU-hours, in actual $
        "unused_commitment_usd": unused_usd,
        "gpu_hours_valued_at_plan_price": costless_h,
        "cost_known": cost_known,
        "states_known": states_known,
        "tokens_known": tokens_known,
    }


def suggest_main_runs(usage: pd.DataFrame, by: str = "run_id") -> list[str]:
    """The main run's ids: the run with the most GPU-hours ([] when no row has a run).

    With ``by="project"`` (exports joined on project, such as W&B, whose run ids are per job) every run id of
    the project with the most GPU-hours, sorted.
    """
    rows = usage.loc[gpu_mask(usage) & usage["run_id"].notna().to_numpy(dtype=bool)]
    hours = rows.groupby(rows[by].astype("string"))["gpu_hours"].sum()
    if not len(hours):
        return []
    top = str(hours.idxmax())
    if by == "run_id":
        return [top]
    return sorted(rows.loc[rows[by].eq(top).fillna(False).to_numpy(dtype=bool), "run_id"].astype(str).unique())


def _check(
    check_id: str, check: str, figure: float | None, unit: str, detail: str, rows: pd.DataFrame,
    usd_value: float | None = None,
) -> dict[str, Any]:
    return {"id": check_id, "check": check, "kind": KINDS[check_id], "figure": figure, "unit": unit,
            "usd": usd_value, "detail": detail, "rows": rows}


def _states_known(usage: pd.DataFrame) -> np.ndarray:
    return gpu_mask(usage) & usage["run_state"].notna().to_numpy(dtype=bool)


def failed_runs_check(usage: pd.DataFrame, checkpoint: dict[str, Any] | None = None) -> dict[str, Any]:
    """Share of GPU-hours (with a known state) spent in failed runs that never resumed (failed, work lost)."""
    known = _states_known(usage)
    if not known.any():
        return _check("failed_runs", "Failed runs", None, "% of GPU-hours", NEEDS_STATES, usage.iloc[:0])
    interrupted = interruption_marks(usage, checkpoint)["interrupted"].to_numpy()
    in_failed = known & failed_mask(usage)
    failed = in_failed & ~interrupted
    hours = usage["gpu_hours"].to_numpy(dtype=float)
    known_h, failed_h = hours[known].sum(), hours[failed].sum()
    rows = usage.loc[failed]
    by_state = rows.groupby(rows["run_state"].astype(str))["gpu_hours"].sum()
    scale = max(known_h, 1.0)  # largest first, ties (to 1e-9 of the known hours) by name
    by_state = by_state.iloc[sorted(range(len(by_state)),
                                    key=lambda i: (-round(by_state.iloc[i] / scale, 9), by_state.index[i]))]
    detail = (f"{count_sig(failed_h)} of {count_sig(known_h)} GPU-hours in runs that failed and never resumed "
              "(work lost)")
    if len(by_state):
        detail += " (" + ", ".join(f"{state} {count_sig(h)}" for state, h in by_state.items()) + ")"
    if interrupted.any():
        detail += (f"; {count_sig(hours[in_failed & interrupted].sum())} more in a failed state resumed from a "
                   "checkpoint: see Interrupted runs")
    if known_h < hours[gpu_mask(usage)].sum():
        detail += f"; states known for {number(known_h / hours[gpu_mask(usage)].sum(), 'fraction')} of all GPU-hours"
    cost = float(rows["cost"].sum()) if cost_is_known(usage) else None
    return _check("failed_runs", "Failed runs", 100.0 * failed_h / known_h, "% of GPU-hours", detail + ".", rows, cost)


def interrupted_runs_check(usage: pd.DataFrame, checkpoint: dict[str, Any] | None = None) -> dict[str, Any]:
    """GPU-hours lost to interruptions of runs that resumed from a checkpoint (interrupted, work kept)."""
    if not _states_known(usage).any():
        return _check("interrupted_runs", "Interrupted runs", None, "GPU-hours", NEEDS_STATES, usage.iloc[:0])
    setting = checkpointing() if checkpoint is None else checkpoint
    marks = interruption_marks(usage, setting)
    interrupted = marks["interrupted"].to_numpy()
    rows = usage.loc[interrupted].assign(lost_gpu_hours=usage["gpu_hours"].to_numpy(dtype=float)[interrupted]
                                         * marks["lost_share"].to_numpy()[interrupted])
    count = int(interrupted.sum())
    how = checkpointing_note(setting, count, int(marks["from_export"].sum()))
    priced = cost_is_known(usage)
    if not count:
        detail = (f"No run resumed after an interruption (the same run id continuing within "
                  f"{RESUME_WINDOW_HOURS:g} h of a failed segment's end on as many GPUs, or a REQUEUED record). "
                  f"{how}.")
        return _check("interrupted_runs", "Interrupted runs", 0.0, "GPU-hours", detail, rows, 0.0 if priced else None)
    counts = rows.groupby(rows["run_state"].astype(str)).size().sort_index()
    states = ", ".join(f"{state} {n}" for state, n in counts.items())
    lost_h = float(rows["lost_gpu_hours"].sum())
    detail = (f"{count:,} interruption{'s' if count != 1 else ''} of runs that resumed from a checkpoint ({states}): "
              f"{count_sig(lost_h)} GPU-hours lost of the segments' {count_sig(rows['gpu_hours'].sum())}, the rest is "
              f"work kept. {how}.")
    share = marks["lost_share"].to_numpy()[interrupted]
    cost = float(np.nansum(rows["cost"].to_numpy(dtype=float) * share)) if priced else None
    return _check("interrupted_runs", "Interrupted runs", lost_h, "GPU-hours", detail, rows, cost)


def successful_runs_check(usage: pd.DataFrame) -> dict[str, Any]:
    """Cost of COMPLETED runs as a share of the cost of runs with a known state (GPU-hours without cost)."""
    known = _states_known(usage)
    if not known.any():
        return _check("successful_runs", "Successful runs", None, "% of cost", NEEDS_STATES, usage.iloc[:0])
    completed = known & usage["run_state"].eq("COMPLETED").fillna(False).to_numpy(dtype=bool)
    rows = usage.loc[completed]
    if cost_is_known(usage):
        part, whole = float(rows["cost"].sum()), float(usage.loc[known, "cost"].sum())
        unit, total = "% of cost", float(usage["cost"].sum())
        what = f"{usd_sig(part)} of the {usd_sig(whole)} spent on runs with a known state"
        if total > 0:
            what += f" ({number(whole / total, 'fraction')} of all cost in the table)"
    else:
        part, whole = float(rows["gpu_hours"].sum()), float(usage.loc[known, "gpu_hours"].sum())
        unit, what = "% of GPU-hours", f"{count_sig(part)} of {count_sig(whole)} GPU-hours (the table carries no cost)"
    figure = 100.0 * part / whole if whole > 0 else None
    return _check("successful_runs", "Successful runs", figure, unit, f"Runs that completed: {what}.", rows)


def idle_capacity_check(usage: pd.DataFrame) -> dict[str, Any]:
    """Commitment nobody used as the bill states it, plus reserved GPU-hours no run claims (USD)."""
    unused, paid = kind_mask(usage, "unused_commitment"), kind_mask(usage, "commitment")
    reserved = usage["pricing"].eq("reserved").fillna(False).to_numpy(dtype=bool) & gpu_mask(usage)
    paid_text = (f"Commitment purchases ({usd_sig(float(usage.loc[paid, 'cost'].sum()))}) are billed on their own "
                 "lines at what was paid" if paid.any() else "")
    if not (gpu_mask(usage).any() or unused.any()):
        detail = "No GPU usage in this bill" + (f". {paid_text}; they cover no GPU-hours in it." if paid.any() else ".")
        return _check("idle_capacity", "Idle capacity", None, "USD", detail, usage.iloc[:0])
    if not (unused.any() or reserved.any() or paid.any()):
        return _check("idle_capacity", "Idle capacity", None, "USD", (
            "No reserved or committed capacity in this table. A billing export with commitment lines (FOCUS "
            "CommitmentDiscountStatus, AWS savings-plan fees, GCP commitment fees, Azure reservations) answers it."
        ), usage.iloc[:0])
    if not unused.any() and paid.any():
        return _check("idle_capacity", "Idle capacity", None, "USD", (
            f"{paid_text} (an actual-cost view), so the unused part cannot be separated. The amortised view (FOCUS "
            "EffectiveCost, Azure amortized cost, AWS CUR) answers it."
        ), usage.loc[paid])
    untagged = reserved & usage["run_id"].isna().to_numpy(dtype=bool)
    rows = usage.loc[unused | untagged]
    unused_usd, untagged_usd = float(usage.loc[unused, "cost"].sum()), float(usage.loc[untagged, "cost"].sum())
    days = usage.loc[unused, "period_start"].dt.strftime("%Y-%m-%d")
    detail = (f"{usd_sig(unused_usd)} of commitment nobody used ({unused.sum()} unused-commitment lines, "
              f"{days.min()} to {days.max()})" if unused.any() else "No unused-commitment line in this bill")
    if untagged.any():
        detail += (f"; {count_sig(usage.loc[untagged, 'gpu_hours'].sum())} reserved GPU-hours "
                   f"({usd_sig(untagged_usd)}) used with no run")
    detail += ". Daily billing lines cannot show nights and weekends: see the load pattern."
    total = unused_usd + untagged_usd
    return _check("idle_capacity", "Idle capacity", total, "USD", detail, rows, total)


def duplicate_runs_check(usage: pd.DataFrame) -> dict[str, Any]:
    """GPU-hours of runs that repeat an earlier run of the same shape (see the module docstring)."""
    start, end = usage["period_start"], usage["period_end"]
    duration_h = ((end - start).dt.total_seconds() / 3600.0).to_numpy(dtype=float)
    jobs = _states_known(usage) & usage["run_id"].notna().to_numpy(dtype=bool) & (np.nan_to_num(duration_h) > 0)
    if not jobs.any():
        return _check("duplicate_runs", "Duplicate runs", None, "GPU-hours",
                      "Needs a run export with job start and end times (Slurm sacct or W&B).", usage.iloc[:0])
    if not usage.loc[jobs, "run_id"].duplicated().any():
        return _check("duplicate_runs", "Duplicate runs", None, "GPU-hours", (
            "No run id occurs on more than one job, so repeats cannot be recognised (W&B ids are unique hashes). "
            "A Slurm sacct export, where run_id is the job name, answers it."
        ), usage.iloc[:0])
    candidate = jobs & ~failed_mask(usage)
    runs = usage.loc[candidate]
    hours = duration_h[candidate]
    keys = pd.DataFrame({column: runs[column].astype("string").fillna("") for column in
                         ("team", "project", "run_id", "gpu_type")})
    keys["gpus"] = np.rint(runs["gpu_hours"].to_numpy(dtype=float) / hours)
    group = keys.groupby(list(keys.columns), sort=False).ngroup().to_numpy()
    start_ns = epoch_ns(runs["period_start"])
    order = np.lexsort((start_ns, group))
    group, start_ns, hours = group[order], start_ns[order], hours[order]
    earlier = np.full(len(order), -1)
    window_ns = DUPLICATE_START_WINDOW.value
    for offset in range(1, len(order)):  # sorted by group then start: the window ends at the first miss
        same = (group[offset:] == group[:-offset]) & (start_ns[offset:] - start_ns[:-offset] <= window_ns)
        if not same.any():
            break
        alike = same & (np.abs(hours[offset:] - hours[:-offset]) <= DUPLICATE_DURATION_TOLERANCE * hours[:-offset])
        later = np.flatnonzero(alike & (earlier[offset:] < 0)) + offset
        earlier[later] = later - offset
    repeats = np.flatnonzero(earlier >= 0)
    rows = runs.iloc[order[repeats]].copy()
    rows["duplicate_of"] = pd.array(runs["resource_id"].to_numpy(dtype=object)[order[earlier[repeats]]],
                                    dtype="string")
    repeat_h = float(rows["gpu_hours"].sum())
    verb = "repeats" if len(rows) == 1 else "repeat"
    detail = (f"{counted(len(rows), 'run')} {verb} an earlier run of the same name, GPU count and duration (within "
              f"{number(DUPLICATE_DURATION_TOLERANCE, 'fraction')}) started less than a day before: "
              f"{count_sig(repeat_h)} GPU-hours. "
              "Sweep members of equal shape are flagged too (the table has no hyperparameters).")
    cost = float(rows["cost"].sum()) if cost_is_known(usage) else None
    return _check("duplicate_runs", "Duplicate runs", repeat_h, "GPU-hours", detail, rows, cost)


def storage_growth_check(usage: pd.DataFrame) -> dict[str, Any]:
    """Storage lines whose cost grew every month (no sign of a retention policy); figure in USD/month."""
    no_gpu = ~gpu_mask(usage) & usage["run_id"].isna().to_numpy(dtype=bool) & ~commitment_mask(usage)
    named = usage["resource_id"].notna() | (usage["team"].notna() & usage["project"].notna())
    storage = usage.loc[no_gpu & (usage["cost"] > 0).to_numpy(dtype=bool) & named.to_numpy(dtype=bool)]
    if storage.empty:
        return _check("storage_growth", "Storage growth", None, "USD/month", (
            "No storage lines: a billing export with storage lines (bucket resource ids, or team and project tags) "
            "answers it."
        ), usage.iloc[:0])
    name = storage["resource_id"].fillna(storage["team"] + " / " + storage["project"]).astype(str)
    month = storage["period_start"].dt.tz_convert("UTC").dt.tz_localize(None).dt.to_period("M")
    monthly = storage["cost"].groupby([name, month]).sum()
    if monthly.index.get_level_values(1).nunique() < 2:
        return _check("storage_growth", "Storage growth", None, "USD/month",
                      "Storage lines cover one month only; an export of two or more months answers it.", storage)
    growing = []
    for line, series in monthly.groupby(level=0):
        series = series.droplevel(0).sort_index()
        per_day = series.to_numpy() / series.index.days_in_month.to_numpy()
        if len(series) >= 2 and (per_day[1:] > per_day[:-1] * (1 + STORAGE_GROWTH_MIN)).all():
            growing.append((line, series))
    rows = storage.loc[name.isin([line for line, _ in growing]).to_numpy(dtype=bool)]
    last_usd = float(sum(series.iloc[-1] for _, series in growing))
    if growing:
        detail = "; ".join(
            f"{line}: " + " → ".join(usd_sig(value) for value in series.to_numpy()) + " a month"
            for line, series in growing
        ) + ". Growing every month: no sign of a retention policy."
    else:
        detail = f"No storage line grew every month ({name.nunique()} lines checked)."
    return _check("storage_growth", "Storage growth", last_usd, "USD/month", detail, rows, last_usd)


def untagged_spend_check(usage: pd.DataFrame) -> dict[str, Any]:
    """Cost of rows with no team, project or run: a tagging finding with its dollars."""
    untagged = (usage["team"].isna() & usage["project"].isna() & usage["run_id"].isna()).to_numpy(dtype=bool)
    if not cost_is_known(usage):
        return _check("untagged_spend", "Untagged spend", None, "USD",
                      "Needs a billing export: a run export carries no prices.", usage.iloc[:0])
    rows = usage.loc[untagged & usage["cost"].fillna(0).ne(0).to_numpy(dtype=bool)]
    dollars = float(rows["cost"].sum())
    total = float(usage["cost"].sum())
    share = f" ({number(dollars / total, 'fraction')} of spend)" if total > 0 else ""
    detail = (f"{usd_sig(dollars)} on {len(rows):,} rows with no team, project or run tag{share}: support, tax, "
              "credits and fees are usually untagged; GPU or storage rows here have no owner to ask.")
    return _check("untagged_spend", "Untagged spend", dollars, "USD", detail, rows, dollars)
