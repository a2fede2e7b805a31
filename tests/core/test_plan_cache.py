"""One scenario's plan and layout are cached: estimated again it gives the same result, and its arrays are copies."""

from __future__ import annotations

import numpy as np
import pytest

from dashboard.core import engine, feasibility, layout
from dashboard.core.scenario import Scenario

SCENARIO = Scenario(total_params=70e9, tokens=1.4e12, n_layers=80, d_model=8192, gpu_count=64,
                    activation_recompute="full", mfu=0.4)  # an entered MFU: float32 only rounds


def _forget_plans() -> None:
    """Forget the cached plans and layouts of single scenarios, so the next estimate is a first one."""
    feasibility._plan_one.cache_clear()
    layout._resolve_one.cache_clear()


def test_estimated_again_equals_the_first_estimate():
    _forget_plans()
    first = engine.scenario_outputs(SCENARIO)
    assert engine.scenario_outputs(SCENARIO) == first
    _forget_plans()
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



def _float32_draws(count: int) -> dict:
    """The scenario as Monte Carlo prices it: every input float32, the tokens varying per draw."""
    arrays = {key: value.astype("float32") for key, value in engine.scenario_arrays([SCENARIO]).items()}
    arrays["tokens"] = (SCENARIO.tokens * (0.5 + np.arange(count) / count)).astype("float32")
    return arrays


def test_a_float32_row_is_cached_like_a_float64_row():
    # Monte Carlo's constants arrive as one float32 row per chunk: the layout is searched once, then read from the
    # cache (before, every chunk searched it again), with the float64 row's degrees.
    _forget_plans()
    row64 = feasibility.layout_inputs(SCENARIO)
    row32 = {key: value.astype("float32") for key, value in row64.items()}
    first = layout.resolve(row32)
    again = layout.resolve(row32)
    assert layout._resolve_one.cache_info().hits == 1
    exact = layout.resolve(row64)
    for key in ("tensor_parallel", "pipeline_parallel", "zero_stage", "data_parallel"):
        assert again[key].tolist() == first[key].tolist() == exact[key].tolist(), key


def test_monte_carlo_draws_stay_float32_through_the_plan():
    # Before, the batch law and the layout's float64 degrees turned every cost after the idle factor into float64,
    # doubling the work of each Monte Carlo chunk.
    result = engine.cost_arrays(_float32_draws(1_000))
    assert result["plan"]["idle_factor"].dtype == np.float32
    for key in ("gpu_hours_compute", "gpu_hours_total", "wall_clock_days", "cost_total_usd"):
        assert result[key].dtype == np.float32, key
        assert result[key].shape == (1_000,), key


def test_float32_draws_price_like_float64():
    # 70B on 64 H100: every draw keeps all 64 GPUs busy (idle factor 1), so float32 only rounds.
    draws = _float32_draws(1_000)
    exact = engine.cost_arrays({key: value.astype("float64") for key, value in draws.items()})
    rounded = engine.cost_arrays(draws)
    assert np.all(exact["plan"]["idle_factor"] == 1.0)
    np.testing.assert_allclose(rounded["cost_total_usd"], exact["cost_total_usd"], rtol=1e-5)


def test_inputs_repeated_as_outputs_are_read_only_views():
    # Writing to an output must never change the scenario arrays it was read from.
    for arrays in (engine.scenario_arrays([SCENARIO]), engine.scenario_arrays([SCENARIO, SCENARIO])):
        out = engine.output_arrays(arrays)
        for repeated in (out["budget_usd"], out["tst"]["baseline_tokens"], out["cost_breakdown"]["people"]):
            assert not repeated.flags.writeable
            with pytest.raises(ValueError):
                repeated[0] = -1.0
        assert arrays["budget_usd"][0] == SCENARIO.budget_usd
