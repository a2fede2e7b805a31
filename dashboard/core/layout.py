"""The parallel layout of a run (TP, PP, ZeRO stage; EP, CP and virtual stages as given) and the planner's proposal.

Data parallel = GPUs / (TP · PP · CP). A layout key the user leaves unset (NaN in the arrays) is proposed: at the
first ZeRO stage (1, 2, 3 in turn) where some candidate's memory per GPU (`dashboard.core.memory`) fits, the
candidate with the shortest predicted step (`dashboard.core.step_time`). The candidates, in the planner's order:
tensor parallel within a node (1, 2, 4, … up to the node), pipeline parallel (2, 4, 8, … stages) at the node's TP,
then each smaller TP with each of those pipelines. Where the step time is unknown (a GPU without link figures) the
first candidate that fits in that order is proposed. The search starts at ZeRO-1 because stage 1 adds no
communication over plain data parallel (ZeRO, arXiv 1910.02054 §7). Proposed degrees are powers of two with
TP · PP · CP · EP dividing the GPUs (so data parallel is a multiple of expert parallel), and a proposed pipeline
keeps at least 2 layers per stage. When nothing fits, the most memory-saving layout tried (the last stage at the
largest degrees) is returned, marked as not fitting. Arrays of scenarios are searched at once: the memory and step
time of every candidate of every scenario as one candidates × scenarios array, checked a ZeRO stage at a time. The
shape keys must be resolved (`dashboard.core.shape`).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from dashboard.core import memory, shape, step_time

SEARCHED_ZERO_STAGES = (1, 2, 3)
ZERO_STAGES = (0, 1, 2, 3)
MIN_LAYERS_PER_STAGE = 2  # the planner never proposes a pipeline stage of one layer
ONE_SCENARIO_CACHE = 1024  # single-scenario layouts kept
BOUND_MARGIN = 0.5  # the search skips rows whose model states alone, halved, overflow at the largest degrees
INPUTS = ("total_params", "active_params", "n_experts", "experts_per_token", "n_shared_experts", "expert_parallel",
          "gpu_count", "gpus_per_node", "n_layers", "seq_len", "micro_batch_size", "d_model", "n_heads",
          "n_kv_heads", "ffn_hidden_size", "ffn_gated", "vocab_size", "recompute_index", "attention_index",
          "fp8_activations", "context_parallel", "virtual_pipeline_stages", "batch_sequences", "gpu_memory_gb",
          "memory_reserve_gb", "tensor_parallel", "pipeline_parallel", "zero_stage", "run_peak_tflops",
          "hbm_tb_per_s", "nvlink_gb_per_s", "network_gb_per_s", "shape_assumed", "linear_peak_tflops",
          "fp8_linears", "generation_index", "framework_index", "nvlink_domain", "hsdp", "weight_bytes",
          "gradient_bytes", "optimizer_bytes", "unsharded_gradient_accumulation", "loss_bytes", "loss_parallel",
          "embedding_parallel")
LINK_KEYS = ("run_peak_tflops", "hbm_tb_per_s", "nvlink_gb_per_s", "network_gb_per_s")  # step time's hardware
STEP_KEYS = ("linear_peak_tflops", "fp8_linears", "generation_index", "framework_index", "nvlink_domain",
             "weight_bytes", "gradient_bytes", "optimizer_bytes",  # the memory recipe's bytes per parameter
             "loss_bytes", "loss_parallel")  # and the loss's bytes per logit (`memory.loss_bytes`)
UNKNOWN = np.array([np.nan])
RUNNER_UP_KEYS = ("runner_up_tensor_parallel", "runner_up_pipeline_parallel", "runner_up_step_time_s")
LAYOUT_KEYS = ("tensor_parallel", "pipeline_parallel", "zero_stage")  # NaN: proposed by the planner
FREE_KEYS = ("tp_free", "pp_free", "zero_free")  # per row: whether the layout key is left to the planner
MEMORY_KEYS = ("weights_gb", "gradients_gb", "optimizer_gb", "activations_gb", "logits_gb", "reserve_gb")
STEADY_STATE_MICRO_BATCHES = 1e9  # a batch left unset (a fix's preview) ranks layouts by their steady state


def pow2_floor(x) -> np.ndarray:
    """The power of two at or below max(x, 1) (NaN counts as 1, infinity stays infinity)."""
    x = np.fmax(np.asarray(x, dtype=float), 1.0)
    _, exponent = np.frexp(x)  # x = m · 2^e with 0.5 ≤ m < 1
    return np.where(np.isinf(x), x, np.ldexp(1.0, exponent - 1))


def lowbit(x) -> np.ndarray:
    """The largest power of two dividing the whole number x (1 for odd, non-whole or non-positive x)."""
    x = np.asarray(x, dtype=float)
    whole = np.where((x >= 1.0) & (np.floor(x) == x) & (x < 2.0**62), x, 1.0).astype(np.int64)
    return (whole & -whole).astype(float)  # two's complement: n & −n keeps n's lowest set bit


def compact(x) -> np.ndarray:
    """A column whose rows are all equal (or all NaN) as one row (it broadcasts the same), else the column as floats."""
    x = np.asarray(x, dtype=float)
    if x.ndim != 1 or x.size < 2:
        return x
    if np.isnan(x[0]):
        return x[:1] if bool(np.isnan(x).all()) else x
    return x[:1] if bool((x == x[0]).all()) else x


def resolve(p: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The layout per scenario and its memory per GPU (GB), in flat arrays of the inputs' broadcast length.

    Keys: `tensor_parallel`, `pipeline_parallel`, `expert_parallel`, `context_parallel`, `data_parallel`,
    `zero_stage`, the memory parts (`MEMORY_KEYS`) and `total_gb` (tensors + reserve), `fits`, `valid` (TP · PP · CP
    divides the GPUs, TP within a node, data parallel a multiple of EP, PP at most the layers) and `proposed` (some
    layout key was left to the planner). One scenario's layout is cached by its inputs.
    """
    p = {name: p.get(name, UNKNOWN) for name in INPUTS}  # links not given: the search keeps the planner's order
    key = one_scenario_key([_float64(p[name]) for name in INPUTS])
    if key is not None:
        return {name: value.copy() for name, value in _resolve_one(key).items()}
    return _resolve(p)


