"""Can the plan run? The layout, memory per GPU, batch and data supply of a plan, and one sentence per problem.

`plan_arrays` is what the engine's cost model needs (the layout search, memory at the chosen layout, the
batch and how many GPUs it keeps busy); `outputs` adds the data supply and the keys `estimate --json`
shows; `problems` explains one scenario's result in sentences, each with its fix. A plan is feasible when
its layout divides the GPUs (TP within a node) and its memory per GPU fits.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np

from dashboard.core import batch, data_supply, layout, memory, mfu_reference
from dashboard.core.hardware import CUSTOM, catalogue
from dashboard.core.scenario import Scenario
from dashboard.format import compact

HEAD_DIM = 128  # default n_heads = d_model / 128 (Llama 2 and 3 head size)
MEMORY_KEYS = ("weights_gb", "gradients_gb", "optimizer_gb", "activations_gb", "total_gb")
FEASIBLE_TEXT, INFEASIBLE_TEXT = "runs", "cannot run"
# The inputs `plan_arrays` reads (with the model FLOPs).
PLAN_INPUTS = tuple(dict.fromkeys(layout.INPUTS + ("global_batch_tokens", "tokens")))
LAYOUT_KEYS = ("data_parallel", "tensor_parallel", "pipeline_parallel", "expert_parallel", "zero_stage")
BATCH_KEYS = ("global_batch_tokens", "global_batch_sequences", "optimizer_steps", "micro_batches_per_step",
              "pipeline_bubble_fraction", "max_useful_gpus", "busy_gpus", "idle_factor")


def gpu_memory_gb_of(scenario: Scenario) -> float:
    """Memory per GPU: the scenario's override, else the catalogue's; NaN for a custom GPU without one."""
    if scenario.gpu_memory_gb is not None:
        return scenario.gpu_memory_gb
    if scenario.gpu_type == CUSTOM:
        return math.nan
    return catalogue()[scenario.gpu_type].memory_gb


def scenario_columns(scenarios: list[Scenario]) -> dict[str, np.ndarray]:
    """Engine input columns that are not plain numbers: recompute mode, its 8ND flag, resolved GPU memory."""
    index = [memory.RECOMPUTE_MODES.index(s.activation_recompute) for s in scenarios]
    return {
        "recompute_index": np.array(index, dtype=float),
        "activation_recompute": np.array([s.activation_recompute == "full" for s in scenarios], dtype=float),
        "gpu_memory_gb": np.array([gpu_memory_gb_of(s) for s in scenarios], dtype=float),
    }


def _heads(p: dict[str, np.ndarray]) -> np.ndarray:
    """Attention heads per row (one row when every row has the same, as the layout search broadcasts it)."""
    heads, d_model = layout.compact(p["n_heads"]), layout.compact(p["d_model"])
    return np.where(np.isnan(heads), np.maximum(np.rint(d_model / HEAD_DIM), 1.0), heads)


def plan_arrays(p: dict[str, np.ndarray], model_flops: np.ndarray) -> dict[str, Any]:
    """Layout, memory per GPU and batch for arrays of scenarios; `idle_factor` is billed GPUs per busy GPU.

    One scenario's plan is cached by its inputs, like its layout (`layout.resolve`); the cache returns copies.
    """
    key = layout.one_scenario_key([p[name] for name in PLAN_INPUTS] + [model_flops])
    if key is None:
        return _plan_arrays(p, model_flops)
    return {name: {part: x.copy() for part, x in value.items()} if isinstance(value, dict) else value.copy()
            for name, value in _plan_one(key).items()}


def clear_caches() -> None:
    """Forget the cached plans and layouts of single scenarios (a benchmark times a first estimate)."""
    _plan_one.cache_clear()
    layout.clear_cache()


@lru_cache(maxsize=layout.ONE_SCENARIO_CACHE)
def _plan_one(key: bytes) -> dict[str, Any]:
    values = np.frombuffer(key, dtype=np.float64).copy()
    p = {name: values[index:index + 1] for index, name in enumerate(PLAN_INPUTS)}
    return _plan_arrays(p, values[-1:])


def _plan_arrays(p: dict[str, np.ndarray], model_flops: np.ndarray) -> dict[str, Any]:
    p = dict(p, n_heads=_heads(p))
    given = layout.compact(p["global_batch_tokens"])
    default = given.size == 1 and np.isnan(given[0])  # no row sets its batch: the law's batch for every row
    batch_tokens = batch.default_global_batch_tokens(model_flops) if default else np.where(
        np.isnan(p["global_batch_tokens"]), batch.default_global_batch_tokens(model_flops), p["global_batch_tokens"])
    lay = layout.resolve(p)
    # The layout search works in float64; its degrees are small whole numbers, exact in float32, so the batch and
    # idle factor keep the FLOPs' precision (Monte Carlo's float32 draws are not turned into float64).
    tp, pp = (lay[key].astype(model_flops.dtype, copy=False) for key in ("tensor_parallel", "pipeline_parallel"))
    data_parallel = lay["data_parallel"].astype(model_flops.dtype, copy=False)
    sequences = batch.global_batch_sequences(batch_tokens, p["seq_len"])
    useful = batch.max_useful_gpus(sequences, p["micro_batch_size"], tp, pp)
    micro_batches = batch.micro_batches_per_step(sequences, p["micro_batch_size"], data_parallel)
    return _result(p, lay | {
        "headroom_gb": p["gpu_memory_gb"] - lay["total_gb"],
        "global_batch_tokens": batch_tokens,
        "global_batch_sequences": sequences,
        "optimizer_steps": p["tokens"] / (sequences * p["seq_len"]),
        "micro_batches_per_step": micro_batches,
        "pipeline_bubble_fraction": batch.pipeline_bubble_fraction(pp, micro_batches),
        "max_useful_gpus": useful,
        "busy_gpus": np.fmin(p["gpu_count"], useful),
        "idle_factor": batch.idle_factor(p["gpu_count"], useful),
    })


def _result(p: dict[str, np.ndarray], plan: dict[str, np.ndarray]) -> dict[str, Any]:
    """`plan_arrays`'s nested result from the flat layout, memory and batch arrays."""
    fits = plan["fits"]
    return {
        "layout": {key: plan[key] for key in LAYOUT_KEYS},
        "layout_proposed": plan["proposed"],
        "layout_valid": plan["valid"],
        "memory": {key: plan[key] for key in MEMORY_KEYS} | {
            "gpu_memory_gb": p["gpu_memory_gb"], "fits": fits, "headroom_gb": plan["headroom_gb"],
        },
        **{key: plan[key] for key in BATCH_KEYS},
        "feasible": fits,
    }


