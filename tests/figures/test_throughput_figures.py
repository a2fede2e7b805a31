"""The Plan page's "Where the step goes" (`dashboard.figures.throughput`): the plan's step by part, the scaling
curve over GPU counts, and the MFU sentences, all checked against the engine's own numbers."""

import json
import math

import plotly.graph_objects as go
import plotly.io as pio
import pytest

from dashboard.core import catalogue
from dashboard.core.engine import scenario_outputs
from dashboard.core.scenario import Scenario, default_scenario
from dashboard.core.step_time import PARTS
from dashboard.figures import palette
from dashboard.figures.throughput import (
    IDLE,
    PLAN_MARK,
    TITLE,
    gpu_counts,
    mfu_line,
    part_label,
    region_line,
    scaling_curve,
    step_figure,
)


def _built(scenario: Scenario):
    result = scenario_outputs(scenario)
    curve = scaling_curve(scenario, dict(result))
    return result, curve, step_figure(dict(result), curve, scenario.gpu_count)


def _bars(figure: go.Figure, axis: str) -> list:
    return [trace for trace in figure.data if trace.type == "bar" and trace.yaxis == axis]


@pytest.mark.parametrize("scenario", [default_scenario(), Scenario(tensor_parallel=8, pipeline_parallel=2),
                                      Scenario(mfu=0.4, gpu_count=1000)], ids=["default", "tp8-pp2", "1000 GPUs"])
def test_the_step_bar_is_the_engine_s_parts_and_sums_to_the_step_time(scenario):
    result, curve, figure = _built(scenario)
    rates = result["throughput"]
    bars = _bars(figure, "y")
    # One bar per part the plan or the curve has (a part zero at every count, as CP or EP here, is left out), in
    # the model's order.
    drawn = [part for part in PARTS if rates[part] or (curve[part] > 0).any()]
    assert [bar.name for bar in bars] == [part_label(part) for part in drawn]
    assert all(bar.orientation == "h" and bar.y == (PLAN_MARK,) for bar in bars)
    assert math.fsum(bar.x[0] for bar in bars) == pytest.approx(rates["step_time_s"], abs=1e-9)
    assert [bar.x[0] for bar in bars] == [rates[part] for part in drawn]
    colours = {part_label(part): palette.STEP_PARTS[part] for part in drawn}
    assert {bar.name: bar.marker.color for bar in bars} == colours
    assert figure.layout.title.text == TITLE
    assert figure.layout.title.subtitle.text == mfu_line(result)


def test_the_curve_prices_the_plan_at_node_multiples_up_to_the_batch_limit_and_marks_its_count():
    scenario = default_scenario()
    result, curve, figure = _built(scenario)
    limit = result["max_useful_gpus"]
    node = scenario.gpus_per_node
    expected = sorted({scenario.gpu_count, *(node * 2**k for k in range(30) if node * 2**k <= limit)})
    assert list(curve["gpu_count"]) == expected
    assert curve["fits"].all()
    # Each count as the engine prices it on its own, the plan's own row from its result.
    for row in curve.itertuples():
        out = result if row.gpu_count == scenario.gpu_count else scenario_outputs(
            scenario.model_copy(update={"gpu_count": row.gpu_count}))
        assert row.step_time_s == pytest.approx(out["throughput"]["step_time_s"], rel=1e-12)
        assert row.tokens_per_s == pytest.approx(out["throughput"]["tokens_per_s_per_gpu"] * out["busy_gpus"],
                                                 rel=1e-12)
    assert curve.loc[curve["plan"], "gpu_count"].tolist() == [scenario.gpu_count]
    # The stacked GPU-seconds per step add up to step time × GPUs at every count.
    stacked = [sum(bar.y[position] for bar in _bars(figure, "y2")) for position in range(len(curve))]
    assert stacked == pytest.approx(list(curve["step_time_s"] * curve["gpu_count"]), rel=1e-9)
    assert list(_bars(figure, "y2")[0].x) == [f"{count:,}" for count in curve["gpu_count"]]
    (line,) = [trace for trace in figure.data if trace.type == "scatter"]
    assert line.yaxis == "y3" and list(line.y) == pytest.approx(list(curve["tokens_per_s"]))
    (mark,) = figure.layout.annotations
    # At the plan's category, by its position (plotly would read the name "512" as the 512th category).
    assert line.x[mark.x] == f"{scenario.gpu_count:,}" and mark.text == f"{PLAN_MARK}: {scenario.gpu_count:,} GPUs"
    assert mark.y == pytest.approx(result["throughput"]["step_time_s"] * scenario.gpu_count)


def test_a_given_layout_is_kept_and_counts_it_cannot_divide_are_skipped():
    scenario = Scenario(tensor_parallel=8, pipeline_parallel=2)
    _, curve, _ = _built(scenario)
    assert 8 not in set(curve["gpu_count"])  # TP 8 × PP 2 needs 16 GPUs at least
    assert (curve["gpu_count"] % 16 == 0).all()
    assert all(layout.startswith("TP 8 · PP 2 ·") for layout in curve["layout"])


