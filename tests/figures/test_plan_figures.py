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
    assert "$2k" in lines["budget"].label.text and "90 %" in lines["warning"].label.text


@pytest.mark.parametrize(("total", "opening"), [
    (441_000.0, "$441k: 88.2 % of the $500k budget"),  # as the budget tile writes its share: 3 significant figures
    (4_900_000.0, "$4.9M: 980 % of the $500k budget"),  # 9.8 × the budget: still a percentage
    (5_410_000.0, "$5.41M: more than 10× the $500k budget"),  # 10.82 × the budget: beyond 1,000 %, a multiple
])
def test_waterfall_subtitle_writes_the_budget_share_as_the_tile_does(total, opening):
    fig = plan.budget_figure({"main_compute": total}, budget_usd=500_000.0, warning_fraction=0.9)
    assert fig.layout.title.subtitle.text.startswith(opening + "; items under 1 % of the total")
    assert "USD" in _title(fig.layout.yaxis)
    assert fig.layout.yaxis.range[1] >= 2000.0  # the budget line is inside the plot


@pytest.mark.parametrize(
    ("breakdown", "labelled"),
    [
        # Total 10,000: storage $99 is 0.99 % (no label), egress $100 is exactly 1 % (labelled).
        pytest.param({"main_compute": 9_801.0, "storage": 99.0, "network_egress": 100.0},
                     [True, False, True, True], id="under-one-percent-hidden"),
        # Total 1,000: people $5 is 0.5 %; a -$20 credit is 2 % of it.
        pytest.param({"main_compute": 1_015.0, "people": 5.0, "data_processing": -20.0},
                     [True, False, True, True], id="tiny-people"),
    ],
)
def test_waterfall_hides_labels_under_one_percent_of_the_total(breakdown, labelled):
    bar = plan.budget_figure(breakdown, budget_usd=20_000.0, warning_fraction=0.9).data[0]
    assert [bool(text) for text in bar.text] == labelled
    assert all(bar.customdata)  # every value, labelled or not, is in the hover


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
        pytest.param(300.0, "GB", 1.0, id="GB"),  # below the hot tier: 50 + 300 + 2 = 352 GB
        pytest.param(5000.0, "TB", 1000.0, id="TB"),  # 5,052 GB
    ],
)
def test_storage_puts_the_hot_tier_on_its_own_axis_and_stacks_the_rest(datasets_gb, unit, scale):
    fig = plan.storage_figure(_timeline(datasets_gb), COSTS, retention_usd=100.0, total_usd=1e7, retention_months=12)
    assert [trace.name for trace in fig.data] == [
        "hot checkpoints — $12.3k", "archives — $4", "datasets — $1.25M", "logs — $0.5",
    ]
    hot, *rest = fig.data
    assert (hot.xaxis, hot.yaxis, hot.stackgroup) == ("x2", "y2", None)
    assert {trace.yaxis for trace in rest} <= {"y", None} and {trace.stackgroup for trace in rest} == {"storage"}
    assert list(hot.y) == pytest.approx([0.0, 100.0, 200.0])  # 200 GB peak: GB on its own axis
    assert list(rest[1].y) == pytest.approx([datasets_gb / scale] * 3)
    for trace in fig.data:
        assert list(trace.x) == [0.0, 1.0, 2.0]
    assert f"({unit}" in _title(fig.layout.yaxis) and "(GB)" in _title(fig.layout.yaxis2)
    assert fig.layout.yaxis2.domain[0] > fig.layout.yaxis.domain[1]  # two separate panels
    assert "days" in _title(fig.layout.xaxis) and "days" in _title(fig.layout.xaxis2)
    # No tier is painted in an alarm or approval colour.
    assert not {trace.line.color for trace in fig.data} & {"#d62728", "#2ca02c", "red", "green"}


