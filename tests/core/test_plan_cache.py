"""One scenario's plan and layout are cached: estimated again it gives the same result, and its arrays are copies."""

from __future__ import annotations

from dashboard.core import engine, feasibility
from dashboard.core.scenario import Scenario

SCENARIO = Scenario(total_params=70e9, tokens=1.4e12, n_layers=80, d_model=8192, gpu_count=64,
                    activation_recompute="full")


def test_estimated_again_equals_the_first_estimate():
    feasibility.clear_caches()
    first = engine.scenario_outputs(SCENARIO)
    assert engine.scenario_outputs(SCENARIO) == first
    feasibility.clear_caches()
    assert engine.scenario_outputs(SCENARIO) == first


def test_changing_a_returned_array_does_not_change_the_next_result():
    arrays = engine.scenario_arrays([SCENARIO])
    first = engine.output_arrays(arrays)
    tp, total = float(first["layout"]["tensor_parallel"][0]), float(first["memory"]["total_gb"][0])
    first["layout"]["tensor_parallel"][0] = 999.0
    first["memory"]["total_gb"][0] = -1.0
    again = engine.output_arrays(arrays)
    assert float(again["layout"]["tensor_parallel"][0]) == tp
    assert float(again["memory"]["total_gb"][0]) == total


def test_a_changed_input_is_not_served_from_the_cache():
    small = engine.scenario_outputs(SCENARIO)
    # the same plan on 8 GPUs: 70e9 · 16 B / 8 = 140 GB of model states per GPU even at ZeRO-3, more than 80 GB
    fewer = engine.scenario_outputs(SCENARIO.model_copy(update={"gpu_count": 8}))
    assert small["feasible"] and not fewer["feasible"]
    assert fewer["memory"]["total_gb"] > 140.0

