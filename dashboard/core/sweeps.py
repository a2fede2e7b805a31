"""Curves for the Plan page: one scenario re-run through the vectorised engine over a grid of one input.

Every curve comes from `engine.output_arrays` (or, for the loss curve, the functions of `scaling`), so the
curves and the headline numbers can never disagree.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from dashboard.core import engine, scaling, storage, uncertainty
from dashboard.core.scenario import Scenario
from dashboard.format import number

# Line items that scale with GPU-hours at the blended price, apart from failure rework.
COMPUTE_ITEMS = ("main_compute", "checkpoint_stalls", "experiments", "evaluation", "debugging")
# How far the checkpoint grid reaches beyond the current setting and the optimum, as a factor.
CHECKPOINT_SPAN = 10.0
# How far the loss curve reaches either side of the compute-optimal model size, as a factor.
PARAMS_SPAN = 30.0
# Margin around the plan's own model size when it lies outside that span, as a factor.
PLAN_MARGIN = 2.0


def _evaluate_grid(scenario: Scenario, columns: dict[str, np.ndarray]) -> dict[str, Any]:
    """Engine outputs for copies of `scenario` whose named input columns take the given values."""
    length = len(next(iter(columns.values())))
    arrays = {name: np.repeat(values, length) for name, values in engine.scenario_arrays([scenario]).items()}
    arrays.update({name: np.asarray(values, dtype=float) for name, values in columns.items()})
    return engine.output_arrays(arrays, scenario.programme)


def _with_point(grid: np.ndarray, value: float) -> np.ndarray:
    """The sorted grid with `value` on it exactly: a grid point within 1e-9 (relative) is moved onto it."""
    near = np.isclose(grid, value, rtol=1e-9, atol=0.0)
    if near.any():
        grid = grid.copy()
        grid[near] = value
        return grid
    return np.sort(np.append(grid, value))


def checkpoint_tradeoff(scenario: Scenario, points: int = 120) -> pd.DataFrame:
    """Stall, rework and total overhead (% of compute GPU-hours) against the checkpoint interval.

    The grid is log-spaced from 1/10 of the smallest to 10× the largest of the current interval and the
    engine's Young and Daly intervals. Non-finite or zero optima are left out of that span: with no
    failures (infinite MTBF) rework is zero and the grid is centred on the current interval only. With
    asynchronous checkpoints the stall is zero and the overhead is rework alone, which falls towards
    shorter intervals; the grid still spans the Young/Daly intervals for reference.
    """
    current_min = scenario.checkpoint_interval_min
    result = engine.scenario_outputs(scenario)
    optima_min = [result["checkpoint_interval_young_min"], result["checkpoint_interval_daly_min"]]
    anchors_min = [current_min] + [value for value in optima_min if np.isfinite(value) and value > 0]
    intervals_min = np.geomspace(min(anchors_min) / CHECKPOINT_SPAN, max(anchors_min) * CHECKPOINT_SPAN, points)
    curve = _evaluate_grid(scenario, {"checkpoint_interval_min": intervals_min})
    return pd.DataFrame({
        "interval_min": intervals_min,
        "stall_pct": curve["stall_fraction"] * 100.0,
        "rework_pct": curve["rework_fraction"] * 100.0,
        "overhead_pct": curve["overhead_fraction"] * 100.0,
    })


def _spot_mix(scenario: Scenario, shares: np.ndarray) -> np.ndarray:
    """The reserved share at each spot share: the rest keeps the scenario's reserved : on-demand ratio (all
    reserved when the scenario is all spot)."""
    spot0, reserved0 = scenario.spot_share, scenario.reserved_share
    return reserved0 * (1.0 - shares) / (1.0 - spot0) if spot0 < 1.0 else 1.0 - shares


def spot_share_curve(scenario: Scenario, points: int = 51) -> pd.DataFrame:
    """Expected cost (USD) and wall-clock against the spot share of GPU-hours, from 0 to 1.

    The grid is `points` evenly spaced shares with the scenario's own share put on it exactly. The rest
    of the GPU-hours keep the scenario's reserved : on-demand ratio: with the scenario's shares s0 and r0,
    reserved(s) = r0 · (1 − s) / (1 − s0) and on-demand is what is left. When s0 = 1 there is no ratio to
    keep and the rest is reserved: reserved(s) = 1 − s.

    Columns: `cost_total_usd` (every line item), `compute_usd` (main compute, checkpoint stalls,
    experiments, evaluation and debugging), `rework_usd` (failure rework, which grows with spot
    interruptions) and `wall_clock_days` (the main run's).
    """
    shares = _with_point(np.linspace(0.0, 1.0, points), scenario.spot_share)
    result = _evaluate_grid(scenario, {"spot_share": shares, "reserved_share": _spot_mix(scenario, shares)})
    items = result["cost_breakdown"]
    return pd.DataFrame({
        "spot_share": shares,
        "cost_total_usd": result["cost_total_usd"],
        "compute_usd": sum(items[name] for name in COMPUTE_ITEMS),
        "rework_usd": items["failure_rework"],
        "wall_clock_days": np.broadcast_to(result["wall_clock_days"], shares.shape),
    })


# Draws per spot share for the P90 curves: 21 shares × 4,000 draws price in about 0.15 s; with the same seed at
# every share the curves are smooth, and P90 moves by under 1 % against 100,000 draws.
SPOT_P90_DRAWS = 4_000


def spot_share_p90(scenario: Scenario, points: int = 21, draws: int = SPOT_P90_DRAWS,
                   seed: int = uncertainty.DEFAULT_SEED) -> pd.DataFrame:
    """P90 of total cost and of wall-clock against the spot share, from the plan's Monte Carlo ranges.

    The grid and the mix are `spot_share_curve`'s (the scenario's own share on it); every share is drawn with the
    same seed, so the curves move with the share and not with the draws. Columns: `spot_share`, `cost_p90_usd`
    and `wall_clock_p90_days`.
    """
    shares = _with_point(np.linspace(0.0, 1.0, points), scenario.spot_share)
    reserved = _spot_mix(scenario, shares)
    cost, days = [], []
    for share, reserved_share in zip(shares, reserved, strict=True):
        plan = scenario.model_copy(update={"spot_share": float(share), "reserved_share": float(reserved_share)})
        samples = uncertainty.simulate(plan, draws, seed)
        cost.append(float(np.percentile(samples["cost_total_usd"], 90)))
        days.append(float(np.percentile(samples["wall_clock_days"], 90)))
    return pd.DataFrame({"spot_share": shares, "cost_p90_usd": cost, "wall_clock_p90_days": days})


def scaling_curve(scenario: Scenario, points: int = 80) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Predicted loss against active parameters N at the plan's model FLOPs C, with tokens D = C / (6N).

    The grid is log-spaced over N*/30 … 30·N* around the compute-optimal N* (widened to reach the
    plan's N with a factor-2 margin), with N* and the plan's N on it exactly. Returns the frame
    (`active_params`, `tokens`, `predicted_loss`) and a dict with `model_flops` (C), `optimal` (N*, D*
    and the optimal loss) and `plan` (the scenario's N, D and predicted loss). With the attention term on,
    C includes it, so the plan sits above the curve (its D is smaller than C / (6N)).
    """
    result = engine.scenario_outputs(scenario)
    flops = result["model_flops"]
    fit = scaling.FITS[scenario.scaling_fit]
    optimal_params, optimal_tokens = scaling.compute_optimal(flops, fit.A, fit.B, fit.alpha, fit.beta)
    plan_params = scenario.active
    low = min(optimal_params / PARAMS_SPAN, plan_params / PLAN_MARGIN)
    high = max(optimal_params * PARAMS_SPAN, plan_params * PLAN_MARGIN)
    params = _with_point(_with_point(np.geomspace(low, high, points), optimal_params), plan_params)
    tokens = flops / (6.0 * params)
    frame = pd.DataFrame({
        "active_params": params,
        "tokens": tokens,
        "predicted_loss": scaling.predicted_loss(params, tokens, fit.E, fit.A, fit.B, fit.alpha, fit.beta),
    })
    marked = {
        "model_flops": flops,
        "optimal": {
            "active_params": float(optimal_params),
            "tokens": float(optimal_tokens),
            "predicted_loss": float(scaling.optimal_loss(flops, fit.E, fit.A, fit.B, fit.alpha, fit.beta)),
        },
        "plan": {
            "active_params": plan_params,
            "tokens": scenario.tokens,
            "predicted_loss": result["predicted_loss"],
        },
    }
    return frame, marked


