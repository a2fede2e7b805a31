"""Many scenarios at once, compiled: the plan, data supply and storage volumes of the engine, one row at a time.

The NumPy functions (`layout.resolve` and `batch` over `memory`'s formulas, `data_supply`, `storage.volumes`)
define these outputs. Over many scenarios each of their array operations is a trip through memory, and the
layout search alone takes a few dozen, so from `COMPILED_FROM` float64 scenarios on the engine calls these loops
instead: one pass reads each input once and writes each output once. The plan loop tries the planner's
candidates in its order (TP within the node, then PP, then the ZeRO stage), starting each doubling at the
smallest degree that can fit and checking every degree it stops at with the exact memory sum, so it proposes the
same layouts. Tests check every output against the NumPy functions on random scenarios.

numba compiles a loop the first time a process needs it (about 3 s for all three, kept in numba's cache beside
this file, so later processes load them in about 0.4 s) and is imported only then: the pages price at most a few
hundred scenarios per call and never load it. The model's constants are passed in, not read as globals, so a
cached loop never keeps an old value of them.
"""

from __future__ import annotations

import math
from functools import cache
from typing import Any

import numpy as np

from dashboard.core import data_supply, layout, memory, storage

COMPILED_FROM = 4096  # scenarios per call from which the engine uses these loops (float64 only)
COLUMNS = layout.INPUTS + ("global_batch_tokens", "tokens")
OUTPUTS = ("tensor_parallel", "pipeline_parallel", "data_parallel", "zero_stage", "weights_gb", "gradients_gb",
           "optimizer_gb", "activations_gb", "total_gb", "headroom_gb", "global_batch_sequences", "optimizer_steps",
           "micro_batches_per_step", "pipeline_bubble_fraction", "max_useful_gpus", "busy_gpus", "idle_factor")
FLAGS = ("fits", "valid", "proposed")
SUPPLY = ("epochs", "effective_tokens", "scarcity_factor")
VOLUMES = storage.TIERS + ("peak_gb", "retained_gb")
LOWER_BOUND_MARGIN = 1.0 - 1e-12  # a bound written in another order than the exact sum never rounds above it


def _model() -> tuple:
    """The constants of the memory model, in the order `_plan_rows` unpacks them."""
    return (layout.REPLICATED_BYTES, layout.SHARDED_BYTES, memory.LINEAR_BYTES, memory.SCORE_TERM,
            (memory.WEIGHT_BYTES, memory.GRADIENT_BYTES, memory.OPTIMIZER_BYTES, memory.GB))


def applies(size: int, dtype: np.dtype) -> bool:
    """Whether `size` scenarios in `dtype` are priced here (float32 Monte Carlo draws stay in NumPy)."""
    return size >= COMPILED_FROM and dtype == np.float64


def size_of(*arrays) -> int:
    """How many scenarios the engine's columns describe: each holds one value per scenario, or one for all.

    (A maximum, not `np.broadcast_shapes`: a single estimate asks this for every call, and this is 10× cheaper.)
    """
    return max(array.size if isinstance(array, np.ndarray) else 1 for array in arrays)


def _columns(values: list, size: int) -> tuple:
    return tuple(np.broadcast_to(np.asarray(value, dtype=np.float64).reshape(-1), (size,)) for value in values)


def _empty(names: tuple, size: int, dtype=np.float64) -> tuple:
    # One array per output, not rows of one block: the engine frees and allocates arrays of this size on every
    # call, so freed ones are reused, where a block of all of them would be new memory each time.
    return tuple(np.empty(size, dtype=dtype) for _ in names)