def outputs(p: dict[str, np.ndarray], costs: dict[str, Any]) -> tuple[dict[str, Any], np.ndarray]:
    """The plan's feasibility outputs (`plan_arrays`, moved out of `cost_arrays`, with the epochs and effective tokens
    of the data read) and how much longer TST trains when the unique data repeats (`tst_with_scarcity`)."""
    plan = dict(costs.pop("plan"))
    plan.pop("idle_factor")
    raw, unique = costs["raw_tokens"], p["unique_tokens"]  # NaN (unlimited) never exceeds the tokens read
    plan["epochs"] = data_supply.epochs(raw, unique)
    plan["effective_tokens"] = data_supply.effective_tokens(raw, unique)
    return plan, data_supply.tst_scarcity_factor(p["tokens"], p["tst_token_multiplier"], unique)


def tst_with_scarcity(factor: np.ndarray, tst: dict[str, Any]) -> dict[str, Any]:
    """TST's extra run length (`outputs`'s factor) and net saving when the unique data repeats."""
    return {"scarcity_factor": factor,
            "net_savings_with_scarcity_usd": data_supply.tst_net_savings_with_scarcity(tst, factor)}


def scalar(result: dict[str, Any], scenario: Scenario) -> dict[str, Any]:
    """`scenario_outputs`'s plain-number result: booleans, whole layout degrees, unknowns as None, the sentences."""
    result["feasible"] = bool(result["feasible"])
    result["feasibility_status"] = FEASIBLE_TEXT if result["feasible"] else INFEASIBLE_TEXT
    result["layout_proposed"] = bool(result["layout_proposed"])
    result["layout_valid"] = bool(result["layout_valid"])
    result["layout"] = {key: int(value) for key, value in result["layout"].items()}
    mem = result["memory"]
    mem["fits"] = bool(mem["fits"])
    if math.isnan(mem["gpu_memory_gb"]):
        mem["gpu_memory_gb"] = mem["headroom_gb"] = None
    if scenario.unique_tokens is None:
        result["epochs"] = None
    result["feasibility_problems"], result["feasibility_warnings"] = problems(scenario, result)
    result["feasibility_notes"] = notes(scenario, result)
    return result


