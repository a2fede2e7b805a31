"""Every Retrospective aggregate through the query layer, on DuckDB and on Spark, against figures worked out by
hand from two small canonical tables (comments give the arithmetic)."""

from datetime import date

import pandas as pd
import pytest
from usage_rows import usage

from dashboard.query import tables
from dashboard.retro import attribution, filters, gap, load, mix, spend, units, waste
from dashboard.retro import filters as query_view
from dashboard.retro import spend as spend_query

# April 2025: a reserved day, an untagged day with no GPU, an hour of spot, a monthly line of team a with no
# project and no GPU ($300 over 30 days = $10 a day), and a two-hour job across midnight.
# Cost 100 + 10 + 20 + 300 + 50 = 480; GPU-hours 24 + 8 + 16 = 48.
APRIL = usage(
    {"period_start": "2025-04-01 00:00", "period_end": "2025-04-02 00:00", "gpu_hours": 24.0, "cost": 100.0,
     "pricing": "reserved", "team": "a", "project": "p1", "run_id": "r1", "gpu_type": "H100"},
    {"period_start": "2025-04-02 00:00", "period_end": "2025-04-03 00:00", "cost": 10.0},
    {"period_start": "2025-04-03 12:00", "period_end": "2025-04-03 13:00", "gpu_hours": 8.0, "cost": 20.0,
     "pricing": "spot", "team": "b", "project": "p2", "run_id": "r2", "gpu_type": "H100"},
    {"period_start": "2025-04-01 00:00", "period_end": "2025-05-01 00:00", "cost": 300.0, "pricing": "on_demand",
     "team": "a"},
    {"period_start": "2025-04-04 23:00", "period_end": "2025-04-05 01:00", "gpu_hours": 16.0, "cost": 50.0,
     "pricing": "on_demand", "team": "b", "project": "p2", "run_id": "r3", "gpu_type": "H100"},
)
# 1 May 2025: a 10-hour job of 8 GPUs that completed, a failed restart, the same job again 12 h after the first
# (a repeat), a commitment line with no usage ($50) and reserved GPUs nobody claimed (24 GPU-h, $60).
JOBS = usage(
    {"period_start": "2025-05-01 00:00", "period_end": "2025-05-01 10:00", "gpu_hours": 80.0, "cost": 200.0,
     "team": "t", "project": "p", "run_id": "train", "run_state": "COMPLETED", "resource_id": "1",
     "gpu_type": "H100", "pricing": "on_demand"},
    {"period_start": "2025-05-01 10:00", "period_end": "2025-05-01 12:00", "gpu_hours": 16.0, "cost": 40.0,
     "team": "t", "project": "p", "run_id": "train", "run_state": "FAILED", "resource_id": "2",
     "gpu_type": "H100", "pricing": "on_demand"},
    {"period_start": "2025-05-01 12:00", "period_end": "2025-05-01 22:00", "gpu_hours": 80.0, "cost": 200.0,
     "team": "t", "project": "p", "run_id": "train", "run_state": "COMPLETED", "resource_id": "3",
     "gpu_type": "H100", "pricing": "on_demand"},
    {"period_start": "2025-05-01 00:00", "period_end": "2025-05-02 00:00", "cost": 50.0, "pricing": "reserved",
     "charge_kind": "unused_commitment"},
    {"period_start": "2025-05-01 00:00", "period_end": "2025-05-02 00:00", "gpu_hours": 24.0, "cost": 60.0,
     "pricing": "reserved"},
)


@pytest.fixture
def april(backend):
    return tables.usage_table(backend, APRIL)


@pytest.fixture
def jobs(backend):
    return tables.usage_table(backend, JOBS)


def _cell(frame: pd.DataFrame, period: str, group: str) -> tuple[float, float]:
    row = frame.loc[(frame["period"] == pd.Timestamp(period, tz="UTC")) & (frame["group"] == group)]
    assert len(row) == 1, (period, group)
    return float(row["cost"].iloc[0]), float(row["gpu_hours"].iloc[0])