# Retention what-ifs beside the storage chart: a label, the key changed, and how its new value follows from the
# plan's (an offset, a factor, or a fixed value).
RETENTION_WHAT_IFS = (
    ("one more hot checkpoint", "keep_last_checkpoints", "offset", 1.0),
    ("one hot checkpoint fewer", "keep_last_checkpoints", "offset", -1.0),
    ("keep the leftovers a year longer", "storage_retention_months", "offset", 12.0),
    ("delete the leftovers when training ends", "storage_retention_months", "fixed", 0.0),
    ("twice as many weight archives", "weight_archives", "factor", 2.0),
    ("no weight archives", "weight_archives", "fixed", 0.0),
    ("also archive every 10th full checkpoint", "archive_every_nth", "fixed", 10.0),
    ("never archive full checkpoints", "archive_every_nth", "fixed", 0.0),
)
# A what-if that would start archiving weights from none starts at this many.
FIRST_WEIGHT_ARCHIVES = 10


def _what_if_value(plan: dict[str, Any], key: str, how: str, amount: float) -> float:
    if how == "offset":
        return plan[key] + amount
    if how == "factor":
        return plan[key] * amount if plan[key] > 0 else FIRST_WEIGHT_ARCHIVES
    return amount


def retention_keeps(scenario: Scenario, run_hours: float) -> str:
    """What a plan keeps after training, in words: "after training: the last 3 full checkpoints (294 GB),
    10 weight archives (140 GB), the data and logs, for 12 months" (or "nothing after training")."""
    if scenario.storage_retention_months == 0:
        return "nothing after training"
    interval_hours = scenario.checkpoint_interval_min / 60.0
    written = float(storage.checkpoints_written(run_hours, interval_hours))
    full_gb = scenario.total_params * scenario.checkpoint_bytes_per_param / 1e9
    weights_gb = scenario.total_params * scenario.weight_archive_bytes_per_param / 1e9
    hot = int(min(written, scenario.keep_last_checkpoints))
    parts = [f"the last {hot:,} full checkpoint{'s' * (hot != 1)} ({number(hot * full_gb, 'GB')})"]
    if scenario.weight_archives:
        count = scenario.weight_archives
        parts.append(f"{count:,} weight archive{'s' * (count != 1)} ({number(count * weights_gb, 'GB')})")
    if scenario.archive_every_nth:
        copies = int(written // scenario.archive_every_nth)
        parts.append(f"{copies:,} archived full checkpoint{'s' * (copies != 1)} ({number(copies * full_gb, 'GB')})")
    parts.append("the data and logs")
    return f"after training: {', '.join(parts)}, for {number(scenario.storage_retention_months, 'months')}"


def retention_what_ifs(scenario: Scenario) -> pd.DataFrame:
    """What each retention change would do to storage and the total, priced by the engine in one call.

    Changes that leave the plan as it is, or leave the key's range (fewer than one hot checkpoint), are left out.
    Columns: `what_if`, `key`, `value` (the new setting), `keeps` (what the changed plan keeps after training, in
    words), `storage_usd` and `delta_total_usd` (against the plan).
    """
    plan = scenario.model_dump()
    rows = []
    for label, key, how, amount in RETENTION_WHAT_IFS:
        value = _what_if_value(plan, key, how, amount)
        if value != plan[key] and (key != "keep_last_checkpoints" or value >= 1):
            rows.append((label, key, value))
    keys = {key for _, key, _ in rows}
    columns = {key: np.array([value if row_key == key else plan[key] for _, row_key, value in rows], dtype=float)
               for key in keys}
    result = _evaluate_grid(scenario, columns)
    current = engine.scenario_outputs(scenario)["cost_total_usd"]
    run_hours = result["wall_clock_days"] * 24.0
    keeps = [retention_keeps(scenario.model_copy(update={key: type(plan[key])(value)}), float(hours))
             for (_, key, value), hours in zip(rows, np.broadcast_to(run_hours, (len(rows),)), strict=True)]
    return pd.DataFrame({
        "what_if": [label for label, _, _ in rows],
        "key": [key for _, key, _ in rows],
        "value": [value for _, _, value in rows],
        "keeps": keeps,
        "storage_usd": result["cost_breakdown"]["storage"],
        "delta_total_usd": result["cost_total_usd"] - current,
    })
