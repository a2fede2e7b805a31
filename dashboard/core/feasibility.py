"""Can the plan run? The verdict, below the engine: the layout, memory per GPU, batch and data supply of a plan, and
one sentence per problem.

`plan_arrays` is what the engine's cost model needs (the layout search, memory at the chosen layout, the
batch and how many GPUs it keeps busy); `outputs` adds the data supply and the keys `estimate --json`
shows; `problems` explains one scenario's result in sentences, the memory problem with the fixes the engine prices
(`dashboard.core.memory_fixes`, passed in). A plan is feasible when its layout divides the GPUs (TP within a node)
and its tensors plus the reserve fit.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import numpy as np

from dashboard.core import batch, data_supply, layout, memory, mfu_reference, shape, step_time
from dashboard.core.hardware import CUSTOM, catalogue
from dashboard.core.scenario import Scenario
from dashboard.format import compact

MEMORY_KEYS = ("weights_gb", "gradients_gb", "optimizer_gb", "activations_gb", "logits_gb", "reserve_gb", "total_gb")
FEASIBLE_TEXT, INFEASIBLE_TEXT = "runs", "cannot run"
# The inputs `plan_arrays` reads (with the model FLOPs); the layout's batch_sequences comes from the batch.
PLAN_INPUTS = tuple(key for key in dict.fromkeys(layout.INPUTS + ("global_batch_tokens", "tokens"))
                    if key != "batch_sequences")
LAYOUT_KEYS = ("data_parallel", "tensor_parallel", "pipeline_parallel", "expert_parallel", "context_parallel",
               "zero_stage")
BATCH_KEYS = ("global_batch_tokens", "global_batch_sequences", "optimizer_steps", "micro_batches_per_step",
              "pipeline_bubble_fraction", "max_useful_gpus", "busy_gpus", "idle_factor")


def gpu_memory_gb_of(scenario: Scenario) -> float:
    """Memory per GPU: the scenario's override, else the catalogue's; NaN for a custom GPU without one."""
    if scenario.gpu_memory_gb is not None:
        return scenario.gpu_memory_gb
    if scenario.gpu_type == CUSTOM:
        return math.nan
    return catalogue()[scenario.gpu_type].memory_gb


def recipe_of(scenario: Scenario) -> tuple[float, float, float]:
    """The scenario's (weight, gradient, optimizer) bytes per parameter: its recipe, the framework's defaults for
    what it leaves unset (`memory.recipe_bytes`)."""
    return memory.recipe_bytes(scenario.framework, scenario.weight_dtype, scenario.gradient_dtype,
                               scenario.master_weights, scenario.optimizer_dtype)


def links_of(scenario: Scenario) -> dict[str, float]:
    """The step-time model's hardware figures: the dense BF16 peak and the linears' peak at the run's precision
    (TFLOP/s), HBM TB/s and NVLink and network GB/s per GPU (the scenario's overrides, else the catalogue's; NaN for
    a custom GPU without them); whether the linears run in FP8, the GPU generation's index, the framework's and the
    NVLink domain (`dashboard.core.step_time`); the memory recipe's bytes per parameter (`memory.recipe_bytes`) and
    the loss's bytes per logit and whether TP splits it (`memory.loss_bytes`)."""
    known = None if scenario.gpu_type == CUSTOM else catalogue()[scenario.gpu_type]
    peak = scenario.peak_tflops if scenario.peak_tflops is not None else (
        known.peak_bf16_dense_tflops if known else math.nan)
    fp8 = known.peak_fp8_dense_tflops if known else math.nan
    fp8_linears = scenario.precision == "fp8" and not math.isnan(fp8)
    # An override of the BF16 peak keeps the catalogue's FP8 ratio.
    linear_peak = peak * fp8 / known.peak_bf16_dense_tflops if fp8_linears else peak  # type: ignore[union-attr]
    domain = scenario.nvlink_domain or (known.nvlink_domain if known and not math.isnan(known.nvlink_domain)
                                        else scenario.gpus_per_node)
    weight_bytes, gradient_bytes, optimizer_bytes = recipe_of(scenario)
    loss_bytes, loss_parallel = memory.loss_bytes(scenario.framework, scenario.cross_entropy, scenario.loss_parallel)
    values = {"run_peak_tflops": peak, "linear_peak_tflops": linear_peak, "fp8_linears": float(fp8_linears),
              "weight_bytes": weight_bytes, "gradient_bytes": gradient_bytes, "optimizer_bytes": optimizer_bytes,
              "loss_bytes": loss_bytes, "loss_parallel": float(loss_parallel),
              "generation_index": float(known is not None and known.generation in step_time.LATER_GENERATIONS),
              "framework_index": float(step_time.FRAMEWORKS.index(scenario.framework)), "nvlink_domain": domain}
    for key in ("hbm_tb_per_s", "nvlink_gb_per_s", "network_gb_per_s"):
        given = getattr(scenario, key)
        values[key] = given if given is not None else (getattr(known, key) if known else math.nan)
    return values