@pytest.mark.parametrize(
    ("storage_usd", "total_usd", "title"),
    [
        # $10,500 of $70M: 0.015 %.
        pytest.param(10_500.0, 7e7, "Storage: $10.5k, 0.015 % of the total — not a cost driver", id="small"),
        # $49,000 of $1M: 4.9 %, just under the 5 % line.
        pytest.param(49_000.0, 1e6, "Storage: $49k, 4.9 % of the total — not a cost driver", id="under-5"),
        # A big run keeping every checkpoint: $25,000 of $200,000 is 12.5 % -> "12 %".
        pytest.param(25_000.0, 2e5, "Storage: $25k, 12 % of the total — a cost driver", id="driver"),
    ],
)
def test_storage_title_is_a_verdict(storage_usd, total_usd, title):
    assert plan.storage_verdict(storage_usd, total_usd) == title


@pytest.mark.parametrize(("count", "archive_gb", "tail"), [
    pytest.param(10, 14.0, "<br>10 weight archives of 14 GB (140 GB)", id="default-7B"),  # 7B × 2 bytes = 14 GB
    pytest.param(1, 1342.0, "<br>1 weight archive of 1.34 TB", id="final-only"),  # 671B × 2 bytes
    pytest.param(0, 14.0, "<br>no weight archives", id="none"),
])
def test_storage_title_names_the_archives_count_and_size(count, archive_gb, tail):
    # $4,608 of $445,885 is 1.03 % -> "1 %".
    title = plan.storage_verdict(4_608.0, 445_885.0, count, archive_gb)
    assert title == f"Storage: $4.61k, 1 % of the total — not a cost driver{tail}"


def test_storage_title_counts_the_retention_and_subtitle_splits_it():
    # During the run 12,000 + 3,000 + 20,000 + 0 = $35,000; + $15,000 kept 6 months = $50,000 of $200,000: 25 %.
    costs = {"hot_checkpoints": 12_000.0, "archived_checkpoints": 3_000.0, "datasets": 20_000.0, "logs": 0.0}
    fig = plan.storage_figure(_timeline(300.0), costs, retention_usd=15_000.0, total_usd=2e5, retention_months=6)
    assert fig.layout.title.text == "Storage: $50k, 25 % of the total — a cost driver"
    assert fig.layout.title.subtitle.text == "$35k during the run + $15k kept 6 months after it"


# The published run at $4 per B200-hour with a 10 % pilot and $1,000 switching (tests/core/test_engine.py), a bare
# plan (no side work, data or storage cost): baseline total $49,244; TST 19,072 + 4,924.4 + 1,000 = $24,996.4;
# saving 49,244 − 24,996.4 = $24,247.6 (main run +30,172, pilot −4,924.4, switching −1,000).
# Break-even speedup: 49,244 = 49,244 / s + 4,924.4 + 1,000 -> s = 49,244 / 43,319.6 = 1.137.
PUBLISHED_TST = {
    "baseline_gpu_hours": 12_311.0, "tst_gpu_hours": 4_768.0, "baseline_plan_gpu_hours": 12_311.0,
    "tst_plan_gpu_hours": 4_768.0, "baseline_cost_usd": 49_244.0, "tst_cost_usd": 24_996.4,
    "baseline_tokens": 1.05e12, "tst_tokens": 2e12, "baseline_main_run_usd": 49_244.0, "tst_main_run_usd": 19_072.0,
    "baseline_side_usd": 0.0, "tst_side_usd": 0.0, "baseline_data_cost_usd": 0.0, "tst_data_cost_usd": 0.0,
    "baseline_storage_usd": 0.0, "tst_storage_usd": 0.0, "pilot_cost_usd": 4_924.4, "switching_cost_usd": 1_000.0,
    "saving_main_run_usd": 30_172.0, "saving_side_usd": 0.0, "saving_data_usd": 0.0, "saving_storage_usd": 0.0,
    "net_savings_usd": 24_247.6, "speedup": 12_311 / 4_768, "break_even_speedup": 49_244 / 43_319.6,
}


def test_tst_reference_constant_is_the_published_run():
    ref = plan.TST_REFERENCE_RUN
    assert (ref["baseline_gpu_hours"], ref["tst_gpu_hours"]) == (12_311, 4_768)
    assert (ref["baseline_tokens"], ref["tst_tokens"]) == (1.05e12, 2e12)
    assert ref["gpu_type"] == "B200"
    assert "2605.06546" in ref["source"]


