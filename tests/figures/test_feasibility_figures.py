"""The "Can it run?" memory bar and the TST chart's data-scarcity line."""

import pytest

from dashboard.core.engine import scenario_outputs
from dashboard.core.scenario import Scenario
from dashboard.figures.feasibility import memory_figure
from dashboard.figures.plan import tst_figure


def test_memory_bar_stacks_the_four_parts_against_the_gpu():
    # 70B, TP 8, ZeRO-1, DP 8 on 64 H100: 2 and 4 bytes × 70e9 / 8 of weights and fp32 gradients, 12 × 70e9 / 64 of
    # optimizer (GB of 2³⁰ bytes).
    result = scenario_outputs(Scenario(total_params=70e9, gpu_count=64, tensor_parallel=8, pipeline_parallel=1,
                                       zero_stage=1,
                               activation_recompute="full"))
    figure = memory_figure(result["memory"], result["layout"])
    values = [trace.x[0] for trace in figure.data]
    assert values[:3] == pytest.approx([2 * 70e9 / 8 / 2**30, 4 * 70e9 / 8 / 2**30, 12 * 70e9 / 64 / 2**30])
    assert values[3:] == pytest.approx([result["memory"][key] for key in ("activations_gb", "logits_gb", "reserve_gb")])
    assert figure.layout.barmode == "stack"
    assert figure.layout.shapes[0].x0 == 80
    label = figure.layout.annotations[0]
    assert (label.x, label.xanchor, label.text) == (80, "right", "GPU memory 80 GB")  # ends at the line, never past it
    assert figure.layout.title.subtitle.text.endswith("fits in 80 GB")
    assert figure.data[0].y[0] == "TP 8 · PP 1 · ZeRO-1"


def test_memory_bar_writes_its_figures_in_the_one_format():
    # Three significant figures, as the panel, the CLI and the report write them: 153 GB, not 153.0 GB.
    memory = {"weights_gb": 17.5, "gradients_gb": 17.5, "optimizer_gb": 105.0, "activations_gb": 13.04,
              "total_gb": 153.04, "gpu_memory_gb": 80.0, "fits": False}
    layout = {"tensor_parallel": 8, "pipeline_parallel": 1, "zero_stage": 3}
    figure = memory_figure(memory, layout)
    assert figure.layout.title.subtitle.text == "TP 8 · PP 1 · ZeRO-3: 153 GB per GPU — does not fit in 80 GB"
    assert figure.layout.annotations[0].text == "GPU memory 80 GB"


@pytest.mark.parametrize(("total_gb", "anchor"), [
    # 153 GB against 80 GB: the axis runs to 1.1 × 153 = 168 GB and the line sits at 48 % of it, in the left half:
    # the label runs right from the line (ending at it, "GPU memory" ran past the plot's left edge: "PU memory").
    pytest.param(153.04, "left", id="far-over"),
    # 800 GB against 80 GB: the line at 9 % of the axis.
    pytest.param(800.0, "left", id="ten-times"),
    # 70 GB in 80 GB: the axis runs to 88 GB, the line at 91 %: the label ends at the line.
    pytest.param(70.0, "right", id="fits"),
])
def test_the_gpu_memory_label_stays_inside_the_plot(total_gb, anchor):
    memory = {"weights_gb": total_gb / 4, "gradients_gb": total_gb / 4, "optimizer_gb": total_gb / 4,
              "activations_gb": total_gb / 4, "total_gb": total_gb, "gpu_memory_gb": 80.0, "fits": total_gb <= 80}
    label = memory_figure(memory, {"tensor_parallel": 1, "pipeline_parallel": 1, "zero_stage": 0}).layout.annotations[0]
    assert (label.x, label.xanchor, label.text) == (80, anchor, "GPU memory 80 GB")


def test_memory_bar_without_a_known_gpu_memory_has_no_line():
    result = scenario_outputs(Scenario(gpu_type="custom", peak_tflops=500.0, mfu=0.4))  # no bandwidths: MFU entered
    figure = memory_figure(result["memory"], result["layout"])
    assert result["memory"]["gpu_memory_gb"] is None and not figure.layout.shapes


def test_tst_chart_states_the_saving_with_scarce_data():
    def subtitle(**keys) -> tuple[str, dict]:
        result = scenario_outputs(Scenario(method="tst", **keys))
        return tst_figure(result["tst"], None).layout.title.subtitle.text, result["tst"]

    assert "unique data" not in subtitle()[0]
    scarce_text, scarce = subtitle(unique_tokens=1e12)
    assert f"TST trains {scarce['scarcity_factor']:.2f}× longer" in scarce_text
    assert "cannot reach the baseline's loss" in subtitle(unique_tokens=1e11)[0]
