"""The parallel layout of a run (TP, PP, EP, ZeRO stage, data parallel) and the planner's proposal when none is given.

Data parallel = GPUs / (TP · PP). A layout key the user leaves unset (NaN in the arrays) is proposed: the
smallest layout whose memory per GPU fits, turning the knobs in this order — tensor parallel within a node
first (1, 2, 4, … up to the node), then pipeline parallel (2, 4, 8, … stages at that TP), then the ZeRO stage
(1, 2, 3). The search starts at ZeRO-1 because stage 1 adds no communication over plain data parallel
(ZeRO, arXiv 1910.02054 §7). Degrees are powers of two that divide the GPUs; data parallel must be a
multiple of expert parallel. When nothing fits, the most memory-saving layout tried is returned, marked as
not fitting. Works on broadcasting numpy arrays: inputs of length one are searched once.
"""

from __future__ import annotations

import numpy as np

from dashboard.core import memory

SEARCHED_ZERO_STAGES = (1, 2, 3)
# Bytes per parameter kept whole on each GPU, and sharded over all GPUs, at ZeRO stage 0-3.
REPLICATED_BYTES = (16.0, 4.0, 2.0, 0.0)
SHARDED_BYTES = (0.0, 12.0, 14.0, 16.0)


def _pow2_floor(x):
    return 2.0 ** np.floor(np.log2(np.maximum(x, 1.0)))


def _pow2_ceil(x):
    return 2.0 ** np.ceil(np.log2(np.maximum(x, 1.0)))


def _lowbit(x):
    """The largest power of two dividing the whole number x (1 for odd numbers)."""
    whole = np.maximum(np.round(x), 1).astype(np.int64)
    return (whole & -whole).astype(float)


class Shape:
    """A run's fixed inputs for memory: model, sequence, GPUs and memory per GPU, as broadcast arrays."""

    def __init__(self, p: dict[str, np.ndarray]) -> None:
        (self.total, self.active, self.ep, self.gpus, self.node, self.layers, self.seq, self.micro, self.d_model,
         self.heads, self.recompute, self.memory_gb) = np.broadcast_arrays(
            p["total_params"], p["active_params"], p["expert_parallel"], p["gpu_count"], p["gpus_per_node"],
            p["n_layers"], p["seq_len"], p["micro_batch_size"], p["d_model"], p["n_heads"], p["recompute_index"],
            p["gpu_memory_gb"],
        )
        self.unit = memory.params_per_gpu(self.total, self.active, 1.0, 1.0, self.ep)
        self.layer_bytes = memory.layer_activation_bytes(self.seq, self.micro, self.d_model, self.heads, 1.0,
                                                         self.recompute)

    def total_gb(self, tp, pp, zero):
        weights, gradients, optimizer = memory.model_states_gb(self.total, self.active, tp, pp, self.ep, self.gpus,
                                                               zero)
        activations = self.layer_bytes / tp * np.ceil(self.layers / pp) * pp / memory.GB
        return weights + gradients + optimizer + activations

    def fits(self, tp, pp, zero):
        limit = np.where(np.isnan(self.memory_gb), np.inf, self.memory_gb)
        return self.total_gb(tp, pp, zero) <= limit

    def divides(self, tp, pp):
        """TP · PP divides the GPUs, TP stays within a node and data parallel is a multiple of EP."""
        model_parallel = tp * pp
        data_parallel = self.gpus / model_parallel
        return (
            (np.round(data_parallel) == data_parallel) & (data_parallel >= 1) & (tp <= self.node)
            & (np.round(data_parallel / self.ep) == data_parallel / self.ep)
        )


