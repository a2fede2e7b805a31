"""The plan model: numeric scenario arrays in, every output the dashboard, CLI and report show out.

`output_arrays` works on numpy arrays, so one call prices 100,000 scenarios at once; `scenario_outputs` is the
single-scenario path that all interfaces use and returns plain Python numbers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import lru_cache
from typing import Any, TypedDict, cast

import numpy as np

from dashboard.core import (
    compute,
    evidence,
    feasibility,
    memory_fixes,
    programme,
    purchase,
    reliability,
    scaling,
    shape,
    storage,
    throughput,
)
from dashboard.core.hardware import CUSTOM, catalogue, generation_of
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
    "programme_stages",
)
BUDGET_STATUSES = ("within", "warning", "over")
LOSS_STEP = 0.01

# Scenario fields used as plain numbers; booleans become 0/1. The uncertainty ranges (`range_*`) are read by
# `dashboard.core.uncertainty`, not by the model.
NUMERIC_FIELDS = tuple(
    name for name in Scenario.model_fields
    if name not in {"schema_", "name", "gpu_type", "scaling_fit", "method", "activation_recompute", "attention",
                    "ffn_type", "precision", "programme", "start_date", "framework", "weight_dtype",
                    "gradient_dtype", "master_weights", "optimizer_dtype", "cross_entropy", "loss_parallel",
                    "mfu_measured_from"}
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
    rows = [[getattr(s, name) for name in NUMERIC_FIELDS] for s in scenarios]
    columns = np.array(rows, dtype=float).T.copy()  # None becomes NaN; one conversion, not one per field
    arrays = dict(zip(NUMERIC_FIELDS, columns, strict=True))
    arrays["active_params"] = np.array([s.active for s in scenarios], dtype=float)
    arrays["peak_tflops"] = np.array([peak_tflops_of(s) for s in scenarios], dtype=float)
    arrays["fit_index"] = np.array([scaling.FIT_KEYS.index(s.scaling_fit) for s in scenarios])
    arrays["is_tst"] = np.array([s.method == "tst" for s in scenarios], dtype=float)
    arrays["mfu_published"] = np.array([_published_median(s) for s in scenarios], dtype=float)
    arrays.update(feasibility.scenario_columns(scenarios))
    return arrays


def _moe(scenario: Scenario) -> bool:
    return scenario.n_experts is not None or scenario.active < scenario.total_params


def _published_median(scenario: Scenario) -> float:
    """The published MFU (model FLOPs) a scenario is priced at when its `mfu` is unset, NaN where the prediction
    is (`throughput.published_fallback`)."""
    if scenario.mfu is not None:
        return math.nan
    published = throughput.published_fallback(generation_of(scenario.gpu_type), scenario.precision,
                                              scenario.total_params, scenario.gpu_count, _moe(scenario))
    return math.nan if published is None else published.median


def _per_row(value: np.ndarray, like: np.ndarray) -> np.ndarray:
    """An input repeated as an output, one value per scenario (as many as `like`): a read-only view, not a copy."""
    if isinstance(value, np.ndarray) and value.shape == np.shape(like):  # one scenario, or a full column
        view = value.view()  # a tenth of broadcast_to's cost, which one scenario pays five times
        view.flags.writeable = False
        return view
    return np.broadcast_to(value, np.broadcast_shapes(np.shape(value), np.shape(like)))


def _storage_usd(arrays: dict[str, np.ndarray], run_hours: np.ndarray, interval_h: np.ndarray, ckpt_gb: np.ndarray,
                 raw_tokens: np.ndarray) -> tuple[np.ndarray, dict[str, Any], dict[str, Any], np.ndarray, np.ndarray]:
    """Storage of a run of `run_hours` reading `raw_tokens`: dataset GB, stored volumes, the cost of each tier during
    the run, the cost of what is kept after it, and their sum (`cost_arrays`, and the other method's run in
    `output_arrays`)."""
    data_gb = storage.dataset_gb(raw_tokens, arrays["dataset_bytes_per_token"], arrays["dataset_versions"])
    weights_gb = reliability.checkpoint_size_gb(arrays["total_params"], arrays["weight_archive_bytes_per_param"])
    stored = storage.volumes(run_hours, interval_h, ckpt_gb, arrays["keep_last_checkpoints"],
                             arrays["archive_every_nth"], data_gb, arrays["logs_gb_per_day"],
                             weights_gb, arrays["weight_archives"])
    by_tier = storage.storage_cost(
        stored["gb_hours"], arrays["storage_hot_per_gb_month"], arrays["storage_cold_per_gb_month"]
    )
    retention_usd = storage.retention_cost(
        stored["retained_gb"], arrays["storage_retention_months"], arrays["storage_cold_per_gb_month"]
    )
    return data_gb, stored, by_tier, retention_usd, sum(by_tier.values()) + retention_usd


def cost_arrays(arrays: dict[str, np.ndarray], stages: tuple[Any, ...] | programme.Scaled = ()) -> dict[str, Any]:
    """GPU-hours, wall-clock and every dollar line item: the part of the model that Monte Carlo draws repeat.

    `output_arrays` adds the outputs that do not feed the total (overhead share, checkpoint optima, loss, the TST
    comparison).
    Inputs broadcast: arrays of length 1 stand for a value shared by every scenario. `stages` is the programme every
    row shares (`Scenario.programme`): its stages are priced from each row's main run (`dashboard.core.programme`).
    """
    arrays = arrays | shape.resolve_arrays(arrays)  # shape keys left unset follow the size, row by row
    is_tst = arrays["is_tst"] > 0
    attention = np.where(
        arrays["attention_flops"] > 0,
        compute.attention_flops_per_token(
            arrays["n_layers"], arrays["d_model"], arrays["seq_len"], arrays["causal_attention_halving"] > 0
        ),
        0.0,
    )
    flops_model = compute.model_flops(arrays["active_params"], arrays["tokens"], attention)
    flops_total = compute.hardware_flops(flops_model, arrays["activation_recompute"] > 0)
    plan = feasibility.plan_arrays(arrays, flops_model)
    rates = throughput.outputs(arrays, plan, flops_model, flops_total)
    mfu = throughput.used_mfu(arrays, rates["mfu_as_input"], arrays["mfu_published"] * flops_total / flops_model)
    gpu_hours_ideal = compute.gpu_hours(flops_total, arrays["peak_tflops"], mfu)
    gpu_hours_billed = gpu_hours_ideal * plan["idle_factor"]  # GPUs above max_useful_gpus idle and are billed
    speedup = np.where(is_tst, arrays["tst_speedup"], 1.0)
    gpu_hours_compute = gpu_hours_billed / speedup

    nodes = reliability.node_count(arrays["gpu_count"], arrays["gpus_per_node"])
    failure_rate = purchase.effective_failure_rate(
        arrays["node_failures_per_1000_node_days"], arrays["spot_interruptions_per_1000_node_days"],
        arrays["spot_share"],
    )
    mtbf_h = reliability.job_mtbf_hours(failure_rate, nodes)
    ckpt_gb = reliability.checkpoint_size_gb(arrays["total_params"], arrays["checkpoint_bytes_per_param"])
    write_s = reliability.checkpoint_write_s(ckpt_gb, arrays["checkpoint_write_gb_per_s"], arrays["checkpoint_write_s"])
    interval_h = arrays["checkpoint_interval_min"] / 60.0
    stall = reliability.stall_fraction(write_s / 3600.0, interval_h, arrays["checkpoint_async"] > 0)
    rework = reliability.rework_fraction(interval_h, arrays["restart_min"] / 60.0, mtbf_h)  # 0 when M is infinite

    stall_hours = gpu_hours_compute * stall
    rework_hours = gpu_hours_compute * rework
    main_run_hours = gpu_hours_compute + stall_hours + rework_hours
    experiment_hours = main_run_hours * arrays["experiment_overhead"]
    eval_hours = main_run_hours * arrays["eval_overhead"]
    debug_hours = main_run_hours * arrays["debug_overhead"]
    side_hours = experiment_hours + eval_hours + debug_hours
    run_hours = main_run_hours / arrays["gpu_count"]

    price = purchase.blended_price_per_gpu_hour(
        arrays["reserved_share"], arrays["spot_share"], arrays["price_reserved_per_gpu_hour"],
        arrays["price_on_demand_per_gpu_hour"], arrays["price_spot_per_gpu_hour"],
    )
    raw_tokens = arrays["tokens"] * np.where(is_tst, arrays["tst_token_multiplier"], 1.0)
    data_gb, stored, storage_by_tier, retention_usd, storage_usd = _storage_usd(
        arrays, run_hours, interval_h, ckpt_gb, raw_tokens)
    kept_gb = stored["retained_gb"]
    # The baseline method's main run, which TST's pilot is priced against (and `output_arrays` compares TST with).
    baseline_main_hours = gpu_hours_billed * (1.0 + stall + rework)
    pilot_usd = arrays["tst_pilot_fraction"] * baseline_main_hours * price

    breakdown = {
        "main_compute": gpu_hours_compute * price,
        "failure_rework": rework_hours * price,
        "checkpoint_stalls": stall_hours * price,
        "experiments": experiment_hours * price,
        "evaluation": eval_hours * price,
        "debugging": debug_hours * price,
        "storage": storage_usd,
        "network_egress": arrays["egress_gb"] * arrays["egress_per_gb"],
        "data_processing": raw_tokens * (arrays["data_cost_per_billion_tokens"] / 1e9),
        "tst_pilot": np.where(is_tst, pilot_usd, 0.0),
        "tst_switching": np.where(is_tst, arrays["tst_switching_cost_usd"], 0.0),
        "people": _per_row(arrays["people_cost_usd"], price),
    }
    priced = programme.price(stages, arrays, {"model_flops": flops_model, "raw_tokens": raw_tokens,
                                              "gpu_hours_main_run": main_run_hours, "mfu_used": mfu}, cost_arrays)
    stage_hours, stage_other_usd = programme.totals(priced, main_run_hours)
    breakdown["programme_stages"] = stage_hours * price + stage_other_usd
    gpu_hours_total = main_run_hours + side_hours + stage_hours
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
        "storage_retained_gb": kept_gb,
        "storage_peak_gb": stored["peak_gb"],
        "storage_retention_usd": retention_usd,
        "raw_tokens": raw_tokens,
        "cost_breakdown": breakdown,
        "cost_total_usd": sum(breakdown.values()),
        "plan": plan,
        "mfu_used": mfu,
        **throughput.follow_used(rates, mfu),
        "throughput": rates,
        "gpu_hours_programme_stages": stage_hours,
        "programme_priced": priced,
    }


# The parts of TST's saving, total(baseline) − total(TST) of the same plan, in the order the chart and report list them.
SAVING_PARTS = (
    ("main run", "saving_main_run_usd"),
    ("experiments, evaluation, debugging", "saving_side_usd"),
    ("data processing", "saving_data_usd"),
    ("storage", "saving_storage_usd"),
    ("pilot", "pilot_cost_usd"),
    ("switching", "switching_cost_usd"),
)
# Storage moves with the run's length: each round re-prices it at the last break-even, cutting the error by the
# share of storage in the GPU cost (1 % on the default plan: two rounds leave about 10⁻⁶).
BREAK_EVEN_ROUNDS = 2


def saving_parts(tst: Mapping[str, Any]) -> list[tuple[str, float]]:
    """(label, dollars) of each part of TST's saving; the pilot and switching are costs, so they count negative.
    The parts sum to `tst["net_savings_usd"]`."""
    return [(label, -tst[key] if key in ("pilot_cost_usd", "switching_cost_usd") else tst[key])
            for label, key in SAVING_PARTS]


def tst_comparison(arrays: dict[str, np.ndarray], out: dict[str, Any]) -> dict[str, Any]:
    """The same plan priced with each method: TST's saving is total(baseline) − total(TST), split into its parts.

    Both methods run the whole plan: the main run, and experiments, evaluation and debugging as the same shares of
    it (at the plan's method, so TST's speedup shortens them too; docs/method.md), data processing of each method's
    raw tokens, storage over each run's length, TST's pilot and switching; egress and people are the same in both.
    `out` is `cost_arrays` of the plan at its own method, whose total equals one of the two.
    """
    is_tst = arrays["is_tst"] > 0
    speedup = arrays["tst_speedup"]
    price = out["blended_price_per_gpu_hour"]
    overhead = arrays["experiment_overhead"] + arrays["eval_overhead"] + arrays["debug_overhead"]
    breakdown = out["cost_breakdown"]
    baseline_main_hours = out["baseline_main_gpu_hours"]
    main_b = baseline_main_hours * price
    main_t = main_b / speedup
    side_b, side_t = main_b * overhead, main_t * overhead
    rate = arrays["data_cost_per_billion_tokens"] / 1e9
    tokens_t = arrays["tokens"] * arrays["tst_token_multiplier"]
    data_b, data_t = arrays["tokens"] * rate, tokens_t * rate
    interval_h = arrays["checkpoint_interval_min"] / 60.0
    ckpt_gb = out["checkpoint_size_gb"]
    run_b = baseline_main_hours / arrays["gpu_count"]

    def storage_at(run_hours: np.ndarray, raw_tokens: np.ndarray) -> np.ndarray:
        return _storage_usd(arrays, run_hours, interval_h, ckpt_gb, raw_tokens)[-1]

    # The plan's own method's storage is priced already; the other method's run is priced here.
    other = storage_at(np.where(is_tst, run_b, run_b / speedup), np.where(is_tst, arrays["tokens"], tokens_t))
    own = out["storage_cost_usd"]
    storage_b, storage_t = np.where(is_tst, other, own), np.where(is_tst, own, other)
    pilot, switching = out["tst_pilot_usd"], arrays["tst_switching_cost_usd"]
    common = breakdown["network_egress"] + breakdown["people"] + breakdown["programme_stages"]
    total_b = main_b + side_b + data_b + storage_b + common
    total_t = main_t + side_t + data_t + storage_t + pilot + switching + common

    # Break-even: the speedup s with (main + side of the baseline) / s = total(baseline) − TST's data, storage at s,
    # pilot, switching and the common lines; storage depends a little on s (the run's length), so iterate.
    gpu_b = main_b + side_b
    rest = total_b - data_t - pilot - switching - common
    with np.errstate(divide="ignore", invalid="ignore"):
        break_even = np.where(rest > storage_t, gpu_b / (rest - storage_t), np.inf)  # storage at the plan's s
        for _ in range(BREAK_EVEN_ROUNDS):
            storage_s = storage_at(np.where(np.isfinite(break_even), run_b / break_even, 0.0), tokens_t)
            break_even = np.where(rest > storage_s, gpu_b / (rest - storage_s), np.inf)
    # At 1× TST costs at least the baseline (the same run, as many raw tokens or more): below 1 is rounding.
    break_even = np.maximum(break_even, 1.0)
    return {
        "baseline_gpu_hours": baseline_main_hours,
        "tst_gpu_hours": baseline_main_hours / speedup,
        "baseline_plan_gpu_hours": baseline_main_hours * (1.0 + overhead),
        "tst_plan_gpu_hours": baseline_main_hours / speedup * (1.0 + overhead),
        "baseline_cost_usd": total_b,
        "tst_cost_usd": total_t,
        "baseline_tokens": _per_row(arrays["tokens"], price),
        "tst_tokens": tokens_t,
        "baseline_main_run_usd": main_b,
        "tst_main_run_usd": main_t,
        "baseline_side_usd": side_b,
        "tst_side_usd": side_t,
        "baseline_data_cost_usd": data_b,
        "tst_data_cost_usd": data_t,
        "baseline_storage_usd": storage_b,
        "tst_storage_usd": storage_t,
        "pilot_cost_usd": pilot,
        "switching_cost_usd": _per_row(switching, price),
        "saving_main_run_usd": main_b - main_t,
        "saving_side_usd": side_b - side_t,
        "saving_data_usd": data_b - data_t,
        "saving_storage_usd": storage_b - storage_t,
        "net_savings_usd": total_b - total_t,
        "speedup": _per_row(speedup, price),
        "break_even_speedup": break_even,
    }


def output_arrays(arrays: dict[str, np.ndarray], stages: tuple[Any, ...] = ()) -> dict[str, Any]:
    """Every planning output for arrays of scenarios (see `scenario_arrays` for the inputs) sharing the programme
    `stages`."""
    out = cost_arrays(arrays, stages)
    feasible, scarcity = feasibility.outputs(arrays, out)
    out.update(feasible)
    out["overhead_fraction"] = out["stall_fraction"] + out["rework_fraction"]
    cost_total = out["cost_total_usd"]
    price = out["blended_price_per_gpu_hour"]
    write_h = out["checkpoint_write_s"] / 3600.0
    with np.errstate(divide="ignore", invalid="ignore"):
        young_min = reliability.young_interval(write_h, out["job_mtbf_hours"]) * 60.0
        daly_min = reliability.daly_interval(write_h, out["job_mtbf_hours"]) * 60.0
    # A cost that is not a finite number is never "within" the budget (NaN fails every comparison).
    over = ~np.isfinite(cost_total) | (cost_total > arrays["budget_usd"])
    warning = cost_total > arrays["budget_warning_fraction"] * arrays["budget_usd"]
    status_index = np.maximum(over.view(np.int8) * np.int8(2), warning.view(np.int8))  # 2 over, 1 warning, 0

    E, A, B, alpha, beta = scaling.fit_arrays(arrays["fit_index"])
    loss_tokens = arrays["tokens"] * out["effective_tokens"] / out["raw_tokens"]  # repeated data counts less
    loss = scaling.predicted_loss(arrays["active_params"], loss_tokens, E, A, B, alpha, beta)
    tokens_better = scaling.tokens_for_loss_reduction(arrays["active_params"], arrays["tokens"], LOSS_STEP, B, beta)
    with np.errstate(invalid="ignore"):
        hours_per_step = np.where(
            np.isfinite(tokens_better), out["gpu_hours_total"] * (tokens_better / arrays["tokens"] - 1.0), np.inf
        )

    out.update({
        "checkpoint_interval_young_min": young_min,
        "checkpoint_interval_daly_min": daly_min,
        "cost_per_million_tokens": cost_total / (arrays["tokens"] / 1e6),
        "predicted_loss": loss,
        "gpu_hours_per_0_01_loss": hours_per_step,
        "budget_usd": _per_row(arrays["budget_usd"], price),
        "budget_status_index": status_index,
        "tst": tst_comparison(arrays, out),
    })
    tst = out["tst"]
    # With scarce data TST trains `scarcity` times longer: everything of its run that grows with its length.
    run_usd = tst["tst_main_run_usd"] + tst["tst_side_usd"] + tst["tst_data_cost_usd"] + tst["tst_storage_usd"]
    tst.update(feasibility.tst_with_scarcity(scarcity, {"net_savings_usd": tst["net_savings_usd"],
                                                        "tst_cost_usd": run_usd}))
    return out


class TstComparison(TypedDict):
    """The plan priced with each method at matched loss (see the catalogue's `tst.*` entries): `net_savings_usd` is
    total(baseline) − total(TST), the sum of `saving_parts`."""

    baseline_gpu_hours: float
    tst_gpu_hours: float
    baseline_plan_gpu_hours: float
    tst_plan_gpu_hours: float
    baseline_cost_usd: float
    tst_cost_usd: float
    baseline_tokens: float
    tst_tokens: float
    baseline_main_run_usd: float
    tst_main_run_usd: float
    baseline_side_usd: float
    tst_side_usd: float
    baseline_data_cost_usd: float
    tst_data_cost_usd: float
    baseline_storage_usd: float
    tst_storage_usd: float
    pilot_cost_usd: float
    switching_cost_usd: float
    saving_main_run_usd: float
    saving_side_usd: float
    saving_data_usd: float
    saving_storage_usd: float
    net_savings_usd: float
    speedup: float
    break_even_speedup: float
    scarcity_factor: float
    net_savings_with_scarcity_usd: float


class PlanResult(TypedDict):
    """Every output of `scenario_outputs` for one scenario; `dashboard.core.catalogue.OUTPUTS` says what each one is."""

    model_flops: float
    total_flops: float
    gpu_hours_ideal: float
    gpu_hours_compute: float
    gpu_hours_stall: float
    gpu_hours_rework: float
    gpu_hours_main_run: float
    gpu_hours_experiments: float
    baseline_main_gpu_hours: float
    tst_pilot_usd: float
    gpu_hours_total: float
    wall_clock_days: float
    node_count: float
    job_mtbf_hours: float
    blended_price_per_gpu_hour: float
    checkpoint_size_gb: float
    checkpoint_write_s: float
    stall_fraction: float
    rework_fraction: float
    dataset_gb: float
    storage_cost_usd: float
    storage_cost_by_tier: dict[str, float]  # keyed by `storage.TIERS`
    raw_tokens: float
    cost_breakdown: dict[str, float]  # keyed by `LINE_ITEMS`
    cost_total_usd: float
    overhead_fraction: float
    storage_peak_gb: float
    storage_retained_gb: float
    storage_retention_usd: float
    checkpoint_interval_young_min: float
    checkpoint_interval_daly_min: float
    cost_per_million_tokens: float
    predicted_loss: float
    gpu_hours_per_0_01_loss: float
    budget_usd: float
    mfu_used: float
    step_time_s: float
    tokens_per_s_per_gpu: float
    throughput: dict[str, Any]  # `dashboard.core.throughput.scalar`
    evidence: dict[str, dict[str, Any]]  # `dashboard.core.evidence.outputs`
    gpu_hours_programme_stages: float
    programme: dict[str, Any]  # `dashboard.core.programme.summary`
    tst: TstComparison
    budget_status: str  # one of BUDGET_STATUSES
    name: str
    # Can it run (`dashboard.core.feasibility`)
    memory: dict[str, float | bool]
    layout: dict[str, int]
    layout_proposed: bool
    layout_valid: bool
    global_batch_tokens: float
    global_batch_sequences: float
    micro_batches_per_step: float
    optimizer_steps: float
    pipeline_bubble_fraction: float
    max_useful_gpus: int
    busy_gpus: int
    epochs: float | None
    effective_tokens: float
    feasible: bool
    feasibility_status: str
    feasibility_problems: list[str]
    feasibility_warnings: list[str]
    feasibility_notes: list[str]


def _scalar(value: Any) -> Any:
    if type(value) is np.ndarray:  # the first element, as `item` gives it in one call (most values are arrays)
        return float(value.item(0))
    if isinstance(value, dict):
        return {key: _scalar(item) for key, item in value.items()}
    return float(np.asarray(value).reshape(-1)[0])


def scenario_outputs(scenario: Scenario) -> PlanResult:
    """Every output for one scenario, as plain numbers (the CLI's JSON, the app's tiles, the report's table)."""
    arrays = scenario_arrays([scenario])
    out = output_arrays(arrays, scenario.programme)
    priced = out.pop("programme_priced")
    result = _scalar(out)
    result["budget_status"] = BUDGET_STATUSES[int(result.pop("budget_status_index"))]
    result["name"] = scenario.name
    result["programme"] = programme.summary(priced, result, arrays, scenario.start_date)
    result["throughput"] = throughput.scalar(result["throughput"], generation_of(scenario.gpu_type), scenario.precision,
                                             scenario.total_params, scenario.gpu_count, scenario.mfu, _moe(scenario),
                                             result["total_flops"] / result["model_flops"], scenario.mfu_is_measured)
    result["evidence"] = evidence.outputs(scenario, result["throughput"]["mfu_source"])
    return cast(PlanResult, feasibility.scalar(result, scenario, _fix_sentence))  # built key by key from output_arrays


def _first(value: Any) -> float:
    return float(np.asarray(value).reshape(-1)[0])


@lru_cache(maxsize=512)
def evaluate(scenario: Scenario) -> memory_fixes.Evaluation:
    """One scenario priced from the engine's arrays, without sentences: what a memory fix is judged by."""
    out = output_arrays(scenario_arrays([scenario]), scenario.programme)
    return memory_fixes.Evaluation(
        total_gb=_first(out["memory"]["total_gb"]), fits=bool(_first(out["feasible"])),
        cost_usd=_first(out["cost_total_usd"]), wall_clock_days=_first(out["wall_clock_days"]),
        max_useful_gpus=_first(out["max_useful_gpus"]), micro_batches=_first(out["micro_batches_per_step"]),
        layout={key: int(_first(value)) for key, value in out["layout"].items()})


def _fix_sentence(scenario: Scenario) -> str:
    return memory_fixes.fix_sentence(scenario, evaluate)
