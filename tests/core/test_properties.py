"""Monotonicity of the plan model over random scenarios (hypothesis)."""

from hypothesis import given, settings
from hypothesis import strategies as st

from dashboard.core.engine import scenario_outputs
from dashboard.core.scenario import Scenario

scenarios = st.builds(
    Scenario,
    total_params=st.floats(1e8, 2e12),
    tokens=st.floats(1e9, 1e14),
    mfu=st.floats(0.02, 0.9),
    gpu_type=st.sampled_from(["H100", "A100", "B200", "TPUv5p", "MI300X"]),
    gpu_count=st.integers(8, 100_000),
    spot_share=st.floats(0.0, 0.5),
    reserved_share=st.floats(0.0, 0.5),
    checkpoint_interval_min=st.floats(5, 600),
    node_failures_per_1000_node_days=st.floats(0, 20),
    method=st.sampled_from(["baseline", "tst"]),
    scaling_fit=st.sampled_from(["epoch2024", "hoffmann2022"]),
    attention_flops=st.booleans(),
)
growth = st.floats(1.0, 10.0)


@settings(max_examples=150, deadline=None)
@given(scenarios, growth)
def test_more_tokens_never_cost_less(scenario, factor):
    more = scenario.model_copy(update={"tokens": scenario.tokens * factor})
    assert scenario_outputs(more)["cost_total_usd"] >= scenario_outputs(scenario)["cost_total_usd"] * (1 - 1e-12)
    assert scenario_outputs(more)["gpu_hours_total"] >= scenario_outputs(scenario)["gpu_hours_total"] * (1 - 1e-12)


@settings(max_examples=150, deadline=None)
@given(scenarios, growth)
def test_higher_mfu_never_costs_more(scenario, factor):
    faster = scenario.model_copy(update={"mfu": min(1.0, scenario.mfu * factor)})
    assert scenario_outputs(faster)["cost_total_usd"] <= scenario_outputs(scenario)["cost_total_usd"] * (1 + 1e-12)
    assert scenario_outputs(faster)["wall_clock_days"] <= scenario_outputs(scenario)["wall_clock_days"] * (1 + 1e-12)


@settings(max_examples=100, deadline=None)
@given(scenarios, growth)
def test_more_tokens_never_raise_the_predicted_loss(scenario, factor):
    more = scenario.model_copy(update={"tokens": scenario.tokens * factor})
    assert scenario_outputs(more)["predicted_loss"] <= scenario_outputs(scenario)["predicted_loss"]
