"""Property: for random canonical tables every Retrospective aggregate from the query layer equals the pandas
computation of the same figure (``retro_pandas_reference``: the implementations the layer replaced). Many small
tables on DuckDB; a few on Spark, where every query costs a second or more."""

import dataclasses
import tempfile
from datetime import timedelta

import numpy as np
import pandas as pd
import pytest
import retro_pandas_reference as reference
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from dashboard.ingest.schema import CANONICAL_COLUMNS
from dashboard.query import tables
from dashboard.retro import attribution, filters, gap, load, mix, spend, units, waste
from dashboard.retro import filters as query_view

ORIGIN = pd.Timestamp("2025-03-30", tz="UTC")  # a Sunday, so weeks split the span
EXAMPLES = {"duckdb": 40, "spark": 3}
NO_SHRINK = (Phase.explicit, Phase.reuse, Phase.generate)  # each example runs about 40 queries: shrinking takes minutes
CHECKS = ("failed_runs_check", "interrupted_runs_check", "successful_runs_check", "idle_capacity_check",
          "duplicate_runs_check",
          "storage_growth_check", "untagged_spend_check")


@st.composite
def rows(draw):
    start = ORIGIN + timedelta(minutes=15 * draw(st.integers(0, 4 * 24 * 70)))
    duration = draw(st.sampled_from([None, 0, -60, 15, 60, 90, 24 * 60, 26 * 60, 3 * 24 * 60 + 45, 31 * 24 * 60]))
    return {
        "period_start": start,
        "period_end": pd.NaT if duration is None else start + timedelta(minutes=duration),
        "gpu_hours": draw(st.sampled_from([0.0, 0.0, 8.0, 24.0, 2.5, 192.0, -4.0])),
        "cost": draw(st.sampled_from([0.0, 10.0, 99.5, 480.0, -20.0, np.nan])),
        "currency": draw(st.sampled_from(["USD", "USD", None])),
        "pricing": draw(st.sampled_from(["reserved", "on_demand", "spot", None, "savings"])),
        "charge_kind": draw(st.sampled_from(["usage", "commitment", None])),
        "gpu_type": draw(st.sampled_from(["H100", "A100 80GB", None, "Mystery-9"])),
        "resource_id": draw(st.sampled_from([None, "1", "2", "SavingsPlan-7", "bucket-a"])),
        "team": draw(st.sampled_from(["a", "b", None])),
        "project": draw(st.sampled_from(["p1", "p2", None])),
        "run_id": draw(st.sampled_from(["r1", "r2", "r3", None])),
        "run_state": draw(st.sampled_from(["COMPLETED", "FAILED", "RUNNING", "NODE_FAIL", "REQUEUED", None])),
        "tokens": draw(st.sampled_from([np.nan, np.nan, 1e9, 3e10])),
    }


def canonical(drawn: list[dict]) -> pd.DataFrame:
    frame = pd.DataFrame(drawn, columns=[column for column in CANONICAL_COLUMNS if column != "source_row"])
    frame["billed_cost"] = frame["cost"]
    frame["source_row"] = range(2, len(frame) + 2)
    for column in ("period_start", "period_end"):
        frame[column] = pd.to_datetime(frame[column], utc=True)
    return frame[list(CANONICAL_COLUMNS)].astype(CANONICAL_COLUMNS)


@st.composite
def run_segments(draw):
    """Consecutive jobs of one run (a resumed training run, issue 34): each starts a draw of gaps after the last
    ended (some beyond the resume window), on a GPU count that sometimes changes, in a drawn state."""
    start = ORIGIN + timedelta(minutes=15 * draw(st.integers(0, 4 * 24 * 60)))
    run = draw(st.sampled_from(["r1", "r2", "r3"]))
    segments = []
    for _ in range(draw(st.integers(2, 4))):
        minutes = draw(st.sampled_from([10, 15, 45, 90, 24 * 60, 3 * 24 * 60]))
        gpus = draw(st.sampled_from([64, 64, 8]))
        segments.append({
            "period_start": start, "period_end": start + timedelta(minutes=minutes),
            "gpu_hours": gpus * minutes / 60.0, "cost": draw(st.sampled_from([0.0, 99.5, np.nan])),
            "currency": "USD", "pricing": "on_demand", "charge_kind": "usage", "gpu_type": "H100",
            "resource_id": None, "team": "a", "project": "p1", "run_id": run,
            "run_state": draw(st.sampled_from(["COMPLETED", "NODE_FAIL", "TIMEOUT", "FAILED", "REQUEUED"])),
            "tokens": draw(st.sampled_from([np.nan, 1e9])),
        })
        start += timedelta(minutes=minutes + draw(st.sampled_from([0, 15, 9 * 60, 24 * 60, 25 * 60, -5])))
    return segments


tables_of_usage = st.builds(lambda single, runs: single + [row for run in runs for row in run],
                            st.lists(rows(), min_size=1, max_size=10),
                            st.lists(run_segments(), max_size=2)).map(canonical)


def _as_dict(result) -> dict:
    """A typed result's fields by name, its tuples as lists (as the pandas reference gives them)."""
    return {name: list(value) if isinstance(value, tuple) else value
            for name, value in dataclasses.asdict(result).items()}


