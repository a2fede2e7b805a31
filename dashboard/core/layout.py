"""The parallel layout of a run (TP, PP, EP, ZeRO stage, data parallel) and the planner's proposal when none is given.

Data parallel = GPUs / (TP · PP). A layout key the user leaves unset (NaN in the arrays) is proposed: the
smallest layout whose memory per GPU fits, turning the knobs in this order — tensor parallel within a node
first (1, 2, 4, … up to the node), then pipeline parallel (2, 4, 8, … stages at the node's TP), then the
ZeRO stage (1, 2, 3). The search starts at ZeRO-1 because stage 1 adds no communication over plain data
parallel (ZeRO, arXiv 1910.02054 §7). Proposed degrees are powers of two with TP · PP · EP dividing the GPUs
(so data parallel is a multiple of expert parallel) and PP ≤ layers. When nothing fits, the most
memory-saving layout tried is returned, marked as not fitting.

Memory per GPU is `dashboard.core.memory`'s, written here as bytes = local · r_z / (TP · PP) + total · s_z / GPUs
+ layer activations · ⌈L / PP⌉ · PP / TP, with r_z and s_z the replicated and sharded bytes per parameter of
ZeRO stage z. Each candidate's fit is one comparison per row (at its largest allowed degree), the first fitting
candidate is picked in one pass, its degree is the smallest power of two that fits (closed form, PP then
doubled over uneven stages until it fits exactly), and only rows whose pick still does not fit are searched
again, so 100,000 scenarios cost a few dozen array passes.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from dashboard.core import memory
from dashboard.core.branchless import select

SEARCHED_ZERO_STAGES = (1, 2, 3)
ONE_SCENARIO_CACHE = 1024  # single-scenario layouts kept
MAX_DOUBLINGS = 20  # PP doublings after the closed-form guess (uneven stages make memory uneven in PP)
# Bytes per parameter kept whole on each GPU, and sharded over all GPUs, at ZeRO stage 0-3.
REPLICATED_BYTES = (16.0, 4.0, 2.0, 0.0)
SHARDED_BYTES = (0.0, 12.0, 14.0, 16.0)
INPUTS = ("total_params", "active_params", "expert_parallel", "gpu_count", "gpus_per_node", "n_layers", "seq_len",
          "micro_batch_size", "d_model", "n_heads", "recompute_index", "gpu_memory_gb", "tensor_parallel",
          "pipeline_parallel", "zero_stage")
MANTISSA_BITS = np.int64((1 << 52) - 1)  # the 52 fraction bits of a float64


def _pow2(x, carry: bool):
    """The power of two at or below max(x, 1) (`carry` False) or at or above it (True), computed on the float's bits.

    Clearing the fraction bits rounds down to the exponent's power of two; adding all-ones to the fraction first
    carries into the exponent unless the fraction was zero (an exact power). Infinity stays infinity (its fraction
    is zero) at the price of two integer passes, where `log2` and `exp2` take a slow path for it.
    """
    y = np.fmax(np.asarray(x, dtype=float), 1.0)
    if not isinstance(y, np.ndarray):  # one number: a one-element array whose bits can change
        y = np.array(y)
    bits = y.view(np.int64)
    if carry:
        bits += MANTISSA_BITS
    bits &= ~MANTISSA_BITS
    return y if y.ndim else y[()]


def pow2_floor(x):
    return _pow2(x, carry=False)


def pow2_ceil(x):
    return _pow2(x, carry=True)


def lowbit(x):
    """The largest power of two dividing the whole number x (1 for odd numbers, 1 for non-whole x)."""
    whole = np.rint(x)
    is_whole = whole == x
    if not isinstance(whole, np.ndarray):  # one number
        bits = np.fmax(whole, 1).astype(np.int64)
        return np.where(is_whole, bits & -bits, 1).astype(float)
    np.fmax(whole, 1.0, out=whole)
    bits = whole.astype(np.int64)
    np.bitwise_and(bits, np.negative(bits), out=bits)
    np.copyto(whole, bits, casting="unsafe")  # back into the float buffer: whole powers of two, exact
    return whole if bool(is_whole.all()) else select(is_whole, whole, 1.0)


KEPT = ("n_layers", "tensor_parallel", "pipeline_parallel", "zero_stage", "gpu_count", "expert_parallel",
        "gpus_per_node")
DERIVED = ("limit", "unit", "sharded_unit", "layer_bytes", "budget", "node", "layers_pow2", "all_layers_bytes",
           "unstaged_bytes")
LAYOUT_KEYS = ("tensor_parallel", "pipeline_parallel", "zero_stage")  # NaN: proposed by the planner
MODEL_INPUTS = tuple(key for key in INPUTS if key not in LAYOUT_KEYS)
ONE_ROW = {"limit", "layer_bytes", "layers_pow2", "all_layers_bytes", "unstaged_bytes"}  # may stay one row


def compact(x) -> np.ndarray:
    """A column whose rows are all equal (or all NaN) as one row (it broadcasts the same), else the column as floats."""
    x = np.asarray(x, dtype=float)
    if x.ndim != 1 or x.size < 2:
        return x
    first = x[0]
    if first != first:  # NaN: unset for every row, or not a constant
        return x[:1] if bool(np.isnan(x).all()) else x
    if first == x[-1] and bool((x == first).all()):
        return x[:1]
    return x


class Shape:
    """The inputs of the memory model as flat arrays of one common length, with per-row constants.

    A per-row constant of `ONE_ROW` that is the same for every row is kept as one row, which broadcasts; the
    parameter counts stay full length, so every result has the inputs' length.
    """

    def __init__(self, p: dict[str, np.ndarray]) -> None:
        shape = np.broadcast_shapes(*(np.shape(p[key]) for key in INPUTS))
        self.size = int(np.prod(shape))

        def flat(x, one_row=False):  # one_row: a single row stays one row (it broadcasts)
            x = np.asarray(x, dtype=float)
            if x.shape == shape or (one_row and x.size == 1):
                return x.ravel()
            return np.broadcast_to(x, shape).ravel()

        self.v = {key: flat(p[key]) for key in KEPT}
        self.free = {key: np.isnan(self.v[key]) for key in LAYOUT_KEYS}  # left to the planner, per row
        self.all_free = all(bool(free.all()) for free in self.free.values())
        p = {key: compact(p[key]) for key in MODEL_INPUTS}  # per-row constants computed once, then broadcast
        derived = {
            "limit": np.where(np.isnan(p["gpu_memory_gb"]), np.inf, p["gpu_memory_gb"]) * memory.GB,
            "unit": memory.params_per_gpu(p["total_params"], p["active_params"], 1.0, 1.0, p["expert_parallel"]),
            "sharded_unit": p["total_params"] / p["gpu_count"],
            "layer_bytes": memory.layer_activation_bytes(p["seq_len"], p["micro_batch_size"], p["d_model"],
                                                         p["n_heads"], 1.0, p["recompute_index"]),
        }
        budget = lowbit(np.asarray(p["gpu_count"]) / p["expert_parallel"])  # TP · PP (powers of 2) divides it
        derived["budget"] = budget
        derived["node"] = np.fmin(pow2_floor(p["gpus_per_node"]), budget)
        derived["layers_pow2"] = pow2_floor(p["n_layers"])
        derived["all_layers_bytes"] = derived["layer_bytes"] * p["n_layers"]  # activations of L layers at TP 1
        derived["unstaged_bytes"] = memory.activation_bytes(derived["layer_bytes"] / 1.0, p["n_layers"], 1.0)
        for name in DERIVED:
            setattr(self, name, flat(derived[name], one_row=name in ONE_ROW))

    def take(self, rows: np.ndarray) -> Shape:
        part = object.__new__(Shape)
        part.size = rows.size
        part.all_free = self.all_free
        part.v = {key: value[rows] for key, value in self.v.items()}
        part.free = {key: value[rows] for key, value in self.free.items()}
        for name in DERIVED:
            value = getattr(self, name)
            setattr(part, name, value[rows] if value.size > 1 else value)
        return part

    def activation_bytes(self, tp, pp):
        return memory.activation_bytes(self.layer_bytes / tp, self.v["n_layers"], pp)


def _choose(shape: Shape, after: np.ndarray | None = None) -> tuple[np.ndarray, ...]:
    """(TP, PP, ZeRO stage) per row: the first candidate that fits in the planner's order, else the last tried.

    Per ZeRO stage two candidates: the TP step (PP held at the user's value or 1, the smallest power-of-two
    TP within the node that fits) and, where PP is free, the PP step (TP at the user's value or the node's,
    the smallest power-of-two PP that fits with activations taken as L layers; checked exactly afterwards).
    A candidate fits when its largest allowed degree does: held bytes ≤ available bytes · that degree.
    Candidates numbered up to `after` (per row) are skipped. Returns TP, PP, ZeRO stage, the candidate's
    number and whether one was found.
    """
    v = shape.v
    tp_in, pp_in, zero_in = v["tensor_parallel"], v["pipeline_parallel"], v["zero_stage"]
    tp_free, pp_free, zero_free = (shape.free[key] for key in LAYOUT_KEYS)
    all_tp_free, all_pp_free = bool(tp_free.all()), bool(pp_free.all())
    all_zero_free = bool(zero_free.all())
    pp1 = 1.0 if all_pp_free else np.where(pp_free, 1.0, pp_in)
    cap = shape.node if all_pp_free else np.fmin(shape.node, np.where(
        pp_free, shape.budget, lowbit(v["gpu_count"] / (v["expert_parallel"] * pp1))))
    tp_max = cap if all_tp_free else np.where(tp_free, cap, tp_in)
    if all_tp_free and all_pp_free:  # TP at the node's power of two, which divides the budget
        pp_cap = np.fmin(shape.layers_pow2, shape.budget / tp_max)
    else:
        pp_cap = np.fmin(shape.layers_pow2, lowbit(v["gpu_count"] / (v["expert_parallel"] * tp_max)))
    unit_pp1, unit_tp = shape.unit if all_pp_free else shape.unit / pp1, shape.unit / tp_max
    held_activations = shape.unstaged_bytes if all_pp_free else shape.activation_bytes(1.0, pp1)
    layer_activations = shape.all_layers_bytes / tp_max
    stages = [z for z in range(4)
              if (z in SEARCHED_ZERO_STAGES and zero_free.any()) or (not all_zero_free and (zero_in == z).any())]
    # Candidate k = 2 · stage index + (0: TP step, 1: PP step); rows where none fits take the last stage's.
    # Codes are small integers (int8), so the per-stage updates touch an eighth of the bytes of float rows.
    if all_zero_free and all_pp_free:
        last_code = np.full(shape.size, 2 * len(stages) - 1, dtype=np.int8)
    else:
        last_zero = np.where(zero_free, float(SEARCHED_ZERO_STAGES[-1]), zero_in)
        last_code = (2 * np.searchsorted(stages, last_zero) + np.where(pp_free, 1, 0)).astype(np.int8)
    code, found = last_code, np.zeros(last_code.shape, dtype=bool)
    for position in range(len(stages) - 1, -1, -1):
        zero = stages[position]
        avail = shape.limit - shape.sharded_unit * SHARDED_BYTES[zero]
        by_pp = unit_tp * REPLICATED_BYTES[zero] <= (avail - layer_activations) * pp_cap
        if not all_pp_free:
            by_pp &= pp_free
        by_tp = unit_pp1 * REPLICATED_BYTES[zero] + held_activations <= avail * tp_max
        if after is not None:
            by_tp &= after < 2 * position
            by_pp &= after < 2 * position + 1
        if not all_zero_free:
            allowed = zero_in == zero
            if zero in SEARCHED_ZERO_STAGES:
                allowed |= zero_free
            by_pp &= allowed
            by_tp &= allowed
        code = code + by_pp * (2 * position + 1 - code)  # the PP step where it fits, then the TP step over it
        code = code + by_tp * (2 * position - code)
        found |= by_tp | by_pp
    position = code >> 1
    zero = np.take(np.array(stages, dtype=float), position)
    replicated = np.take([REPLICATED_BYTES[z] for z in stages], position)
    sharded = np.take([SHARDED_BYTES[z] for z in stages], position)
    avail = shape.limit - shape.sharded_unit * sharded
    with_pp = (code & 1).astype(bool)
    need = select(with_pp, unit_tp * replicated / (avail - layer_activations),
                  (unit_pp1 * replicated + held_activations) / avail)
    degree = pow2_ceil(need if found.all() else select(found, need, np.inf))
    tp = select(with_pp if all_tp_free else with_pp | ~tp_free, tp_max, np.fmin(degree, cap))
    pp = select(with_pp, np.fmin(degree, pp_cap), pp1)
    return tp, pp, zero, code, found


def _settle(shape: Shape, tp, pp, zero, found):
    """The PP step took activations as L layers: where ⌈L/PP⌉ · PP layers do not fit, double PP up to its cap.

    Returns PP, the memory parts and their total (GB). Rows where no candidate fits already sit at the cap
    (their PP is the cap of `_choose`), so only found rows are doubled, and only those rows are recomputed.
    """
    parts = _parts_gb(shape, tp, pp, zero)
    total = _total_gb(parts)
    rows = np.flatnonzero(found & shape.free["pipeline_parallel"] & (total * memory.GB > shape.limit))
    if not rows.size:
        return pp, parts, total
    part, tp_rows, pp_rows, zero_rows = shape.take(rows), tp[rows], pp[rows], zero[rows]
    v = part.v
    cap = np.fmin(pow2_floor(v["n_layers"]), lowbit(v["gpu_count"] / (v["expert_parallel"] * tp_rows)))
    parts_rows, total_rows = tuple(x[rows] for x in parts), total[rows]
    for _ in range(MAX_DOUBLINGS):
        short = (total_rows * memory.GB > part.limit) & (pp_rows < cap)
        if not short.any():
            break
        pp_rows = np.where(short, np.fmin(2.0 * pp_rows, cap), pp_rows)
        parts_rows = _parts_gb(part, tp_rows, pp_rows, zero_rows)
        total_rows = _total_gb(parts_rows)
    pp[rows] = pp_rows
    for whole, some in zip(parts, parts_rows, strict=True):
        whole[rows] = some
    total[rows] = total_rows
    return pp, parts, total


def _parts_gb(shape: Shape, tp, pp, zero):
    """(weights, gradients, optimizer, activations) GB per GPU at a layout."""
    weights, gradients, optimizer = memory.model_states_gb(shape.unit / (tp * pp), shape.sharded_unit, zero)
    return weights, gradients, optimizer, shape.activation_bytes(tp, pp) / memory.GB


def _total_gb(parts):
    weights, gradients, optimizer, activations = parts
    return weights + gradients + optimizer + activations


def resolve(p: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The layout per scenario and its memory per GPU (GB), in flat arrays of the inputs' broadcast length.

    Keys: `tensor_parallel`, `pipeline_parallel`, `expert_parallel`, `data_parallel`, `zero_stage`, the
    memory parts of `dashboard.core.memory` (`weights_gb`, `gradients_gb`, `optimizer_gb`, `activations_gb`,
    `total_gb`), `fits`, `valid` (TP · PP divides the GPUs, TP within a node, data parallel a multiple of EP)
    and `proposed` (some layout key was left to the planner). One scenario's layout is cached by its inputs
    (the app estimates the same layout again for every change of a price, MFU or token count).
    """
    # Shape computes in float64 whatever the inputs' precision, so a float32 row (a Monte Carlo chunk's constants)
    # shares the float64 row's cached layout.
    key = one_scenario_key([_float64(p[name]) for name in INPUTS])
    if key is not None:
        return {name: value.copy() for name, value in _resolve_one(key).items()}
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return _resolve(Shape(p))


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
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return _resolve(Shape({name: values[index:index + 1] for index, name in enumerate(INPUTS)}))


