"""Vectorised engine vs one scenario at a time, for 100,000 random scenarios."""

from __future__ import annotations

import time

import numpy as np

from dashboard.core.engine import output_arrays, scenario_arrays, scenario_outputs
from dashboard.core.scenario import Scenario

SCENARIOS = 100_000
SAMPLED_ONE_AT_A_TIME = 2_000
TARGET_SPEEDUP = 50.0


def random_arrays(rng: np.random.Generator, count: int) -> dict[str, np.ndarray]:
    """`count` valid scenarios as engine arrays: the default varied in size, tokens, MFU, GPUs and mix."""
    base = scenario_arrays([Scenario()])
    arrays = {key: np.repeat(value, count) for key, value in base.items()}
    arrays["total_params"] = 10 ** rng.uniform(8, 12.3, count)
    arrays["active_params"] = arrays["total_params"] * rng.uniform(0.05, 1.0, count)
    arrays["tokens"] = 10 ** rng.uniform(9, 14, count)
    arrays["mfu"] = rng.uniform(0.05, 0.6, count)
    arrays["gpu_count"] = rng.integers(8, 32_768, count).astype(float)
    arrays["spot_share"] = rng.uniform(0, 0.5, count)
    arrays["reserved_share"] = rng.uniform(0, 0.5, count)
    arrays["is_tst"] = rng.integers(0, 2, count).astype(float)
    arrays["fit_index"] = rng.integers(0, 2, count)
    return arrays


def _scenario(arrays: dict[str, np.ndarray], i: int) -> Scenario:
    return Scenario(
        total_params=arrays["total_params"][i], active_params=arrays["active_params"][i], tokens=arrays["tokens"][i],
        mfu=arrays["mfu"][i], gpu_count=int(arrays["gpu_count"][i]), spot_share=arrays["spot_share"][i],
        reserved_share=arrays["reserved_share"][i], method="tst" if arrays["is_tst"][i] else "baseline",
        scaling_fit=("epoch2024", "hoffmann2022")[arrays["fit_index"][i]],
    )


def main() -> None:
    rng = np.random.default_rng(0)
    arrays = random_arrays(rng, SCENARIOS)
    timings = []
    for _ in range(5):
        start = time.perf_counter()
        batch = output_arrays(arrays)
        timings.append(time.perf_counter() - start)
    vectorised_s = float(np.median(timings))

    picks = rng.choice(SCENARIOS, SAMPLED_ONE_AT_A_TIME, replace=False)
    scenarios = [_scenario(arrays, int(i)) for i in picks]
    start = time.perf_counter()
    singles = [scenario_outputs(s)["cost_total_usd"] for s in scenarios]
    per_scenario_s = (time.perf_counter() - start) / SAMPLED_ONE_AT_A_TIME
    one_at_a_time_s = per_scenario_s * SCENARIOS
    assert np.allclose(singles, batch["cost_total_usd"][picks], rtol=1e-9)

    print(f"engine_vectorised_100k_s: {vectorised_s:.3f} (median of 5)")
    print(f"engine_one_at_a_time_100k_s: {one_at_a_time_s:.1f} "
          f"({per_scenario_s * 1e3:.3f} ms each, from {SAMPLED_ONE_AT_A_TIME:,} timed calls)")
    print(f"engine_vectorised_speedup: {one_at_a_time_s / vectorised_s:.0f}x (target >= {TARGET_SPEEDUP:.0f}x)")
