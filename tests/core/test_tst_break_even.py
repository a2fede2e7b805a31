"""TST's break-even speedup: the speedup at which the saving, total(baseline) − total(TST) of the plan, is zero."""

import math

import pytest

from dashboard.core.engine import scenario_outputs
from dashboard.core.scenario import Scenario


@pytest.mark.parametrize("overrides", [
    pytest.param({}, id="default"),
    pytest.param({"tst_pilot_fraction": 0.3, "tst_switching_cost_usd": 50_000.0}, id="dear-pilot"),
    pytest.param({"tst_token_multiplier": 1.0, "tst_pilot_fraction": 0.0, "tst_switching_cost_usd": 0.0},
                 id="free-switch"),
])
def test_the_net_saving_is_zero_at_the_break_even_speedup(overrides):
    break_even = scenario_outputs(Scenario(**overrides))["tst"]["break_even_speedup"]
    assert break_even >= 1.0
    at_break_even = scenario_outputs(Scenario(**overrides, tst_speedup=break_even))["tst"]
    assert at_break_even["net_savings_usd"] == pytest.approx(0.0, abs=1e-6 * at_break_even["baseline_cost_usd"])
    faster = scenario_outputs(Scenario(**overrides, tst_speedup=break_even * 1.1))["tst"]
    assert faster["net_savings_usd"] > 0


def test_free_switching_breaks_even_at_no_speedup():
    # Same tokens, no pilot, no switching cost: any speedup above 1× saves money.
    free = Scenario(tst_token_multiplier=1.0, tst_pilot_fraction=0.0, tst_switching_cost_usd=0.0)
    tst = scenario_outputs(free)["tst"]
    assert tst["break_even_speedup"] == pytest.approx(1.0)


def test_no_speedup_breaks_even_when_the_fixed_costs_exceed_the_run():
    # A $1T switching cost is more than the whole $0.45M plan.
    assert math.isinf(scenario_outputs(Scenario(tst_switching_cost_usd=1e12))["tst"]["break_even_speedup"])