def scenario_columns(scenarios: list[Scenario]) -> dict[str, np.ndarray]:
    """Engine input columns that are not plain numbers: recompute mode, its 8ND flag, attention kind, FFN kind
    (NaN unset), resolved GPU memory and the step-time model's hardware figures (`links_of`)."""
    index = [memory.RECOMPUTE_MODES.index(s.activation_recompute) for s in scenarios]
    links = [links_of(s) for s in scenarios]
    return {
        **{key: np.array([row[key] for row in links], dtype=float) for key in layout.LINK_KEYS + layout.STEP_KEYS},
        "recompute_index": np.array(index, dtype=float),
        "activation_recompute": np.array([s.activation_recompute == "full" for s in scenarios], dtype=float),
        "attention_index": np.array([memory.ATTENTION_MODES.index(s.attention) for s in scenarios], dtype=float),
        "ffn_gated": np.array([math.nan if s.ffn_type is None else float(s.ffn_type == "gated") for s in scenarios]),
        "gpu_memory_gb": np.array([gpu_memory_gb_of(s) for s in scenarios], dtype=float),
    }


def plan_arrays(p: dict[str, np.ndarray], model_flops: np.ndarray) -> dict[str, Any]:
    """Layout, memory per GPU and batch for arrays of scenarios; `idle_factor` is billed GPUs per busy GPU.

    One scenario's plan is cached by its inputs, like its layout (`layout.resolve`); the cache returns copies.
    """
    key = layout.one_scenario_key([p[name] for name in PLAN_INPUTS] + [model_flops])
    if key is None:
        return _plan_arrays(p, model_flops)
    return {name: {part: x.copy() for part, x in value.items()} if isinstance(value, dict) else value.copy()
            for name, value in _plan_one(key).items()}


@lru_cache(maxsize=layout.ONE_SCENARIO_CACHE)
def _plan_one(key: bytes) -> dict[str, Any]:
    values = np.frombuffer(key, dtype=np.float64).copy()
    p = {name: values[index:index + 1] for index, name in enumerate(PLAN_INPUTS)}
    return _plan_arrays(p, values[-1:])


def _plan_arrays(p: dict[str, np.ndarray], model_flops: np.ndarray) -> dict[str, Any]:
    given = layout.compact(p["global_batch_tokens"])
    default = given.size == 1 and np.isnan(given[0])  # no row sets its batch: the law's batch for every row
    batch_tokens = batch.default_global_batch_tokens(model_flops) if default else np.where(
        np.isnan(p["global_batch_tokens"]), batch.default_global_batch_tokens(model_flops), p["global_batch_tokens"])
    sequences = batch.global_batch_sequences(batch_tokens, p["seq_len"])
    lay = layout.resolve(dict(p, batch_sequences=sequences))
    # The layout search works in float64; its degrees are small whole numbers, exact in float32, so the batch and
    # idle factor keep the FLOPs' precision (Monte Carlo's float32 draws are not turned into float64).
    tp, pp, cp = (lay[key].astype(model_flops.dtype, copy=False)
                  for key in ("tensor_parallel", "pipeline_parallel", "context_parallel"))
    data_parallel = lay["data_parallel"].astype(model_flops.dtype, copy=False)
    useful = batch.max_useful_gpus(sequences, p["micro_batch_size"], tp, pp * cp)
    micro_batches = batch.micro_batches_per_step(sequences, p["micro_batch_size"], data_parallel)
    return _result(p, lay | {
        "virtual_pipeline_stages": np.broadcast_to(p["virtual_pipeline_stages"], np.shape(tp)),
        "headroom_gb": p["gpu_memory_gb"] - lay["total_gb"],
        "global_batch_tokens": batch_tokens,
        "global_batch_sequences": sequences,
        "optimizer_steps": p["tokens"] / (sequences * p["seq_len"]),
        "micro_batches_per_step": micro_batches,
        "pipeline_bubble_fraction": batch.pipeline_bubble_fraction(pp, micro_batches, p["virtual_pipeline_stages"]),
        "max_useful_gpus": useful,
        "busy_gpus": np.fmin(p["gpu_count"], useful),
        "idle_factor": batch.idle_factor(p["gpu_count"], useful),
    })


