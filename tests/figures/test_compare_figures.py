"""Comparison figures: traces, values and labels for hand-built results, and the engine's own totals for presets."""

import pytest

from dashboard.core.engine import LINE_ITEMS, scenario_outputs
from dashboard.core.presets import presets
from dashboard.core.scenario import Scenario
from dashboard.figures import compare


def _title(axis) -> str:
    return axis.title.text or ""


def breakdown(**items: float) -> dict:
    values = {key: 0.0 for key in LINE_ITEMS} | items
    return {"cost_breakdown": values, "cost_total_usd": sum(values.values())}


@pytest.mark.parametrize(
    ("results", "names", "ys"),
    [
        pytest.param(
            [breakdown(main_compute=1000.0, storage=50.0), breakdown(main_compute=400.0, tst_pilot=20.0)],
            ["main compute", "storage", "TST pilot"], [[1000.0, 400.0], [50.0, 0.0], [0.0, 20.0]],
            id="zero-in-every-scenario-left-out",
        ),
        pytest.param(
            [breakdown(people=10.0, network_egress=5.0)], ["network egress", "people"], [[5.0], [10.0]],
            id="one-scenario-in-line-item-order",
        ),
    ],
)
def test_cost_breakdown_stacks_line_items_with_totals_on_top(results, names, ys):
    labels = [f"S{i}" for i in range(len(results))]
    fig = compare.cost_breakdown_figure(labels, results)
    assert [trace.name for trace in fig.data] == names
    assert [list(trace.x) for trace in fig.data] == ys
    assert all(list(trace.y) == labels and trace.orientation == "h" for trace in fig.data)  # names on the y axis
    assert fig.layout.barmode == "stack"
    totals = [sum(column) for column in zip(*ys, strict=True)]
    assert [(a.x, a.y) for a in fig.layout.annotations] == list(zip(totals, labels, strict=True))
    assert "USD" in _title(fig.layout.xaxis)
    assert fig.layout.title.text and fig.layout.title.subtitle.text
    assert fig.layout.xaxis.range[1] > max(totals)  # room for the total labels
    assert fig.layout.legend.orientation == "h" and fig.layout.legend.y < 0  # below the plot: it never scrolls


@pytest.mark.parametrize(
    ("scale", "first_bar", "axis_type"),
    [
        pytest.param("usd", [900.0, 100.0], None, id="dollars"),
        pytest.param("share", [90.0, 10.0], None, id="percent-of-its-own-total"),  # 900 of 1,000 is 90 %
        pytest.param("log", [900.0, 100.0], "log", id="log-axis"),
    ],
)
def test_cost_breakdown_scales(scale, first_bar, axis_type):
    results = [breakdown(main_compute=900.0, storage=100.0), breakdown(main_compute=5.0, storage=5.0)]
    fig = compare.cost_breakdown_figure(["Big", "Small"], results, scale)
    assert [trace.x[0] for trace in fig.data] == first_bar
    assert fig.layout.xaxis.type == axis_type
    if scale == "share":
        assert [trace.x[1] for trace in fig.data] == [50.0, 50.0]  # the small option fills its bar too
        assert [a.text.strip() for a in fig.layout.annotations] == ["$1k", "$10"]  # totals stay in dollars


def test_an_unknown_scale_is_refused():
    with pytest.raises(ValueError, match="scale 'pie': use one of usd, share, log"):
        compare.cost_breakdown_figure(["A"], [breakdown(main_compute=1.0)], "pie")


@pytest.mark.parametrize(
    ("names", "labels"),
    [
        pytest.param(["<b>x</b>", "a & b"], ["&lt;b&gt;x&lt;/b&gt;", "a &amp; b"], id="escaped"),
        pytest.param(["Same", "Same"], ["Same", "Same (2)"], id="made-unique"),
        pytest.param(["Llama 3.1 405B: 15.6T tokens on 16,384 H100"],
                     ["Llama 3.1 405B: 15.6T tokens<br>on 16,384 H100"], id="wrapped"),
    ],
)
def test_scenario_names_are_escaped_unique_and_wrapped(names, labels):
    results = [breakdown(main_compute=1.0)] * len(names)
    assert list(compare.cost_breakdown_figure(names, results).data[0].y) == labels


