"""Scenarios in a URL: round trips, and every kind of bad parameter dropped with a warning."""

import pytest

from dashboard.core.scenario import default_scenario, with_overrides
from dashboard.core.scenario_query import BASELINE_PREFIX, scenario_from_query, scenario_to_query


def test_default_scenario_needs_no_parameters():
    assert scenario_to_query(default_scenario()) == {}


@pytest.mark.parametrize("assignments", [
    ["mfu=0.35", "gpu_count=1024"],
    ["total_params=671e9", "active_params=37e9", "tokens=14.8e12", 'gpu_type="H800"'],
    ['method="tst"', "tst_speedup=2.5", "checkpoint_async=true"],
    ['name="123"', "price_spot_per_gpu_hour=1.234567891234"],
    ["tst_speedup=2.582005033557047", "reserved_share=0.25", "spot_share=0.75"],
])
def test_round_trip_reproduces_every_key(assignments):
    scenario = with_overrides(default_scenario(), assignments)
    baseline = with_overrides(default_scenario(), ["mfu=0.3"])
    decoded = scenario_from_query(scenario_to_query(scenario, baseline))
    assert decoded.warnings == []
    assert decoded.scenario == scenario
    assert decoded.baseline == baseline


def test_numbers_are_written_short():
    scenario = with_overrides(default_scenario(), ["total_params=405e9", "mfu=0.38"])
    assert scenario_to_query(scenario) == {"total_params": "4.05e+11", "mfu": "0.38"}


def test_baseline_keys_carry_a_prefix():
    baseline = with_overrides(default_scenario(), ["gpu_count=64"])
    assert scenario_to_query(default_scenario(), baseline) == {BASELINE_PREFIX + "gpu_count": "64"}


@pytest.mark.parametrize(("params", "kept", "warning_fragment"), [
    ({"mfu": "7", "gpu_count": "1024"}, {"gpu_count": 1024}, "mfu = 7 is out of range"),
    ({"gpu_count": "many"}, {}, "gpu_count = 'many'"),
    ({"zzz": "1", "mfu": "0.3"}, {"mfu": 0.3}, "unknown parameter 'zzz'"),
    ({"schema": "2"}, {}, "unknown parameter 'schema'"),
    ({"gpu_type": "Z9000"}, {}, "gpu_type"),
    ({"tokens": "NaN"}, {}, "tokens"),
    ({"name": "x" * 500}, {}, "longer than"),
    ({"mfu": ["0.2", "0.3"]}, {}, "given 2 times in the address"),  # issue 12: never the last one silently
])
def test_bad_parameters_are_dropped_with_a_warning(params, kept, warning_fragment):
    decoded = scenario_from_query(params)
    expected = default_scenario().model_copy(update=kept)
    assert decoded.scenario == expected
    if warning_fragment is None:
        assert decoded.warnings == []
    else:
        assert len(decoded.warnings) == 1
        assert warning_fragment in decoded.warnings[0]


@pytest.mark.parametrize(("params", "kept", "ignored"), [
    # Default reserved share 80 %: 90 % reserved fits once the later 50 % spot is dropped.
    ({"reserved_share": "0.9", "spot_share": "0.5"}, {"reserved_share": 0.9}, "ignored spot_share = 0.5"),
    # A link to 1,024 GPUs stays a link to 1,024 GPUs when its TP of 16 cannot fit in an 8-GPU node.
    ({"gpu_count": "1024", "tensor_parallel": "16"}, {"gpu_count": 1024}, "ignored tensor_parallel = 16"),
    # Two conflicts, neither fixed by dropping one key: the last two given go, the GPU count stays.
    ({"gpu_count": "1024", "spot_share": "0.5", "tensor_parallel": "16"}, {"gpu_count": 1024},
     "ignored spot_share, tensor_parallel"),
])
def test_values_that_do_not_fit_together_drop_the_fewest_keys(params, kept, ignored):
    decoded = scenario_from_query({**params, BASELINE_PREFIX + "mfu": "0.3"})
    assert decoded.scenario == default_scenario().model_copy(update=kept)
    assert decoded.baseline.mfu == 0.3
    assert len(decoded.warnings) == 1 and ignored in decoded.warnings[0]
    assert "does not fit" in decoded.warnings[0] or "do not fit" in decoded.warnings[0]


