"""The seeds' three questions: what a budget buys, the cheapest way to a target loss, a plan's loss.

(a) and (b) size the model compute-optimally (closed-form N*, D* of the scenario's loss fit) and price the
result with the full engine, so every overhead and line item of the scenario is included. The MoE ratio
active/total of the scenario is kept; the loss law is applied to active parameters. (c), the plan's loss, is the
engine's `predicted_loss`.

The model an answer proposes carries its own shape: the scenario's layers, width, heads, K/V heads and FFN
width are dropped, so they follow the proposed size from the published shapes (`dashboard.core.shape`); the
FFN kind and vocabulary (design choices, not size) are kept.

The price is the whole programme's (`dashboard.core.programme`): its stages are sized from each candidate main run,
so (a) answers the largest final run whose programme fits the budget, and (b) the cheapest programme that reaches
the loss (every stage grows with the main run, so the compute-optimal final run also has the cheapest programme).

Only plans that run on the scenario's GPU type and count are returned (`dashboard.core.feasibility`): when
the compute-optimal model does not fit in memory, the answer is the largest model that fits, trained on
more tokens to spend the budget (a) or to reach the loss (b), marked `memory_limited`; when no model fits
(the activations alone overflow, or the loss is out of reach of the models that fit), the question says so.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dashboard.core import scaling, shape
from dashboard.core.engine import output_arrays, scenario_arrays, scenario_outputs
from dashboard.core.scenario import Scenario

LOG10_FLOPS_RANGE = (12.0, 32.0)
LOG10_PARAMS_RANGE = (6.0, 14.0)
LOG10_TOKENS_RANGE = (6.0, 18.0)
BISECTION_STEPS = 80


SIZED_SHAPE_KEYS = ("n_layers", "d_model", "n_heads", "n_kv_heads", "ffn_hidden_size")


def _shape_free(scenario: Scenario) -> Scenario:
    """The scenario with the shape keys that follow the size left unset (a proposed size takes its own shape)."""
    return scenario.model_copy(update={key: None for key in SIZED_SHAPE_KEYS})


def _shape_free_arrays(base: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return base | {key: np.full_like(np.asarray(base[key], dtype=float), np.nan) for key in SIZED_SHAPE_KEYS}


def _fit(scenario: Scenario) -> scaling.LossFit:
    return scaling.FITS[scenario.scaling_fit]


def _sized(scenario: Scenario, flops: float) -> Scenario:
    fit = _fit(scenario)
    active, tokens = scaling.compute_optimal(flops, fit.A, fit.B, fit.alpha, fit.beta)
    ratio = scenario.active / scenario.total_params
    return _shape_free(scenario).model_copy(
        update={"total_params": float(active) / ratio, "active_params": float(active), "tokens": float(tokens)}
    )


def _answer(scenario: Scenario, memory_limited: bool = False) -> dict[str, Any]:
    result = scenario_outputs(scenario)
    return {
        "total_params": scenario.total_params,
        "active_params": scenario.active,
        "tokens": scenario.tokens,
        "tokens_per_param": scenario.tokens / scenario.active,
        "model_flops": result["model_flops"],
        "predicted_loss": result["predicted_loss"],
        "gpu_hours_ideal": result["gpu_hours_ideal"],
        "gpu_hours": result["gpu_hours_total"],
        "wall_clock_days": result["wall_clock_days"],
        "cost_usd": result["cost_total_usd"],
        "final_run_usd": result["programme"]["final_run_usd"],
        "final_run_share": result["programme"]["final_run_share"],
        "programme_calendar_days": result["programme"]["calendar_days"],
        "scaling_fit": scenario.scaling_fit,
        "feasible": result["feasible"],
        "memory_limited": memory_limited,
        "layout": result["layout"],
        "memory_per_gpu_gb": result["memory"]["total_gb"],
        "shape": _shape_answer(scenario),
    }


def _shape_answer(scenario: Scenario) -> dict[str, Any]:
    """The proposed model's shape: its keys, "126 layers × 16,384, 128 heads (8 KV)" and where it comes from."""
    model = shape.model_shape(scenario)
    return {"n_layers": model.n_layers, "d_model": model.d_model, "n_heads": model.n_heads,
            "n_kv_heads": model.n_kv_heads, "ffn_hidden_size": model.ffn_hidden_size, "ffn_type": model.ffn_type,
            "vocab_size": model.vocab_size, "description": shape.describe(model), "source": model.source}


def _bisect_log_flops(score, target: float, log10_range: tuple[float, float] = LOG10_FLOPS_RANGE,
                      below: bool = False) -> float:
    """The x where the increasing function `score(log10 x)` crosses `target` (vectorised bracket first); with
    `below`, the bracket's end below the target, so a score that jumps there (a predicted MFU changes with the
    model's shape and layout) never passes it."""
    grid = np.linspace(*log10_range, 201)
    values = score(grid)
    above = np.nonzero(values >= target)[0]
    if len(above) == 0 or above[0] == 0:
        raise ValueError("no model size in 1e12..1e32 FLOPs matches")
    low, high = grid[above[0] - 1], grid[above[0]]
    for _ in range(BISECTION_STEPS):
        mid = (low + high) / 2.0
        if score(np.array([mid]))[0] >= target:
            high = mid
        else:
            low = mid
    return 10.0 ** (low if below else (low + high) / 2.0)


