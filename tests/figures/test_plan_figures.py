"""Plan page figures: traces, values and labels for small hand-built inputs, and bounded size for the default plan."""

from pathlib import Path

import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
import pytest

from dashboard.core import storage, sweeps
from dashboard.core.engine import scenario_outputs
from dashboard.core.scenario import default_scenario
from dashboard.figures import plan

ROOT = Path(__file__).resolve().parents[2]


def _title(axis) -> str:
    return axis.title.text or ""


@pytest.mark.parametrize(
    ("breakdown", "labels", "total"),
    [
        # 1,000 + 250 + 50 = 1,300; the zero line item is left out.
        pytest.param({"main_compute": 1000.0, "failure_rework": 0.0, "storage": 250.0, "tst_pilot": 50.0},
                     ["main compute", "storage", "TST pilot", "total"], 1300.0, id="three-items"),
        pytest.param({"network_egress": 90.0, "people": 10.0}, ["network egress", "people", "total"], 100.0,
                     id="two-items"),
    ],
)
def test_budget_waterfall_ends_in_the_hand_total(breakdown, labels, total):
    fig = plan.budget_figure(breakdown, budget_usd=2000.0, warning_fraction=0.9)
    assert isinstance(fig, go.Figure)
    assert len(fig.data) == 1
    bar = fig.data[0]
    assert bar.type == "waterfall"
    assert list(bar.x) == labels
    assert bar.y[-1] == pytest.approx(total)
    assert sum(bar.y[:-1]) == pytest.approx(total)
    assert list(bar.measure) == ["relative"] * (len(labels) - 1) + ["total"]
    lines = {shape.label.text.split(" ")[0]: shape for shape in fig.layout.shapes}
    assert lines["budget"].y0 == lines["budget"].y1 == 2000.0
    assert lines["warning"].y0 == lines["warning"].y1 == pytest.approx(1800.0)
    assert "$2.0k" in lines["budget"].label.text and "90%" in lines["warning"].label.text
    assert "USD" in _title(fig.layout.yaxis)
    assert fig.layout.yaxis.range[1] >= 2000.0  # the budget line is inside the plot


def _timeline(datasets_gb: float) -> pd.DataFrame:
    hours = [0.0, 24.0, 48.0]
    rows = {"hot_checkpoints": [0.0, 100.0, 200.0], "archived_checkpoints": [0.0, 0.0, 50.0],
            "datasets": [datasets_gb] * 3, "logs": [0.0, 1.0, 2.0]}
    return pd.DataFrame([(h, tier, gb) for tier, values in rows.items() for h, gb in zip(hours, values, strict=True)],
                        columns=["hours", "tier", "gb"])


COSTS = {"hot_checkpoints": 12_300.0, "archived_checkpoints": 4.0, "datasets": 1_250_000.0, "logs": 0.5}


@pytest.mark.parametrize(
    ("datasets_gb", "unit", "scale"),
    [
        pytest.param(300.0, "GB", 1.0, id="GB"),  # peak 200 + 50 + 300 + 2 = 552 GB
        pytest.param(5000.0, "TB", 1000.0, id="TB"),  # peak 5,252 GB
    ],
)
def test_storage_stacks_tiers_in_days_with_their_cost(datasets_gb, unit, scale):
    fig = plan.storage_figure(_timeline(datasets_gb), COSTS)
    assert [trace.name for trace in fig.data] == [
        "hot checkpoints — $12.3k", "archived checkpoints — $4.00", "datasets — $1.2M", "logs — $0.50",
    ]
    assert {trace.stackgroup for trace in fig.data} == {"storage"}
    for trace in fig.data:
        assert list(trace.x) == [0.0, 1.0, 2.0]
    assert list(fig.data[0].y) == pytest.approx([0.0, 100.0 / scale, 200.0 / scale])
    assert list(fig.data[2].y) == pytest.approx([datasets_gb / scale] * 3)
    assert f"({unit}" in _title(fig.layout.yaxis)
    assert "days" in _title(fig.layout.xaxis)


# The published run at $4 per B200-hour with a 10 % pilot and $1,000 switching (tests/core/test_engine.py):
# baseline $49,244, TST $19,072, net 49,244 − 19,072 − 4,924.4 − 1,000 = $24,247.6.
PUBLISHED_TST = {
    "baseline_gpu_hours": 12_311.0, "tst_gpu_hours": 4_768.0, "baseline_cost_usd": 49_244.0,
    "tst_cost_usd": 19_072.0, "baseline_tokens": 1.05e12, "tst_tokens": 2e12, "pilot_cost_usd": 4_924.4,
    "switching_cost_usd": 1_000.0, "net_savings_usd": 24_247.6,
}