def test_timeline_splits_main_run_days_into_compute_stalls_and_rework():
    # 10 GPUs: 2,400 / 10 / 24 = 10 days of compute, 240 → 1 day of stalls, 480 → 2 days of rework.
    results = [
        {"gpu_hours_compute": 2400.0, "gpu_hours_stall": 240.0, "gpu_hours_rework": 480.0, "wall_clock_days": 13.0},
        {"gpu_hours_compute": 4800.0, "gpu_hours_stall": 0.0, "gpu_hours_rework": 0.0, "wall_clock_days": 10.0},
    ]
    scenarios = [Scenario(gpu_count=10), Scenario(gpu_count=20)]
    fig = compare.timeline_figure(["A", "B"], scenarios, results)
    assert [trace.name for trace in fig.data] == ["compute", "checkpoint stalls", "failure rework"]
    assert [list(trace.x) for trace in fig.data] == [[10.0, 10.0], [1.0, 0.0], [2.0, 0.0]]
    assert all(trace.orientation == "h" and list(trace.y) == ["A", "B"] for trace in fig.data)
    assert [a.text.strip() for a in fig.layout.annotations] == ["13.0 days", "10.0 days"]
    assert "days" in _title(fig.layout.xaxis)
    assert fig.layout.xaxis.range[1] > 13.0


def mc_summary(p10: float, p90: float, draws: int = 1000, seed: int = 7) -> dict:
    return {"p10": {"cost_total_usd": p10}, "p90": {"cost_total_usd": p90},
            "monte_carlo": {"draws": draws, "seed": seed, "shape": "triangular"}}


@pytest.mark.parametrize(
    ("point", "p10", "p90", "budget"),
    [
        pytest.param(100.0, 80.0, 150.0, 120.0, id="point-inside"),
        pytest.param(70.0, 80.0, 150.0, 60.0, id="point-below-p10"),  # skewed ranges: the bar still spans P10–P90
    ],
)
def test_range_figure_floats_p10_p90_with_point_and_budget_markers(point, p10, p90, budget):
    results = [{"cost_total_usd": point, "budget_usd": budget}]
    fig = compare.range_figure(["A"], results, [mc_summary(p10, p90)])
    bar, estimate_marker, budget_marker = fig.data
    assert bar.orientation == "h" and bar.y == ("A",)
    assert (bar.base[0], bar.base[0] + bar.x[0]) == (p10, p90)
    assert estimate_marker.x == (point,) and budget_marker.x == (budget,)
    assert [trace.name for trace in fig.data] == ["P10–P90", "point estimate", "budget"]
    assert "1,000 triangular draws, seed 7" in fig.layout.title.subtitle.text
    assert "below P10" in fig.layout.title.subtitle.text  # a point left of its bar is explained
    assert "USD" in _title(fig.layout.xaxis)


PRESET_NAMES = list(presets())[:3]


def test_engine_results_draw_their_own_totals():
    """Bars add up to the engine's total cost and wall-clock (total = Σ line items; days = main run / GPUs / 24)."""
    scenarios = [presets()[name] for name in PRESET_NAMES]
    results = [scenario_outputs(scenario) for scenario in scenarios]
    cost = compare.cost_breakdown_figure(PRESET_NAMES, results)
    for column, result in enumerate(results):
        assert sum(trace.x[column] for trace in cost.data) == pytest.approx(result["cost_total_usd"])
    timeline = compare.timeline_figure(PRESET_NAMES, scenarios, results)
    for column, result in enumerate(results):
        assert sum(trace.x[column] for trace in timeline.data) == pytest.approx(result["wall_clock_days"])
