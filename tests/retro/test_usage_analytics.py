"""Retrospective usage analytics (filters, spend, attribution, load, mix, unit costs) on small hand-built
tables with hand-computed answers, plus totals on the bundled FOCUS sample."""

from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dashboard.core import compute
from dashboard.ingest import import_path
from dashboard.ingest.schema import CANONICAL_COLUMNS, ReadOptions
from dashboard.query import tables
from dashboard.retro import attribution, filters, load, mix, spend, units
from dashboard.retro import filters as query_view
from dashboard.retro import spend as spend_query
from dashboard.retro.filters import UNTAGGED

ROOT = Path(__file__).resolve().parents[2]
UNKNOWN = filters.UNKNOWN_PRICING
DEFAULTS = {"currency": "USD", "tokens": np.nan}


def usage_frame(rows: list[dict]) -> pd.DataFrame:
    """A canonical usage table from partial rows (times as UTC strings; missing fields NA)."""
    columns = {}
    for name, dtype in CANONICAL_COLUMNS.items():
        values = [row.get(name, DEFAULTS.get(name)) for row in rows]
        if name.startswith("period_"):
            columns[name] = pd.to_datetime(pd.Series(values, dtype=object), utc=True, format="ISO8601").astype(dtype)
        elif name == "source_row":
            columns[name] = pd.Series(range(2, len(rows) + 2), dtype=dtype)
        else:
            columns[name] = pd.Series(values, dtype=dtype)
    return pd.DataFrame(columns)


# Five rows over April 2025: a tagged day, an untagged day (no GPU), an hour of spot, a monthly line with no
# project and no GPU, and a two-hour job across midnight. Costs 100 + 10 + 20 + 300 + 50 = 480; GPU-hours 48.
APRIL = usage_frame([
    {"period_start": "2025-04-01", "period_end": "2025-04-02", "gpu_hours": 24.0, "cost": 100.0,
     "pricing": "reserved", "team": "a", "project": "p1", "run_id": "r1"},
    {"period_start": "2025-04-02", "period_end": "2025-04-03", "gpu_hours": 0.0, "cost": 10.0},
    {"period_start": "2025-04-03 12:00", "period_end": "2025-04-03 13:00", "gpu_hours": 8.0, "cost": 20.0,
     "pricing": "spot", "team": "b", "project": "p2", "run_id": "r2"},
    {"period_start": "2025-04-01", "period_end": "2025-05-01", "gpu_hours": 0.0, "cost": 300.0,
     "pricing": "on_demand", "team": "a"},
    {"period_start": "2025-04-04 23:00", "period_end": "2025-04-05 01:00", "gpu_hours": 16.0, "cost": 50.0,
     "pricing": "on_demand", "team": "b", "project": "p2", "run_id": "r3"},
])


@pytest.fixture(scope="module")
def focus_sample() -> pd.DataFrame:
    usage, _ = import_path(ROOT / "data/samples/focus_sample.csv", options=ReadOptions(timezone="UTC"))
    return usage


# --- filters ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "cost", "gpu_hours"),
    [
        pytest.param({}, 480.0, 48.0, id="no-filter"),
        pytest.param({"start": "2025-04-02"}, 80.0, 24.0, id="from-2nd"),
        pytest.param({"end": date(2025, 4, 1)}, 400.0, 24.0, id="to-1st-keeps-monthly-line-whole"),
        pytest.param({"start": "2025-04-03", "end": "2025-04-03"}, 20.0, 8.0, id="one-day"),
        # 01:00 in New York on the 3rd is 05:00 UTC on the 3rd: the 3rd is included.
        pytest.param({"end": pd.Timestamp("2025-04-03 01:00", tz="America/New_York")}, 430.0, 32.0, id="tz-aware"),
        pytest.param({"teams": [UNTAGGED]}, 10.0, 0.0, id="untagged-team"),
        pytest.param({"teams": ["a"]}, 400.0, 24.0, id="team-a"),
        pytest.param({"projects": [UNTAGGED]}, 310.0, 0.0, id="untagged-project"),
        pytest.param({"pricing": [UNKNOWN]}, 10.0, 0.0, id="unknown-pricing"),
        pytest.param({"pricing": ["spot", "on_demand"]}, 370.0, 24.0, id="two-tiers"),
        pytest.param({"teams": ["a"], "pricing": ["reserved"]}, 100.0, 24.0, id="team-and-tier"),
        pytest.param({"teams": []}, 0.0, 0.0, id="empty-selection"),
    ],
)
def test_filters_change_totals_exactly(kwargs, cost, gpu_hours):
    kept = query_view.filtered(tables.table_of(APRIL), **kwargs)
    sums = spend_query.totals(kept)
    assert (sums.cost, sums.gpu_hours) == (cost, gpu_hours)
    assert list(kept.columns) == list(CANONICAL_COLUMNS)