@pytest.mark.parametrize(
    ("net_usd", "baseline_total_usd", "title"),
    [
        # A default-sized plan: $229,919 of a $445,885 baseline total is 51.6 %.
        pytest.param(229_919.41, 445_885.17,
                     "Switching to TST saves $230k (52 % of the plan's total), pilot and switching included",
                     id="default-plan"),
        # The published run: $24,247.6 of $49,244 is 49.2 %.
        pytest.param(24_247.6, 49_244.0,
                     "Switching to TST saves $24.2k (49 % of the plan's total), pilot and switching included",
                     id="published"),
        pytest.param(-5_000.0, 50_000.0,
                     "Switching to TST costs $5k (10 % of the plan's total), pilot and switching included",
                     id="loss"),
    ],
)
def test_tst_title_is_the_answer(net_usd, baseline_total_usd, title):
    fig = plan.tst_figure({**PUBLISHED_TST, "net_savings_usd": net_usd, "baseline_cost_usd": baseline_total_usd},
                          None)
    lines = fig.layout.title.text.split("<br>")  # wrapped: plotly cuts a title longer than the chart
    assert " ".join(lines) == title and all(len(line) <= plan.TITLE_WRAP_CHARS for line in lines)


@pytest.mark.parametrize(("text", "width", "expected"), [
    ("short", 10, "short"),
    ("one two three four", 9, "one two<br>three<br>four"),
    ("kept<br>break here", 20, "kept<br>break here"),
    ("unbreakable-word-of-twenty", 5, "unbreakable-word-of-twenty"),
    ("", 10, ""),
])
def test_titles_wrap_at_spaces(text, width, expected):
    assert plan.wrapped(text, width) == expected


def test_the_top_margin_grows_with_the_title_lines():
    # One title line and one subtitle line: 40 + 22 + 17 = 79 px; two of each: 40 + 44 + 34 = 118 px.
    assert plan.layout_of("t", "", "", subtitle="s")["margin"]["t"] == 79
    long = "word " * 30
    assert plan.layout_of(long[:100], "", "", subtitle=long[:150])["margin"]["t"] == 118


def test_tst_bars_are_percent_of_baseline_and_the_published_run_is_a_marker():
    fig = plan.tst_figure(PUBLISHED_TST, plan.TST_REFERENCE_RUN)
    baseline, tst, published = fig.data
    assert (baseline.type, tst.type, published.type) == ("bar", "bar", "scatter")
    assert (baseline.name, tst.name) == ("baseline", "TST")
    assert published.mode == "markers" and "2605.06546" in published.name
    # Every GPU-hours label says whose: the main run's or the whole plan's.
    assert list(baseline.x) == ["main-run GPU-hours", "plan GPU-hours", "plan total $", "raw tokens"]
    assert list(baseline.y) == [100.0, 100.0, 100.0, 100.0]
    # 4,768 / 12,311 = 38.73 % (main run and plan); 24,996.4 / 49,244 = 50.76 %; 2 / 1.05 = 190.48 %.
    assert list(tst.y) == pytest.approx([38.73, 38.73, 50.76, 190.48], abs=0.01)
    assert list(tst.text) == ["4.77k", "4.77k", "$25k", "2T"]  # three significant figures, as the tiles
    # The published run has no dollars: markers on main-run GPU-hours and tokens only, at its own TST share.
    assert list(published.x) == [baseline.x[0], baseline.x[3]]
    assert list(published.y) == pytest.approx([38.73, 190.48], abs=0.01)
    assert "4,768 B200-hours of the main run vs baseline 12,311" in published.customdata[0]
    assert published.offsetgroup == tst.offsetgroup  # drawn over the TST bar, not beside it
    subtitle = fig.layout.title.subtitle.text
    # The saving split into its parts, summing to the title's $24.2k: 30,172 − 4,924.4 − 1,000 = 24,247.6.
    assert "main run +$30.2k" in subtitle and "pilot -$4.92k" in subtitle and "switching -$1k" in subtitle
    assert "Breaks even at a 1.14× speedup; this plan assumes 2.58×" in subtitle
    assert "%" in _title(fig.layout.yaxis)


