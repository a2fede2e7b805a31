"""The cost distribution and tornado charts: what they mark and in which order, from a Monte Carlo result."""

import numpy as np
import pytest

from dashboard.core.scenario import Scenario
from dashboard.core.uncertainty import monte_carlo
from dashboard.figures.uncertainty import BINS, distribution_figure, input_span, label_rows, tornado_figure


@pytest.fixture(scope="module")
def mc():
    return monte_carlo(Scenario(budget_usd=450_000.0), draws=20_000, seed=3)


def test_distribution_bars_are_shares_of_all_draws(mc):
    bars = distribution_figure(mc).data[0]
    assert len(bars.y) == BINS
    assert sum(bars.y) == pytest.approx(100.0)
    assert min(bars.x) < mc.percentile("cost_total_usd", 10) < mc.percentile("cost_total_usd", 90) < max(bars.x)


def test_distribution_marks_percentiles_plan_and_budget(mc):
    figure = distribution_figure(mc)
    positions = sorted(shape.x0 for shape in figure.layout.shapes)
    expected = sorted([*(mc.percentile("cost_total_usd", q) for q in (10, 50, 90)), mc.point["cost_total_usd"],
                       450_000.0])
    assert positions == pytest.approx(expected)
    labels = [a.text.split(" ")[0] for a in figure.layout.annotations]
    assert sorted(labels) == ["P10", "P50", "P90", "budget", "plan"]
    subtitle = figure.layout.title.subtitle.text
    # The chance as the Plan page's budget tile writes it: three significant figures and " %" (49.6 %, not 50%).
    chance = f"{float(f'{100 * mc.prob_over_budget:.3g}'):g} % chance of exceeding the $450k budget"
    assert chance in subtitle, subtitle
    # The default plan's ranges are lopsided (experiments up to 2×), so its point estimate is a low percentile.
    rank = 100 * np.mean(mc.samples["cost_total_usd"] <= mc.point["cost_total_usd"])
    assert f"point estimate is at P{rank:.0f} of 20,000 triangular draws (seed 3)" in subtitle
    assert figure.layout.xaxis.title.text == "Total cost ($)"


def test_tornado_puts_the_widest_swing_on_top_and_lists_inputs_without_effect(mc):
    figure = tornado_figure(mc)
    low, high, plan_line = figure.data
    assert plan_line.name.startswith("plan $") and plan_line.mode == "lines"
    assert not figure.layout.annotations  # nothing written over the plot
    assert figure.layout.margin.t == 100  # room for the two-line subtitle
    # The legend is anchored to the foot of the figure, under the axis title, with room for three wrapped rows
    # (ticks ~20 px, title ~25 px, three rows of ~20 px) rather than just below the plot, over the title.
    legend = figure.layout.legend
    assert (legend.yref, legend.yanchor, legend.y) == ("container", "bottom", 0.0)
    assert figure.layout.margin.b >= 20 + 25 + 3 * 20
    moving = [bar for bar in mc.tornado if bar.swing_usd > 0]
    # Plotly draws the first category at the bottom: the widest swing is the last label.
    assert list(low.y)[-1] == input_span(moving[0])
    assert len(low.y) == len(moving)
    point = mc.point["cost_total_usd"]
    assert np.allclose(np.array(low.x) + point, [b.cost_low_usd for b in reversed(moving)])
    assert np.allclose(np.array(high.x) + point, [b.cost_high_usd for b in reversed(moving)])
    # Default plan: baseline method, no spot share.
    still = "<br>No effect here: Spot $/GPU-hour, Spot interruption rate, TST speedup."
    assert still in figure.layout.title.subtitle.text


@pytest.mark.parametrize("key, low, high, text", [
    ("mfu", 0.26, 0.44, "MFU 26–44 %"),
    ("tokens", 1.8e12, 2.4e12, "Training tokens 1.8T–2.4T"),
    ("price_spot_per_gpu_hour", 1.62, 3.61, "Spot $/GPU-hour $1.62–$3.61"),
    ("experiment_overhead", 0.5, 2.0, "Experiment overhead 0.50–2.00×"),
    ("node_failures_per_1000_node_days", 2.35, 6.52, "Node failure rate 2.35–6.52 per 1,000 node-days"),
])
def test_input_span_labels_carry_units(mc, key, low, high, text):
    bar = next(b for b in mc.tornado if b.input.key == key)
    assert input_span(type(bar)(bar.input, low, high, 0.0, 0.0)) == text


@pytest.mark.parametrize(("xs", "rows"), [
    # Widths 10 × 0.017 + 0.01 = 0.18 of the range. 0 takes [0, 0.18] in row 0; 1 would overlap it, so row 1;
    # 50 fits row 0 again; 99 would leave the plot, so it reads leftwards over [0.81, 0.99], after 50's 0.68.
    ([0.0, 1.0, 50.0, 99.0], [(0, "left"), (1, "left"), (0, "left"), (0, "right")]),
    # Three lines within 10 % of each other: three rows; given out of order, each keeps its own place. Lines 20 %
    # apart share a row.
    ([20.0, 10.0, 15.0], [(2, "left"), (0, "left"), (1, "left")]),
    ([10.0, 30.0, 50.0], [(0, "left"), (0, "left"), (0, "left")]),
])
def test_label_rows_never_overlap(xs, rows):
    assert label_rows(xs, [10] * len(xs), (0.0, 100.0)) == rows


def test_close_lines_get_labels_on_different_rows(mc):
    # The point estimate ($446.5k) and the $450k budget are 0.5 % of the range apart.
    figure = distribution_figure(mc)
    heights = {a.text.split(" ")[0]: a.y for a in figure.layout.annotations}
    assert heights["plan"] != heights["budget"]


def test_a_plan_that_cannot_run_says_so_on_its_range_charts():
    # 70B unsharded on 64 GPUs: 1,121 GB per 80 GB GPU (tests/app/test_feasibility_panel.py), so every draw prices
    # a run that does not fit, and the Cost range and Tornado tabs say so, as the budget tile does.
    blocked = Scenario(total_params=70e9, gpu_count=64, tensor_parallel=1, pipeline_parallel=1, zero_stage=0)
    for scenario, flagged in ((blocked, True), (Scenario(), False)):
        run = monte_carlo(scenario, 500, 0)
        for figure in (distribution_figure(run), tornado_figure(run)):
            assert figure.layout.title.subtitle.text.startswith("Cannot run as planned") == flagged