@pytest.mark.parametrize(("freq", "by", "period", "group", "cost", "gpu_hours"), [
    ("D", "team", "2025-04-01", "a", 110.0, 24.0),  # the reserved day's $100 + one 30th of $300
    ("D", "team", "2025-04-02", "(untagged)", 10.0, 0.0),
    ("D", "team", "2025-04-04", "b", 25.0, 8.0),  # the hour before midnight: half of $50 and of 16 GPU-h
    ("D", "team", "2025-04-05", "b", 25.0, 8.0),
    ("D", "team", "2025-04-30", "a", 10.0, 0.0),  # the monthly line's last day
    ("D", "pricing", "2025-04-02", "(unknown)", 10.0, 0.0),
    ("D", "project", "2025-04-03", "p2", 20.0, 8.0),
    ("W", "team", "2025-03-31", "a", 160.0, 24.0),  # week from Monday 31 March: $100 + 6 days x $10
    ("W", "team", "2025-03-31", "b", 70.0, 24.0),
    ("W", "team", "2025-04-28", "a", 30.0, 0.0),  # 28, 29 and 30 April
], ids=["day-a", "day-untagged", "day-b-before-midnight", "day-b-after", "last-day", "unknown-pricing",
        "project", "week-a", "week-b", "last-week"])
def test_spend_cells(april, freq, by, period, group, cost, gpu_hours):
    frame = spend.spend_over_time(april, freq=freq, by=by)
    assert _cell(frame, period, group) == pytest.approx((cost, gpu_hours))
    assert frame["cost"].sum() == pytest.approx(480.0)


def test_daily_total_and_its_span(april):
    daily = spend.daily_total(april, metric="cost")
    assert len(daily) == 30 and daily.index[0] == pd.Timestamp("2025-04-01", tz="UTC")
    assert daily.iloc[:6].tolist() == pytest.approx([110.0, 20.0, 30.0, 35.0, 35.0, 10.0])
    assert daily.sum() == pytest.approx(480.0)
    from_days = spend.daily_from_days(spend.spend_over_time(april, freq="D", by="pricing"), "cost")
    assert from_days.iloc[:6].tolist() == pytest.approx([110.0, 20.0, 30.0, 35.0, 35.0, 10.0]) and len(from_days) == 30


def test_data_end_and_quarter(april):
    assert spend.data_end(april) == date(2025, 4, 30)  # the monthly line ends at midnight starting 1 May
    assert spend.data_quarters(april) == [(date(2025, 4, 1), date(2025, 6, 30))]


def test_filter_options(april):
    assert filters.filter_options(april) == filters.FilterOptions(
        teams=("a", "b", "(untagged)"), projects=("p1", "p2", "(untagged)"),
        pricing=("reserved", "on_demand", "spot", "(unknown)"), start=date(2025, 4, 1), end=date(2025, 4, 4))


@pytest.mark.parametrize(("kwargs", "rows", "cost", "gpu_hours"), [
    ({"teams": ["b"]}, 2, 70.0, 24.0),
    ({"teams": ["(untagged)"]}, 1, 10.0, 0.0),
    ({"start": "2025-04-02", "end": "2025-04-03"}, 2, 30.0, 8.0),  # rows starting on the 2nd and the 3rd
    ({"pricing": ["on_demand", "(unknown)"]}, 3, 360.0, 16.0),
    ({"projects": []}, 0, 0.0, 0.0),
    ({"teams": ["a"], "projects": ["(untagged)"]}, 1, 300.0, 0.0),
], ids=["team", "untagged-team", "dates", "pricing", "empty-choice", "team-and-project"])
def test_filtered_view(april, kwargs, rows, cost, gpu_hours):
    sums = spend_query.totals(query_view.filtered(april, **kwargs))
    assert (sums.rows, sums.cost, sums.gpu_hours) == pytest.approx((rows, cost, gpu_hours))


def test_attribution_order_and_totals(april):
    table = attribution.attribution_table(april)
    # team a $400 first (its untagged project $300 before p1 $100), then b $70 (r3 $50, r2 $20), then $10 untagged
    assert list(zip(table["team"], table["project"], table["run_id"], table["cost"], strict=True)) == [
        ("a", "(untagged)", "(untagged)", 300.0), ("a", "p1", "r1", 100.0), ("b", "p2", "r3", 50.0),
        ("b", "p2", "r2", 20.0), ("(untagged)", "(untagged)", "(untagged)", 10.0)]
    assert table["cost_share"].tolist() == pytest.approx([300 / 480, 100 / 480, 50 / 480, 20 / 480, 10 / 480])