def test_tst_reference_constant_is_the_published_run():
    ref = plan.TST_REFERENCE_RUN
    assert (ref["baseline_gpu_hours"], ref["tst_gpu_hours"]) == (12_311, 4_768)
    assert (ref["baseline_tokens"], ref["tst_tokens"]) == (1.05e12, 2e12)
    assert ref["gpu_type"] == "B200"
    assert "2605.06546" in ref["source"]


@pytest.mark.parametrize(
    ("reference", "names"),
    [
        pytest.param(None, ["baseline, this plan", "TST, this plan"], id="plan-only"),
        pytest.param(plan.TST_REFERENCE_RUN, ["baseline, this plan", "TST, this plan",
                                              "TST, published 10B-A1B MoE on B200 (arXiv 2605.06546)"],
                     id="with-reference"),
    ],
)
def test_tst_bars_are_percent_of_baseline_with_net_saving_in_title(reference, names):
    fig = plan.tst_figure(PUBLISHED_TST, reference)
    assert [trace.name for trace in fig.data] == names
    assert list(fig.data[0].y) == [100.0, 100.0, 100.0]
    # 4,768 / 12,311 = 38.73 %; 19,072 / 49,244 = 38.73 %; 2 / 1.05 = 190.48 %.
    assert list(fig.data[1].y) == pytest.approx([38.73, 38.73, 190.48], abs=0.01)
    assert list(fig.data[1].text) == ["4.77k", "$19.1k", "2.00T"]
    if reference is not None:
        ref_y = fig.data[2].y
        assert ref_y[0] == pytest.approx(38.73, abs=0.01) and ref_y[1] is None
        assert ref_y[2] == pytest.approx(190.48, abs=0.01)
        assert "4,768 B200-hours vs baseline 12,311" in fig.data[2].customdata[0]
    title = fig.layout.title.subtitle.text
    assert "Net saving $24.2k" in title and "$4.9k pilot" in title and "$1.0k switching" in title
    assert "%" in _title(fig.layout.yaxis)
    assert "(USD)" in fig.data[0].x[1]


def test_tst_title_says_loss_when_tst_costs_more():
    fig = plan.tst_figure({**PUBLISHED_TST, "net_savings_usd": -5_000.0}, None)
    assert "Net loss $5.0k" in fig.layout.title.subtitle.text


CURVE = pd.DataFrame({"interval_min": [10.0, 40.0, 160.0], "stall_pct": [4.0, 1.0, 0.25],
                      "rework_pct": [0.5, 1.0, 2.0], "overhead_pct": [4.5, 2.0, 2.25]})


@pytest.mark.parametrize(
    ("young", "daly", "current", "markers"),
    [
        pytest.param(44.0, 43.9, 30.0, {"Young: 44.0 min": 44.0, "Daly: 43.9 min": 43.9, "current: 30.0 min": 30.0},
                     id="all"),
        pytest.param(float("inf"), float("inf"), 30.0, {"current: 30.0 min": 30.0}, id="infinite-mtbf"),
        pytest.param(float("nan"), 0.0, 15.0, {"current: 15.0 min": 15.0}, id="nan-and-zero"),
    ],
)
def test_checkpoint_curves_and_markers(young, daly, current, markers):
    fig = plan.checkpoint_figure(CURVE, young, daly, current)
    assert [trace.name for trace in fig.data[:3]] == ["total overhead", "checkpoint stalls", "failure rework"]
    assert list(fig.data[0].x) == [10.0, 40.0, 160.0]
    assert list(fig.data[0].y) == [4.5, 2.0, 2.25]
    assert list(fig.data[1].y) == [4.0, 1.0, 0.25]
    assert {trace.name: trace.x[0] for trace in fig.data[3:]} == markers
    for trace in fig.data[3:]:
        assert trace.x[0] == trace.x[1]
        assert trace.y[1] >= 4.5  # the marker reaches the top of the curves
    assert fig.layout.xaxis.type == "log"
    assert "(min" in _title(fig.layout.xaxis) and "%" in _title(fig.layout.yaxis)