def _same(got, want, where: str) -> None:
    if isinstance(want, pd.DataFrame):
        pd.testing.assert_frame_equal(got.reset_index(drop=True), want.reset_index(drop=True), check_dtype=False,
                                      check_exact=False, rtol=1e-9, atol=1e-9, obj=where)
    elif isinstance(want, pd.Series):
        pd.testing.assert_series_equal(got, want, check_dtype=False, check_exact=False, rtol=1e-9, atol=1e-9,
                                       check_freq=False, check_names=False, obj=where)
    elif isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want), where
        for position, (mine, theirs) in enumerate(zip(got, want, strict=True)):
            _same(mine, theirs, f"{where}[{position}]")
    elif isinstance(want, dict):
        assert set(got) == set(want), where
        for key in want:
            _same(got[key], want[key], f"{where}[{key!r}]")
    elif isinstance(want, float) and not isinstance(got, (str, type(None))):
        assert got == pytest.approx(want, rel=1e-9, abs=1e-9, nan_ok=True), where
    else:
        assert got == want, where


def _check_core(usage: pd.DataFrame, table) -> None:
    """The figures of every tab but the waste checklist."""
    for freq in reference.FREQS:
        for by in reference.GROUPS:
            _same(spend.spend_over_time(table, freq, by), reference.spend_over_time(usage, freq, by),
                  f"spend {freq} {by}")
    days = spend.spend_over_time(table, "D", "team")
    for metric in reference.METRICS:
        _same(spend.daily_total(table, metric), reference.daily_total(usage, metric), f"daily {metric}")
        _same(spend.daily_from_days(days, metric), reference.daily_total(usage, metric), f"daily from days {metric}")
    _same(spend.data_end(table), reference.data_end(usage), "data_end")
    quarters = spend.data_quarters(table)
    _same(quarters[-1] if quarters else None, reference.data_quarter(usage), "data_quarter")
    _same(_as_dict(filters.filter_options(table)), reference.filter_options(usage), "filter_options")
    _same(attribution.attribution_table(table), reference.attribution_table(usage), "attribution")
    _same(load.hourly_concurrency(table), reference.hourly_concurrency(usage), "hourly_concurrency")
    _same(load.reserved_capacity(table) or (None, None), reference.reserved_capacity(usage) or (None, None),
          "reserved_capacity")
    _same(mix.mix_shares(table), reference.mix_shares(usage), "mix_shares")
    _same(dataclasses.asdict(units.unit_costs(table, active_params=7e9)),
          reference.unit_costs(usage, active_params=7e9), "unit_costs")
    main = reference.suggest_main_runs(usage)
    _same(gap.suggest_main_runs(table), main, "suggest_main_runs")
    _same(dataclasses.asdict(gap._actual_totals(table, main, reference.FAILED_STATES, 2.0)),
          reference._actual_totals(usage, main, reference.FAILED_STATES, 2.0), "actual_totals")


def _check_filtered(usage: pd.DataFrame, table, teams: list[str], start_day: int) -> None:
    start = (ORIGIN + timedelta(days=start_day)).date()
    rows = reference.filter_usage(usage, start=start, teams=teams)
    view = query_view.filtered(table, start=start, teams=teams)
    _same(attribution.attribution_table(view), reference.attribution_table(rows), "filtered attribution")
    _same(spend.daily_total(view), reference.daily_total(rows), "filtered daily")


def _check_waste(usage: pd.DataFrame, table) -> None:
    for name in CHECKS:
        got, want = getattr(waste, name)(table), getattr(reference, name)(usage)
        for key in ("id", "figure", "usd", "detail"):
            _same(getattr(got, key), want[key], f"{name}[{key}]")
        assert len(got.rows if got.rows is not None else ()) == len(want["rows"]), name


TEAMS = st.lists(st.sampled_from(["a", "b", "(untagged)"]), unique=True)


@settings(max_examples=EXAMPLES["duckdb"], deadline=None, phases=NO_SHRINK,
          suppress_health_check=[HealthCheck.too_slow])
@given(usage=tables_of_usage, teams=TEAMS, start_day=st.integers(0, 40))
def test_duckdb_matches_pandas(duckdb_backend, usage, teams, start_day):
    table = tables.usage_table(duckdb_backend, usage)
    _check_core(usage, table)
    _check_filtered(usage, table, teams, start_day)
    _check_waste(usage, table)


@settings(max_examples=EXAMPLES["spark"], deadline=None, phases=NO_SHRINK, suppress_health_check=[HealthCheck.too_slow])
@given(usage=tables_of_usage)
def test_spark_matches_pandas(spark_backend, usage):
    table = tables.usage_table(spark_backend, usage)
    _check_core(usage, table)


@settings(max_examples=12, deadline=None, phases=NO_SHRINK, suppress_health_check=[HealthCheck.too_slow])
@given(usage=tables_of_usage)
def test_stored_times_match_pandas(duckdb_backend, usage):
    """The same figures from the table stored as a workspace dataset stores it (Parquet, time-zone-aware times, read
    by DuckDB as TIMESTAMP WITH TIME ZONE), whose epoch seconds the layer takes without a cast."""
    with tempfile.TemporaryDirectory() as folder:
        path = f"{folder}/usage.parquet"
        usage.to_parquet(path)
        table = duckdb_backend.read_parquet(path)
        assert table.schema()["period_start"].timezone == "UTC"
        _check_core(usage, table)
        _check_waste(usage, table)