def test_mix_shares_and_cost_at_mix(april):
    shares = mix.mix_shares(april).set_index("pricing")
    assert shares["gpu_hours_share"].tolist() == pytest.approx([24 / 48, 16 / 48, 8 / 48])
    assert shares["usd_per_gpu_hour"].tolist() == pytest.approx([100 / 24, 50 / 16, 20 / 8])
    assert mix.non_gpu_cost(april) == pytest.approx(310.0)
    assert mix.cost_at_mix(april, 1.0, 0.0).gpu_cost_at_mix == pytest.approx(48 * 100 / 24)


def test_unit_costs(april):
    numbers = units.unit_costs(april)
    assert (numbers.gpu_hours, numbers.gpu_cost, numbers.non_gpu_cost) == pytest.approx((48.0, 170.0, 310.0))
    assert numbers.usd_per_gpu_hour == pytest.approx(170 / 48)


def test_load_profile(april):
    series = load.hourly_concurrency(april)
    assert len(series) == 30 * 24  # 1 April 00:00 to 30 April 23:00
    assert series.iloc[:24].tolist() == pytest.approx([1.0] * 24)  # 24 GPU-h over the day
    assert series[pd.Timestamp("2025-04-03 12:00", tz="UTC")] == pytest.approx(8.0)
    assert series[pd.Timestamp("2025-04-04 23:00", tz="UTC")] == pytest.approx(8.0)
    assert series.sum() == pytest.approx(48.0)
    capacity, in_use = load.reserved_capacity(april)
    assert capacity == 1.0 and len(in_use) == 24


def test_plan_vs_actual_sums(jobs):
    parts = gap._actual_totals(jobs, ["train"], ("FAILED",), plan_price=2.0)
    assert parts.actual_gpu_hours == pytest.approx(200.0)  # 80 + 16 + 80 + 24
    # the failed job (8 GPUs, 10:00 to 12:00) is followed at 12:00 by the run on 8 GPUs: it resumed, so the
    # interruption lost half a 30-min checkpoint interval and an 11-min restart on 8 GPUs, the rest is work kept
    lost = 8 * (30 / 2 + 11) / 60
    assert parts.actual_main_ok_gpu_hours == pytest.approx(160.0 + 16.0 - lost)
    assert parts.actual_failed_gpu_hours == pytest.approx(0.0)
    assert parts.actual_interruption_gpu_hours == pytest.approx(lost) and parts.actual_interruptions == 1
    assert parts.actual_unattributed_gpu_hours == pytest.approx(24.0)
    assert parts.commitment_usd == pytest.approx(50.0)
    assert parts.actual_usd == pytest.approx(550.0)  # GPU rows $500 + the commitment line $50
    assert gap.suggest_main_runs(jobs) == ["train"]


def test_waste_checklist(jobs):
    checks = {check.id: check for check in waste.waste_checklist(jobs)}
    assert checks["failed_runs"].figure == pytest.approx(0.0)  # the failed job was resumed: interrupted
    lost = 8 * (30 / 2 + 11) / 60
    assert checks["interrupted_runs"].figure == pytest.approx(lost)
    assert checks["interrupted_runs"].usd == pytest.approx(40.0 * lost / 16)  # its $40 at the share lost
    assert checks["interrupted_runs"].rows["lost_gpu_hours"].tolist() == pytest.approx([lost])
    assert checks["successful_runs"].figure == pytest.approx(100 * 400 / 440)
    assert checks["idle_capacity"].usd == pytest.approx(110.0)  # $50 unused commitment + $60 unclaimed reserved
    assert checks["duplicate_runs"].figure == pytest.approx(80.0)
    assert checks["duplicate_runs"].rows["duplicate_of"].tolist() == ["1"]
    assert checks["untagged_spend"].usd == pytest.approx(110.0)
    assert len(checks["untagged_spend"].rows) == 2