def _search_stage(shape: Shape, tp_in, pp_in, zero):
    """The first fitting (TP, PP) at one ZeRO stage, in the planner's order, and whether one was found."""
    avail_bytes = np.where(np.isnan(shape.memory_gb), np.inf, shape.memory_gb) * memory.GB
    avail_bytes = avail_bytes - shape.total * SHARDED_BYTES[zero] / shape.gpus
    replicated = shape.unit * REPLICATED_BYTES[zero]
    # TP step: PP held at the user's value (or 1), the smallest power-of-two TP that fits.
    pp1 = np.where(np.isnan(pp_in), 1.0, pp_in)
    cap = np.minimum(_pow2_floor(shape.node), _lowbit(shape.gpus / pp1))
    with np.errstate(divide="ignore", invalid="ignore"):
        need = np.where(
            avail_bytes > 0,
            (replicated / pp1 + shape.layer_bytes * np.ceil(shape.layers / pp1) * pp1) / avail_bytes, np.inf,
        )
    tp1 = np.where(np.isnan(tp_in), np.minimum(np.where(np.isfinite(need), _pow2_ceil(need), cap), cap), tp_in)
    ok1 = shape.fits(tp1, pp1, zero) & shape.divides(tp1, pp1)
    # PP step (only where PP is free): TP at the user's value or the largest the node allows.
    tp2 = np.where(np.isnan(tp_in), cap, tp_in)
    pp_cap = np.minimum(_pow2_floor(shape.layers), _lowbit(shape.gpus / tp2))
    with np.errstate(divide="ignore", invalid="ignore"):
        room = avail_bytes - shape.layer_bytes * shape.layers / tp2
        need_pp = np.where(room > 0, replicated / (tp2 * room), np.inf)
    pp2 = np.minimum(_pow2_ceil(np.where(np.isfinite(need_pp), need_pp, pp_cap)), pp_cap)
    pp2 = np.where(shape.fits(tp2, pp2, zero), pp2, np.minimum(2.0 * pp2, pp_cap))
    ok2 = np.isnan(pp_in) & shape.fits(tp2, pp2, zero) & shape.divides(tp2, pp2)
    tp = np.where(ok1, tp1, tp2)
    pp = np.where(ok1, pp1, np.where(np.isnan(pp_in), pp2, pp1))
    return tp, pp, ok1 | ok2


def resolve(p: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The layout per scenario: tensor/pipeline/expert/data parallel, ZeRO stage, whether it fits and was proposed.

    Keys: `tensor_parallel`, `pipeline_parallel`, `expert_parallel`, `data_parallel`, `zero_stage`, `fits`,
    `valid` (divides the GPUs, TP within a node) and `proposed` (some key was left to the planner).
    """
    shape = Shape(p)
    tp_in, pp_in, zero_in = np.broadcast_arrays(p["tensor_parallel"], p["pipeline_parallel"], p["zero_stage"])
    tp_in, pp_in, zero_in = (np.asarray(a, dtype=float) for a in (tp_in, pp_in, zero_in))
    tp = np.where(np.isnan(tp_in), 1.0, tp_in)
    pp = np.where(np.isnan(pp_in), 1.0, pp_in)
    zero = np.where(np.isnan(zero_in), float(SEARCHED_ZERO_STAGES[-1]), zero_in)
    found = np.zeros(tp.shape, dtype=bool)
    for stage in range(4):
        here = (zero_in == stage) | (np.isnan(zero_in) & (stage in SEARCHED_ZERO_STAGES))
        if not here.any():
            continue
        tp_s, pp_s, ok = _search_stage(shape, tp_in, pp_in, stage)
        take = here & ~found & (ok | (stage == np.where(np.isnan(zero_in), SEARCHED_ZERO_STAGES[-1], zero_in)))
        tp, pp = np.where(take, tp_s, tp), np.where(take, pp_s, pp)
        zero = np.where(take, float(stage), zero)
        found |= here & ok
    valid = shape.divides(tp, pp)
    return {
        "tensor_parallel": tp,
        "pipeline_parallel": pp,
        "expert_parallel": shape.ep.astype(float),
        "data_parallel": np.maximum(np.floor(shape.gpus / (tp * pp)), 1.0),
        "zero_stage": zero,
        "fits": shape.fits(tp, pp, zero) & valid,
        "valid": valid,
        "proposed": np.isnan(tp_in) | np.isnan(pp_in) | np.isnan(zero_in),
    }
