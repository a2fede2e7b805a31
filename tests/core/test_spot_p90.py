"""The spot chart's P90 curves: the plan's own Monte Carlo at each spot share."""

import numpy as np
import pytest

from dashboard.core import sweeps
from dashboard.core.scenario import Scenario
from dashboard.core.uncertainty import INPUTS, simulate

NO_RANGES = {f"range_{item.range_name}_{end}": 1.0 for item in INPUTS for end in ("low", "high")}


def test_with_no_ranges_p90_is_the_point_estimate_at_every_share():
    scenario = Scenario(reserved_share=0.6, spot_share=0.25, **NO_RANGES)
    p90 = sweeps.spot_share_p90(scenario, points=5, draws=200)
    curve = sweeps.spot_share_curve(scenario, points=5)
    assert list(p90.spot_share) == list(curve.spot_share) == [0.0, 0.25, 0.5, 0.75, 1.0]  # 0.25 is on the grid
    assert p90.cost_p90_usd.to_numpy() == pytest.approx(curve.cost_total_usd.to_numpy(), rel=1e-6)
    assert p90.wall_clock_p90_days.to_numpy() == pytest.approx(curve.wall_clock_days.to_numpy(), rel=1e-6)


def test_at_the_plans_share_p90_is_the_plans_own_monte_carlo():
    scenario = Scenario(reserved_share=0.5, spot_share=0.2)
    p90 = sweeps.spot_share_p90(scenario, points=6, draws=2_000, seed=7).set_index("spot_share")
    samples = simulate(scenario, 2_000, 7)
    assert p90.loc[0.2, "cost_p90_usd"] == pytest.approx(np.percentile(samples["cost_total_usd"], 90))
    assert p90.loc[0.2, "wall_clock_p90_days"] == pytest.approx(np.percentile(samples["wall_clock_days"], 90))
    # Spot at $2.42 is cheaper than the mix of reserved $2.65 and on-demand $6.88 it replaces: P90 cost falls.
    assert p90.cost_p90_usd.is_monotonic_decreasing
