"""The "Can it run?" memory bar and the TST chart's data-scarcity line."""

import pytest

from dashboard.core.engine import scenario_outputs
from dashboard.core.scenario import Scenario
from dashboard.figures.feasibility import memory_figure
from dashboard.figures.plan import tst_figure


def test_memory_bar_stacks_the_four_parts_against_the_gpu():
    # 70B, TP 8, ZeRO-1, DP 8 on 64 H100: 17.5 + 17.5 + 13.125 GB of states.
    result = scenario_outputs(Scenario(total_params=70e9, gpu_count=64, tensor_parallel=8, pipeline_parallel=1,
                                       zero_stage=1,
                               activation_recompute="full"))
    figure = memory_figure(result["memory"], result["layout"])
    values = [trace.x[0] for trace in figure.data]
    assert values[:3] == pytest.approx([17.5, 17.5, 13.125])
    assert values[3] == pytest.approx(result["memory"]["activations_gb"])
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


def test_memory_bar_without_a_known_gpu_memory_has_no_line():
    result = scenario_outputs(Scenario(gpu_type="custom", peak_tflops=500.0))
    figure = memory_figure(result["memory"], result["layout"])
    assert result["memory"]["gpu_memory_gb"] is None and not figure.layout.shapes


def test_tst_chart_states_the_saving_with_scarce_data():
    def subtitle(**keys) -> tuple[str, dict]:
        result = scenario_outputs(Scenario(method="tst", **keys))
        return tst_figure(result["tst"], None, result["cost_total_usd"]).layout.title.subtitle.text, result["tst"]

    assert "unique data" not in subtitle()[0]
    scarce_text, scarce = subtitle(unique_tokens=1e12)
    assert f"TST trains {scarce['scarcity_factor']:.2f}× longer" in scarce_text
    assert "cannot reach the baseline's loss" in subtitle(unique_tokens=1e11)[0]