def test_tst_subtitle_says_when_no_speedup_breaks_even():
    fig = plan.tst_figure({**PUBLISHED_TST, "break_even_speedup": float("inf")}, None)
    assert "No speedup breaks even" in fig.layout.title.subtitle.text


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
    assert (fig.layout.xaxis.type, fig.layout.xaxis.dtick) == ("log", 1)  # labels at whole decades only
    assert "(min" in _title(fig.layout.xaxis) and "%" in _title(fig.layout.yaxis)


SPOT_CURVE = pd.DataFrame({"spot_share": [0.0, 0.5, 1.0], "cost_total_usd": [100.0, 80.0, 60.0],
                           "compute_usd": [95.0, 74.0, 53.0], "rework_usd": [1.0, 2.0, 3.0],
                           "wall_clock_days": [10.0, 10.5, 11.0]})
SPOT_P90 = pd.DataFrame({"spot_share": [0.0, 0.5, 1.0], "cost_p90_usd": [120.0, 100.0, 90.0],
                         "wall_clock_p90_days": [12.0, 13.0, 14.0]})


@pytest.mark.parametrize(
    ("current", "expected_usd", "expected_days"),
    [
        pytest.param(0.25, 90.0, 10.25, id="between-points"),  # halfway from $100 to $80, 10 to 10.5 days
        pytest.param(1.0, 60.0, 11.0, id="all-spot"),
    ],
)
def test_spot_curve_marks_the_current_share_on_both_panels(current, expected_usd, expected_days):
    fig = plan.spot_figure(SPOT_CURVE, current, SPOT_P90, "Capacity risk, not priced: …")
    names = [trace.name for trace in fig.data]
    assert names[:4] == ["expected cost", "expected wall-clock", "P90 cost", "P90 wall-clock"]
    assert list(fig.data[0].x) == [0.0, 50.0, 100.0] and list(fig.data[0].y) == [100.0, 80.0, 60.0]
    assert list(fig.data[3].y) == [12.0, 13.0, 14.0]
    cost_marker, days_marker = fig.data[4:]
    assert cost_marker.x == days_marker.x == (current * 100,)
    assert cost_marker.y == pytest.approx((expected_usd,)) and days_marker.y == pytest.approx((expected_days,))
    assert cost_marker.text == (f"now: {current * 100:.0f} % spot",)  # labelled inside the plot, not only in a legend
    assert fig.layout.title.subtitle.text.startswith("Capacity risk")
    assert "%" in _title(fig.layout.xaxis)


def test_spot_chart_has_one_axis_per_quantity_and_no_dual_axis():
    fig = plan.spot_figure(SPOT_CURVE, 0.25, SPOT_P90)
    layout = fig.layout
    assert layout.yaxis.overlaying is None and layout.yaxis2.overlaying is None
    assert layout.yaxis.domain[0] > layout.yaxis2.domain[1]  # stacked: cost above, wall-clock below
    assert "USD" in _title(layout.yaxis) and "days" in _title(layout.yaxis2)
    assert {trace.yaxis for trace in fig.data if "cost" in trace.name} == {"y"}
    assert {trace.yaxis for trace in fig.data if "wall-clock" in trace.name} == {"y2"}
    assert {trace.xaxis for trace in fig.data} == {"x"}  # one shared spot-share axis


