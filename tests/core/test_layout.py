"""The planner's layout search against layouts worked by hand, alone and in a batch of other rows; its powers of two."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dashboard.core import layout

NAN = math.nan
GIB = 2.0**30
# 2³⁰ dense parameters on 8 GPUs, 8 layers, full recompute, no vocabulary and no reserve: one layer keeps
# 2·s·b·h = 2·1,024·1·1,024 bytes = 2 MiB at TP 1 (1/512 GB; GB here are 2³⁰ bytes). At ZeRO-1 a GPU holds 6 bytes
# per local parameter (bf16 weights, fp32 gradients: 2 + 4 GB at TP·PP = 1) and 12 per sharded one (2³⁰ / 8 →
# 1.5 GB), plus 8 layers × 2 MiB / TP of activations (the first stage keeps PP micro-batches of its 8 / PP layers),
# plus the recomputed layer's working set: a whole flash layer, s·(16h + 4·ffn) = 32 MiB, less its kept 2 MiB input:
# 30 MiB / TP (no vocabulary, so no loss working set to reuse).
SMALL = dict(total_params=GIB, active_params=GIB, n_experts=NAN, experts_per_token=NAN, n_shared_experts=0.0,
             expert_parallel=1.0, gpu_count=8.0, gpus_per_node=8.0, n_layers=8.0, seq_len=1024.0,
             micro_batch_size=1.0, d_model=1024.0, n_heads=8.0, n_kv_heads=8.0, ffn_hidden_size=4096.0,
             ffn_gated=0.0, vocab_size=0.0, recompute_index=2.0, attention_index=0.0, fp8_activations=0.0,
             context_parallel=1.0, virtual_pipeline_stages=1.0, batch_sequences=NAN, gpu_memory_gb=4.0,
             memory_reserve_gb=0.0, tensor_parallel=NAN, pipeline_parallel=NAN, zero_stage=NAN)
# A no-recompute eager layer of s = 32,768, h = 1,024, 8 heads, plain 4h FFN keeps s·(34h + 5·8·s) bytes at TP 1
# (Korthikanti's 34 + 5as/h): 41.0625 GB.
LONG_LAYER_GB = 32768 * (34 * 1024 + 5 * 8 * 32768) / GIB
# (changes to SMALL, expected TP, PP, ZeRO stage, total GB, fits)
CASES = {
    # TP 1: 2 + 4 + 1.5 + 1/64 = 7.52 GB > 4; TP 2: 1 + 2 + 1.5 + 1/128 = 4.51 > 4; TP 4: 0.5 + 1 + 1.5 + 1/256,
    # + 7.5 MiB of working set.
    "the TP step": ({}, 4, 1, 1, 3.00390625 + 7.5 / 1024, True),
    # TP stops at the 2-GPU node (4.51 GB > 2.4); PP 2 at TP 2: 0.5 + 1 + 1.5 + 1/128 = 3.0078; PP 4: 0.25 + 0.5 + 1.5.
    # (+ 15 MiB of working set at TP 2).
    "the PP step": ({"gpus_per_node": 2.0, "gpu_memory_gb": 2.4}, 2, 4, 1, 2.2578125 + 15 / 1024, True),
    # PP stops at 4 (2 layers a stage); at TP 2 · PP 4 every stage holds 2.2578 GB: the last stage, largest degrees.
    "nothing fits": ({"gpus_per_node": 2.0, "gpu_memory_gb": 1.9}, 2, 4, 3, 2.2578125 + 15 / 1024, False),
    # A custom GPU of unknown memory: the first candidate, ZeRO-1 at TP 1.
    "a custom GPU": ({"gpu_memory_gb": NAN}, 1, 1, 1, 7.515625 + 30 / 1024, True),
    # TP 4 and ZeRO-2 given: 0.5 GB of weights, 4 · 2³⁰ / 8 bytes of gradients, 1.5 of optimizer, 1/256 activations.
    "user keys": ({"tensor_parallel": 4.0, "zero_stage": 2.0}, 4, 1, 2, 2.50390625 + 7.5 / 1024, True),
    # 200B on 1,024 GPUs, 12 layers of the long eager layer above at TP 16 (30.8 GB): ZeRO-1 and 2 hold more than
    # 36 GB at every TP and PP (ZeRO-2 at TP 16 · PP 4: 8.7 + 30.8); ZeRO-3 at TP 16 · PP 1 holds 18 · 200e9 / 1,024.
    "ZeRO-3 at TP 16": ({"total_params": 2e11, "active_params": 2e11, "gpu_count": 1024.0, "gpus_per_node": 16.0,
                         "n_layers": 12.0, "seq_len": 32768.0, "recompute_index": 0.0, "attention_index": 1.0,
                         "gpu_memory_gb": 36.0}, 16, 1, 3, 18 * 2e11 / 1024 / GIB + 12 * LONG_LAYER_GB / 16, True),
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
    layout._resolve_one.cache_clear()  # a first search, not a cached one
    _check(layout.resolve({key: np.array([value]) for key, value in _row(changes).items()}), 0, tuple(expected))


def test_a_batch_gives_each_row_the_layout_it_gets_alone():
    # Rows with a ZeRO stage of their own (0 here) beside rows that search 1-3 must not change each other's search.
    rows = [_row(changes) for changes, *_ in CASES.values()] + [_row({"zero_stage": 0.0, "tensor_parallel": 1.0})]
    result = layout.resolve({key: np.array([row[key] for row in rows]) for key in rows[0]})  # links unknown
    for index, (_, *expected) in enumerate(CASES.values()):
        _check(result, index, tuple(expected))
    # ZeRO-0 at TP 1 holds 18 bytes per local parameter: 4.5 GB at PP 4 plus 8 layers of 2 MiB and the 30 MiB
    # working set, over 4 GB at every PP.
    _check(result, len(CASES), (1, 4, 0, 4.515625 + 30 / 1024, False))
    assert result["proposed"].tolist() == [True] * len(CASES) + [True]  # PP is left free in every row


def test_the_breakdown_and_data_parallel_of_a_layout():
    result = layout.resolve({key: np.array([value, value]) for key, value in SMALL.items()})  # TP 4, PP 1, ZeRO-1
    assert result["weights_gb"].tolist() == [0.5, 0.5] and result["gradients_gb"].tolist() == [1.0, 1.0]
    assert result["optimizer_gb"].tolist() == [1.5, 1.5]
    assert result["activations_gb"].tolist() == [(4 + 7.5) / 1024] * 2  # 8 × 2 MiB kept + 30 MiB working, over TP 4
    assert result["logits_gb"].tolist() == [0.0, 0.0] and result["reserve_gb"].tolist() == [0.0, 0.0]
    assert result["data_parallel"].tolist() == [2.0, 2.0] and result["valid"].all()


def test_the_planner_keeps_two_layers_a_stage():
    # 8 layers: PP stops at 4 even when nothing fits (before, a 7B at 32K context was given one layer a stage).
    row = SMALL | {"gpus_per_node": 1.0, "gpu_memory_gb": 0.5}
    result = layout.resolve({key: np.array([value]) for key, value in row.items()})
    assert float(result["pipeline_parallel"][0]) == 4.0 and not result["fits"][0]


def test_context_parallel_divides_the_data_parallel_replicas_and_the_activations():
    base = {key: np.array([value]) for key, value in (SMALL | {"tensor_parallel": 1.0, "pipeline_parallel": 1.0,
                                                              "zero_stage": 1.0, "gpu_memory_gb": 100.0}).items()}
    one = layout.resolve(base)
    two = layout.resolve(base | {"context_parallel": np.array([2.0])})
    assert float(two["data_parallel"][0]) == float(one["data_parallel"][0]) / 2 == 4.0
    assert float(two["activations_gb"][0]) == pytest.approx(float(one["activations_gb"][0]) / 2)


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