def test_gpus_beyond_the_batch_limit_are_drawn_idle():
    # With TP and PP given, the batch keeps at most its sequences' worth of data-parallel replicas busy.
    scenario = Scenario(tensor_parallel=4, pipeline_parallel=1, gpu_count=16384)
    result, curve, figure = _built(scenario)
    gpu_count = scenario.gpu_count
    assert result["busy_gpus"] < gpu_count
    idle = next(bar for bar in _bars(figure, "y2") if bar.name == part_label(IDLE))
    plan_position = curve.index[curve["plan"]][0]
    assert idle.y[plan_position] == pytest.approx(result["throughput"]["step_time_s"]
                                                  * (gpu_count - result["busy_gpus"]))
    assert sum(bar.y[plan_position] for bar in _bars(figure, "y2")) == pytest.approx(
        result["throughput"]["step_time_s"] * gpu_count, rel=1e-9)


@pytest.mark.parametrize(("gpu_count", "node", "limit", "counts"), [
    (512, 8, 8988.0, [8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192]),
    (1000, 8, 4096.0, [8, 16, 32, 64, 128, 256, 512, 1000, 1024, 2048, 4096]),
    (4, 8, 100.0, [4, 8, 16, 32, 64]),
    (64, 8, math.nan, [64]),
])
def test_gpu_counts(gpu_count, node, limit, counts):
    assert gpu_counts(gpu_count, node, limit) == counts


def test_mfu_lines_say_where_the_mfu_comes_from():
    predicted = scenario_outputs(default_scenario())
    rates = predicted["throughput"]
    assert rates["mfu_source"] == "validated" and predicted["mfu_used"] == rates["mfu_as_input"]

    def banded(value):  # the value and value × (1 ∓ the validated error), as "40.3 % (38.3–42.3 %)"
        low, high = (catalogue.text("mfu_used", value * (1 + sign * rates["mfu_error"])) for sign in (-1, 1))
        return f"{catalogue.text('mfu_used', value)} ({low.removesuffix(' %')}–{high})"

    assert mfu_line(predicted) == (
        f"MFU {banded(rates['mfu_as_input'])} predicted from the layout (step "
        f"{catalogue.text('throughput.step_time_s', rates['step_time_s'])}, "
        f"{catalogue.text('throughput.tokens_per_s_per_gpu', rates['tokens_per_s_per_gpu'])} per GPU)")
    entered = scenario_outputs(Scenario(mfu=0.45))
    assert entered["mfu_used"] == 0.45
    assert mfu_line(entered) == (f"MFU {catalogue.text('mfu_used', 0.45)} entered; the layout predicts "
                                 f"{banded(entered['throughput']['mfu_as_input'])}")


def test_full_recompute_adds_the_model_flops_mfu():
    result = scenario_outputs(Scenario(activation_recompute="full"))
    rates = result["throughput"]
    assert rates["mfu_as_input"] > rates["mfu_predicted"]
    assert mfu_line(result).endswith(f"; {catalogue.text('throughput.mfu_predicted', rates['mfu_predicted'])} in "
                                     "model FLOPs)")


def test_the_region_line_quotes_the_engine_s_notes():
    outside = scenario_outputs(default_scenario().model_copy(update={"gpu_type": "b200"}))  # no Blackwell run
    assert not outside["throughput"]["validated"]
    assert region_line(outside) == ("Outside the validated region: " + "; ".join(outside["throughput"]["region_notes"])
                                    + " — see docs/throughput-validation.md")
    inside = scenario_outputs(Scenario(gpu_type="a100", total_params=175e9, gpu_count=1024))
    assert inside["throughput"]["validated"] and region_line(inside) is None


def test_a_plan_without_a_step_time_draws_no_bars():
    scenario = Scenario(gpu_type="custom", peak_tflops=500.0, gpu_memory_gb=80.0, mfu=0.4)
    result, curve, figure = _built(scenario)
    assert result["throughput"]["step_time_s"] is None
    assert curve.empty and not figure.data
    assert "bandwidths" in figure.layout.title.subtitle.text


def test_the_figure_passes_plotly_s_check_unchanged():
    _, _, figure = _built(default_scenario())
    checked = go.Figure(figure.to_dict())  # raises ValueError on a property plotly does not know
    assert json.loads(pio.to_json(checked)) == json.loads(pio.to_json(figure, validate=False))
    assert figure.layout.template.layout.plot_bgcolor == pio.templates["plotly_white"].layout.plot_bgcolor


def test_every_part_has_a_colour():
    assert set(PARTS) | {IDLE} <= set(palette.STEP_PARTS)
