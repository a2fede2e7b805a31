"""Retrospective usage figures: traces, values, names and axis titles for small hand-built frames."""

from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from dashboard.figures import retro_usage
from dashboard.retro import load, spend
from dashboard.retro.filters import UNTAGGED

ROOT = Path(__file__).resolve().parents[2]
DAY_MS = 86_400_000


def _title(axis) -> str:
    return axis.title.text or ""


def _days(*days: str) -> list[pd.Timestamp]:
    return [pd.Timestamp(day, tz="UTC") for day in days]


# Two days of spend by team: a $100 then $300, untagged $50 on day one and a $-20 credit on day two.
SPEND = pd.DataFrame({
    "period": _days("2025-04-01", "2025-04-01", "2025-04-02", "2025-04-02"),
    "group": pd.array(["a", UNTAGGED, "a", UNTAGGED], dtype="string"),
    "gpu_hours": [10.0, 0.0, 30.0, 0.0],
    "cost": [100.0, 50.0, 300.0, -20.0],
})
DAILY = pd.Series([150.0, 280.0], index=_days("2025-04-01", "2025-04-02"))
CUMULATIVE = spend.cumulative_with_forecast(DAILY, date(2025, 4, 4))


def test_spend_figure_stacks_groups_and_draws_cumulative_forecast_band_and_budget():
    fig = retro_usage.spend_figure(SPEND, CUMULATIVE, budget_usd=1000.0)
    assert isinstance(fig, go.Figure)
    assert [trace.name for trace in fig.data] == ["a", UNTAGGED, "Cumulative", "Forecast low",
                                                  "Forecast (80 % band)", "Budget $1k"]
    bars = {trace.name: trace for trace in fig.data if trace.type == "bar"}
    assert list(bars["a"].y) == [100.0, 300.0]
    assert list(bars[UNTAGGED].y) == [50.0, -20.0]  # the credit stays, below zero
    assert bars[UNTAGGED].marker.color == retro_usage.UNTAGGED_COLOUR
    assert bars["a"].xperiod == DAY_MS
    assert fig.layout.barmode == "relative"
    cumulative, low, high, budget = fig.data[2:]
    # Running totals drawn at each day's end: 150 by the end of 1 April, 430 by the end of 2 April.
    assert list(cumulative.y) == [150.0, 430.0]
    assert pd.Timestamp(cumulative.x[0]) == pd.Timestamp("2025-04-02")  # plotly keeps the UTC wall time
    # Run rate (150 + 280) / 2 = 215 a day for 3 and 4 April from 430; s = |280 - 150| / sqrt(2) = 91.92.
    s = 130 / np.sqrt(2)
    assert list(high.y) == pytest.approx([430.0, 645.0 + 1.2816 * s, 860.0 + 1.2816 * s * np.sqrt(2)])
    assert list(low.y) == pytest.approx([430.0, 645.0 - 1.2816 * s, 860.0 - 1.2816 * s * np.sqrt(2)])
    assert high.fill == "tonexty" and not low.showlegend  # a band, not a line
    assert list(budget.y) == [1000.0, 1000.0]
    assert {bars["a"].yaxis, bars[UNTAGGED].yaxis} == {"y"}
    assert {cumulative.yaxis, high.yaxis, budget.yaxis} == {"y2"}  # their own panel below, not a second axis
    assert fig.layout.yaxis2.overlaying is None and fig.layout.yaxis2.domain[1] < fig.layout.yaxis.domain[0]
    assert _title(fig.layout.xaxis) == "Date (UTC)" and fig.layout.xaxis.anchor == "y2"  # one date axis, at the bottom
    assert _title(fig.layout.yaxis) == "USD per day"
    assert _title(fig.layout.yaxis2) == "Cumulative cost (USD)"
    # k/M/B ticks with plain decimals under a thousand ($0.06, not d3's "$60m" for six cents; $1B, not "$1G")
    assert (fig.layout.yaxis2.tickprefix, fig.layout.yaxis2.exponentformat, fig.layout.yaxis2.tickformat) == (
        "$", "B", None)


def test_a_closed_period_draws_no_forecast():
    closed = spend.cumulative_with_forecast(DAILY, date(2025, 4, 2))
    fig = retro_usage.spend_figure(SPEND, closed, budget_usd=None)
    assert [trace.name for trace in fig.data] == ["a", UNTAGGED, "Cumulative"]


def test_group_names_from_the_data_are_shown_as_text():
    frame = SPEND.assign(group=pd.array(["<a href='http://evil.example'>t</a>", UNTAGGED] * 2, dtype="string"))
    fig = retro_usage.spend_figure(frame, CUMULATIVE, budget_usd=None)
    assert fig.data[0].name == "&lt;a href='http://evil.example'&gt;t&lt;/a&gt;"


