"""The Plan page's computations in this process: one estimate, a 201-point sweep and the Monte Carlo with its
tornado, each against the same work done one obvious way."""

from __future__ import annotations

import numpy as np

from bench.harness import Measurement
from bench.timing import paired_medians_s
from dashboard.core import engine, programme, sweeps
from dashboard.core.scenario import Scenario, scenario_from_dict
from dashboard.core.uncertainty import DEFAULT_DRAWS, input_ranges, monte_carlo

# Every uncertain input moves the total: TST with all three purchase tiers in use.
SCENARIO = Scenario(method="tst", reserved_share=0.6, spot_share=0.2)
SWEEP_POINTS = 201
# The same plan with the "full programme" preset: six stages, eight training runs priced by the engine.
PROGRAMME = scenario_from_dict(SCENARIO.to_json_dict() | programme.PRESETS["full programme"])


def single_estimate() -> Measurement:
    """`scenario_outputs` (plain numbers, feasibility sentences) against the vectorised engine on one row."""
    rounds, calls = 31, 50
    value_s, reference_s = paired_medians_s(lambda: engine.scenario_outputs(SCENARIO),
                                            lambda: engine.output_arrays(engine.scenario_arrays([SCENARIO])),
                                            rounds, calls)
    return Measurement(value_s * 1e3, reference_s * 1e3, f"median of {rounds} alternating rounds of {calls} calls")


def _one_at_a_time_spot_shares() -> None:
    """`spot_share_curve`'s grid priced one `scenario_outputs` call per point (reserved keeps its share of the rest)."""
    spot0, reserved0 = SCENARIO.spot_share, SCENARIO.reserved_share
    for spot in np.linspace(0.0, 1.0, SWEEP_POINTS):
        reserved = reserved0 * (1.0 - spot) / (1.0 - spot0)
        engine.scenario_outputs(SCENARIO.model_copy(update={"spot_share": float(spot), "reserved_share": reserved}))


def sweep_201_points() -> Measurement:
    rounds = 11
    value_s, reference_s = paired_medians_s(lambda: sweeps.spot_share_curve(SCENARIO, SWEEP_POINTS),
                                            _one_at_a_time_spot_shares, rounds)
    return Measurement(value_s * 1e3, reference_s * 1e3, f"median of {rounds} alternating rounds")


def _naive_monte_carlo() -> None:
    """The draws as NumPy's triangular sampler gives them, held to the inputs' bounds, priced in one float64 call."""
    rng = np.random.default_rng(0)
    arrays = {key: np.repeat(values, DEFAULT_DRAWS) for key, values in engine.scenario_arrays([SCENARIO]).items()}
    for item in input_ranges(SCENARIO):
        drawn = rng.triangular(item.low, item.likely, item.high, DEFAULT_DRAWS) if item.low < item.high else item.likely
        arrays[item.input.key] = np.clip(drawn, item.input.floor, item.input.ceiling) * np.ones(DEFAULT_DRAWS)
    engine.cost_arrays(arrays)


def monte_carlo_plan_page() -> Measurement:
    rounds = 31
    value_s, reference_s = paired_medians_s(lambda: monte_carlo(SCENARIO, DEFAULT_DRAWS, 0), _naive_monte_carlo,
                                            rounds)
    return Measurement(value_s * 1e3, reference_s * 1e3,
                       f"{DEFAULT_DRAWS:,} triangular draws, median of {rounds} alternating rounds")


def programme_estimate() -> Measurement:
    """`scenario_outputs` of the plan with the full programme against the same plan as a single run."""
    rounds, calls = 31, 10
    value_s, reference_s = paired_medians_s(lambda: engine.scenario_outputs(PROGRAMME),
                                            lambda: engine.scenario_outputs(SCENARIO), rounds, calls)
    return Measurement(value_s * 1e3, reference_s * 1e3, f"median of {rounds} alternating rounds of {calls} calls")


def programme_monte_carlo() -> Measurement:
    """The Plan page's Monte Carlo of the plan with the full programme against the same plan as a single run."""
    rounds = 11
    value_s, reference_s = paired_medians_s(lambda: monte_carlo(PROGRAMME, DEFAULT_DRAWS, 0),
                                            lambda: monte_carlo(SCENARIO, DEFAULT_DRAWS, 0), rounds)
    return Measurement(value_s * 1e3, reference_s * 1e3,
                       f"{DEFAULT_DRAWS:,} draws, median of {rounds} alternating rounds")