def _result(p: dict[str, np.ndarray], plan: dict[str, np.ndarray]) -> dict[str, Any]:
    """`plan_arrays`'s nested result from the flat layout, memory and batch arrays. A GPU whose memory is not known
    (a custom GPU without `gpu_memory_gb`) never fits: nothing says its memory holds the plan."""
    fits = plan["fits"] & ~np.isnan(p["gpu_memory_gb"])
    return {
        "layout": {key: plan[key] for key in LAYOUT_KEYS + ("virtual_pipeline_stages",)},
        "layout_proposed": plan["proposed"],
        "layout_valid": plan["valid"],
        "memory": {key: plan[key] for key in MEMORY_KEYS} | {
            "gpu_memory_gb": p["gpu_memory_gb"], "fits": fits, "headroom_gb": plan["headroom_gb"],
        },
        **{key: plan[key] for key in BATCH_KEYS},
        "step_seconds": {key: plan[key] for key in ("step_time_s", *step_time.PARTS, *layout.RUNNER_UP_KEYS)},
        "feasible": fits,
    }


def outputs(p: dict[str, np.ndarray], costs: dict[str, Any]) -> tuple[dict[str, Any], np.ndarray]:
    """The plan's feasibility outputs (`plan_arrays`, moved out of `cost_arrays`, with the epochs and effective tokens
    of the data read) and how much longer TST trains when the unique data repeats (`tst_with_scarcity`)."""
    plan = dict(costs.pop("plan"))
    plan.pop("idle_factor")
    plan.pop("step_seconds")  # in the engine's `throughput` outputs
    raw, unique = costs["raw_tokens"], p["unique_tokens"]  # NaN (unlimited) never exceeds the tokens read
    plan["epochs"] = data_supply.epochs(raw, unique)
    plan["effective_tokens"] = data_supply.effective_tokens(raw, unique)
    return plan, data_supply.tst_scarcity_factor(p["tokens"], p["tst_token_multiplier"], unique)


def tst_with_scarcity(factor: np.ndarray, tst: dict[str, Any]) -> dict[str, Any]:
    """TST's extra run length (`outputs`'s factor) and net saving when the unique data repeats."""
    return {"scarcity_factor": factor,
            "net_savings_with_scarcity_usd": data_supply.tst_net_savings_with_scarcity(tst, factor)}


def scalar(result: dict[str, Any], scenario: Scenario, memory_fix: Callable[[Scenario], str]) -> dict[str, Any]:
    """`scenario_outputs`'s plain-number result: booleans, whole layout degrees, unknowns as None, the sentences
    (`memory_fix`: the fixes that fit, in words, for a plan that does not fit)."""
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
    result["feasibility_problems"], result["feasibility_warnings"] = problems(scenario, result, memory_fix)
    result["feasibility_notes"] = notes(scenario, result)
    return result


def layout_text(tp: int, pp: int, zero: int, cp: int = 1) -> str:
    return f"TP {tp} · PP {pp} · " + (f"CP {cp} · " if cp > 1 else "") + f"ZeRO-{zero}"