@pytest.mark.parametrize(
    ("metric", "budget", "names", "y_title", "y2_title"),
    [
        pytest.param("cost", None, ["a", UNTAGGED, "Cumulative", "Forecast low", "Forecast (80 % band)"],
                     "USD per day", "Cumulative cost (USD)", id="cost-without-budget"),
        pytest.param("gpu_hours", 1000.0, ["a", UNTAGGED, "Cumulative", "Forecast low", "Forecast (80 % band)"],
                     "GPU-hours per day", "Cumulative GPU-hours", id="gpu-hours-ignore-the-dollar-budget"),
    ],
)
def test_spend_figure_options(metric, budget, names, y_title, y2_title):
    fig = retro_usage.spend_figure(SPEND, CUMULATIVE, budget_usd=budget, metric=metric)
    assert [trace.name for trace in fig.data] == names
    assert (_title(fig.layout.yaxis), _title(fig.layout.yaxis2)) == (y_title, y2_title)


def test_weekly_spend_bars_span_a_week():
    weekly = SPEND.assign(period=_days("2025-03-31", "2025-03-31", "2025-04-07", "2025-04-07"))
    fig = retro_usage.spend_figure(weekly, CUMULATIVE, budget_usd=None)
    assert fig.data[0].xperiod == 7 * DAY_MS
    assert _title(fig.layout.yaxis) == "USD per week"


@pytest.mark.parametrize(("freq", "period_ms", "per"), [("W", 7 * DAY_MS, "week"), ("D", DAY_MS, "day")])
def test_a_single_period_keeps_its_frequency(freq, period_ms, per):
    usage = pd.DataFrame({
        "period_start": _days("2025-04-07"), "period_end": _days("2025-04-08"), "gpu_hours": [8.0],
        "cost": [16.0], "team": pd.array(["a"], dtype="string"),
    })
    fig = retro_usage.spend_figure(spend.spend_over_time(usage, freq, "team"), CUMULATIVE, budget_usd=None)
    assert fig.data[0].xperiod == period_ms
    assert _title(fig.layout.yaxis) == f"USD per {per}"


def test_small_groups_are_summed_into_other_but_untagged_stays():
    frame = pd.DataFrame({
        "period": _days(*["2025-04-01"] * 4),
        "group": pd.array(["a", "b", "c", UNTAGGED], dtype="string"),
        "gpu_hours": [1.0, 2.0, 3.0, 4.0],
        "cost": [100.0, 50.0, 10.0, 5.0],
    })
    fig = retro_usage.spend_figure(frame, CUMULATIVE, budget_usd=None, max_groups=1)
    bars = [(trace.name, list(trace.y)) for trace in fig.data if trace.type == "bar"]
    assert bars == [("a", [100.0]), ("other (2 groups)", [60.0]), (UNTAGGED, [5.0])]
    assert [trace.marker.color for trace in fig.data[:3]] == [
        retro_usage.PALETTE[0], retro_usage.OTHER_COLOUR, retro_usage.UNTAGGED_COLOUR]


def test_spend_figure_rejects_unknown_metric():
    with pytest.raises(ValueError, match="metric"):
        retro_usage.spend_figure(SPEND, CUMULATIVE, 1.0, metric="tokens")


ATTRIBUTION = pd.DataFrame({
    "team": pd.array(["a", "a", UNTAGGED, "b"], dtype="string"),
    "project": pd.array(["p1", "p1", UNTAGGED, "p2"], dtype="string"),
    "run_id": pd.array(["r1", UNTAGGED, UNTAGGED, "r3"], dtype="string"),
    "gpu_hours": [10.0, 2.0, 0.0, 5.0],
    "cost": [100.0, 20.0, 60.0, -10.0],
})


def test_attribution_treemap_keeps_untagged_as_its_own_box():
    fig = retro_usage.attribution_figure(ATTRIBUTION)
    (treemap,) = fig.data
    assert treemap.type == "treemap" and treemap.branchvalues == "total"
    assert len(set(treemap.ids)) == len(treemap.ids)
    area = dict(zip(treemap.ids, treemap.values, strict=True))
    label = dict(zip(treemap.ids, treemap.labels, strict=True))
    # Areas are positive parts: root 100 + 20 + 60 (b's -10 credit has no area).
    assert (label["all"], area["all"]) == ("All teams", 180.0)
    assert area["all\x1f" + UNTAGGED] == 60.0  # the untagged team under the root
    assert area["all\x1fa"] == 120.0 and area["all\x1fb"] == 0.0
    assert area["all\x1fa\x1fp1\x1f" + UNTAGGED] == 20.0  # a's untagged run inside p1
    assert label["all\x1fa\x1fp1\x1f" + UNTAGGED] == UNTAGGED
    assert dict(zip(treemap.ids, treemap.parents, strict=True))["all\x1fa\x1fp1\x1fr1"] == "all\x1fa\x1fp1"
    # The hover shows the net cost: b's -10.
    net = dict(zip(treemap.ids, treemap.customdata[:, 0], strict=True))
    assert net["all\x1fb"] == -10.0 and net["all"] == 170.0
    colours = dict(zip(treemap.ids, treemap.marker.colors, strict=True))
    assert colours["all\x1f" + UNTAGGED] == retro_usage.UNTAGGED_COLOUR
    assert "by team → project → run" in fig.layout.title.text


