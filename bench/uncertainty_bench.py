"""Monte Carlo: 100,000 draws against single-scenario evaluations measured in the same run."""

from __future__ import annotations

import time

import numpy as np

from dashboard.core.engine import estimate
from dashboard.core.scenario import Scenario
from dashboard.core.uncertainty import monte_carlo, tornado

DRAWS = 100_000
SINGLE_CALLS = 2_000
TARGET_SINGLE_EVALUATIONS = 50
# Every uncertain input moves the total: TST with all three purchase tiers in use.
SCENARIO = Scenario(method="tst", reserved_share=0.6, spot_share=0.2)


def _median_s(run, repeats: int) -> float:
    timings = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        timings.append(time.perf_counter() - start)
    return float(np.median(timings))


def main() -> None:
    assert all(bar.swing_usd > 0 for bar in tornado(SCENARIO))
    single_s = _median_s(lambda: [estimate(SCENARIO) for _ in range(SINGLE_CALLS)], 3) / SINGLE_CALLS
    for shape in ("triangular", "lognormal"):
        scenario = SCENARIO.model_copy(update={"range_shape": shape})
        monte_carlo(scenario, DRAWS, 0)
        mc_s = _median_s(lambda scenario=scenario: monte_carlo(scenario, DRAWS, 0), 9)
        page_s = _median_s(lambda scenario=scenario: monte_carlo(scenario, 10_000, 0), 9)
        print(f"monte_carlo_{shape}_100k_s: {mc_s:.4f} (median of 9; 10,000 draws for the Plan page: "
              f"{page_s * 1e3:.1f} ms)")
        print(f"monte_carlo_{shape}_100k_in_single_evaluations: {mc_s / single_s:.1f} "
              f"(one estimate() = {single_s * 1e3:.3f} ms; target <= {TARGET_SINGLE_EVALUATIONS})")
