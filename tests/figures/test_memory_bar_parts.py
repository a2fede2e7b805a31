"""The "Can it run?" bar draws every part the memory model returns: the logits and the reserve get their own
segments, and a result without them draws the four parts alone."""

import pytest

from dashboard.core.engine import scenario_outputs
from dashboard.core.scenario import Scenario
from dashboard.figures.feasibility import PARTS, memory_figure

LAYOUT = {"tensor_parallel": 8, "pipeline_parallel": 1, "zero_stage": 1}


def test_the_logits_and_the_reserve_are_their_own_segments():
    result = scenario_outputs(Scenario())
    figure = memory_figure(result["memory"], result["layout"])
    drawn = {trace.name: trace.x[0] for trace in figure.data}
    names = {key: name for key, name, _ in PARTS}
    assert drawn[names["logits_gb"]] == pytest.approx(result["memory"]["logits_gb"])
    assert drawn[names["reserve_gb"]] == pytest.approx(result["memory"]["reserve_gb"])
    assert sum(drawn.values()) == pytest.approx(result["memory"]["total_gb"])  # the segments add up to the total


def test_a_memory_result_without_a_part_draws_the_others():
    memory = {"weights_gb": 17.5, "gradients_gb": 17.5, "optimizer_gb": 13.125, "activations_gb": 1.0,
              "total_gb": 49.125, "gpu_memory_gb": 80.0, "fits": True}
    figure = memory_figure(memory, LAYOUT)
    assert [trace.x[0] for trace in figure.data] == [17.5, 17.5, 13.125, 1.0]