def test_filter_options_list_untagged_and_unknown_last():
    options = filters.filter_options(APRIL)
    assert options == filters.FilterOptions(
        teams=("a", "b", UNTAGGED),
        projects=("p1", "p2", UNTAGGED),
        pricing=("reserved", "on_demand", "spot", UNKNOWN),
        start=date(2025, 4, 1),
        end=date(2025, 4, 4),
    )


# --- spend over time ----------------------------------------------------------------------------------------


def _cell(frame: pd.DataFrame, period: str, group: str) -> pd.Series:
    hit = frame[(frame["period"] == pd.Timestamp(period, tz="UTC")) & (frame["group"] == group)]
    assert len(hit) == 1, (period, group)
    return hit.iloc[0]


@pytest.mark.parametrize(
    ("freq", "by", "period", "group", "cost", "gpu_hours"),
    [
        # Team a on 1 April: its day (100) plus 1/30 of the $300 monthly line.
        pytest.param("D", "team", "2025-04-01", "a", 110.0, 24.0, id="day-with-monthly-share"),
        pytest.param("D", "team", "2025-04-15", "a", 10.0, 0.0, id="monthly-line-spread"),
        pytest.param("D", "team", "2025-04-02", UNTAGGED, 10.0, 0.0, id="untagged-kept"),
        # The job from 23:00 to 01:00 puts half of $50 and of 16 GPU-hours on each day.
        pytest.param("D", "team", "2025-04-04", "b", 25.0, 8.0, id="midnight-split-before"),
        pytest.param("D", "team", "2025-04-05", "b", 25.0, 8.0, id="midnight-split-after"),
        pytest.param("D", "pricing", "2025-04-02", UNKNOWN, 10.0, 0.0, id="unknown-pricing-kept"),
        pytest.param("D", "project", "2025-04-01", UNTAGGED, 10.0, 0.0, id="untagged-project"),
        # Week of Monday 31 March: team a has 100 + 6 days × 10 (1-6 April).
        pytest.param("W", "team", "2025-03-31", "a", 160.0, 24.0, id="week-one-team-a"),
        pytest.param("W", "team", "2025-04-07", "a", 70.0, 0.0, id="week-two-team-a"),
        pytest.param("W", "team", "2025-03-31", "b", 70.0, 24.0, id="week-one-team-b"),
        pytest.param("W", "pricing", "2025-03-31", "on_demand", 110.0, 16.0, id="week-one-on-demand"),
    ],
)
def test_spend_cells_are_spread_by_time(freq, by, period, group, cost, gpu_hours):
    cell = _cell(spend.spend_over_time(APRIL, freq, by), period, group)
    assert cell["cost"] == pytest.approx(cost, rel=1e-12)
    assert cell["gpu_hours"] == pytest.approx(gpu_hours, rel=1e-12)


@pytest.mark.parametrize("freq", ["D", "W"])
@pytest.mark.parametrize("by", ["team", "project", "pricing"])
def test_spend_totals_match_the_table(freq, by):
    frame = spend.spend_over_time(APRIL, freq, by)
    assert list(frame.columns) == ["period", "group", "gpu_hours", "cost"]
    assert frame["cost"].sum() == pytest.approx(480.0, rel=1e-12)
    assert frame["gpu_hours"].sum() == pytest.approx(48.0, rel=1e-12)
    assert frame["group"].notna().all()
    assert str(frame["period"].dtype) == "datetime64[ns, UTC]"


@pytest.mark.parametrize(("kwargs", "message"), [({"freq": "M"}, "freq"), ({"by": "run_id"}, "by")])
def test_spend_rejects_unknown_options(kwargs, message):
    with pytest.raises(ValueError, match=message):
        spend.spend_over_time(APRIL, **kwargs)