def _layout_text(tp: int, pp: int, zero: int) -> str:
    return f"TP {tp} · PP {pp} · ZeRO-{zero}"


def _layout_inputs(scenario: Scenario, **overrides: float) -> dict[str, np.ndarray]:
    """One scenario as the arrays `layout.resolve` reads (unset keys as NaN), with some keys replaced."""
    values = {
        "total_params": scenario.total_params, "active_params": scenario.active,
        "expert_parallel": scenario.expert_parallel, "gpu_count": scenario.gpu_count,
        "gpus_per_node": scenario.gpus_per_node, "n_layers": scenario.n_layers, "seq_len": scenario.seq_len,
        "micro_batch_size": scenario.micro_batch_size, "d_model": scenario.d_model,
        "n_heads": scenario.n_heads or max(round(scenario.d_model / HEAD_DIM), 1),
        "recompute_index": memory.RECOMPUTE_MODES.index(scenario.activation_recompute),
        "gpu_memory_gb": gpu_memory_gb_of(scenario),
        "tensor_parallel": scenario.tensor_parallel, "pipeline_parallel": scenario.pipeline_parallel,
        "zero_stage": scenario.zero_stage,
    } | overrides
    return {key: np.array([math.nan if value is None else float(value)]) for key, value in values.items()}


def _memory_at(scenario: Scenario, tp: int, pp: int, zero: int, recompute: str | None = None) -> float:
    """GB per GPU of the scenario at a given layout (the formulas of `dashboard.core.memory`, one scenario)."""
    local = memory.params_per_gpu(scenario.total_params, scenario.active, tp, pp, scenario.expert_parallel)
    states = memory.model_states_gb(local, scenario.total_params / scenario.gpu_count, zero)
    heads = scenario.n_heads or max(round(scenario.d_model / HEAD_DIM), 1)
    mode = memory.RECOMPUTE_MODES.index(recompute or scenario.activation_recompute)
    layer = memory.layer_activation_bytes(scenario.seq_len, scenario.micro_batch_size, scenario.d_model, heads, tp,
                                          mode)
    return float(sum(states) + memory.activation_bytes(layer, scenario.n_layers, pp) / memory.GB)


def proposed_layout(scenario: Scenario) -> dict[str, Any]:
    """The layout the planner proposes when every layout key is left unset, with its memory per GPU."""
    q = _layout_inputs(scenario, tensor_parallel=math.nan, pipeline_parallel=math.nan, zero_stage=math.nan)
    lay = layout.resolve(q)
    tp, pp, zero = (int(lay[key][0]) for key in ("tensor_parallel", "pipeline_parallel", "zero_stage"))
    return {"tensor_parallel": tp, "pipeline_parallel": pp, "zero_stage": zero, "fits": bool(lay["fits"][0]),
            "total_gb": _memory_at(scenario, tp, pp, zero)}


