"""Feasibility's cost: the vectorised engine with it on, and the layout search for one scenario, as ratios.

"Today's engine" is the same `engine.evaluate` with the feasibility functions replaced by their results
computed beforehand (so only their time is left out), timed alternately with the full engine in this run
so a noisy neighbour slows both alike. The one-scenario layout search (`layout.resolve` on one row) is
compared with one `engine.estimate` of the same scenario. Ratios are of medians.
"""

from __future__ import annotations

import statistics
import time
from contextlib import contextmanager

import numpy as np

from bench.engine_bench import SCENARIOS, random_arrays
from dashboard.core import engine, feasibility, layout
from dashboard.core.scenario import Scenario

ROUNDS = 9
SINGLE_CALLS = 300
TARGET_RATIO = 1.2


def feasibility_arrays(rng: np.random.Generator, count: int) -> dict[str, np.ndarray]:
    """`engine_bench`'s random scenarios with half of them short of unique data (0.2-2× their tokens)."""
    arrays = random_arrays(rng, count)
    scarce = rng.random(count) < 0.5
    arrays["unique_tokens"] = np.where(scarce, arrays["tokens"] * rng.uniform(0.2, 2.0, count), np.nan)
    return arrays


@contextmanager
def _feasibility_precomputed(arrays: dict[str, np.ndarray]):
    """Within the block the engine reads feasibility results computed before it, not computed in it."""
    full = engine.evaluate(arrays)
    plan_keys = set(feasibility.plan_arrays(arrays, full["model_flops"]))
    plan = {key: full[key] for key in plan_keys if key in full} | {"idle_factor": 1.0}
    extra = {key: full[key] for key in ("epochs", "effective_tokens")}
    scarcity = {key: full["tst"][key] for key in ("scarcity_factor", "net_savings_with_scarcity_usd")}
    saved = feasibility.plan_arrays, feasibility.outputs, feasibility.tst_with_scarcity

    def outputs(p, costs):
        costs.pop("plan")
        return plan | extra

    feasibility.plan_arrays = lambda p, flops: {"idle_factor": 1.0}
    feasibility.outputs = outputs
    feasibility.tst_with_scarcity = lambda p, tst: scarcity
    try:
        yield
    finally:
        feasibility.plan_arrays, feasibility.outputs, feasibility.tst_with_scarcity = saved


def _timed(call) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def main() -> None:
    arrays = feasibility_arrays(np.random.default_rng(0), SCENARIOS)
    with_feasibility, today = [], []
    for _ in range(ROUNDS):
        with_feasibility.append(_timed(lambda: engine.evaluate(arrays)))
        with _feasibility_precomputed(arrays):
            today.append(_timed(lambda: engine.evaluate(arrays)))
    ratio = statistics.median(with_feasibility) / statistics.median(today)

    scenario = Scenario(total_params=70e9, tokens=1.4e12, n_layers=80, d_model=8192, gpu_count=64,
                        activation_recompute="full")
    row = feasibility._layout_inputs(scenario)
    search, single = [], []
    for _ in range(SINGLE_CALLS):
        search.append(_timed(lambda: layout.resolve(row)))
        single.append(_timed(lambda: engine.estimate(scenario)))
    search_ratio = statistics.median(search) / statistics.median(single)

    print(f"engine_vectorised_with_feasibility_100k_s: {statistics.median(with_feasibility):.3f} "
          f"(without: {statistics.median(today):.3f}; median of {ROUNDS})")
    print(f"engine_feasibility_ratio: {ratio:.2f}x (target <= {TARGET_RATIO}x)")
    print(f"layout_search_one_scenario_ms: {statistics.median(search) * 1e3:.3f} "
          f"(one estimate: {statistics.median(single) * 1e3:.3f} ms)")
    print(f"layout_search_vs_estimate_ratio: {search_ratio:.2f}x (target <= {TARGET_RATIO}x)")