def test_row_without_duration_lands_on_its_start_day():
    frame = usage_frame([{"period_start": "2025-04-03 10:00", "period_end": "2025-04-03 10:00", "gpu_hours": 5.0,
                          "cost": 7.0, "team": "a"}])
    cell = _cell(spend.spend_over_time(frame, "D", "team"), "2025-04-03", "a")
    assert (cell["cost"], cell["gpu_hours"]) == (7.0, 5.0)


def test_daily_total_covers_every_day_of_the_span():
    daily = spend.daily_total(APRIL)
    assert len(daily) == 30  # 1-30 April: the monthly line ends at 1 May 00:00
    assert daily.index[0] == pd.Timestamp("2025-04-01", tz="UTC")
    assert daily.sum() == pytest.approx(480.0, rel=1e-12)
    assert daily.loc[pd.Timestamp("2025-04-20", tz="UTC")] == pytest.approx(10.0)
    assert spend.daily_total(APRIL, "gpu_hours").sum() == pytest.approx(48.0)


@pytest.mark.parametrize(
    ("rate", "actual_days", "period_end", "days_to_end"),
    [
        pytest.param(1000.0, 10, date(2025, 6, 30), 91, id="quarter"),
        pytest.param(250.0, 30, date(2025, 4, 30), 30, id="no-days-left"),
        pytest.param(7.5, 1, date(2025, 4, 8), 8, id="one-day-of-data"),
    ],
)
def test_constant_rate_forecast_reaches_rate_times_days(rate, actual_days, period_end, days_to_end):
    days = pd.date_range("2025-04-01", periods=actual_days, freq="D", tz="UTC")
    frame = spend.cumulative_with_forecast(pd.Series(rate, index=days), period_end)
    assert frame["day"].iloc[-1] == pd.Timestamp(period_end, tz="UTC")
    assert frame["cumulative"].dropna().iloc[-1] == pytest.approx(rate * actual_days)
    final = frame["forecast"].iloc[-1] if days_to_end > actual_days else frame["cumulative"].iloc[-1]
    assert final == pytest.approx(rate * days_to_end)
    assert np.allclose(np.diff(frame["forecast"].dropna()), rate)  # linear


@pytest.mark.parametrize(
    ("values", "window_days", "rate"),
    [
        pytest.param([0.0] * 10 + [10.0] * 4, 4, 10.0, id="window-of-4"),
        pytest.param([0.0] * 10 + [10.0] * 4, 14, 40.0 / 14, id="window-of-14"),
        pytest.param([3.0, 6.0], 14, 4.5, id="fewer-days-than-window"),
    ],
)
def test_forecast_rate_is_the_mean_of_the_last_window(values, window_days, rate):
    days = pd.date_range("2025-04-01", periods=len(values), freq="D", tz="UTC")
    frame = spend.cumulative_with_forecast(pd.Series(values, index=days), date(2025, 5, 31), window_days=window_days)
    forecast = frame["forecast"].dropna()
    assert forecast.iloc[0] == pytest.approx(sum(values))  # joins the actual line on the last day
    assert forecast.iloc[1] - forecast.iloc[0] == pytest.approx(rate)


def test_forecast_counts_missing_days_as_zero_and_accepts_dates():
    series = pd.Series([10.0, 10.0], index=[date(2025, 4, 1), date(2025, 4, 3)])
    frame = spend.cumulative_with_forecast(series, date(2025, 4, 4))
    assert frame["daily"].tolist()[:3] == [10.0, 0.0, 10.0]
    assert frame["forecast"].iloc[-1] == pytest.approx(20.0 + 20.0 / 3)


