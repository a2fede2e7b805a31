"""The plan model: numeric scenario arrays in, every output the dashboard, CLI and report show out.

`evaluate` works on numpy arrays, so one call prices 100,000 scenarios at once; `estimate` is the
single-scenario path that all interfaces use and returns plain Python numbers.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dashboard.core import compute, feasibility, purchase, reliability, scaling, storage
from dashboard.core.hardware import CUSTOM, catalogue
from dashboard.core.scenario import Scenario

LINE_ITEMS = (
    "main_compute",
    "failure_rework",
    "checkpoint_stalls",
    "experiments",
    "evaluation",
    "debugging",
    "storage",
    "network_egress",
    "data_processing",
    "tst_pilot",
    "tst_switching",
    "people",
)
BUDGET_STATUSES = ("within", "warning", "over")
LOSS_STEP = 0.01

# Scenario fields used as plain numbers; booleans become 0/1. The uncertainty ranges (`range_*`) are read by
# `dashboard.core.uncertainty`, not by the model.
NUMERIC_FIELDS = tuple(
    name for name in Scenario.model_fields
    if name not in {"schema_", "name", "gpu_type", "scaling_fit", "method", "activation_recompute"}
    and not name.startswith("range_")
)


def peak_tflops_of(scenario: Scenario) -> float:
    """The scenario's peak: its override, or the catalogue's dense BF16 figure."""
    if scenario.peak_tflops is not None:
        return scenario.peak_tflops
    if scenario.gpu_type == CUSTOM:
        raise ValueError("gpu_type 'custom' needs peak_tflops")
    return catalogue()[scenario.gpu_type].peak_bf16_dense_tflops


def scenario_arrays(scenarios: list[Scenario]) -> dict[str, np.ndarray]:
    """Column arrays for a list of scenarios: numeric fields, resolved peak, fit index and method flag."""
    dumps = [s.model_dump() for s in scenarios]
    arrays = {
        name: np.array([np.nan if d[name] is None else float(d[name]) for d in dumps]) for name in NUMERIC_FIELDS
    }
    arrays["active_params"] = np.array([s.active for s in scenarios], dtype=float)
    arrays["peak_tflops"] = np.array([peak_tflops_of(s) for s in scenarios], dtype=float)
    arrays["fit_index"] = np.array([scaling.FIT_KEYS.index(s.scaling_fit) for s in scenarios])
    arrays["is_tst"] = np.array([s.method == "tst" for s in scenarios], dtype=float)
    arrays.update(feasibility.scenario_columns(scenarios))
    return arrays


def costs(p: dict[str, np.ndarray]) -> dict[str, Any]:
    """GPU-hours, wall-clock and every dollar line item: the part of the model that Monte Carlo draws repeat.

    `evaluate` adds the outputs that do not feed the total (overhead share, storage peak, checkpoint optima,
    loss, the TST comparison).
    Inputs broadcast: arrays of length 1 stand for a value shared by every scenario.
    """
    is_tst = p["is_tst"] > 0
    attention = np.where(
        p["attention_flops"] > 0,
        compute.attention_flops_per_token(p["n_layers"], p["d_model"], p["seq_len"], p["causal_attention_halving"] > 0),
        0.0,
    )
    flops_model = compute.model_flops(p["active_params"], p["tokens"], attention)
    flops_total = compute.hardware_flops(flops_model, p["activation_recompute"] > 0)
    gpu_hours_ideal = compute.gpu_hours(flops_total, p["peak_tflops"], p["mfu"])
    plan = feasibility.plan_arrays(p, flops_model)
    gpu_hours_billed = gpu_hours_ideal * plan["idle_factor"]  # GPUs above max_useful_gpus idle and are billed
    speedup = np.where(is_tst, p["tst_speedup"], 1.0)
    gpu_hours_compute = gpu_hours_billed / speedup

    nodes = reliability.node_count(p["gpu_count"], p["gpus_per_node"])
    failure_rate = purchase.effective_failure_rate(
        p["node_failures_per_1000_node_days"], p["spot_interruptions_per_1000_node_days"], p["spot_share"]
    )
    mtbf_h = reliability.job_mtbf_hours(failure_rate, nodes)
    ckpt_gb = reliability.checkpoint_size_gb(p["total_params"], p["checkpoint_bytes_per_param"])
    write_s = reliability.checkpoint_write_s(ckpt_gb, p["checkpoint_write_gb_per_s"], p["checkpoint_write_s"])
    interval_h = p["checkpoint_interval_min"] / 60.0
    stall = reliability.stall_fraction(write_s / 3600.0, interval_h, p["checkpoint_async"] > 0)
    rework = reliability.rework_fraction(interval_h, p["restart_min"] / 60.0, mtbf_h)  # 0 when M is infinite

    stall_hours = gpu_hours_compute * stall
    rework_hours = gpu_hours_compute * rework
    main_run_hours = gpu_hours_compute + stall_hours + rework_hours
    experiment_hours = main_run_hours * p["experiment_overhead"]
    eval_hours = main_run_hours * p["eval_overhead"]
    debug_hours = main_run_hours * p["debug_overhead"]
    side_hours = experiment_hours + eval_hours + debug_hours
    gpu_hours_total = main_run_hours + side_hours
    run_hours = main_run_hours / p["gpu_count"]

    price = purchase.blended_price_per_gpu_hour(
        p["reserved_share"], p["spot_share"], p["price_reserved_per_gpu_hour"],
        p["price_on_demand_per_gpu_hour"], p["price_spot_per_gpu_hour"],
    )
    raw_tokens = p["tokens"] * np.where(is_tst, p["tst_token_multiplier"], 1.0)
    data_gb = storage.dataset_gb(raw_tokens, p["dataset_bytes_per_token"], p["dataset_versions"])
    gb_hours = storage.gb_hours_by_tier(
        run_hours, interval_h, ckpt_gb, p["keep_last_checkpoints"], p["archive_every_nth"], data_gb,
        p["logs_gb_per_day"],
    )
    storage_by_tier = storage.storage_cost(gb_hours, p["storage_hot_per_gb_month"], p["storage_cold_per_gb_month"])
    storage_usd = sum(storage_by_tier.values())
    # The baseline method's main run, which TST's pilot is priced against (and `evaluate` compares TST with).
    baseline_main_hours = gpu_hours_billed * (1.0 + stall + rework)
    pilot_usd = p["tst_pilot_fraction"] * baseline_main_hours * price

    breakdown = {
        "main_compute": gpu_hours_compute * price,
        "failure_rework": rework_hours * price,
        "checkpoint_stalls": stall_hours * price,
        "experiments": experiment_hours * price,
        "evaluation": eval_hours * price,
        "debugging": debug_hours * price,
        "storage": storage_usd,
        "network_egress": p["egress_gb"] * p["egress_per_gb"],
        "data_processing": raw_tokens * (p["data_cost_per_billion_tokens"] / 1e9),
        "tst_pilot": np.where(is_tst, pilot_usd, 0.0),
        "tst_switching": np.where(is_tst, p["tst_switching_cost_usd"], 0.0),
        "people": p["people_cost_usd"] * np.ones_like(price),
    }
    return {
        "model_flops": flops_model,
        "total_flops": flops_total,
        "gpu_hours_ideal": gpu_hours_ideal,
        "gpu_hours_compute": gpu_hours_compute,
        "gpu_hours_stall": stall_hours,
        "gpu_hours_rework": rework_hours,
        "gpu_hours_main_run": main_run_hours,
        "gpu_hours_experiments": side_hours,
        "baseline_main_gpu_hours": baseline_main_hours,
        "tst_pilot_usd": pilot_usd,
        "gpu_hours_total": gpu_hours_total,
        "wall_clock_days": run_hours / 24.0,
        "node_count": nodes,
        "job_mtbf_hours": mtbf_h,
        "blended_price_per_gpu_hour": price,
        "checkpoint_size_gb": ckpt_gb,
        "checkpoint_write_s": write_s,
        "stall_fraction": stall,
        "rework_fraction": rework,
        "dataset_gb": data_gb,
        "storage_cost_usd": storage_usd,
        "storage_cost_by_tier": storage_by_tier,
        "raw_tokens": raw_tokens,
        "cost_breakdown": breakdown,
        "cost_total_usd": sum(breakdown.values()),
        "plan": plan,
    }


def evaluate(p: dict[str, np.ndarray]) -> dict[str, Any]:
    """Every planning output for arrays of scenarios (see `scenario_arrays` for the inputs)."""
    out = costs(p)
    out.update(feasibility.outputs(p, out))
    out["overhead_fraction"] = out["stall_fraction"] + out["rework_fraction"]
    out["storage_peak_gb"] = storage.peak_gb(
        out["gpu_hours_main_run"] / p["gpu_count"], p["checkpoint_interval_min"] / 60.0, out["checkpoint_size_gb"],
        p["keep_last_checkpoints"], p["archive_every_nth"], out["dataset_gb"], p["logs_gb_per_day"],
    )
    cost_total = out["cost_total_usd"]
    price = out["blended_price_per_gpu_hour"]
    write_h = out["checkpoint_write_s"] / 3600.0
    with np.errstate(divide="ignore", invalid="ignore"):
        young_min = reliability.young_interval(write_h, out["job_mtbf_hours"]) * 60.0
        daly_min = reliability.daly_interval(write_h, out["job_mtbf_hours"]) * 60.0
    status_index = np.where(
        cost_total > p["budget_usd"], 2, np.where(cost_total > p["budget_warning_fraction"] * p["budget_usd"], 1, 0)
    )

    E, A, B, alpha, beta = scaling.fit_arrays(p["fit_index"])
    loss_tokens = p["tokens"] * out["effective_tokens"] / out["raw_tokens"]  # repeated data counts less
    loss = scaling.predicted_loss(p["active_params"], loss_tokens, E, A, B, alpha, beta)
    tokens_better = scaling.tokens_for_loss_reduction(p["active_params"], p["tokens"], LOSS_STEP, B, beta)
    with np.errstate(invalid="ignore"):
        hours_per_step = np.where(
            np.isfinite(tokens_better), out["gpu_hours_total"] * (tokens_better / p["tokens"] - 1.0), np.inf
        )

    baseline_main_hours = out["baseline_main_gpu_hours"]
    baseline_main_usd = baseline_main_hours * price
    baseline_data_usd = p["tokens"] / 1e9 * p["data_cost_per_billion_tokens"]
    tst_main_usd = baseline_main_usd / p["tst_speedup"]
    tst_data_usd = p["tokens"] * p["tst_token_multiplier"] / 1e9 * p["data_cost_per_billion_tokens"]
    pilot_usd = out["tst_pilot_usd"]
    baseline_cost = baseline_main_usd + baseline_data_usd
    tst_cost = tst_main_usd + tst_data_usd

    out.update({
        "checkpoint_interval_young_min": young_min,
        "checkpoint_interval_daly_min": daly_min,
        "cost_per_million_tokens": cost_total / (p["tokens"] / 1e6),
        "predicted_loss": loss,
        "gpu_hours_per_0_01_loss": hours_per_step,
        "budget_usd": p["budget_usd"] * np.ones_like(price),
        "budget_status_index": status_index,
        "tst": {
            "baseline_gpu_hours": baseline_main_hours,
            "tst_gpu_hours": baseline_main_hours / p["tst_speedup"],
            "baseline_cost_usd": baseline_cost,
            "tst_cost_usd": tst_cost,
            "baseline_tokens": p["tokens"] * np.ones_like(price),
            "tst_tokens": p["tokens"] * p["tst_token_multiplier"],
            "baseline_data_cost_usd": baseline_data_usd,
            "tst_data_cost_usd": tst_data_usd,
            "pilot_cost_usd": pilot_usd,
            "switching_cost_usd": p["tst_switching_cost_usd"] * np.ones_like(price),
            "net_savings_usd": baseline_cost - tst_cost - pilot_usd - p["tst_switching_cost_usd"],
            "speedup": p["tst_speedup"] * np.ones_like(price),
        },
    })
    out["tst"].update(feasibility.tst_with_scarcity(p, out["tst"]))
    return out


def _scalar(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _scalar(item) for key, item in value.items()}
    if isinstance(value, np.ndarray):  # the first element, as `item` gives it in one call
        return float(value.item(0))
    return float(np.asarray(value).reshape(-1)[0])


def estimate(scenario: Scenario) -> dict[str, Any]:
    """Every output for one scenario, as plain numbers (the CLI's JSON, the app's tiles, the report's table)."""
    result = _scalar(evaluate(scenario_arrays([scenario])))
    result["budget_status"] = BUDGET_STATUSES[int(result.pop("budget_status_index"))]
    result["name"] = scenario.name
    return feasibility.scalar(result, scenario)
