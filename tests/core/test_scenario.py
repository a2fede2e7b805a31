"""Scenario files: defaults, accepted names and every kind of bad input with its message."""

import json

import pytest

from dashboard.core.scenario import (
    Scenario,
    ScenarioError,
    default_scenario,
    scenario_from_dict,
    scenario_from_json,
    with_overrides,
)


def test_bundled_default_matches_documented_defaults():
    assert default_scenario() == Scenario()


def test_active_params_default_to_total():
    assert Scenario(total_params=3e9).active == 3e9
    assert Scenario(total_params=671e9, active_params=37e9).active == 37e9


@pytest.mark.parametrize(
    ("given", "key"),
    [("A100", "a100"), ("h100", "h100"), ("H800", "h800"), ("H200", "h200"), ("B200", "b200"),
     ("GB200", "gb200"), ("MI300X", "mi300x"), ("mi325x", "mi325x"), ("L40S", "l40s"), ("TPUv5e", "tpuv5e"),
     ("TPUv5p", "tpuv5p"), ("tpuv6e", "tpuv6e"), ("H100 SXM", "h100"), ("TPU v6e (Trillium)", "tpuv6e")],
)
def test_gpu_type_names(given, key):
    assert Scenario(gpu_type=given).gpu_type == key


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"mfu": 1.5}, "mfu = 1.5 is out of range (allowed: ≥ 0.01 and ≤ 1)"),
        ({"mfu": 0}, "mfu = 0 is out of range (allowed: ≥ 0.01 and ≤ 1)"),
        ({"total_params": -7e9}, "total_params = -7000000000.0 is out of range (allowed: ≥ 1e+06 and ≤ 1e+14)"),
        ({"tokens": 0}, "tokens = 0 is out of range"),
        ({"reserved_share": 0.7, "spot_share": 0.5}, "reserved_share + spot_share = 1.2 exceeds 1"),
        ({"gpu_type": "H900"}, "unknown gpu_type 'H900'"),
        ({"gpu_type": "custom"}, "gpu_type 'custom' needs peak_tflops"),
        ({"active_params": 8e9, "total_params": 7e9}, "active_params = 8e+09 exceeds total_params = 7e+09"),
        ({"colour": "blue"}, "unknown key 'colour'"),
        ({"schema": 3}, 'this planner reads scenario files with "schema": 1 or 2'),
        ({"method": "magic"}, "method = 'magic'"),
        ({"gpu_count": 10.5}, "gpu_count = 10.5"),
        ({"tokens": float("inf")}, "tokens = inf: must be a finite number"),
    ],
)
def test_bad_values_name_the_key(data, message):
    with pytest.raises(ScenarioError) as error:
        scenario_from_dict(data)
    assert message in str(error.value)
    assert "\n" not in str(error.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [("{not json", "not valid JSON"), ("[1, 2]", "must be a JSON object"), ("", "not valid JSON")],
)
def test_malformed_json(text, message):
    with pytest.raises(ScenarioError, match=message):
        scenario_from_json(text)


def test_round_trip_through_json():
    scenario = Scenario(name="MoE", total_params=671e9, active_params=37e9, method="tst")
    assert scenario_from_json(json.dumps(scenario.to_json_dict())) == scenario
    assert scenario.to_json_dict()["schema"] == 2


def test_overrides_parse_json_scalars():
    scenario = with_overrides(Scenario(), ["mfu=0.3", "gpu_type=B200", "checkpoint_async=true", "name=x"])
    assert (scenario.mfu, scenario.gpu_type, scenario.checkpoint_async, scenario.name) == (0.3, "b200", True, "x")
    with pytest.raises(ScenarioError, match="--set expects KEY=VALUE"):
        with_overrides(Scenario(), ["mfu"])