@pytest.mark.parametrize(
    ("start", "end", "quarters"),
    [
        pytest.param("2025-04-01", "2025-07-01", [(date(2025, 4, 1), date(2025, 6, 30))], id="ends-at-midnight"),
        pytest.param("2025-06-30 23:00", "2025-07-01 01:00",
                     [(date(2025, 4, 1), date(2025, 6, 30)), (date(2025, 7, 1), date(2025, 9, 30))], id="crosses"),
        pytest.param("2024-11-05", "2024-11-06", [(date(2024, 10, 1), date(2024, 12, 31))], id="q4"),
        pytest.param("2024-12-20", "2025-04-02",  # Q4 2024 to Q2 2025 across a new year
                     [(date(2024, 10, 1), date(2024, 12, 31)), (date(2025, 1, 1), date(2025, 3, 31)),
                      (date(2025, 4, 1), date(2025, 6, 30))], id="three-quarters"),
    ],
)
def test_data_quarters_run_from_the_first_day_to_the_latest(start, end, quarters):
    frame = usage_frame([{"period_start": start, "period_end": end, "gpu_hours": 1.0, "cost": 1.0}])
    assert spend.data_quarters(frame) == quarters


@pytest.mark.parametrize(("first_day", "label"), [(date(2024, 10, 1), "2024 Q4"), (date(2025, 1, 1), "2025 Q1"),
                                                  (date(2025, 7, 1), "2025 Q3")])
def test_quarter_labels(first_day, label):
    assert spend.quarter_label(spend.quarter_of(first_day)) == label


def test_focus_sample_quarter(focus_sample):
    assert spend.data_quarters(focus_sample) == [(date(2025, 4, 1), date(2025, 6, 30))]


# --- attribution --------------------------------------------------------------------------------------------


def test_attribution_keeps_untagged_buckets_with_their_exact_cost():
    table = attribution.attribution_table(APRIL)
    assert list(table.columns) == ["team", "project", "run_id", "gpu_hours", "cost", "cost_share",
                                   "gpu_hours_share"]
    rows = {(r.team, r.project, r.run_id): (r.gpu_hours, r.cost) for r in table.itertuples()}
    assert rows == {
        ("a", UNTAGGED, UNTAGGED): (0.0, 300.0),
        ("a", "p1", "r1"): (24.0, 100.0),
        ("b", "p2", "r3"): (16.0, 50.0),
        ("b", "p2", "r2"): (8.0, 20.0),
        (UNTAGGED, UNTAGGED, UNTAGGED): (0.0, 10.0),
    }
    # Ordered by team cost (a 400, b 70, untagged 10), then project cost, then run cost.
    assert list(table["team"]) == ["a", "a", "b", "b", UNTAGGED]
    assert list(table["project"][:2]) == [UNTAGGED, "p1"]
    assert table["cost_share"].tolist() == pytest.approx([300 / 480, 100 / 480, 50 / 480, 20 / 480, 10 / 480])
    assert table["gpu_hours_share"].sum() == pytest.approx(1.0)


def test_attribution_team_totals_add_up_to_the_focus_sample(focus_sample):
    table = attribution.attribution_table(focus_sample)
    by_team = table.groupby("team")["cost"].sum()
    assert by_team.sum() == pytest.approx(focus_sample["cost"].sum(), rel=1e-12)
    untagged = focus_sample.loc[focus_sample["team"].isna(), "cost"].sum()
    assert by_team[UNTAGGED] == pytest.approx(untagged, rel=1e-12)
    assert table["gpu_hours"].sum() == pytest.approx(focus_sample["gpu_hours"].sum(), rel=1e-12)


def test_attribution_of_unpriced_runs_has_no_cost_share():
    frame = usage_frame([{"period_start": "2025-04-01", "period_end": "2025-04-02", "gpu_hours": 4.0,
                          "cost": 0.0, "currency": None, "team": "a"}])
    table = attribution.attribution_table(frame)
    assert table["cost_share"].isna().all()
    assert table["gpu_hours_share"].tolist() == [1.0]


# --- load ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("start", "end", "gpu_hours", "expected"),
    [
        pytest.param("2025-04-01", "2025-04-03", 96.0, [2.0] * 48, id="48h-of-96-gpu-hours"),
        pytest.param("2025-04-01", "2025-04-02", 192.0, [8.0] * 24, id="daily-line-of-192"),
        # 4 GPUs from 10:30 to 12:30: half an hour, a full hour, half an hour.
        pytest.param("2025-04-01 10:30", "2025-04-01 12:30", 8.0, [2.0, 4.0, 2.0], id="partial-hours"),
        pytest.param("2025-04-01 10:15", "2025-04-01 10:45", 4.0, [4.0], id="inside-one-hour"),
        pytest.param("2025-04-01 10:20", "2025-04-01 10:20", 3.0, [3.0], id="no-duration"),
    ],
)
def test_hourly_concurrency_spreads_gpu_hours_evenly(start, end, gpu_hours, expected):
    frame = usage_frame([{"period_start": start, "period_end": end, "gpu_hours": gpu_hours, "cost": 1.0}])
    series = load.hourly_concurrency(frame)
    assert series.to_numpy() == pytest.approx(expected)
    assert series.index[0] == pd.Timestamp(start, tz="UTC").floor("h")
    assert series.sum() == pytest.approx(gpu_hours)