def plan(p: dict[str, np.ndarray], batch_tokens: np.ndarray) -> dict[str, np.ndarray]:
    """The layout, memory, flags and batch per scenario (`OUTPUTS`, `FLAGS`, the inputs EP and global batch).

    `p` holds `COLUMNS` (heads resolved); `batch_tokens` is each scenario's global batch (the law's where unset).
    """
    values = dict(p, global_batch_tokens=batch_tokens)
    size = size_of(*(values[key] for key in COLUMNS))
    columns = _columns([values[key] for key in COLUMNS], size)
    all_free = all(bool(np.isnan(layout.compact(p[key])).all()) for key in layout.LAYOUT_KEYS)
    out, flags = _empty(OUTPUTS, size), _empty(FLAGS, size, np.bool_)
    _compiled("_plan_rows")(columns, all_free, _model(), out, flags)
    inputs = {key: columns[COLUMNS.index(key)] for key in ("expert_parallel", "global_batch_tokens")}  # views
    return dict(zip(OUTPUTS, out, strict=True)) | dict(zip(FLAGS, flags, strict=True)) | inputs


def supply(tokens_read, unique_tokens, tokens, token_multiplier) -> dict[str, np.ndarray]:
    """`data_supply.epochs`, `effective_tokens` and `tst_scarcity_factor` per scenario (`SUPPLY`)."""
    values = [tokens_read, unique_tokens, tokens, token_multiplier]
    size = size_of(*values)
    out = _empty(SUPPLY, size)
    _compiled("_supply_rows")(_columns(values, size), data_supply.REPETITION_HALF_LIFE, out)
    return dict(zip(SUPPLY, out, strict=True))


def volumes(run_hours, interval_hours, checkpoint_gb, keep_last, archive_every, data_gb,
            logs_gb_per_day) -> dict[str, Any]:
    """`storage.volumes` per scenario."""
    values = [run_hours, interval_hours, checkpoint_gb, keep_last, archive_every, data_gb, logs_gb_per_day]
    size = size_of(*values)
    out = dict(zip(VOLUMES, _empty(VOLUMES, size), strict=True))
    _compiled("_volume_rows")(_columns(values, size), storage.COUNT_TOLERANCE, tuple(out.values()))
    return {"gb_hours": {tier: out[tier] for tier in storage.TIERS}, "peak_gb": out["peak_gb"],
            "retained_gb": out["retained_gb"]}


@cache
def _compiled(name: str):
    """The loop `name` compiled (numba imported, and the loop compiled or loaded from its cache, on first use)."""
    import numba  # noqa: PLC0415  (only callers of COMPILED_FROM scenarios load the compiler)

    column = numba.types.Array(numba.types.float64, 1, "A", readonly=True)
    floats, flags = numba.types.float64[::1], numba.types.boolean[::1]
    arguments = {
        "_plan_rows": (numba.types.UniTuple(column, len(COLUMNS)), numba.types.boolean, numba.typeof(_model()),
                       numba.types.UniTuple(floats, len(OUTPUTS)), numba.types.UniTuple(flags, len(FLAGS))),
        "_supply_rows": (numba.types.UniTuple(column, 4), numba.types.float64, numba.types.UniTuple(floats, 3)),
        "_volume_rows": (numba.types.UniTuple(column, 7), numba.types.float64,
                         numba.types.UniTuple(floats, len(VOLUMES))),
    }[name]
    signature, loop = numba.types.void(*arguments), globals()[name]
    try:
        return numba.njit(signature, cache=True, error_model="numpy", nogil=True)(loop)
    except RuntimeError:  # no folder to keep compiled loops in (a read-only install without a home): compile only
        return numba.njit(signature, error_model="numpy", nogil=True)(loop)


def _supply_rows(columns: Any, half_life: float, out: Any) -> None:
    """`SUPPLY` of (tokens read, unique tokens, the baseline's tokens, TST's token multiplier), as `data_supply`."""

    def effective(read, unique):  # D′: only the data read beyond the unique tokens repeats
        if read > unique:
            return unique + unique * half_life * (1.0 - np.exp(-(read / unique - 1.0) / half_life))
        return read

    for i in range(out[0].shape[0]):
        read, unique, tokens, multiplier = columns[0][i], columns[1][i], columns[2][i], columns[3][i]
        out[0][i] = read / unique if math.isfinite(unique) else 0.0
        out[1][i] = effective(read, unique)
        planned, factor = tokens * multiplier, 1.0
        if planned > unique:  # the tokens TST reads to match the baseline's effective tokens, over its plan
            wanted = multiplier * effective(planned / multiplier, unique)
            needed = wanted
            if wanted > unique:
                share = (wanted - unique) / (unique * half_life)
                needed = unique * (1.0 + (-half_life * np.log1p(-min(share, 1.0)) if share < 1.0 else math.inf))
            factor = needed / planned
        out[2][i] = factor


