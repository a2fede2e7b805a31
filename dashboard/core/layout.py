"""The parallel layout of a run (TP, PP, ZeRO stage; EP, CP and virtual stages as given) and the planner's proposal.

Data parallel = GPUs / (TP · PP · CP). A layout key the user leaves unset (NaN in the arrays) is proposed: the first
layout whose memory per GPU (`dashboard.core.memory`) fits, trying for each ZeRO stage in turn (1, 2, 3) tensor
parallel within a node (1, 2, 4, … up to the node) and then pipeline parallel (2, 4, 8, … stages at the node's
TP). The search starts at ZeRO-1 because stage 1 adds no communication over plain data parallel (ZeRO, arXiv
1910.02054 §7). Proposed degrees are powers of two with TP · PP · CP · EP dividing the GPUs (so data parallel is a
multiple of expert parallel), and a proposed pipeline keeps at least 2 layers per stage. When nothing fits, the
most memory-saving layout tried (the last stage at the largest degrees) is returned, marked as not fitting.
Arrays of scenarios are searched at once: the memory of every candidate of every scenario as one candidates ×
scenarios array, checked a ZeRO stage at a time. The shape keys must be resolved (`dashboard.core.shape`).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from dashboard.core import memory, shape

SEARCHED_ZERO_STAGES = (1, 2, 3)
ZERO_STAGES = (0, 1, 2, 3)
MIN_LAYERS_PER_STAGE = 2  # the planner never proposes a pipeline stage of one layer
ONE_SCENARIO_CACHE = 1024  # single-scenario layouts kept
BOUND_MARGIN = 0.5  # the search skips rows whose model states alone, halved, overflow at the largest degrees
INPUTS = ("total_params", "active_params", "n_experts", "experts_per_token", "n_shared_experts", "expert_parallel",
          "gpu_count", "gpus_per_node", "n_layers", "seq_len", "micro_batch_size", "d_model", "n_heads",
          "n_kv_heads", "ffn_hidden_size", "ffn_gated", "vocab_size", "recompute_index", "attention_index",
          "fp8_activations", "context_parallel", "virtual_pipeline_stages", "batch_sequences", "gpu_memory_gb",
          "memory_reserve_gb", "tensor_parallel", "pipeline_parallel", "zero_stage")
LAYOUT_KEYS = ("tensor_parallel", "pipeline_parallel", "zero_stage")  # NaN: proposed by the planner
FREE_KEYS = ("tp_free", "pp_free", "zero_free")  # per row: whether the layout key is left to the planner
MEMORY_KEYS = ("weights_gb", "gradients_gb", "optimizer_gb", "activations_gb", "logits_gb", "reserve_gb")


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


def clear_cache() -> None:
    """Forget the cached layouts of single scenarios."""
    _resolve_one.cache_clear()


@lru_cache(maxsize=ONE_SCENARIO_CACHE)
def _resolve_one(key: bytes) -> dict[str, np.ndarray]:
    values = np.frombuffer(key, dtype=np.float64).copy()
    return _resolve({name: values[index:index + 1] for index, name in enumerate(INPUTS)})


def _resolve(p: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    columns = np.broadcast_arrays(*(np.asarray(p[key], dtype=float) for key in INPUTS))
    rows = _rows({key: np.ravel(column) for key, column in zip(INPUTS, columns, strict=True)})
    tp, pp, zero = _search(rows)
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
    rows["logits_tp1_gb"] = memory.logits_gb(v["seq_len"], v["micro_batch_size"], v["vocab_size"], 1.0, cp)
    return rows


def _params(rows: dict[str, np.ndarray], tp, pp, ep) -> np.ndarray:
    return memory.params_per_gpu(rows["total_params"], rows["expert"], rows["embedding"], rows["n_layers"], tp, pp,
                                 ep)


def _parts_gb(rows: dict[str, np.ndarray], tp, pp, zero) -> tuple[np.ndarray, ...]:
    """(weights, gradients, optimizer, activations, logits, reserve) GB per GPU at these degrees."""
    local = _params(rows, tp, pp, rows["expert_parallel"])
    sharded = memory.sharded_params(_params(rows, tp, pp, 1.0), tp, pp, rows["gpu_count"])
    states = memory.model_states_gb(local, sharded, zero)
    return (*states, _activations_gb(rows, tp, pp), rows["logits_tp1_gb"] / tp, np.broadcast_to(rows["reserve"],
                                                                                                 np.shape(local)))


def _activations_gb(rows: dict[str, np.ndarray], tp, pp) -> np.ndarray:
    replicas = np.fmax(np.floor(rows["gpu_count"] / (tp * pp * rows["context_parallel"])), 1.0)
    with np.errstate(invalid="ignore"):
        micro_batches = np.where(np.isnan(rows["batch_sequences"]), np.inf, np.fmax(
            np.ceil(rows["batch_sequences"] / (rows["micro_batch_size"] * replicas)), 1.0))
    in_flight = memory.layers_in_flight(rows["n_layers"], pp, rows["virtual_pipeline_stages"], micro_batches)
    return rows["layer_bytes_tp1"] / tp * in_flight / memory.GB


def _search(rows: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(TP, PP, ZeRO stage) per row: its first candidate layout that fits, in the planner's order, else the most
    memory-saving layout tried (the last stage at the largest TP and PP).

    A row searches ZeRO stages 1-3 when its stage is free, else its own stage only; at each stage, the rows with
    no layout yet take their first candidate (`_candidates`) that fits, if any.
    """
    pp_most = np.where(rows["pp_free"], rows["pp_max"], rows["pp_held"])
    tp, pp = rows["tp_max"].copy(), pp_most.copy()
    zero = np.where(rows["zero_free"], float(SEARCHED_ZERO_STAGES[-1]), rows["zero_stage"])
    # Only rows whose model states, at the fewest parameters any candidate holds (halved for safety), leave room.
    fewest = np.fmin(_params(rows, rows["tp_max"], pp_most, rows["expert_parallel"]),
                     (rows["total_params"] - rows["embedding"]) / rows["gpu_count"])
    bound_gb = BOUND_MARGIN * memory.STATE_BYTES * fewest / memory.GB + rows["reserve"]
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
        total = sum(_parts_gb(part, tp_candidates[:, searching], pp_candidates[:, searching], float(stage)))
        fits = allowed[:, searching] & (total * memory.GB <= part["limit_bytes"])
        found = fits.any(axis=0)
        first[searching[found]] = np.argmax(fits[:, found], axis=0)
        stage_found[searching[found]] = stage
    found = first >= 0
    chosen, first = index[found], first[found]
    tp[chosen] = tp_candidates[first, found]
    pp[chosen] = pp_candidates[first, found]
    zero[chosen] = stage_found[found]
    return tp, pp, zero