def test_hourly_concurrency_adds_overlaps_and_fills_gaps_with_zero():
    frame = usage_frame([
        {"period_start": "2025-04-01 00:00", "period_end": "2025-04-01 02:00", "gpu_hours": 16.0, "cost": 0.0},
        {"period_start": "2025-04-01 01:00", "period_end": "2025-04-01 02:00", "gpu_hours": 4.0, "cost": 0.0},
        {"period_start": "2025-04-01 04:00", "period_end": "2025-04-01 05:00", "gpu_hours": 1.0, "cost": 0.0},
    ])
    assert load.hourly_concurrency(frame).tolist() == pytest.approx([8.0, 12.0, 0.0, 0.0, 1.0])


def test_hourly_concurrency_of_the_sample_conserves_gpu_hours(focus_sample):
    series = load.hourly_concurrency(focus_sample)
    assert series.sum() == pytest.approx(focus_sample["gpu_hours"].sum(), rel=1e-9)
    assert len(series) == 91 * 24


def test_load_summary_by_hand():
    index = pd.date_range("2025-04-01", periods=4, freq="h", tz="UTC")
    summary = load.load_summary(pd.Series([1.0, 1.0, 1.0, 5.0], index=index))
    # p95 interpolates between the 3rd and 4th values at 2.85: 1 + 0.85 × 4.
    assert summary == load.LoadSummary(peak_gpus=5.0, mean_gpus=2.0, p95_gpus=pytest.approx(4.4), peak_to_mean=2.5,
                                       peak_hour=index[3], hours=4)


def test_hour_of_week_is_seven_by_twenty_four():
    index = pd.date_range("2025-04-07", periods=2 * 168, freq="h", tz="UTC")  # Monday 7 April, two weeks
    values = np.tile(np.arange(168.0), 2) + np.repeat([0.0, 10.0], 168)
    frame = load.hour_of_week(pd.Series(values, index=index))
    assert frame.shape == (7, 24)
    assert list(frame.index) == ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    assert list(frame.columns) == list(range(24))
    assert frame.loc["Mon", 0] == 5.0  # mean of 0 and 10
    assert frame.loc["Sun", 23] == 172.0  # mean of 167 and 177
    partial = load.hour_of_week(pd.Series([1.0], index=index[:1]))
    assert partial.loc["Mon", 0] == 1.0 and partial.isna().sum().sum() == 167


# --- purchase mix -------------------------------------------------------------------------------------------

# Reserved 100 h for $200 ($2/h), on-demand 50 h for $300 ($6/h), spot 50 h for $50 ($1/h), and a $1,000
# storage line with no GPU-hours: GPU cost $550.
MIX = usage_frame([
    {"period_start": "2025-04-01", "period_end": "2025-04-02", "gpu_hours": 100.0, "cost": 200.0,
     "pricing": "reserved"},
    {"period_start": "2025-04-01", "period_end": "2025-04-02", "gpu_hours": 50.0, "cost": 300.0,
     "pricing": "on_demand"},
    {"period_start": "2025-04-01", "period_end": "2025-04-02", "gpu_hours": 50.0, "cost": 50.0, "pricing": "spot"},
    {"period_start": "2025-04-01", "period_end": "2025-05-01", "gpu_hours": 0.0, "cost": 1000.0},
])