def _float64(x):
    return x.astype(np.float64) if isinstance(x, np.ndarray) and x.dtype == np.float32 else x


def one_scenario_key(values: list[np.ndarray]) -> bytes | None:
    """The exact bytes of one float64 scenario's inputs, or None for arrays of several scenarios (or float32)."""
    if all(isinstance(value, np.ndarray) and value.shape == (1,) and value.dtype == np.float64 for value in values):
        return b"".join(value.tobytes() for value in values)
    return None


@lru_cache(maxsize=ONE_SCENARIO_CACHE)
def _resolve_one(key: bytes) -> dict[str, np.ndarray]:
    values = np.frombuffer(key, dtype=np.float64).copy()
    return _resolve({name: values[index:index + 1] for index, name in enumerate(INPUTS)})


def _resolve(p: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    columns = np.broadcast_arrays(*(np.asarray(p[key], dtype=float) for key in INPUTS))
    rows = _rows({key: np.ravel(column) for key, column in zip(INPUTS, columns, strict=True)})
    tp, pp, zero, runner_tp, runner_pp, runner_s = _search(rows)
    parts = _parts_gb(rows, tp, pp, zero)
    total = sum(parts)
    gpus, ep, cp = rows["gpu_count"], rows["expert_parallel"], rows["context_parallel"]
    replicas = gpus / (tp * pp * cp)
    if all(bool(rows[key].all()) for key in FREE_KEYS):  # all proposed: the degrees divide the GPUs, TP within a node
        valid = np.ones(gpus.size, dtype=bool)
    else:
        valid = ((np.floor(replicas) == replicas) & (tp <= rows["gpus_per_node"])
                 & (np.floor(replicas / ep) == replicas / ep) & (pp <= rows["n_layers"]))
    return {
        **step_seconds(rows, tp, pp, zero),
        "runner_up_tensor_parallel": runner_tp, "runner_up_pipeline_parallel": runner_pp,
        "runner_up_step_time_s": runner_s,
        "tensor_parallel": tp, "pipeline_parallel": pp, "expert_parallel": ep, "context_parallel": cp,
        "data_parallel": np.fmax(np.floor(replicas), 1.0), "zero_stage": zero,
        **dict(zip(MEMORY_KEYS, parts, strict=True)), "total_gb": total,
        "fits": (total * memory.GB <= rows["limit_bytes"]) & valid, "valid": valid,
        "proposed": rows["tp_free"] | rows["pp_free"] | rows["zero_free"],
    }


def _rows(v: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The inputs (flat rows of `INPUTS`) and what the search needs of each row: whether each layout key is free,
    the PP held while TP is searched, the largest TP and PP the planner may propose, and the memory model's
    per-row constants (expert and embedding parameters, one layer's activation bytes and the logits at TP 1)."""
    rows = dict(v)
    for key, free in zip(LAYOUT_KEYS, FREE_KEYS, strict=True):
        rows[free] = np.isnan(v[key])
    gpus, ep, cp = v["gpu_count"], v["expert_parallel"], v["context_parallel"]
    # NaN memory: a custom GPU whose memory is not known, so every layout fits.
    rows["limit_bytes"] = np.where(np.isnan(v["gpu_memory_gb"]), np.inf, v["gpu_memory_gb"]) * memory.GB
    rows["reserve"] = memory.reserve_gb(v["gpu_memory_gb"], v["memory_reserve_gb"])
    rows["pp_held"] = np.where(rows["pp_free"], 1.0, v["pipeline_parallel"])
    node_tp = np.fmin(pow2_floor(v["gpus_per_node"]), lowbit(gpus / (ep * cp * rows["pp_held"])))
    rows["tp_max"] = np.where(rows["tp_free"], node_tp, v["tensor_parallel"])
    rows["pp_max"] = np.fmin(pow2_floor(v["n_layers"] / MIN_LAYERS_PER_STAGE),
                             lowbit(gpus / (ep * cp * rows["tp_max"])))
    rows["expert"] = shape.expert_params(v["total_params"], v["active_params"], v["n_experts"], v["experts_per_token"])
    rows["embedding"] = memory.embedding_params(v["vocab_size"], v["d_model"], v["total_params"], rows["expert"])
    experts = shape.moe_factor(v["n_experts"], v["experts_per_token"], v["n_shared_experts"])
    rows["layer_bytes_tp1"] = memory.layer_activation_bytes(
        v["seq_len"], v["micro_batch_size"], v["d_model"], v["n_heads"], v["n_kv_heads"], v["ffn_hidden_size"],
        v["ffn_gated"], experts, 1.0, cp, v["recompute_index"], v["attention_index"], v["fp8_activations"])
    rows["logits_tp1_gb"] = memory.logits_gb(v["seq_len"], v["micro_batch_size"], v["vocab_size"], 1.0, cp,
                                             np.where(np.isnan(v["loss_bytes"]), memory.LOGIT_BYTES, v["loss_bytes"]))
    rows["recompute_tp1"] = memory.recompute_working_bytes(
        v["seq_len"], v["micro_batch_size"], v["d_model"], v["n_heads"], v["n_kv_heads"], v["ffn_hidden_size"],
        v["ffn_gated"], experts, 1.0, cp, v["recompute_index"], v["attention_index"], v["fp8_activations"])
    rows["experts"] = experts
    # An assumed shape is a published model's, of another size: its layers stand for this model's by the ratio of
    # the FLOP-bearing parameters (what 6·N counts, less the embedding matrices) to the shape's.
    per_layer = (v["d_model"] * (v["d_model"] + 2.0 * v["d_model"] * v["n_kv_heads"] / v["n_heads"]) + v["d_model"] ** 2
                 + shape.ffn_multiplier(v["ffn_gated"]) * v["d_model"] * v["ffn_hidden_size"] * experts)
    ratio = (v["active_params"] - rows["embedding"]) / (v["n_layers"] * per_layer)
    rows["layer_scale"] = np.where(v["shape_assumed"] > 0, np.fmax(ratio, 0.0), 1.0)
    return rows


def step_seconds(rows: dict[str, np.ndarray], tp, pp, zero) -> dict[str, np.ndarray]:
    """`dashboard.core.step_time` at these degrees (arrays broadcasting with the rows, candidates × rows in the
    search): seconds per optimizer step and its parts; NaN, without the model's work, where no row gives links
    (a custom GPU, or Monte Carlo draws at a fixed MFU and layout)."""
    if bool(np.isnan(rows["run_peak_tflops"]).all()):
        unknown = np.full(np.broadcast_shapes(np.shape(tp), np.shape(pp), np.shape(rows["gpu_count"])), np.nan)
        return {key: unknown for key in ("step_time_s", *step_time.PARTS)}
    return step_time.step_time(step_inputs(rows, tp, pp, zero))


def step_inputs(rows: dict[str, np.ndarray], tp, pp, zero) -> dict[str, np.ndarray]:
    """What `dashboard.core.step_time.step_time` reads for these rows at these degrees."""
    replicas = np.fmax(np.floor(rows["gpu_count"] / (tp * pp * rows["context_parallel"])), 1.0)
    sequences = rows["batch_sequences"]
    with np.errstate(invalid="ignore"):
        micro_batches = np.where(np.isnan(sequences), STEADY_STATE_MICRO_BATCHES,
                                 np.fmax(np.ceil(sequences / (rows["micro_batch_size"] * replicas)), 1.0))
    p = {key: rows[key] for key in ("n_layers", "d_model", "n_heads", "n_kv_heads", "ffn_hidden_size", "ffn_gated",
                                    "vocab_size", "experts", "seq_len", "micro_batch_size", "context_parallel",
                                    "expert_parallel", "virtual_pipeline_stages", "recompute_index",
                                    "attention_index", "fp8_activations", "hbm_tb_per_s", "nvlink_gb_per_s",
                                    "network_gb_per_s", "gpus_per_node", "linear_peak_tflops", "fp8_linears",
                                    "generation_index", "framework_index", "hsdp")}
    p |= {"moe": np.isfinite(rows["n_experts"]) & (rows["n_experts"] > 1), "micro_batches": micro_batches,
          "tensor_parallel": tp, "pipeline_parallel": pp, "data_parallel": replicas, "zero_stage": zero,
          "params_per_gpu": _params(rows, tp, pp, rows["expert_parallel"]), "peak_tflops": rows["run_peak_tflops"],
          "layer_scale": rows["layer_scale"],
          "nvlink_domain": np.where(np.isnan(rows["nvlink_domain"]), rows["gpus_per_node"], rows["nvlink_domain"]),
          "linear_peak_tflops": np.where(np.isnan(rows["linear_peak_tflops"]), rows["run_peak_tflops"],
                                         rows["linear_peak_tflops"])}
    return {key: np.nan_to_num(value) if key in ("fp8_linears", "generation_index", "framework_index", "hsdp")
            else value for key, value in p.items()}


def given_step_inputs(p: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """`step_inputs` of scenarios whose layout (TP, PP, ZeRO stage) and `batch_sequences` are given, from the
    arrays `resolve` reads (the validation prices measured runs at their own layouts with it)."""
    columns = np.broadcast_arrays(*(np.asarray(p.get(key, UNKNOWN), dtype=float) for key in INPUTS))
    rows = _rows({key: np.ravel(column) for key, column in zip(INPUTS, columns, strict=True)})
    return step_inputs(rows, rows["tensor_parallel"], rows["pipeline_parallel"], rows["zero_stage"])


def _params(rows: dict[str, np.ndarray], tp, pp, ep, embedding_parallel=1.0) -> np.ndarray:
    """Parameters a GPU holds before ZeRO (`memory.params_per_gpu`); the memory passes the row's
    `embedding_parallel`, the step time's traffic counts the embedding split over TP."""
    return memory.params_per_gpu(rows["total_params"], rows["expert"], rows["embedding"], rows["n_layers"], tp, pp,
                                 ep, embedding_parallel)


def _parts_gb(rows: dict[str, np.ndarray], tp, pp, zero) -> tuple[np.ndarray, ...]:
    """(weights, gradients, optimizer, activations, logits, reserve) GB per GPU at these degrees."""
    split = np.nan_to_num(rows["embedding_parallel"], nan=1.0)
    local = _params(rows, tp, pp, rows["expert_parallel"], split)
    sharded = memory.sharded_params(_params(rows, tp, pp, 1.0, split), tp, pp, rows["gpu_count"])
    weights, gradients, optimizer = memory.model_states_gb(local, sharded, zero, *_recipe(rows))
    # Gradients accumulated unsharded in fp32 across micro-batches (FSDP2 without gradient sync until the last one).
    unsharded = ((np.nan_to_num(rows["unsharded_gradient_accumulation"]) > 0) & (_micro_batches(rows, tp, pp) > 1)
                 & (np.asarray(zero) >= 2))
    gradients = np.where(unsharded, memory.ACCUMULATION_BYTES / memory.GB * local, gradients)
    # The loss's working set, over TP where the loss is vocab-parallel (a row without the key: parallel).
    logits = rows["logits_tp1_gb"] / np.where(np.nan_to_num(rows["loss_parallel"], nan=1.0) > 0, tp, 1.0)
    # The recomputed layer's working set, beyond the loss's (freed before it; with PP the sum of the first stage's
    # activations and the last stage's logits already counts more than either stage holds).
    recompute = np.fmax(rows["recompute_tp1"] / tp / memory.GB - logits, 0.0)
    return (weights, gradients, optimizer, _activations_gb(rows, tp, pp) + recompute, logits,
            np.broadcast_to(rows["reserve"], np.shape(local)))


def _recipe(rows: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(weight, gradient, optimizer) bytes per parameter; Megatron's 2 + 4 + 12 where a row gives none."""
    return tuple(np.where(np.isnan(rows[key]), default, rows[key]) for key, default in (  # type: ignore[return-value]
        ("weight_bytes", memory.WEIGHT_BYTES), ("gradient_bytes", memory.GRADIENT_BYTES),
        ("optimizer_bytes", memory.OPTIMIZER_BYTES)))


def _micro_batches(rows: dict[str, np.ndarray], tp, pp) -> np.ndarray:
    """Micro-batches per step at these degrees (infinite where the batch is not known: the steady state)."""
    replicas = np.fmax(np.floor(rows["gpu_count"] / (tp * pp * rows["context_parallel"])), 1.0)
    with np.errstate(invalid="ignore"):
        return np.where(np.isnan(rows["batch_sequences"]), np.inf, np.fmax(
            np.ceil(rows["batch_sequences"] / (rows["micro_batch_size"] * replicas)), 1.0))


def _activations_gb(rows: dict[str, np.ndarray], tp, pp) -> np.ndarray:
    micro_batches = _micro_batches(rows, tp, pp)
    in_flight = memory.layers_in_flight(rows["n_layers"], pp, rows["virtual_pipeline_stages"], micro_batches)
    return rows["layer_bytes_tp1"] / tp * in_flight / memory.GB


def _search(rows: dict[str, np.ndarray]) -> tuple[np.ndarray, ...]:
    """(TP, PP, ZeRO stage) per row: its fastest candidate layout that fits (the first in the planner's order where
    step time is unknown), else the most memory-saving layout tried (the last stage at the largest TP and PP); and
    the runner-up's TP, PP and step seconds (NaN when no other candidate fits or the step time is unknown).

    A row searches ZeRO stages 1-3 when its stage is free, else its own stage only; at each stage, the rows with
    no layout yet take their fastest candidate (`_candidates`) that fits, if any.
    """
    runner = np.full((3, np.size(rows["gpu_count"])), np.nan)
    if not any(bool(rows[key].any()) for key in FREE_KEYS):  # every layout given: nothing to search
        given = (np.broadcast_to(rows[key], np.shape(rows["gpu_count"])).astype(float) for key in LAYOUT_KEYS)
        return (*given, *runner)
    pp_most = np.where(rows["pp_free"], rows["pp_max"], rows["pp_held"])
    tp, pp = rows["tp_max"].copy(), pp_most.copy()
    zero = np.where(rows["zero_free"], float(SEARCHED_ZERO_STAGES[-1]), rows["zero_stage"])
    # Only rows whose model states, at the fewest parameters any candidate holds (halved for safety), leave room.
    fewest = np.fmin(_params(rows, rows["tp_max"], pp_most, rows["expert_parallel"]),
                     (rows["total_params"] - rows["embedding"]) / rows["gpu_count"])
    bound_gb = BOUND_MARGIN * sum(_recipe(rows)) * fewest / memory.GB + rows["reserve"]
    index = np.flatnonzero(bound_gb * memory.GB <= rows["limit_bytes"])
    some = {key: value[index] if np.ndim(value) else value for key, value in rows.items()}
    tp_candidates, pp_candidates, allowed = _candidates(some)
    first, stage_found = np.full(index.size, -1), np.zeros(index.size)
    for stage in ZERO_STAGES:
        searching = np.flatnonzero((first < 0) & (
            (some["zero_stage"] == stage) | (some["zero_free"] & (stage in SEARCHED_ZERO_STAGES))))
        if not searching.size:
            continue
        part = {key: value[searching] for key, value in some.items()}
        tp_c, pp_c = tp_candidates[:, searching], pp_candidates[:, searching]
        total = sum(_parts_gb(part, tp_c, pp_c, float(stage)))
        fits = allowed[:, searching] & (total * memory.GB <= part["limit_bytes"])
        found = fits.any(axis=0)
        seconds = step_seconds(part, tp_c, pp_c, float(stage))["step_time_s"]
        # The fastest fitting candidate; where step time is unknown (NaN), the first that fits.
        ranked = np.where(fits, np.where(np.isnan(seconds), 0.0, seconds), np.inf)
        best = np.argmin(ranked[:, found], axis=0)
        first[searching[found]] = best
        stage_found[searching[found]] = stage
        # The runner-up: the fastest fitting candidate with other degrees (candidates may repeat a layout).
        columns = np.arange(best.size)
        tp_f, pp_f, rank_f = tp_c[:, found], pp_c[:, found], np.where(np.isnan(seconds), np.inf, ranked)[:, found]
        other = np.where((tp_f == tp_f[best, columns]) & (pp_f == pp_f[best, columns]), np.inf, rank_f)
        second = np.argmin(other, axis=0)
        has = np.isfinite(other[second, columns])
        rows_found = index[searching[found]]
        runner[:, rows_found[has]] = (tp_f[second, columns][has], pp_f[second, columns][has],
                                      other[second, columns][has])
    found = first >= 0
    chosen, first = index[found], first[found]
    tp[chosen] = tp_candidates[first, found]
    pp[chosen] = pp_candidates[first, found]
    zero[chosen] = stage_found[found]
    return tp, pp, zero, *runner


def _candidates(rows: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """TP and PP of the candidate layouts tried at each ZeRO stage (candidates × rows) and whether each row may take
    each. First in the planner's order: the TP step (TP 1, 2, 4, … up to the row's largest, or the user's TP alone;
    PP held), then the PP step where PP is free (PP 2, 4, … up to the row's largest, at the largest TP); then every
    other pair of free degrees (a smaller TP with a pipeline). With step times the fastest that fits wins, else
    the first."""
    tp_top = _log2_int(rows["tp_max"][rows["tp_free"]])
    pp_top = _log2_int(rows["pp_max"][rows["pp_free"]])
    tp_degrees = 2.0 ** np.arange(tp_top + 1)
    pp_degrees = 2.0 ** np.arange(1, pp_top + 1)
    pairs = [(tp, 0.0) for tp in tp_degrees] + [(0.0, pp) for pp in pp_degrees] + [
        (tp, pp) for tp in tp_degrees[:-1] for pp in pp_degrees]  # 0: the row's own (held or largest) degree
    tp_pick = np.array([pair[0] for pair in pairs])[:, None]
    pp_pick = np.array([pair[1] for pair in pairs])[:, None]
    tp_free, tp_max, pp_free = rows["tp_free"], rows["tp_max"], rows["pp_free"]
    tp = np.where(tp_pick > 0, np.where(tp_free, tp_pick, rows["tensor_parallel"]), tp_max)
    pp = np.where(pp_pick > 0, pp_pick, rows["pp_held"])
    tp_ok = np.where(tp_free, tp <= tp_max, tp_pick == 1.0)  # a user's TP is tried once
    pp_ok = np.where(pp_pick > 0, pp_free & (pp <= rows["pp_max"]), True)
    # A smaller TP with a pipeline: both degrees free and TP · PP · EP · CP dividing the GPUs.
    pair_ok = np.where((tp_pick > 0) & (pp_pick > 0), tp_free & (
        lowbit(rows["gpu_count"] / (rows["expert_parallel"] * rows["context_parallel"])) >= tp * pp), True)
    return tp, pp, tp_ok & pp_ok & pair_ok


def _log2_int(powers_of_two: np.ndarray) -> int:
    """log2 of the largest of these powers of two (0 for none)."""
    return int(powers_of_two.max()).bit_length() - 1 if powers_of_two.size else 0