def _memory_fix(scenario: Scenario, result: dict[str, Any]) -> str:
    lay, limit = result["layout"], result["memory"]["gpu_memory_gb"]
    tp, pp, zero = lay["tensor_parallel"], lay["pipeline_parallel"], lay["zero_stage"]
    node_tp = int(layout.pow2_floor(min(scenario.gpus_per_node, layout.lowbit(scenario.gpu_count / pp))))
    options = []
    if zero < 3:
        options.append(("ZeRO-3", _memory_at(scenario, tp, pp, 3)))
    if tp < node_tp:
        options.append((f"TP {node_tp}", _memory_at(scenario, node_tp, pp, zero)))
    if scenario.activation_recompute != "full":
        options.append(("full activation recompute", _memory_at(scenario, tp, pp, zero, "full")))
    fitting = [f"{name} ({gb:,.0f} GB)" for name, gb in options if gb <= limit]
    if fitting:
        return "use " + " or ".join(fitting)
    proposal = proposed_layout(scenario)
    if proposal["fits"]:
        chosen = _layout_text(proposal["tensor_parallel"], proposal["pipeline_parallel"], proposal["zero_stage"])
        return f"use {chosen} ({proposal['total_gb']:,.0f} GB), the smallest layout that fits"
    states_gb = 16.0 * scenario.total_params / memory.GB
    gpus = math.ceil(states_gb / limit / scenario.gpus_per_node) * scenario.gpus_per_node
    return (f"no layout of {scenario.gpu_count:,} GPUs fits; the model states alone ({states_gb:,.0f} GB) need at "
            f"least {gpus:,} GPUs of {limit:,.0f} GB with ZeRO-3, or GPUs with more memory")


def problems(scenario: Scenario, result: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(problems that stop the plan running, warnings): one sentence each, with its fix."""
    blocking, warnings = [], []
    lay, mem = result["layout"], result["memory"]
    text = _layout_text(lay["tensor_parallel"], lay["pipeline_parallel"], lay["zero_stage"])
    if not result["layout_valid"]:
        blocking.append(f"{text} does not divide {scenario.gpu_count:,} GPUs into data-parallel replicas "
                        f"(or TP exceeds the {scenario.gpus_per_node}-GPU node): choose degrees whose product "
                        "divides the GPUs")
    elif not mem["fits"]:
        blocking.append(f"does not fit: {mem['total_gb']:,.0f} GB of {mem['gpu_memory_gb']:,.0f} GB per GPU at "
                        f"{text} — {_memory_fix(scenario, result)}")
    if scenario.gpu_count > result["max_useful_gpus"]:
        useful = int(result["max_useful_gpus"])
        replicas = scenario.gpu_count / (lay["tensor_parallel"] * lay["pipeline_parallel"])
        tokens_needed = replicas * scenario.micro_batch_size * scenario.seq_len
        warnings.append(
            f"{scenario.gpu_count - useful:,} of {scenario.gpu_count:,} GPUs idle: a batch of "
            f"{result['global_batch_sequences']:,.0f} sequences keeps at most {useful:,} busy, so wall-clock stops "
            f"falling while the idle GPU-hours are billed — use {useful:,} GPUs, or a global batch of "
            f"{compact(tokens_needed)} tokens to use all {scenario.gpu_count:,}"
        )
    if scenario.unique_tokens is not None and result["epochs"] > 1.0:  # `scalar` sets epochs for these
        warnings.append(
            f"data repeats: {result['epochs']:.1f} epochs over {compact(scenario.unique_tokens)} unique tokens count "
            f"as {compact(result['effective_tokens'])} effective of {compact(result['raw_tokens'])} read (Muennighoff "
            "et al. 2023) and the predicted loss uses them — add unique data or train a larger model on fewer tokens"
        )
    generation = catalogue()[scenario.gpu_type].generation if scenario.gpu_type != CUSTOM else "custom"
    warnings += mfu_reference.mfu_warnings(scenario.mfu, generation, scenario.total_params,
                                           result["pipeline_bubble_fraction"])
    return blocking, warnings


def notes(scenario: Scenario, result: dict[str, Any]) -> list[str]:
    """What the planner chose for the user: the proposed layout and the default global batch."""
    lay = result["layout"]
    said = []
    if result["layout_proposed"]:
        said.append(f"layout proposed by the planner for the keys left unset: "
                    f"{_layout_text(lay['tensor_parallel'], lay['pipeline_parallel'], lay['zero_stage'])}, "
                    f"data parallel {lay['data_parallel']:,}")
    if scenario.global_batch_tokens is None:
        said.append(f"global batch {compact(result['global_batch_tokens'])} tokens from DeepSeek LLM's batch law "
                    "B_opt = 0.292·C^0.3271 (arXiv 2401.02954); set global_batch_tokens to change it")
    return said