def test_mix_shares_by_hand():
    table = mix.mix_shares(MIX)
    assert table["pricing"].tolist() == ["reserved", "on_demand", "spot"]  # the no-GPU line is not a tier
    assert table["gpu_hours"].tolist() == [100.0, 50.0, 50.0]
    assert table["gpu_hours_share"].tolist() == pytest.approx([0.5, 0.25, 0.25])
    assert table["cost_share"].tolist() == pytest.approx([200 / 550, 300 / 550, 50 / 550])
    assert table["usd_per_gpu_hour"].tolist() == pytest.approx([2.0, 6.0, 1.0])
    assert mix.non_gpu_cost(MIX) == 1000.0


@pytest.mark.parametrize(
    ("reserved_share", "spot_share", "gpu_cost"),
    [
        pytest.param(0.5, 0.25, 550.0, id="actual-mix"),
        pytest.param(1.0, 0.0, 400.0, id="all-reserved"),
        pytest.param(0.0, 1.0, 200.0, id="all-spot"),
        pytest.param(0.0, 0.0, 1200.0, id="all-on-demand"),
        pytest.param(0.8, 0.1, 200 * (0.8 * 2 + 0.1 * 1 + 0.1 * 6), id="planner-default-like"),
    ],
)
def test_cost_at_mix_reprices_gpu_hours_at_realised_prices(reserved_share, spot_share, gpu_cost):
    result = mix.cost_at_mix(MIX, reserved_share, spot_share)
    assert result.gpu_cost_at_mix == pytest.approx(gpu_cost)
    assert result.actual_gpu_cost == 550.0
    assert result.saving == pytest.approx(550.0 - gpu_cost)
    assert (result.actual_reserved_share, result.actual_spot_share) == (0.5, 0.25)
    assert result.reason is None


def test_cost_at_mix_keeps_unknown_pricing_at_its_cost():
    extra = usage_frame([{"period_start": "2025-04-01", "period_end": "2025-04-02", "gpu_hours": 20.0,
                          "cost": 100.0}])
    result = mix.cost_at_mix(pd.concat([MIX, extra], ignore_index=True), 1.0, 0.0)
    assert result.gpu_cost_at_mix == pytest.approx(400.0 + 100.0)
    assert (result.unknown_pricing_gpu_hours, result.unknown_pricing_cost) == (20.0, 100.0)
    assert mix.mix_shares(pd.concat([MIX, extra]))["pricing"].tolist()[-1] == UNKNOWN


def test_cost_at_mix_needs_a_price_for_an_unused_tier():
    no_spot = MIX[MIX["pricing"].ne("spot").fillna(True)]
    result = mix.cost_at_mix(no_spot, 0.5, 0.2)
    assert np.isnan(result.gpu_cost_at_mix) and "spot" in result.reason
    priced = mix.cost_at_mix(no_spot, 0.5, 0.2, fallback_usd_per_gpu_hour={"spot": 1.5})
    assert priced.gpu_cost_at_mix == pytest.approx(150 * (0.5 * 2 + 0.2 * 1.5 + 0.3 * 6))
    assert mix.cost_at_mix(no_spot, 0.6, 0.0).reason is None  # spot unused: no price needed


@pytest.mark.parametrize(("reserved_share", "spot_share"), [(1.2, 0.0), (-0.1, 0.0), (0.7, 0.5)])
def test_cost_at_mix_rejects_impossible_shares(reserved_share, spot_share):
    with pytest.raises(ValueError, match="share"):
        mix.cost_at_mix(MIX, reserved_share, spot_share)


def test_cost_at_actual_mix_of_the_focus_sample_is_its_gpu_cost(focus_sample):
    actual = mix.cost_at_mix(focus_sample, 0.0, 0.0)
    result = mix.cost_at_mix(focus_sample, actual.actual_reserved_share, actual.actual_spot_share)
    gpu_cost = focus_sample.loc[focus_sample["gpu_hours"] != 0, "cost"].sum()
    assert result.gpu_cost_at_mix == pytest.approx(gpu_cost, rel=1e-12)
    assert mix.non_gpu_cost(focus_sample) == pytest.approx(focus_sample["cost"].sum() - gpu_cost, rel=1e-12)


# --- unit costs ---------------------------------------------------------------------------------------------

# One W&B-like run: 100 GPU-hours, $200, 1e9 tokens; plus a $50 storage line.
RUN = {"period_start": "2025-04-01", "period_end": "2025-04-02", "gpu_hours": 100.0, "cost": 200.0,
       "tokens": 1e9, "gpu_type": "H100 80GB HBM3"}