def _volume_rows(columns: Any, tolerance: float, out: Any) -> None:
    """`VOLUMES` of (run hours, interval hours, checkpoint GB, keep last, archive every, data GB, logs GB per day),
    as `storage.volumes` writes them."""
    for i in range(out[0].shape[0]):
        run, interval, checkpoint, keep = columns[0][i], columns[1][i], columns[2][i], columns[3][i]
        every, data, logs_per_day = columns[4][i], columns[5][i], columns[6][i]
        written = np.floor(run / interval + tolerance)
        hot = min(written, keep)
        archived = np.floor(written / (every if every > 0 else 1.0)) * (every > 0)
        archive_step = interval * (every if every > 0 else 1.0)
        logs = logs_per_day * run / 24.0
        retained = checkpoint * (hot + archived) + data + logs
        out[0][i] = checkpoint * (hot * (run - (hot + 1.0) * (interval / 2.0)))
        out[1][i] = checkpoint * (archived * (run - (archived + 1.0) * (archive_step / 2.0)))
        out[2][i] = data * run
        out[3][i] = logs / 2.0 * run
        out[4][i] = retained + checkpoint * (written > keep)
        out[5][i] = retained


def _plan_rows(columns: Any, all_free: bool, model: Any, out: Any, flags: Any) -> None:
    """`OUTPUTS` and `FLAGS` of every scenario of `COLUMNS`, as `feasibility`'s NumPy path writes them."""
    replicated, sharded, linear, score_term, (weight_bytes, gradient_bytes, optimizer_bytes, gb) = model

    def lowbit(x):  # `layout.lowbit` of one number
        if x >= 1.0 and math.floor(x) == x and x < 9.0e18:
            whole = np.int64(x)
            return float(whole & -whole)
        return 1.0

    def pow2_floor(x):  # `layout.pow2_floor` of one finite number
        power = 1.0
        while power * 2.0 <= x:
            power *= 2.0
        return power

    def parts_gb(unit, sharded_unit, layer, layers, tp, pp, stage):  # `layout._parts_gb` of one layout
        local = unit / (tp * pp)
        weights = weight_bytes / gb * (sharded_unit if stage >= 3 else local)
        gradients = gradient_bytes / gb * (sharded_unit if stage >= 2 else local)
        optimizer = optimizer_bytes / gb * (sharded_unit if stage >= 1 else local)
        activations = layer / tp * np.ceil(layers / pp) * pp / gb
        return weights, gradients, optimizer, activations, weights + gradients + optimizer + activations

    for i in range(out[0].shape[0]):
        total, active, ep, gpus = columns[0][i], columns[1][i], columns[2][i], columns[3][i]
        per_node, layers, seq, micro = columns[4][i], columns[5][i], columns[6][i], columns[7][i]
        d_model, heads, mode, memory_gb = columns[8][i], columns[9][i], int(columns[10][i]), columns[11][i]
        tp_in, pp_in, zero_in = columns[12][i], columns[13][i], columns[14][i]
        batch_tokens, tokens = columns[15][i], columns[16][i]

        limit = math.inf if math.isnan(memory_gb) else memory_gb * gb
        unit = active + (total - active) / ep  # `memory.params_per_gpu` at TP = PP = 1
        sharded_unit = total / gpus
        score = score_term[mode] * 5.0 * heads * seq / d_model
        layer = seq * micro * d_model * (linear[mode] + score)  # `memory.layer_activation_bytes` at TP 1
        budget = lowbit(gpus / ep)
        node = min(pow2_floor(per_node), budget)
        tp_free, pp_free, zero_free = math.isnan(tp_in), math.isnan(pp_in), math.isnan(zero_in)
        pp1 = 1.0 if pp_free else pp_in
        cap = node if pp_free else min(node, lowbit(gpus / (ep * pp1)))
        tp_max = cap if tp_free else tp_in
        pp_cap = min(pow2_floor(layers), lowbit(gpus / (ep * tp_max)))
        first_zero, last_zero = (1, 3) if zero_free else (int(zero_in), int(zero_in))

        # Bytes = local · r + sharded · s + activations at ZeRO stage (r, s): the TP step (PP held) divides the
        # local states and the activations by TP; the PP step (TP at its largest) divides the local states by PP,
        # and a stage holds at least the activations of L layers (⌈L/PP⌉ · PP ≥ L).
        local_pp1, held_pp1 = unit / pp1, layer * np.ceil(layers / pp1) * pp1
        local_tp_max, all_layers = unit / tp_max, layer / tp_max * layers
        # Nothing fits: the most memory-saving layout tried (the last stage at the largest degrees).
        found, tp, pp, zero = False, tp_max, (pp_cap if pp_free else pp1), last_zero
        for stage in range(first_zero, last_zero + 1):
            # Whether the stage can fit: its TP step at TP max, its PP step's bound at the largest PP. Plans that
            # cannot run skip the search; the others search only the stages that can fit.
            avail = (limit - sharded_unit * sharded[stage]) * LOWER_BOUND_MARGIN
            held = local_pp1 * replicated[stage] + held_pp1
            spare = avail - all_layers
            by_tp = tp_max * avail >= held
            by_pp = pp_free & (pp_cap * spare >= local_tp_max * replicated[stage])
            if not (by_tp | by_pp):
                continue
            degree = 1.0 if tp_free else tp_max  # the TP step, from the smallest TP whose bound fits
            while by_tp and degree * avail < held:
                degree *= 2.0
            while by_tp and not found and degree <= tp_max:
                if parts_gb(unit, sharded_unit, layer, layers, degree, pp1, stage)[4] * gb <= limit:
                    found, tp, pp, zero = True, degree, pp1, stage
                degree *= 2.0
            degree = 2.0  # the PP step, from the smallest PP whose bound fits
            while by_pp and degree * spare < local_tp_max * replicated[stage]:
                degree *= 2.0
            while by_pp and not found and degree <= pp_cap:
                if parts_gb(unit, sharded_unit, layer, layers, tp_max, degree, stage)[4] * gb <= limit:
                    found, tp, pp, zero = True, tp_max, degree, stage
                degree *= 2.0
            if found:
                break

        weights, gradients, optimizer, activations, total_gb = parts_gb(unit, sharded_unit, layer, layers, tp, pp,
                                                                        zero)
        replicas = gpus / (tp * pp)
        valid = all_free or (np.floor(replicas) == replicas and tp <= per_node
                             and np.floor(replicas / ep) == replicas / ep)
        data_parallel = max(np.floor(replicas), 1.0)
        sequences = max(np.rint(batch_tokens / seq), 1.0)  # `batch`'s functions, one scenario at a time
        useful = max(np.floor(sequences / micro), 1.0) * tp * pp
        micro_batches = max(np.ceil(sequences / (micro * data_parallel)), 1.0)
        busy = min(gpus, useful)

        row = (tp, pp, data_parallel, float(zero), weights, gradients, optimizer, activations, total_gb,
               memory_gb - total_gb, sequences, tokens / (sequences * seq), micro_batches,
               (pp - 1.0) / (micro_batches + pp - 1.0), useful, busy, gpus / busy)
        for k in range(len(row)):
            out[k][i] = row[k]
        flags[0][i] = total_gb * gb <= limit and valid
        flags[1][i] = valid
        flags[2][i] = tp_free or pp_free or zero_free