def _candidates(rows: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """TP and PP of the candidate layouts tried at each ZeRO stage (candidates, in the planner's order, × rows) and
    whether each row may take each: the TP step (TP 1, 2, 4, … up to the row's largest, or the user's TP alone; PP
    held), then the PP step where PP is free (PP 2, 4, … up to the row's largest, at the largest TP)."""
    tp_degrees = 2.0 ** np.arange(_log2_int(rows["tp_max"][rows["tp_free"]]) + 1)
    pp_degrees = 2.0 ** np.arange(1, _log2_int(rows["pp_max"][rows["pp_free"]]) + 1)
    degree = np.concatenate([tp_degrees, pp_degrees])[:, None]  # one per candidate
    pp_step = np.arange(degree.size)[:, None] >= tp_degrees.size
    tp_free, tp_max = rows["tp_free"], rows["tp_max"]
    tp = np.where(pp_step, tp_max, np.where(tp_free, degree, rows["tensor_parallel"]))
    pp = np.where(pp_step, degree, rows["pp_held"])
    allowed = np.where(pp_step, rows["pp_free"] & (degree <= rows["pp_max"]),
                       np.where(tp_free, degree <= tp_max, degree == 1.0))
    return tp, pp, allowed


def _log2_int(powers_of_two: np.ndarray) -> int:
    """log2 of the largest of these powers of two (0 for none)."""
    return int(powers_of_two.max()).bit_length() - 1 if powers_of_two.size else 0