@pytest.mark.parametrize(("curve", "current", "title"), [
    # Cheapest at 100 %: $60 against $90 at 25 % saves $30, 33.3 %; P90 wall-clock 14 against 12.5 days: +1.5.
    pytest.param(SPOT_CURVE, 0.25, "100 % spot saves $30 (33.3 %) against 25 % now<br>P90 wall-clock +1.5 days — "
                 "if the spot capacity is there", id="spot-cheaper"),
    # Cheapest where the plan already is.
    pytest.param(SPOT_CURVE.assign(cost_total_usd=[60.0, 80.0, 100.0]), 0.0,
                 "The current 0 % spot is the cheapest mix: $60", id="already-cheapest"),
])
def test_spot_title_is_a_verdict(curve, current, title):
    assert plan.spot_verdict(curve, current, SPOT_P90) == title
    assert plan.spot_figure(curve, current, SPOT_P90).layout.title.text == title


def test_spot_chart_of_a_plan_states_its_capacity_risk():
    from dashboard.figures.plan_charts import plan_chart

    scenario = default_scenario()  # 512 H100 in 64 nodes of 8
    fig = plan_chart("Spot share", scenario, scenario_outputs(scenario))
    assert "512 GPUs (64 nodes)" in fig.layout.title.subtitle.text
    assert fig.layout.title.text.startswith("100 % spot saves")  # spot at $2.42 is under the $2.65 reserved price
    assert "P90 wall-clock" in fig.layout.title.text


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
    assert (fig.layout.xaxis.type, fig.layout.xaxis.dtick) == ("log", 1)
    assert "billions, log scale" in _title(fig.layout.xaxis) and "nats" in _title(fig.layout.yaxis)
    assert "8.4×10²² FLOPs" in fig.layout.title.text


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
        "storage": plan.storage_figure(timeline, result["storage_cost_by_tier"], result["storage_retention_usd"],
                                       result["cost_total_usd"], scenario.storage_retention_months),
        "tst": plan.tst_figure(result["tst"], plan.TST_REFERENCE_RUN),
        "checkpoint": plan.checkpoint_figure(
            sweeps.checkpoint_tradeoff(scenario), result["checkpoint_interval_young_min"],
            result["checkpoint_interval_daly_min"], scenario.checkpoint_interval_min),
        "spot": plan.spot_figure(sweeps.spot_share_curve(scenario), scenario.spot_share,
                                 sweeps.spot_share_p90(scenario)),
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


def test_storage_draws_the_hot_tier_sawtooth_from_the_first_checkpoints():
    # τ = 1 h, K = 3, 100 GB: the first 6 hours go 0, 100, 200, 300 and then peak at 400 at each write.
    start = storage.storage_timeline(6.0, 1.0, 100.0, 3, 0, 0.0, 0.0)
    fig = plan.storage_figure(_timeline(300.0), COSTS, 0.0, 1e7, 0, hot_start=start)
    hot = fig.data[0]
    assert max(hot.x) == 6.0 and "hours" in _title(fig.layout.xaxis2)
    assert list(hot.y).count(400.0) == 3  # the 4th, 5th and 6th writes while 3 are kept
    assert hot.y[-1] == 300.0


@pytest.mark.parametrize(("archive_every_nth", "verdict"), [
    # Llama 3.1 405B keeping its last 3 checkpoints and 10 weight archives: well under 5 % of ~$90M.
    pytest.param(0, "not a cost driver", id="keep-last-3"),
    # Keeping every one of its ~3,700 checkpoints (archive every write): about 21 PB on the cold tier.
    pytest.param(1, "a cost driver", id="keep-every-checkpoint"),
])
def test_the_405b_run_that_keeps_every_checkpoint_is_told_storage_drives_its_cost(archive_every_nth, verdict):
    from dashboard.core.presets import presets
    from dashboard.figures.plan_charts import plan_chart

    llama = next(s for name, s in presets().items() if name.startswith("Llama 3.1 405B"))
    scenario = llama.model_copy(update={"archive_every_nth": archive_every_nth})
    title = plan_chart("Storage growth", scenario, scenario_outputs(scenario)).layout.title.text
    # 405.9B (Table 3's exact count) × 2 bytes = 811.8 GB a weight archive, ten of them 8,118 GB.
    assert llama.total_params == 405.9e9
    assert title.endswith(f"of the total — {verdict}<br>10 weight archives of 812 GB (8.12 TB)")