def test_attribution_treemap_by_gpu_hours():
    (treemap,) = retro_usage.attribution_figure(ATTRIBUTION, metric="gpu_hours").data
    assert dict(zip(treemap.ids, treemap.values, strict=True))["all"] == 17.0


def test_load_figure_draws_series_with_peak_and_mean():
    index = pd.date_range("2025-04-01", periods=4, freq="h", tz="UTC")
    series = pd.Series([2.0, 2.0, 2.0, 10.0], index=index, name="gpus")
    fig = retro_usage.load_figure(series, load.load_summary(series))
    assert [trace.name for trace in fig.data] == ["GPUs in use", "Peak 10 GPUs", "Mean 4 GPUs"]
    assert fig.layout.yaxis.tickformat == ",d"  # whole GPUs
    assert list(fig.data[0].y) == [2.0, 2.0, 2.0, 10.0]
    assert fig.data[0].line.shape == "hv"
    assert list(fig.data[1].y) == [10.0, 10.0] and list(fig.data[2].y) == [4.0, 4.0]
    assert _title(fig.layout.xaxis) == "Hour (UTC)"
    assert _title(fig.layout.yaxis) == "GPUs in use (hourly mean)"
    assert "2.50×" in fig.layout.title.text


def test_hour_of_week_heatmap():
    frame = pd.DataFrame(np.arange(168.0).reshape(7, 24), index=list(load.WEEKDAYS), columns=range(24))
    fig = retro_usage.hour_of_week_figure(frame)
    (heatmap,) = fig.data
    assert heatmap.type == "heatmap"
    assert np.asarray(heatmap.z).shape == (7, 24)
    assert list(heatmap.y) == ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    assert heatmap.z[6][23] == 167.0
    assert _title(fig.layout.xaxis) == "Hour of day (UTC)"
    assert _title(fig.layout.yaxis) == "Day of week"
    assert heatmap.colorbar.title.text == "GPUs"


def test_mix_figure_shows_shares_in_percent_by_tier():
    shares = pd.DataFrame({
        "pricing": pd.array(["reserved", "on_demand", "spot", "(unknown)"], dtype="string"),
        "gpu_hours": [100.0, 50.0, 40.0, 10.0],
        "cost": [200.0, 300.0, 40.0, 60.0],
        "gpu_hours_share": [0.5, 0.25, 0.2, 0.05],
        "cost_share": [0.2, 0.5, 0.2, 0.1],
        "usd_per_gpu_hour": [2.0, 6.0, 1.0, 6.0],
    })
    fig = retro_usage.mix_figure(shares)
    assert [trace.name for trace in fig.data] == ["Reserved", "On-demand", "Spot", "(unknown)"]
    assert list(fig.data[0].x) == pytest.approx([50.0, 20.0])
    assert list(fig.data[1].y) == ["GPU-hours", "Cost"]
    assert sum(trace.x[0] for trace in fig.data) == pytest.approx(100.0)
    assert "$6 per GPU-hour" in fig.data[1].hovertemplate
    assert _title(fig.layout.xaxis) == "Share (%)"


def test_load_figure_draws_the_reserved_capacity_and_shades_the_idle_part():
    index = pd.date_range("2025-04-01", periods=4, freq="h", tz="UTC")
    series = pd.Series([2.0, 8.0, 8.0, 10.0], index=index, name="gpus")
    reserved = pd.Series([0.0, 8.0, 8.0, 8.0], index=index, name="gpus")
    fig = retro_usage.load_figure(series, load.load_summary(series), reserved, 8.0)
    in_use, capacity = fig.data[1:3]
    assert in_use.name == "Reserved GPUs in use" and list(in_use.y) == [0.0, 8.0, 8.0, 8.0]
    assert capacity.name == "Reserved capacity 8 GPUs (idle shaded)" and list(capacity.y) == [8.0] * 4
    assert capacity.fill == "tonexty"  # shaded down to the reserved GPUs in use: idle in the first hour


def test_reserved_capacity_of_the_bundled_quarter():
    # generator: eight 8xH100 machines committed from 28 April to 30 June, 64 GPUs; the FOCUS sample's unused
    # commitment is $73,247.73 at $57.63 / 8 = $7.20375 per GPU-hour: 10,168 idle GPU-hours.
    from dashboard.ingest import import_path
    capacity, in_use = load.reserved_capacity(import_path(ROOT / "data" / "samples" / "focus_sample.csv")[0])
    assert capacity == 64.0
    assert in_use.index[0] == pd.Timestamp("2025-04-28", tz="UTC")
    assert in_use.index[-1] == pd.Timestamp("2025-06-30T23:00", tz="UTC")
    assert (capacity - in_use).sum() == pytest.approx(73_247.73 / (57.63 / 8), abs=0.5)