def _resolve(shape: Shape) -> dict[str, np.ndarray]:
    v = shape.v
    tp, pp, zero, code, found = _choose(shape)
    pp, parts, total = _settle(shape, tp, pp, zero, found)
    # Where the doubled PP does not fit either, the search goes on from the next candidate.
    for _ in range(2 * len(SHARDED_BYTES)):
        rows = np.flatnonzero(found & (total * memory.GB > shape.limit))
        if not rows.size:
            break
        part = shape.take(rows)
        tp_rows, pp_rows, zero_rows, code[rows], found_rows = _choose(part, after=code[rows])
        pp_rows, parts_rows, total_rows = _settle(part, tp_rows, pp_rows, zero_rows, found_rows)
        tp[rows], pp[rows], zero[rows], found[rows], total[rows] = tp_rows, pp_rows, zero_rows, found_rows, total_rows
        for whole, some in zip(parts, parts_rows, strict=True):
            whole[rows] = some
    weights, gradients, optimizer, activations = parts
    gpus, ep = v["gpu_count"], v["expert_parallel"]
    data_parallel = gpus / (tp * pp)
    if shape.all_free:  # proposed degrees divide the GPUs and stay within the node by construction
        valid = np.ones(shape.size, dtype=bool)
    else:
        valid = (np.floor(data_parallel) == data_parallel) & (tp <= v["gpus_per_node"]) & (
            np.floor(data_parallel / ep) == data_parallel / ep)
    return {
        "tensor_parallel": tp, "pipeline_parallel": pp, "expert_parallel": ep,
        "data_parallel": np.fmax(np.floor(data_parallel), 1.0), "zero_stage": zero,
        "weights_gb": weights, "gradients_gb": gradients, "optimizer_gb": optimizer, "activations_gb": activations,
        "total_gb": total, "fits": (total * memory.GB <= shape.limit) & valid, "valid": valid,
        "proposed": np.ones(shape.size, dtype=bool) if shape.all_free else (
            shape.free["tensor_parallel"] | shape.free["pipeline_parallel"] | shape.free["zero_stage"]),
    }
