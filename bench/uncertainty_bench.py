"""Monte Carlo: 100,000 draws against single-scenario evaluations measured in the same run."""

from __future__ import annotations

import time

import numpy as np

from dashboard.core.engine import scenario_outputs
from dashboard.core.scenario import Scenario
from dashboard.core.uncertainty import monte_carlo, simulate, tornado

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
    single_s = _median_s(lambda: [scenario_outputs(SCENARIO) for _ in range(SINGLE_CALLS)], 3) / SINGLE_CALLS
    print(f"single_scenario_estimate_ms: {single_s * 1e3:.3f} (median of 3 x {SINGLE_CALLS:,} calls)")
    for shape in ("triangular", "lognormal"):
        scenario = SCENARIO.model_copy(update={"range_shape": shape})
        simulate(scenario, DRAWS, 0)
        draws_s = _median_s(lambda scenario=scenario: simulate(scenario, DRAWS, 0), 15)
        whole_s = _median_s(lambda scenario=scenario: monte_carlo(scenario, DRAWS, 0), 9)
        page_s = _median_s(lambda scenario=scenario: monte_carlo(scenario, 10_000, 0), 9)
        print(f"monte_carlo_{shape}_100k_draws_in_single_evaluations: {draws_s / single_s:.1f} "
              f"({draws_s * 1e3:.1f} ms, median of 15; target <= {TARGET_SINGLE_EVALUATIONS})")
        print(f"monte_carlo_{shape}_with_tornado_and_point_ms: 100,000 draws {whole_s * 1e3:.1f}; "
              f"10,000 draws (the Plan page's default) {page_s * 1e3:.1f}")