def layout_inputs(scenario: Scenario, **overrides: float) -> dict[str, np.ndarray]:
    """One scenario as the arrays `layout.resolve` reads (its shape resolved, unset layout keys and the batch's
    sequences NaN: the steady state of a long step), with some keys replaced."""
    model = shape.model_shape(scenario)
    values: dict[str, float | None] = {key: getattr(scenario, key) for key in layout.INPUTS
                                       if key in Scenario.model_fields}
    values |= {key: getattr(model, key) for key in ("n_layers", "d_model", "n_heads", "n_kv_heads", "ffn_hidden_size",
                                                    "vocab_size")}
    values |= {"active_params": scenario.active, "ffn_gated": float(model.ffn_type == "gated"),
               "recompute_index": memory.RECOMPUTE_MODES.index(scenario.activation_recompute),
               "attention_index": memory.ATTENTION_MODES.index(scenario.attention),
               "fp8_activations": float(scenario.fp8_activations), "gpu_memory_gb": gpu_memory_gb_of(scenario),
               "batch_sequences": math.nan, "shape_assumed": float(bool({"n_layers", "d_model"} & set(model.assumed)))
               } | links_of(scenario) | overrides
    return {key: np.array([math.nan if values[key] is None else float(values[key])])  # type: ignore[arg-type]
            for key in layout.INPUTS}


def problems(scenario: Scenario, result: dict[str, Any],
             memory_fix: Callable[[Scenario], str]) -> tuple[list[str], list[str]]:
    """(problems that stop the plan running, warnings): one sentence each, with its fix."""
    blocking, warnings = [], []
    lay, mem = result["layout"], result["memory"]
    text = layout_text(lay["tensor_parallel"], lay["pipeline_parallel"], lay["zero_stage"], lay["context_parallel"])
    if not result["layout_valid"]:
        blocking.append(f"{text} does not divide {scenario.gpu_count:,} GPUs into data-parallel replicas "
                        f"(or TP exceeds the {scenario.gpus_per_node}-GPU node, or PP the layers): choose degrees "
                        "whose product divides the GPUs")
    elif mem["gpu_memory_gb"] is None:
        blocking.append(f"the custom GPU's memory is not given: set its memory (GB per GPU) to check that "
                        f"{mem['total_gb']:,.0f} GB per GPU at {text} fits")
    elif not mem["fits"]:
        blocking.append(f"does not fit: {mem['total_gb']:,.0f} GB of {mem['gpu_memory_gb']:,.0f} GB per GPU at "
                        f"{text} — {memory_fix(scenario)}")
    if scenario.gpu_count > result["max_useful_gpus"]:
        useful = int(result["max_useful_gpus"])
        replicas = scenario.gpu_count / (lay["tensor_parallel"] * lay["pipeline_parallel"] * lay["context_parallel"])
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
    warnings += mfu_reference.mfu_warnings(result["mfu_used"], generation, scenario.total_params,
                                           result["pipeline_bubble_fraction"])
    return blocking, warnings


def _why_fastest(result: dict[str, Any]) -> str:
    """", the fastest that fits: 12.1 s a step; TP 4 · PP 8 would be 13.4 s" — the proposal's predicted step and the
    search's runner-up (empty when the step time is unknown; only the step when no other candidate fits)."""
    rates = result["throughput"]
    seconds = rates["step_time_s"]
    if seconds is None or not result["feasible"]:
        return ""
    if rates["runner_up_step_time_s"] is None:
        return f", the only candidate that fits: {seconds:,.3g} s a step"
    return (f", the fastest that fits: {seconds:,.3g} s a step; TP {rates['runner_up_tensor_parallel']:.0f} · "
            f"PP {rates['runner_up_pipeline_parallel']:.0f} would be {rates['runner_up_step_time_s']:,.3g} s")


def notes(scenario: Scenario, result: dict[str, Any]) -> list[str]:
    """What the planner chose for the user: the assumed shape, the proposed layout and the default global batch."""
    lay = result["layout"]
    said = []
    model = shape.model_shape(scenario)
    if model.from_the_size:
        said.append(f"assumed shape: {shape.describe(model)} — from the size ({model.source}); set n_layers, "
                    "d_model and n_heads to change it")
    if result["layout_proposed"]:
        said.append(f"layout proposed by the planner for the keys left unset: "
                    f"{layout_text(lay['tensor_parallel'], lay['pipeline_parallel'], lay['zero_stage'])}, "
                    f"data parallel {lay['data_parallel']:,}" + _why_fastest(result))
    if scenario.global_batch_tokens is None:
        said.append(f"global batch {compact(result['global_batch_tokens'])} tokens from DeepSeek LLM's batch law "
                    "B_opt = 0.292·C^0.3271 (arXiv 2401.02954); set global_batch_tokens to change it")
    return said