@pytest.mark.parametrize(
    ("current", "expected_usd"),
    [
        pytest.param(0.25, 90.0, id="between-points"),  # halfway from $100 to $80
        pytest.param(1.0, 60.0, id="all-spot"),
    ],
)
def test_spot_curve_marks_the_current_share(current, expected_usd):
    curve = pd.DataFrame({"spot_share": [0.0, 0.5, 1.0], "cost_total_usd": [100.0, 80.0, 60.0],
                          "compute_usd": [95.0, 74.0, 53.0], "rework_usd": [1.0, 2.0, 3.0]})
    fig = plan.spot_figure(curve, current)
    assert [trace.name for trace in fig.data[:3]] == ["expected total", "compute", "failure rework (right axis)"]
    assert list(fig.data[0].x) == [0.0, 50.0, 100.0]
    assert list(fig.data[0].y) == [100.0, 80.0, 60.0]
    assert fig.data[2].yaxis == "y2"
    marker = fig.data[3]
    assert marker.x == (current * 100,)
    assert marker.y == pytest.approx((expected_usd,))
    assert "%" in _title(fig.layout.xaxis)
    assert "USD" in _title(fig.layout.yaxis) and "USD" in _title(fig.layout.yaxis2)


def test_scaling_curve_marks_optimum_and_plan():
    # 6·N·D = 8.4e22 at every point.
    curve = pd.DataFrame({"active_params": [7e9, 2.8e10, 1.4e11], "tokens": [2e12, 5e11, 1e11],
                          "predicted_loss": [2.065, 2.039, 2.08]})
    points = {"model_flops": 8.4e22,
              "optimal": {"active_params": 2.8e10, "tokens": 5e11, "predicted_loss": 2.039},
              "plan": {"active_params": 7e9, "tokens": 2e12, "predicted_loss": 2.065}}
    fig = plan.scaling_figure(curve, points)
    assert [trace.name for trace in fig.data] == ["same compute, other sizes", "compute-optimal", "this plan"]
    assert list(fig.data[0].x) == pytest.approx([7.0, 28.0, 140.0])  # billions
    assert list(fig.data[0].y) == [2.065, 2.039, 2.08]
    assert list(fig.data[0].customdata) == pytest.approx([2000.0, 500.0, 100.0])  # tokens, billions
    assert (fig.data[1].x, fig.data[1].y, fig.data[1].customdata) == ((28.0,), (2.039,), (500.0,))
    assert (fig.data[2].x, fig.data[2].y, fig.data[2].customdata) == ((7.0,), (2.065,), (2000.0,))
    for trace in fig.data:
        assert all(word in trace.hovertemplate for word in ("B active params", "B tokens", "loss"))
    assert fig.layout.xaxis.type == "log"
    assert "billions, log scale" in _title(fig.layout.xaxis) and "nats" in _title(fig.layout.yaxis)
    assert "8.4e+22 FLOPs" in fig.layout.title.text


def _default_figures() -> dict[str, go.Figure]:
    scenario = default_scenario()
    result = scenario_outputs(scenario)
    timeline = storage.storage_timeline(
        result["wall_clock_days"] * 24, scenario.checkpoint_interval_min / 60, result["checkpoint_size_gb"],
        scenario.keep_last_checkpoints, scenario.archive_every_nth,
        storage.dataset_gb(result["raw_tokens"], scenario.dataset_bytes_per_token, scenario.dataset_versions),
        scenario.logs_gb_per_day, max_points=1000,
    )
    scaling, points = sweeps.scaling_curve(scenario)
    return {
        "budget": plan.budget_figure(result["cost_breakdown"], scenario.budget_usd, scenario.budget_warning_fraction),
        "storage": plan.storage_figure(timeline, result["storage_cost_by_tier"]),
        "tst": plan.tst_figure(result["tst"], plan.TST_REFERENCE_RUN),
        "checkpoint": plan.checkpoint_figure(
            sweeps.checkpoint_tradeoff(scenario), result["checkpoint_interval_young_min"],
            result["checkpoint_interval_daly_min"], scenario.checkpoint_interval_min),
        "spot": plan.spot_figure(sweeps.spot_share_curve(scenario), scenario.spot_share),
        "scaling": plan.scaling_figure(scaling, points),
    }


def test_default_plan_figures_are_bounded_and_serialise():
    figures = _default_figures()
    for name, fig in figures.items():
        points = sum(len(trace.x) for trace in fig.data)
        assert 0 < points <= 4_100, name  # storage: 4 tiers × at most 1,002 points
        assert fig.layout.title.text, name
        assert pio.to_json(fig).startswith("{"), name
        for trace in fig.data:
            assert trace.hovertemplate, (name, trace.name)