STORAGE = {"period_start": "2025-04-01", "period_end": "2025-05-01", "gpu_hours": 0.0, "cost": 50.0}


@pytest.mark.parametrize(
    ("peak_tflops", "mfu"),
    [
        # 6 · 1e9 · 1e9 = 6e18 FLOPs over 100 h · 3600 s · peak.
        pytest.param(1000.0, 6e18 / (100 * 3600 * 1000e12), id="given-peak"),
        pytest.param(None, 6e18 / (100 * 3600 * 989e12), id="catalogue-H100"),
    ],
)
def test_unit_costs_by_hand(peak_tflops, mfu):
    result = units.unit_costs(usage_frame([RUN, STORAGE]), active_params=1e9, peak_tflops=peak_tflops)
    assert result.usd_per_gpu_hour == 2.0  # the storage line is not GPU usage
    assert result.non_gpu_cost == 50.0
    assert result.usd_per_million_tokens == pytest.approx(0.2)
    assert result.mfu == pytest.approx(mfu, rel=1e-12)
    assert result.reasons == {}


def test_mfu_over_mixed_gpu_types_is_achieved_over_available_flops():
    rows = [dict(RUN, gpu_type="H100", gpu_hours=10.0), dict(RUN, gpu_type="A100", gpu_hours=30.0)]
    result = units.unit_costs(usage_frame(rows), active_params=1e9)
    available_flops = (10 * 989e12 + 30 * 312e12) * 3600
    assert result.mfu == pytest.approx(2 * 6e18 / available_flops, rel=1e-12)
    ideal = compute.gpu_hours(compute.model_flops(1e9, 2e9), result.peak_tflops, 1.0)
    assert result.mfu == pytest.approx(ideal / 40.0)


@pytest.mark.parametrize(
    ("rows", "kwargs", "missing"),
    [
        pytest.param([RUN], {}, {"mfu"}, id="no-active-params"),
        pytest.param([dict(RUN, tokens=np.nan)], {"active_params": 1e9}, {"usd_per_million_tokens", "mfu"},
                     id="no-tokens"),
        pytest.param([dict(RUN, currency=None, cost=0.0)], {"active_params": 1e9},
                     {"usd_per_gpu_hour", "usd_per_million_tokens"}, id="no-prices"),
        pytest.param([dict(RUN, gpu_type="L4")], {"active_params": 1e9}, {"mfu"}, id="gpu-not-in-catalogue"),
    ],
)
def test_unit_costs_give_reasons_for_what_is_missing(rows, kwargs, missing):
    result = units.unit_costs(usage_frame(rows), **kwargs)
    assert set(result.reasons) == missing
    assert all(np.isnan(getattr(result, name)) for name in missing)


def test_unknown_gpu_type_is_named_in_the_reason():
    result = units.unit_costs(usage_frame([dict(RUN, gpu_type="L4")]), active_params=1e9)
    assert "L4" in result.reasons["mfu"]
    assert units.unit_costs(usage_frame([dict(RUN, gpu_type="L4")]), 1e9, peak_tflops=121.0).mfu > 0


def test_unit_costs_leave_out_gpu_rows_without_a_known_cost():
    # A joined table: a billed GPU row (10 GPU-h, $30, 1e9 tokens), a run-export row with no billing match (5 GPU-h,
    # cost NaN, no currency, 5e8 tokens) and a $7 storage line. $/GPU-h = 30 / 10 = 3.00, not 30 / 15 = 2.00;
    # $/M tokens = 30 / 1e9 x 1e6 = 0.03. GPU-hours still count all 15.
    rows = [dict(RUN, gpu_hours=10.0, cost=30.0, tokens=1e9),
            dict(RUN, gpu_hours=5.0, cost=np.nan, currency=None, tokens=5e8),
            dict(STORAGE, cost=7.0)]
    result = units.unit_costs(usage_frame(rows))
    assert result.usd_per_gpu_hour == pytest.approx(3.0)
    assert (result.gpu_hours, result.gpu_cost, result.non_gpu_cost) == (15.0, 30.0, 7.0)
    assert result.usd_per_million_tokens == pytest.approx(0.03)
    assert "usd_per_gpu_hour" not in result.reasons
