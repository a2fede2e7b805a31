"""The planner's layout search against layouts worked by hand, alone and in a batch of other rows; its powers of two."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dashboard.core import layout

NAN = math.nan
# 1B dense parameters on 8 GPUs, 4 layers, full recompute: one layer keeps 2·s·b·h = 2·1000·1·1000 = 2 MB at TP 1.
# At ZeRO-1 a GPU holds 4 bytes per local parameter (bf16 weights and gradients, 1e9 / (TP·PP) of them) and 12 per
# sharded one (1e9 / 8 = 1.25e8 → 1.5 GB), plus 2 MB / TP · ⌈4 / PP⌉ · PP of activations.
SMALL = dict(total_params=1e9, active_params=1e9, expert_parallel=1.0, gpu_count=8.0, gpus_per_node=8.0,
             n_layers=4.0, seq_len=1000.0, micro_batch_size=1.0, d_model=1000.0, n_heads=8.0, recompute_index=2.0,
             gpu_memory_gb=4.0, tensor_parallel=NAN, pipeline_parallel=NAN, zero_stage=NAN)
# (changes to SMALL, expected TP, PP, ZeRO stage, total GB, fits)
CASES = {
    # TP 1: 4 + 1.5 + 0.008 = 5.508 GB > 4; TP 2: 2 + 1.5 + 0.004 = 3.504 GB.
    "the TP step": ({}, 2, 1, 1, 3.504, True),
    # TP stops at the 2-GPU node (3.504 GB > 2.4); PP 2 at TP 2: 1 + 1.5 + 0.004 = 2.504; PP 4: 0.5 + 1.5 + 0.004.
    "the PP step": ({"gpus_per_node": 2.0, "gpu_memory_gb": 2.4}, 2, 4, 1, 2.004, True),
    # ZeRO-1 and 2 hold at least 2.004 GB, ZeRO-3 2 GB of states plus activations: the last stage at TP 2, PP 4.
    "nothing fits": ({"gpus_per_node": 2.0, "gpu_memory_gb": 1.9}, 2, 4, 3, 2.004, False),
    # A custom GPU of unknown memory: the first candidate, ZeRO-1 at TP 1 (4 + 1.5 + 0.008 GB).
    "a custom GPU": ({"gpu_memory_gb": NAN}, 1, 1, 1, 5.508, True),
    # TP 4 and ZeRO-2 given: 0.5 GB of weights, 14 · 1.25e8 bytes sharded, 2 MB / 4 · 4 layers of activations.
    "user keys": ({"tensor_parallel": 4.0, "zero_stage": 2.0}, 4, 1, 2, 2.252, True),
    # 200B parameters on 1,024 GPUs, 12 layers of s = 32,768, h = 1,024, 8 heads, no recompute: a layer keeps
    # s·h·(34 + 5·8·s/h) = 44.09 GB at TP 1. ZeRO-1 and 2 hold at least 47.9 and 42.0 GB (TP 16, PP 4); ZeRO-3 at TP 16
    # holds 16 · 200e9 / 1,024 bytes of states and 12 layers of 2.76 GB.
    "ZeRO-3 at TP 16": ({"total_params": 2e11, "active_params": 2e11, "gpu_count": 1024.0, "gpus_per_node": 16.0,
                         "n_layers": 12.0, "seq_len": 32768.0, "d_model": 1024.0, "recompute_index": 0.0,
                         "gpu_memory_gb": 40.0}, 16, 1, 3, 3.125 + 12 * 32768 * 1024 * 1314 / 16 / 1e9, True),
}


def _row(changes: dict[str, float]) -> dict[str, float]:
    return SMALL | changes


def _check(result: dict[str, np.ndarray], index: int, expected: tuple) -> None:
    tp, pp, zero, total_gb, fits = expected
    got = tuple(float(result[key][index]) for key in ("tensor_parallel", "pipeline_parallel", "zero_stage"))
    assert got == (tp, pp, zero)
    assert result["total_gb"][index] == pytest.approx(total_gb, rel=1e-12)
    assert bool(result["fits"][index]) is fits


@pytest.mark.parametrize("name", list(CASES))
def test_one_scenario_gets_the_layout_worked_by_hand(name):
    changes, *expected = CASES[name]
    layout.clear_cache()
    _check(layout.resolve({key: np.array([value]) for key, value in _row(changes).items()}), 0, tuple(expected))


def test_a_batch_gives_each_row_the_layout_it_gets_alone():
    # Rows with a ZeRO stage of their own (0 here) beside rows that search 1-3 must not change each other's search.
    rows = [_row(changes) for changes, *_ in CASES.values()] + [_row({"zero_stage": 0.0, "tensor_parallel": 1.0})]
    result = layout.resolve({key: np.array([row[key] for row in rows]) for key in layout.INPUTS})
    for index, (_, *expected) in enumerate(CASES.values()):
        _check(result, index, tuple(expected))
    # ZeRO-0 at TP 1 holds 16 bytes per local parameter: 4 GB at PP 4 plus 2 MB · 4 layers, over 4 GB at every PP.
    _check(result, len(CASES), (1, 4, 0, 4.008, False))
    assert result["proposed"].tolist() == [True] * len(CASES) + [True]  # PP is left free in every row


def test_the_breakdown_and_data_parallel_of_a_layout():
    result = layout.resolve({key: np.array([value, value]) for key, value in SMALL.items()})  # TP 2, PP 1, ZeRO-1
    assert result["weights_gb"].tolist() == [1.0, 1.0] and result["gradients_gb"].tolist() == [1.0, 1.0]
    assert result["optimizer_gb"].tolist() == [1.5, 1.5] and result["activations_gb"].tolist() == [0.004, 0.004]
    assert result["data_parallel"].tolist() == [4.0, 4.0] and result["valid"].all()


# (x, largest power of two dividing it; 1 for odd, non-whole or non-positive x), worked by hand
LOWBIT_CASES = [(96.0, 32.0), (64.0, 64.0), (7.0, 1.0), (7.5, 1.0), (0.0, 1.0), (-4.0, 1.0), (1024.0, 1024.0),
                (NAN, 1.0)]
# (x, power of two at or below it, at least 1)
POW2_FLOOR_CASES = [(5.0, 4.0), (8.0, 8.0), (1.0, 1.0), (0.3, 1.0), (1000.0, 512.0), (7.999999999999999, 4.0),
                    (math.inf, math.inf), (NAN, 1.0)]


@pytest.mark.parametrize(("x", "expected"), LOWBIT_CASES)
def test_lowbit(x, expected):
    assert float(layout.lowbit(x)) == expected
    assert layout.lowbit(np.array([96.0, x])).tolist() == [32.0, expected]


@pytest.mark.parametrize(("x", "expected"), POW2_FLOOR_CASES)
def test_pow2_floor(x, expected):
    assert float(layout.pow2_floor(x)) == expected
    assert layout.pow2_floor(np.array([x, 5.0])).tolist() == [expected, 4.0]