def optimal_for_budget(scenario: Scenario, budget_usd: float) -> dict[str, Any]:
    """(a) The compute-optimal model and tokens whose whole plan (every line item) costs `budget_usd`."""
    if not budget_usd > 0:
        raise ValueError("budget_usd must be > 0")
    fit = _fit(scenario)
    base = _shape_free_arrays(scenario_arrays([scenario]))
    ratio = scenario.active / scenario.total_params

    def cost(log_flops: np.ndarray) -> np.ndarray:
        active, tokens = scaling.compute_optimal(10.0**log_flops, fit.A, fit.B, fit.alpha, fit.beta)
        arrays = {key: np.broadcast_to(value, log_flops.shape) for key, value in base.items()}
        arrays.update(active_params=active, total_params=active / ratio, tokens=tokens)
        return output_arrays(arrays, scenario.programme)["cost_total_usd"]

    try:
        flops = _bisect_log_flops(cost, budget_usd, below=True)
    except ValueError:
        raise ValueError(f"a budget of ${budget_usd:,.0f} is outside the range this planner can size") from None
    sized = _sized(scenario, flops)
    if scenario_outputs(sized)["feasible"]:
        return _answer(sized) | {"budget_usd": budget_usd}
    params = largest_fitting_params(scenario)
    base = scenario_arrays([sized.model_copy(update=_params_update(scenario, params))])  # sized: shape follows size

    def cost_at_tokens(log_tokens: np.ndarray) -> np.ndarray:
        arrays = {key: np.broadcast_to(value, log_tokens.shape) for key, value in base.items()}
        arrays["tokens"] = 10.0**log_tokens
        return output_arrays(arrays, scenario.programme)["cost_total_usd"]

    try:
        tokens = _bisect_log_flops(cost_at_tokens, budget_usd, LOG10_TOKENS_RANGE, below=True)
    except ValueError:
        raise ValueError(f"no plan for ${budget_usd:,.0f} fits: {_no_fit(scenario)}") from None
    plan = sized.model_copy(update={**_params_update(scenario, params), "tokens": tokens})
    return _answer(plan, memory_limited=True) | {"budget_usd": budget_usd}


def optimal_for_target_loss(scenario: Scenario, target_loss: float) -> dict[str, Any]:
    """(b) The fewest FLOPs (hence GPU-hours) that reach `target_loss`, with the (N, D) that reach it."""
    fit = _fit(scenario)
    if not math.isfinite(target_loss) or target_loss <= fit.E:
        raise ValueError(
            f"target loss {target_loss:g} is unreachable: the {fit.key} fit's irreducible loss E is {fit.E:g}"
        )

    def negative_loss(log_flops: np.ndarray) -> np.ndarray:
        return -scaling.optimal_loss(10.0**log_flops, fit.E, fit.A, fit.B, fit.alpha, fit.beta)

    try:
        flops = _bisect_log_flops(negative_loss, -target_loss)
    except ValueError:
        raise ValueError(f"target loss {target_loss:g} needs more than 1e32 or less than 1e12 FLOPs") from None
    sized = _sized(scenario, flops)
    if scenario_outputs(sized)["feasible"]:
        return _answer(sized) | {"target_loss": target_loss}
    params = largest_fitting_params(scenario)
    reducible = target_loss - fit.E - fit.A / params**fit.alpha
    if reducible <= 0:
        raise ValueError(f"target loss {target_loss:g} needs a larger model than fits: {_no_fit(scenario)}")
    tokens = (fit.B / reducible) ** (1.0 / fit.beta)
    plan = sized.model_copy(update={**_params_update(scenario, params), "tokens": tokens})
    return _answer(plan, memory_limited=True) | {"target_loss": target_loss}


def _params_update(scenario: Scenario, active: float) -> dict[str, float]:
    ratio = scenario.active / scenario.total_params
    return {"total_params": active / ratio, "active_params": active}


def _no_fit(scenario: Scenario) -> str:
    return (f"no model fits {scenario.gpu_count:,} × {scenario.gpu_type} with these layout settings "
            "(more GPUs, a GPU with more memory, or activation recompute)")


def largest_fitting_params(scenario: Scenario) -> float:
    """The largest active parameter count whose plan fits the scenario's GPUs, each size with its own shape (memory
    grows with size, also across the published shapes)."""
    base = _shape_free_arrays(scenario_arrays([scenario]))
    ratio = scenario.active / scenario.total_params

    def fits(log_active: np.ndarray) -> np.ndarray:
        arrays = {key: np.broadcast_to(value, log_active.shape) for key, value in base.items()}
        arrays.update(active_params=10.0**log_active, total_params=10.0**log_active / ratio)
        return output_arrays(arrays)["feasible"].astype(float)

    try:
        boundary = _bisect_log_flops(lambda x: -fits(x), -0.5, LOG10_PARAMS_RANGE)
    except ValueError:
        raise ValueError(_no_fit(scenario)) from None
    return boundary * (1.0 - 1e-9)  # the bracket is ~1e-24 wide in log10: step to its fitting side
